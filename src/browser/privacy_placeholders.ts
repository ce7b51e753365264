/**
 * The fixed placeholder strings (see privacy.ts). Shared by the scanner, the value reader and truncation,
 * which must all recognise a placeholder so that sanitizing already-sanitized text changes nothing.
 */

export const REDACTED = "<redacted>";
export const ELLIPSIS = "…";

export const PLACEHOLDER_SRC = String.raw`<(?:redacted|email|path|url|data-url)>` +
  String.raw`|<url:(?:https?|wss?)://(?:[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?>`;
export const PLACEHOLDER_STICKY = new RegExp(PLACEHOLDER_SRC, "y");
export const PLACEHOLDER_EXACT = new RegExp(`^(?:${PLACEHOLDER_SRC})$`);
