/**
 * Key names and their values: whether `key` in `key=value`, `"key": value` or `--key value` names a
 * secret, and how far the value after it runs.
 */

import { PLACEHOLDER_EXACT, REDACTED } from "./privacy_placeholders.ts";
import type { Replacement } from "./privacy_scan.ts";

/** Words that make a key sensitive wherever they appear in it (after splitting on case and separators). */
const SENSITIVE_WORDS = new Set([
  "password",
  "passwd",
  "pwd",
  "pw",
  "passphrase",
  "secret",
  "secrets",
  "token",
  "auth",
  "authorization",
  "cookie",
  "cookies",
  "session",
  "sessionid",
  "sessid",
  "phpsessid",
  "jsessionid",
  "sid",
  "jwt",
  "bearer",
  "credential",
  "credentials",
  "apikey",
  "signature",
  "privatekey",
  "secretkey",
  "accesskey",
  "otp",
]);
/** A single lowercase word ending in one of these is sensitive too (csrftoken, dbpassword). */
const SENSITIVE_SUFFIXES = ["token", "secret", "password", "passwd", "apikey", "sessionid", "cookie"];
/** `<qualifier>_key` is sensitive (api_key, private_key); a bare `key` is not (React keys, map keys). */
const KEY_QUALIFIERS = new Set([
  "api",
  "private",
  "access",
  "secret",
  "signing",
  "encryption",
  "master",
  "client",
  "app",
  "auth",
  "ssh",
  "anon",
  "service",
  "session",
  "license",
]);
/** A key ending in one of these describes a secret rather than holding one (token_count, expires_in). */
const METADATA_WORDS = new Set([
  "count",
  "counts",
  "type",
  "types",
  "length",
  "len",
  "size",
  "limit",
  "limits",
  "usage",
  "used",
  "expires",
  "expiry",
  "expiration",
  "exp",
  "ttl",
  "timeout",
  "lifetime",
  "duration",
  "age",
  "name",
  "names",
  "url",
  "uri",
  "endpoint",
  "path",
  "file",
  "domain",
  "policy",
  "required",
  "enabled",
  "disabled",
  "min",
  "max",
  "mode",
  "method",
  "provider",
  "strategy",
  "status",
  "state",
  "header",
  "field",
  "hint",
  "label",
  "prompt",
  "error",
  "errors",
  "message",
  "version",
  "format",
  "algorithm",
  "alg",
  "kind",
  "scope",
  "scopes",
  "issuer",
  "audience",
  "storage",
  "store",
  "manager",
  "at",
  "in",
]);
/** Unquoted values of these keys run to the end of the line (`Cookie: a=b; c=d`). */
export const HEADER_KEYS = new Set(["cookie", "set-cookie", "authorization", "proxy-authorization"]);
const AUTH_SCHEME = /^(?:bearer|basic|digest|token|negotiate|ntlm|bot)[ \t]+/i;

/** Cheap pre-check: every sensitive key contains one of these, and most keys contain none. */
const SENSITIVE_HINT =
  /pass|pwd|pw|secret|token|auth|cookie|sess|sid|jwt|bearer|credential|key|signature|otp/i;

/** `apiKey`, `API_KEY`, `xAPIToken2` -> lowercase words, trailing digits dropped. */
function keyWords(key: string): string[] {
  return key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "")
    .map((w) => w.replace(/(?<=[a-z])\d+$/, ""));
}

export function isSensitiveKey(key: string): boolean {
  if (!SENSITIVE_HINT.test(key)) return false;
  const words = keyWords(key);
  const last = words.at(-1);
  if (last === undefined || METADATA_WORDS.has(last)) return false;
  return words.some((w, i) => {
    const prev = i > 0 ? words[i - 1] : "";
    return SENSITIVE_WORDS.has(w) ||
      SENSITIVE_SUFFIXES.some((x) => w.length > x.length && w.endsWith(x)) ||
      (w === "key" && KEY_QUALIFIERS.has(prev)) ||
      (prev !== "" && SENSITIVE_WORDS.has(prev + w)) ||
      (prev === "set" && w === "cookie");
  });
}

/** Nouns that name a credential itself, so prose like "password is X" or "pw X" puts the value next. */
const CREDENTIAL_NOUNS = new Set([
  "password",
  "passwd",
  "pwd",
  "pw",
  "passphrase",
  "secret",
  "token",
  "apikey",
  "otp",
]);

/**
 * A key that may be followed by its value with only a space or "is" between (`password is X`, `pw X`,
 * and `console.log("token", X)` once its arguments are joined): a sensitive key whose last word names
 * the credential. Narrower than isSensitiveKey, since prose ("session 4 started", "auth failed") uses
 * the other sensitive words without a value after them.
 */
