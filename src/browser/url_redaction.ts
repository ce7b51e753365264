/**
 * URLs krometrail stores (interaction parameters, navigation fields, event rows) all go through
 * `sanitizeUrl`, the one rule set: no userinfo, path hashed behind its origin, query values and
 * fragment dropped. This names which of those parts a given URL actually lost, so a response can say
 * what its stored record no longer holds.
 */

import { sanitizeUrl } from "./privacy.ts";

/** What the stored form of a URL dropped or replaced. `opaque`: data:, blob:, javascript: and the like. */
export type UrlPart = "userinfo" | "path" | "query" | "fragment" | "opaque" | "invalid";

export interface StoredUrl {
  /** The form that may be written to disk: exactly `sanitizeUrl(url).redacted`. */
  url: string;
  /** Parts the stored form lost, in URL order; empty when it kept everything (about:blank, a bare origin). */
  redacted: UrlPart[];
}

export function storedUrl(raw: string): StoredUrl {
  const sanitized = sanitizeUrl(raw);
  if (sanitized.redacted === "<invalid-url>") return { url: sanitized.redacted, redacted: ["invalid"] };
  if (sanitized.redacted.endsWith(":<redacted>")) return { url: sanitized.redacted, redacted: ["opaque"] };
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    return { url: sanitized.redacted, redacted: ["invalid"] };
  }
  const redacted: UrlPart[] = [];
  if (u.username !== "" || u.password !== "") redacted.push("userinfo");
  if (sanitized.path_hash !== undefined) redacted.push("path");
  // A query of bare keys (`?debug`) keeps everything it had; any value (or a secret-looking key) is lost.
  if (
    u.search.length > 1 && sanitized.redacted.includes("?") && hasQueryValue(u.search, sanitized.redacted)
  ) {
    redacted.push("query");
  }
  if (u.hash.length > 1) redacted.push("fragment");
  return { url: sanitized.redacted, redacted };
}

function hasQueryValue(search: string, stored: string): boolean {
  const kept = stored.slice(stored.indexOf("?") + 1);
  return search.slice(1).split("&").filter((p) => p !== "").join("&") !== kept;
}
