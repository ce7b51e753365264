/**
 * Best-effort redaction for recorded event text and network URLs.
 *
 * This is defence in depth, not a guarantee: it recognises common shapes (sensitive key names,
 * quoted values, URLs, POSIX and Windows paths, well-known token formats) and will miss unusual
 * encodings. The structural guarantees (no headers, cookies, auth values or bodies persisted; bounded
 * event text) live elsewhere. The corpus in tests/unit/browser/privacy_test.ts is the contract: when a
 * missed shape is observed, add a case there and extend the rules here.
 *
 * Placeholders are fixed strings so that sanitizing is idempotent and output stays greppable:
 * `<redacted>` (secret values), `<email>`, `<path>`, `<url>`, `<url:ORIGIN>` (http/https/ws/wss only,
 * ORIGIN = scheme://host[:port]), `<data-url>`.
 *
 * Every pattern is anchored by a lookbehind or a literal and uses bounded or single-class loops, so
 * scanning is linear in the input; input beyond a multiple of the byte limit is not scanned at all.
 */

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

const REDACTED = "<redacted>";
const ELLIPSIS = "…";
/** Never scan fewer chars than this, so a small limit still sees a whole typical message. */
const MIN_SCAN_CHARS = 64 * 1024;
/** How far back a scan cut may move to avoid leaving half a token behind. */
const CUT_BACKOFF_CHARS = 1024;
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

// ---------------------------------------------------------------------------------------------------
// Scanning

interface Replacement {
  text: string;
  /** Index in the input just past what this replacement consumed. */
  end: number;
  count: number;
}

interface Ctx {
  /** Cached result of the last search for a PEM END marker, so many BEGINs cost one scan. */
  pemEndFrom: number;
  pemEnd: number;
}

interface Rule {
  name: string;
  /** Sticky; its source is also an alternative of the combined candidate finder. */
  re: RegExp;
  /** null rejects the match, letting later rules (then later positions) try. */
  apply(m: RegExpExecArray, s: string, ctx: Ctx): Replacement | null;
}

/** Chars that may be part of a URL (RFC 3986 plus what browsers tolerate), excluding delimiters. */
const URL_CHAR = String.raw`[^\s"'<>\x60{}|\\^]`;
/** One path segment char: not whitespace, a separator, or punctuation that usually ends a path. */
const SEG = String.raw`[^\s/\\:"'<>|*?(){}\[\],;\x60]`;
const POSIX_TAIL = String.raw`[^\s\\:"'<>|*?(){}\[\],;\x60]`;
const WIN_TAIL = String.raw`[^\s:"'<>|*?(){}\[\],;\x60]`;
const PATH_GUARD = String.raw`(?<![A-Za-z0-9_.~/\\%@$-])`;

const SAFE_HOST = /^(?:[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;
const PLACEHOLDER_SRC = String.raw`<(?:redacted|email|path|url|data-url)>` +
  String.raw`|<url:(?:https?|wss?)://(?:[a-z0-9._~-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?>`;
const PLACEHOLDER_STICKY = new RegExp(PLACEHOLDER_SRC, "y");
const PLACEHOLDER_EXACT = new RegExp(`^(?:${PLACEHOLDER_SRC})$`);

function ci(word: string): string {
  return [...word].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c)).join("");
}

function sticky(src: string): RegExp {
  return new RegExp(src, "y");
}

function replaced(text: string, end: number): Replacement {
  return { text, end, count: 1 };
}

/** Drop sentence punctuation a URL or path rarely ends with; `)` only when unbalanced. */
function trimTrailing(raw: string): string {
  let t = raw;
  for (;;) {
    const last = t.at(-1);
    if (last === undefined) return t;
    if (".,;:!?'\"".includes(last)) t = t.slice(0, -1);
    else if (last === ")" && count(t, "(") < count(t, ")")) t = t.slice(0, -1);
    else if (last === "]" && count(t, "[") < count(t, "]")) t = t.slice(0, -1);
    else return t;
  }
}

function count(s: string, ch: string): number {
  let n = 0;
  for (let i = s.indexOf(ch); i >= 0; i = s.indexOf(ch, i + 1)) n++;
  return n;
}

function urlPlaceholder(raw: string): string {
  const scheme = raw.slice(0, raw.indexOf(":")).toLowerCase();
  if (scheme === "http" || scheme === "https" || scheme === "ws" || scheme === "wss") {
    try {
      const u = new URL(raw);
      if (SAFE_HOST.test(u.host)) return `<url:${u.protocol}//${u.host}>`;
    } catch {
      // Unparseable: fall through to the anonymous placeholder.
    }
  }
  return "<url>";
}

