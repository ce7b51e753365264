/**
 * Best-effort redaction for recorded event text and network URLs.
 *
 * This is defence in depth, not a guarantee: it recognises common shapes (sensitive key names,
 * quoted values, URLs, POSIX and Windows paths, well-known token formats) and will miss unusual
 * encodings. The structural guarantees (no headers, cookies, auth values or bodies persisted; bounded
 * event text) live elsewhere. The corpus in tests/unit/browser/privacy_test.ts is the contract: when a
 * missed shape is observed, add a case there and extend the rules in privacy_scan.ts.
 *
 * Placeholders are fixed strings so that sanitizing is idempotent and output stays greppable:
 * `<redacted>` (secret values), `<email>`, `<path>`, `<url>`, `<url:ORIGIN>` (http/https/ws/wss only,
 * ORIGIN = scheme://host[:port]), `<data-url>`.
 *
 * Every pattern is anchored by a lookbehind or a literal and uses bounded or single-class loops, so
 * scanning is linear in the input; input beyond a multiple of the byte limit is not scanned at all.
 *
 * This file is the public entry. The parts: privacy_scan.ts (the rules and the redact pass),
 * privacy_keys.ts (which key names are sensitive, and reading their values), privacy_shapes.ts (card
 * numbers and key-like tokens), privacy_bounds.ts (scan cut, control stripping, UTF-8 truncation) and
 * privacy_placeholders.ts (the placeholder strings).
 */

import { ELLIPSIS, REDACTED } from "./privacy_placeholders.ts";
import { fitBytes, scanCut, stripControls, truncateUtf8 } from "./privacy_bounds.ts";
import { redact } from "./privacy_scan.ts";
import { isBenignValue, isSensitiveKey } from "./privacy_keys.ts";

export interface SanitizedText {
  text: string;
  /** Number of spans replaced by a placeholder. */
  redactions: number;
  truncated: boolean;
}

export interface SanitizedUrl {
  /** scheme://host[:port], or "" when the URL has no meaningful origin (data:, about:, invalid). */
  origin: string;
  /** 8 hex digits of FNV-1a-32 over the URL's pathname; absent for "/" and opaque URLs. */
  path_hash?: string;
  redacted: string;
}

export const DEFAULT_TEXT_LIMIT_BYTES = 2048;
export const STACK_FUNCTION_LIMIT_BYTES = 120;

/** Never scan fewer chars than this, so a small limit still sees a whole typical message. */
const MIN_SCAN_CHARS = 64 * 1024;
/** Passes are repeated only while they change something; this bounds pathological inputs. */
const MAX_PASSES = 4;

/**
 * Replace secrets, emails, paths and URLs in `input` with placeholders, strip control characters
 * (except \n and \t) and bidi overrides, and truncate to `limitBytes` UTF-8 bytes on a code point
 * boundary with a trailing "…" counted inside the limit. Never throws; on an internal failure it
 * fails closed with a bare `<redacted>`.
 */
export function sanitizeText(input: string, limitBytes: number = DEFAULT_TEXT_LIMIT_BYTES): SanitizedText {
  const limit = Number.isFinite(limitBytes) ? Math.max(0, Math.floor(limitBytes)) : DEFAULT_TEXT_LIMIT_BYTES;
  try {
    let s = typeof input === "string" ? input : String(input);
    let capped = false;
    const maxScan = Math.max(MIN_SCAN_CHARS, limit * 8);
    if (s.length > maxScan) {
      s = s.slice(0, scanCut(s, maxScan));
      capped = true;
    }
    let text = stripControls(s).toWellFormed();
    let redactions = 0;
    let truncated = false;
    // Replacing a span changes its neighbours' context (a lookbehind that saw `-` now sees `>`), and
    // truncation removes right context; repeat until a pass changes nothing, so output is a fixpoint.
    for (let pass = 0; pass < MAX_PASSES; pass++) {
      const r = redact(text);
      const t = truncateUtf8(r.text, limit, capped && pass === 0);
      text = t.text;
      redactions += r.redactions;
      truncated ||= t.truncated;
      if (r.redactions === 0 && !t.truncated) break;
    }
    return { text, redactions, truncated };
  } catch {
    return { text: fitBytes(REDACTED, limit), redactions: 1, truncated: false };
  }
}