export function isSpokenKey(key: string): boolean {
  if (!isSensitiveKey(key)) return false;
  const words = keyWords(key);
  const last = words.at(-1) ?? "";
  return CREDENTIAL_NOUNS.has(last) || (words.at(-2) === "api" && last === "key") ||
    SENSITIVE_SUFFIXES.some((x) => last.length > x.length && last.endsWith(x));
}

/** Words that follow "password is" in messages about a password rather than in front of one. */
const STATUS_WORDS = new Set([
  "a",
  "an",
  "the",
  "not",
  "now",
  "still",
  "also",
  "already",
  "being",
  "too",
  "very",
  "no",
  "ok",
  "okay",
  "required",
  "needed",
  "missing",
  "empty",
  "blank",
  "unset",
  "set",
  "incorrect",
  "invalid",
  "wrong",
  "correct",
  "valid",
  "expired",
  "revoked",
  "changed",
  "updated",
  "reset",
  "saved",
  "stored",
  "accepted",
  "rejected",
  "weak",
  "strong",
  "short",
  "long",
  "present",
  "absent",
  "hidden",
  "masked",
  "redacted",
  "optional",
  "mandatory",
  "disabled",
  "enabled",
  "available",
  "unavailable",
  "pending",
  "stale",
  "fresh",
  "refreshed",
  "generated",
  "sent",
  "received",
  "used",
  "unused",
  "known",
  "unknown",
  "mismatched",
]);

/**
 * Whether the unquoted word after a spoken key is its value. After "is"/"was" anything but a status
 * word is; with only a space between, it must look made up (a digit, a symbol, inner capitals, or 16+
 * chars), since "token refresh" and "password field" are prose.
 */
export function isSpokenValue(raw: string, connected: boolean): boolean {
  const word = raw.replace(/[.,;:!?)]+$/, "");
  // An operator (`secret = '<redacted>'` on a later pass) is not a value.
  if (!/[A-Za-z0-9]/.test(word) || isBenignValue(word) || STATUS_WORDS.has(word.toLowerCase())) return false;
  if (connected) return true;
  return /[0-9]/.test(word) || /[^A-Za-z]/.test(word) || /.[A-Z]/.test(word) || word.length >= 16;
}

/** Values worth seeing while debugging auth, which are not secrets themselves. */
export function isBenignValue(v: string): boolean {
  // `…` alone is what truncation left of an already-redacted value.
  return v === "" || PLACEHOLDER_EXACT.test(v) || /^[*…]*$/.test(v) ||
    /^(?:null|undefined|true|false|none|nil|nan|\[\]|\{\})$/i.test(v);
}

const QUOTES = "\"'`";
/** Ends an unquoted value. */
const VALUE_STOP = new Set([..."\"'`<>,;&(){}[]…"]);

export function isSpace(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v" || /\s/.test(c);
}

/**
 * Read the value starting at `q` and return its redacted form, or null if there is no value or it is
 * benign. Hand-written scans instead of regexes: quoted values may span an entire long line.
 */
export function readValue(s: string, q: number, toLineEnd: boolean): Replacement | null {
  if (q >= s.length) return null;
  let open = "";
  if (QUOTES.includes(s[q])) open = s[q];
  else if (s[q] === "\\" && q + 1 < s.length && QUOTES.includes(s[q + 1])) open = s.slice(q, q + 2);
  if (open !== "") {
    const start = q + open.length;
    let i = start;
    let close = -1;
    while (i < s.length && s[i] !== "\n" && s[i] !== "\r") {
      if (s.startsWith(open, i)) {
        close = i;
        break;
      }
      i += s[i] === "\\" && open.length === 1 && s[i + 1] !== "\n" ? 2 : 1;
    }
    const end = Math.min(i, s.length);
    // An unclosed quote (cut-off log line) still hides everything up to the line end.
    const inner = s.slice(start, end);
    if (isBenignValue(inner)) return null;
    return close < 0
      ? { text: open + REDACTED, end, count: 1 }
      : { text: open + REDACTED + open, end: close + open.length, count: 1 };
  }
  let end = q;
  if (toLineEnd) {
    while (end < s.length && s[end] !== "\n" && s[end] !== "\r") end++;
    while (end > q && isSpace(s[end - 1])) end--;
  } else {
    while (
      end < s.length && !isSpace(s[end]) && !VALUE_STOP.has(s[end]) &&
      !(s[end] === "\\" && QUOTES.includes(s[end + 1] ?? ""))
    ) end++;
  }
  let value = s.slice(q, end);
  let scheme = "";
  const sm = AUTH_SCHEME.exec(value);
  if (sm) {
    scheme = sm[0];
    if (!toLineEnd) {
      // `Bearer abc`: the scheme ended the first token, so take the credential token after it.
      end = q + scheme.length;
      while (end < s.length && !isSpace(s[end]) && !VALUE_STOP.has(s[end])) end++;
    }
    value = s.slice(q + scheme.length, end);
  }
  if (isBenignValue(value)) return null;
  return { text: scheme + REDACTED, end, count: 1 };
}