const RULES: Rule[] = [
  {
    // Already-sanitized text passes through unchanged (idempotence).
    name: "placeholder",
    re: sticky(PLACEHOLDER_SRC),
    apply: (m) => ({ text: m[0], end: m.index + m[0].length, count: 0 }),
  },
  {
    name: "pem",
    re: sticky(String.raw`-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----`),
    apply: (m, s, ctx) => {
      const start = m.index + m[0].length;
      // Searches only move forward, so an earlier answer stays valid until we pass its END.
      if (ctx.pemEndFrom < 0 || ctx.pemEndFrom > start || (ctx.pemEnd >= 0 && ctx.pemEnd < start)) {
        ctx.pemEndFrom = start;
        ctx.pemEnd = s.indexOf("-----END ", start);
      }
      let end = -1;
      if (ctx.pemEnd >= start && ctx.pemEnd - start < 16384) {
        const close = s.indexOf("-----", ctx.pemEnd + 9);
        if (close >= 0 && close - ctx.pemEnd < 64) end = close + 5;
      }
      if (end < 0) {
        // No END marker (truncated log): consume the base64 body that follows.
        end = start;
        while (end < s.length && /[A-Za-z0-9+/=\s\\]/.test(s[end])) end++;
      }
      return replaced(REDACTED, end);
    },
  },
  {
    name: "data-url",
    re: sticky(
      String.raw`(?<![A-Za-z0-9+.-])${
        ci("data")
      }:(?:[A-Za-z]+\/[A-Za-z0-9.+-]+)?(?:;[^\s,;"'<>]{0,64}){0,8},[^\s"'<>]*`,
    ),
    apply: (m) => replaced("<data-url>", m.index + trimTrailing(m[0]).length),
  },
  {
    name: "blob-url",
    re: sticky(String.raw`(?<![A-Za-z0-9+.-])${ci("blob")}:${URL_CHAR}+`),
    apply: (m) => replaced("<url>", m.index + trimTrailing(m[0]).length),
  },
  {
    name: "url",
    re: sticky(String.raw`(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/${URL_CHAR}*`),
    apply: (m) => {
      let raw = trimTrailing(m[0]);
      // Keep a stack location's :line:col visible after the placeholder.
      let suffix = "";
      const authorityEnd = raw.indexOf("/", raw.indexOf("//") + 2);
      const loc = /(?::\d+){1,2}$/.exec(raw);
      if (authorityEnd >= 0 && loc && loc.index > authorityEnd) {
        suffix = loc[0];
        raw = raw.slice(0, loc.index);
      }
      return replaced(urlPlaceholder(raw) + suffix, m.index + raw.length + suffix.length);
    },
  },
  {
    name: "www-url",
    re: sticky(
      String.raw`(?<![A-Za-z0-9@._-])${ci("www")}\d{0,3}\.[A-Za-z0-9-]+\.[A-Za-z0-9.-]*\/${URL_CHAR}*`,
    ),
    apply: (m) => replaced("<url>", m.index + trimTrailing(m[0]).length),
  },
  {
    name: "jwt",
    re: sticky(String.raw`(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*){2,4}`),
    apply: (m) => replaced(REDACTED, m.index + m[0].length),
  },
  {
    name: "bearer",
    re: sticky(String.raw`(?<![A-Za-z0-9_-])(${ci("bearer")}[ \t]{1,8})([A-Za-z0-9._~+/-]{8,}=*)`),
    apply: (m) => isBenignValue(m[2]) ? null : replaced(m[1] + REDACTED, m.index + m[0].length),
  },
  {
    name: "vendor-token",
    re: sticky(
      String.raw`(?<![A-Za-z0-9_-])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}` +
        String.raw`|xox[abposr]-[A-Za-z0-9-]{10,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}` +
        String.raw`|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|AIza[A-Za-z0-9_-]{30,}|npm_[A-Za-z0-9]{30,}` +
        String.raw`|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}` +
        String.raw`|(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16})(?![A-Za-z0-9])`,
    ),
    apply: (m) => replaced(REDACTED, m.index + m[0].length),
  },
  {
    name: "email",
    re: sticky(
      String
        .raw`(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@(?:[A-Za-z0-9-]{1,63}\.){1,8}[A-Za-z]{2,24}(?![A-Za-z0-9-])`,
    ),
    apply: (m) => replaced("<email>", m.index + m[0].length),
  },
  {
    // `--password hunter2` on a command line: space-separated, so the key-value rule misses it.
    name: "cli-flag",
    re: sticky(String.raw`(?<![A-Za-z0-9_-])--?([A-Za-z][A-Za-z0-9_-]{0,63})[ \t]{1,8}(?=[^\s-])`),
    apply: (m, s) => {
      if (!isSensitiveKey(m[1])) return null;
      const v = readValue(s, m.index + m[0].length, false);
      return v && { text: m[0] + v.text, end: v.end, count: 1 };
    },
  },
  {
    name: "key-value",
    re: sticky(
      String
        .raw`(?<![A-Za-z0-9_.$-])(?:\\?["'\x60])?(-{0,2}[A-Za-z_$][A-Za-z0-9_.$-]{0,63})(?:\\?["'\x60])?` +
        String.raw`[ \t]{0,8}(?::=|=>|==?|:)[ \t]{0,8}`,
    ),
    apply: (m, s) => {
      if (!isSensitiveKey(m[1])) return null;
      const keyQuoted = /^\\?["'\x60]/.test(m[0]);
      const v = readValue(s, m.index + m[0].length, !keyQuoted && HEADER_KEYS.has(m[1].toLowerCase()));
      return v && { text: m[0] + v.text, end: v.end, count: 1 };
    },
  },
  {
    name: "windows-path",
    re: sticky(String.raw`(?<![A-Za-z0-9_$-])[A-Za-z]:[\\/]${WIN_TAIL}*`),
    apply: (m) => pathReplacement(m),
  },
  {
    name: "unc-path",
    re: sticky(String.raw`(?<![A-Za-z0-9_\\])\\{2,4}${SEG}+[\\/]${WIN_TAIL}*`),
    apply: (m) => pathReplacement(m),
  },
  {
    name: "posix-path",
    re: sticky(String.raw`${PATH_GUARD}\/${SEG}+\/${POSIX_TAIL}*`),
    apply: (m) => pathReplacement(m),
  },
  {
    name: "home-path",
    re: sticky(String.raw`${PATH_GUARD}~[A-Za-z0-9_.-]{0,32}\/${SEG}${POSIX_TAIL}*`),
    apply: (m) => pathReplacement(m),
  },
  {
    name: "card",
    re: sticky(String.raw`(?<![0-9A-Za-z_.])[0-9](?:[ -]?[0-9]){12,18}(?![0-9A-Za-z_]|[ -][0-9])`),
    apply: (m) => (looksLikeCard(m[0]) ? replaced(REDACTED, m.index + m[0].length) : null),
  },
  {
    name: "long-token",
    re: sticky(String.raw`(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{32,}={0,2}`),
    apply: (m) => (looksLikeKey(m[0]) ? replaced(REDACTED, m.index + m[0].length) : null),
  },
];

const CANDIDATES = new RegExp(RULES.map((r) => `(?:${r.re.source})`).join("|"), "g");

function pathReplacement(m: RegExpExecArray): Replacement {
  let raw = m[0];
  while (raw.length > 1 && raw.endsWith(".")) raw = raw.slice(0, -1);
  return replaced("<path>", m.index + raw.length);
}

/**
 * Leftmost match wins; at one position, the first rule (in RULES order) that accepts wins. A rejected
 * candidate advances one char, and every rule's lookbehind stops it re-matching mid-token, so the
 * scan stays linear.
 */
function redact(s: string): { text: string; redactions: number } {
  const parts: string[] = [];
  const ctx: Ctx = { pemEndFrom: -1, pemEnd: -1 };
  let redactions = 0;
  let emitted = 0;
  let pos = 0;
  while (pos < s.length) {
    CANDIDATES.lastIndex = pos;
    const c = CANDIDATES.exec(s);
    if (!c) break;
    const p = c.index;
    let rep: Replacement | null = null;
    for (const rule of RULES) {
      rule.re.lastIndex = p;
      const m = rule.re.exec(s);
      const r = m ? rule.apply(m, s, ctx) : null;
      if (r && r.end > p) {
        rep = r;
        break;
      }
    }
    if (!rep) {
      pos = p + 1;
      continue;
    }
    parts.push(s.slice(emitted, p), rep.text);
    redactions += rep.count;
    emitted = pos = rep.end;
  }
  parts.push(s.slice(emitted));
  return { text: parts.join(""), redactions };
}

// ---------------------------------------------------------------------------------------------------
// Key names and values

/** Words that make a key sensitive wherever they appear in it (after splitting on case and separators). */
const SENSITIVE_WORDS = new Set([
  "password",
  "passwd",
  "pwd",
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
const HEADER_KEYS = new Set(["cookie", "set-cookie", "authorization", "proxy-authorization"]);
const AUTH_SCHEME = /^(?:bearer|basic|digest|token|negotiate|ntlm|bot)[ \t]+/i;

/** Cheap pre-check: every sensitive key contains one of these, and most keys contain none. */
const SENSITIVE_HINT = /pass|pwd|secret|token|auth|cookie|sess|sid|jwt|bearer|credential|key|signature|otp/i;

function isSensitiveKey(key: string): boolean {
  if (!SENSITIVE_HINT.test(key)) return false;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z])([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "")
    .map((w) => w.replace(/(?<=[a-z])\d+$/, ""));
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

/** Values worth seeing while debugging auth, which are not secrets themselves. */
function isBenignValue(v: string): boolean {
  // `…` alone is what truncation left of an already-redacted value.
  return v === "" || PLACEHOLDER_EXACT.test(v) || /^[*…]*$/.test(v) ||
    /^(?:null|undefined|true|false|none|nil|nan|\[\]|\{\})$/i.test(v);
}

const QUOTES = "\"'`";
/** Ends an unquoted value. */
const VALUE_STOP = new Set([..."\"'`<>,;&(){}[]…"]);

function isSpace(c: string): boolean {
  return c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f" || c === "\v" || /\s/.test(c);
}

/**
 * Read the value starting at `q` and return its redacted form, or null if there is no value or it is
 * benign. Hand-written scans instead of regexes: quoted values may span an entire long line.
 */
function readValue(s: string, q: number, toLineEnd: boolean): Replacement | null {
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

// ---------------------------------------------------------------------------------------------------
// Standalone shape checks

function looksLikeCard(raw: string): boolean {
  const digits = raw.replace(/[ -]/g, "");
  if (digits.length < 13 || digits.length > 19) return false;
  const groups = raw.split(/[ -]/);
  if (groups.length === 1) {
    // Plain runs are often ids or ms timestamps; only accept real card prefixes.
    if (!/^[2-6]/.test(digits)) return false;
  } else {
    if (/ /.test(raw) && /-/.test(raw)) return false;
    const lens = groups.map((g) => g.length);
    const last = lens[lens.length - 1];
    const fours = lens.length >= 4 && lens.slice(0, -1).every((n) => n === 4) && last >= 1 && last <= 4;
    const amexOrDiners = lens.length === 3 && lens[0] === 4 && lens[1] === 6 && (last === 4 || last === 5);
    if (!fours && !amexOrDiners) return false;
  }
  return luhn(digits);
}

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Hex digests and keys (≥32 hex with letters and digits), or base64-ish runs whose character classes
 * change often, as random data does (~0.6 changes per char) and camelCase identifiers and paths do
 * not (~0.2-0.4). UUIDs are identifiers, kept.
 */
function looksLikeKey(raw: string): boolean {
  const body = raw.replace(/=+$/, "");
  if (body.length < 32 || UUID.test(body)) return false;
  let lower = 0, upper = 0, digit = 0, changes = 0, prev = -1;
  for (let i = 0; i < body.length; i++) {
    const c = body.charCodeAt(i);
    const cls = c >= 97 && c <= 122 ? 0 : c >= 65 && c <= 90 ? 1 : c >= 48 && c <= 57 ? 2 : -1;
    if (cls < 0) continue;
    if (cls === 0) lower++;
    else if (cls === 1) upper++;
    else digit++;
    if (prev >= 0 && cls !== prev) changes++;
    prev = cls;
  }
  const alnum = lower + upper + digit;
  if (/^[0-9a-fA-F]+$/.test(body)) return digit > 0 && lower + upper > 0;
  const classes = (lower > 0 ? 1 : 0) + (upper > 0 ? 1 : 0) + (digit > 0 ? 1 : 0);
  if (classes < 2 || alnum < 24) return false;
  const ratio = changes / alnum;
  return ratio >= 0.5 || (ratio >= 0.3 && digit >= 2);
}

// ---------------------------------------------------------------------------------------------------
// Bounding

/**
 * Where to stop scanning an oversized input: at `max`, moved back to whitespace when that is close,
 * so the scan does not end in half a token whose visible part would not be recognised.
 */
function scanCut(s: string, max: number): number {
  let cut = max;
  const code = s.charCodeAt(cut);
  if (code >= 0xdc00 && code <= 0xdfff) cut--;
  if (isSpace(s[cut])) return cut;
  for (let i = cut - 1; i >= Math.max(0, cut - CUT_BACKOFF_CHARS); i--) {
    if (isSpace(s[i])) return i;
  }
  return cut;
}

function stripControls(s: string): string {
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

function fitBytes(s: string, limit: number): string {
  return s.slice(0, fitIndex(s, limit).index);
}

function truncateUtf8(text: string, limit: number, force: boolean): { text: string; truncated: boolean } {
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