/** An argument that is only a key, or text ending in one: "token", "password:", "my api_key =". */
const KEY_ARGUMENT =
  /(?:^|[\s(])["'\x60]?([A-Za-z_$][A-Za-z0-9_.$-]{0,63})["'\x60]?[ \t]*(?::|=|\bis)?[ \t]*$/;

/**
 * Console arguments joined with spaces, as the console shows them, then sanitized. An argument that
 * ends with a sensitive key hides the whole next argument (`console.log("token", t)`), whatever it
 * looks like: the pairing, not the value's shape, says it is a secret.
 */
export function sanitizeConsoleArgs(
  args: string[],
  limitBytes: number = DEFAULT_TEXT_LIMIT_BYTES,
): SanitizedText {
  let paired = 0;
  const parts = args.map((arg, i) => {
    const key = i > 0 ? KEY_ARGUMENT.exec(args[i - 1].slice(-80))?.[1] : undefined;
    if (key === undefined || !isSensitiveKey(key) || isBenignValue(arg.trim())) return arg;
    paired++;
    return REDACTED;
  });
  const text = sanitizeText(parts.join(" "), limitBytes);
  return { ...text, redactions: text.redactions + paired };
}

/** Stack-frame function names: same rules, on one line, bounded to 120 bytes. */
export function sanitizeStackFunction(name: string): string {
  const oneLine = typeof name === "string" ? name.replace(/\s+/g, " ") : "";
  return sanitizeText(oneLine, STACK_FUNCTION_LIMIT_BYTES).text;
}

/**
 * Origin-preserved path hashing for network events.
 *
 * Format: `ORIGIN/~HASH?key1=&key2` where ORIGIN is scheme://host[:port] (default ports omitted),
 * HASH is 8 hex digits of FNV-1a-32 over the UTF-8 pathname (same path, same hash, on any origin),
 * and the query keeps each parameter's key in order with its value dropped (`k=` if it had one, `k`
 * if not; keys that are not plain identifiers or look secret become `<redacted>`). A root path is
 * kept as `/` without a hash. Userinfo and fragment are always dropped.
 * Examples: `https://api.example.com/v1/users?id=7&token=x#top` -> `https://api.example.com/~bc4b5314?id=&token=`;
 * `data:...` -> `data:<redacted>`; `blob:https://a.test/uuid` -> `blob:<redacted>` (origin kept in
 * `origin`); `about:blank` and `about:srcdoc` kept; other opaque URLs -> `scheme:<redacted>`;
 * anything unparseable -> `<invalid-url>`.
 */
export function sanitizeUrl(url: string): SanitizedUrl {
  const invalid = { origin: "", redacted: "<invalid-url>" };
  if (typeof url !== "string") return invalid;
  const raw = url.trim();
  // Checked before parsing: data: URLs can be megabytes and are never worth parsing.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]{0,30}):/.exec(raw)?.[1].toLowerCase();
  if (scheme === undefined) return invalid;
  if (scheme === "data") return { origin: "", redacted: "data:<redacted>" };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return invalid;
  }
  if (scheme === "blob") {
    return { origin: u.origin === "null" ? "" : u.origin, redacted: "blob:<redacted>" };
  }
  const hierarchical = u.host !== "" || u.pathname.startsWith("/");
  if (!hierarchical) {
    if (scheme === "about" && (u.pathname === "blank" || u.pathname === "srcdoc") && !u.search && !u.hash) {
      return { origin: "", redacted: `about:${u.pathname}` };
    }
    return { origin: "", redacted: `${scheme}:<redacted>` };
  }
  const origin = `${u.protocol}//${u.host}`;
  const query = redactQuery(u.search);
  if (u.pathname === "" || u.pathname === "/") return { origin, redacted: `${origin}/${query}` };
  const path_hash = fnv1a32(u.pathname);
  return { origin, path_hash, redacted: `${origin}/~${path_hash}${query}` };
}

const MAX_QUERY_KEYS = 32;

function redactQuery(search: string): string {
  if (search.length <= 1) return "";
  const parts = search.slice(1).split("&").filter((p) => p !== "");
  const keys = parts.slice(0, MAX_QUERY_KEYS).map((p) => {
    const eq = p.indexOf("=");
    const key = eq < 0 ? p : p.slice(0, eq);
    const plain = /^[A-Za-z0-9_.~%[\]-]{1,64}$/.test(key) && redact(key).redactions === 0;
    return (plain ? key : REDACTED) + (eq < 0 ? "" : "=");
  });
  if (parts.length > MAX_QUERY_KEYS) keys.push(ELLIPSIS);
  return keys.length ? `?${keys.join("&")}` : "";
}

/** FNV-1a 32-bit: tiny, stable across runs and platforms; collisions only blur two paths together. */
function fnv1a32(s: string): string {
  let h = 0x811c9dc5;
  for (const b of new TextEncoder().encode(s)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}
