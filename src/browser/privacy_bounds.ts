/** Bounding: where to cut oversized input, control-character stripping, and UTF-8 byte truncation. */

import { isSpace } from "./privacy_keys.ts";
import { ELLIPSIS, PLACEHOLDER_STICKY } from "./privacy_placeholders.ts";

/** How far back a scan cut may move to avoid leaving half a token behind. */
const CUT_BACKOFF_CHARS = 1024;

/**
 * Where to stop scanning an oversized input: at `max`, moved back to whitespace when that is close,
 * so the scan does not end in half a token whose visible part would not be recognised.
 */
export function scanCut(s: string, max: number): number {
  let cut = max;
  const code = s.charCodeAt(cut);
  if (code >= 0xdc00 && code <= 0xdfff) cut--;
  if (isSpace(s[cut])) return cut;
  for (let i = cut - 1; i >= Math.max(0, cut - CUT_BACKOFF_CHARS); i--) {
    if (isSpace(s[i])) return i;
  }
  return cut;
}

export function stripControls(s: string): string {
  // Cc except \n and \t, plus bidi embedding/override/isolate controls that can disguise text.
  return s.replace(/(?![\n\t])[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, "");
}

function charBytes(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
}

/** Largest index <= s.length whose UTF-8 prefix fits in `budget` bytes, never splitting a pair. */
function fitIndex(s: string, budget: number): { index: number; bytes: number } {
  let bytes = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < s.length;
    const n = pair ? 4 : charBytes(c);
    if (bytes + n > budget) break;
    bytes += n;
    i += pair ? 2 : 1;
  }
  return { index: i, bytes };
}

export function fitBytes(s: string, limit: number): string {
  return s.slice(0, fitIndex(s, limit).index);
}

export function truncateUtf8(
  text: string,
  limit: number,
  force: boolean,
): { text: string; truncated: boolean } {
  // Fast path: every UTF-16 unit is at most 3 UTF-8 bytes.
  if (!force && text.length * 3 <= limit) return { text, truncated: false };
  if (!force && fitIndex(text, limit).index === text.length) return { text, truncated: false };
  const ellipsis = limit >= 3 ? ELLIPSIS : "";
  let cut = fitIndex(text, limit - (ellipsis ? 3 : 0)).index;
  // Never leave half a placeholder: it would no longer be recognised as one.
  const lt = text.lastIndexOf("<", cut - 1);
  if (lt >= 0 && cut < text.length) {
    PLACEHOLDER_STICKY.lastIndex = lt;
    const m = PLACEHOLDER_STICKY.exec(text);
    if (m && lt + m[0].length > cut) cut = lt;
  }
  return { text: text.slice(0, cut) + ellipsis, truncated: true };
}
