/**
 * The scanning rules and the redact pass: each rule is a sticky regex plus a decision on its match, and
 * one combined regex finds the next position where any rule might apply.
 */

import {
  HEADER_KEYS,
  isBenignValue,
  isSensitiveKey,
  isSpokenKey,
  isSpokenValue,
  readValue,
} from "./privacy_keys.ts";
import { PLACEHOLDER_SRC, REDACTED } from "./privacy_placeholders.ts";
import { looksLikeCard, looksLikeKey } from "./privacy_shapes.ts";

export interface Replacement {
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
    // `password is hunter2`, `pw hunter2`, and `token X` from console.log("token", X): no `:` or `=`.
    // The lookahead keeps this from being a candidate at every word of ordinary prose.
    name: "spoken-key",
    re: sticky(
      String.raw`(?<![A-Za-z0-9_.$-])(?=[A-Za-z0-9_$-]{0,40}(?:${ci("pass")}|${ci("pw")}|${ci("secret")}|` +
        String.raw`${ci("token")}|${ci("key")}|${ci("otp")}))([A-Za-z_$][A-Za-z0-9_$-]{0,63})` +
        String.raw`[ \t]{1,8}(?:(${ci("is")}|${ci("was")}):?[ \t]{1,8})?(?=\S)`,
    ),
    apply: (m, s) => {
      if (!isSpokenKey(m[1])) return null;
      const q = m.index + m[0].length;
      const v = readValue(s, q, false);
      if (!v) return null;
      const quoted = "\"'\x60\\".includes(s[q]);
      if (!quoted && !isSpokenValue(s.slice(q, v.end), m[2] !== undefined)) return null;
      return { text: m[0] + v.text, end: v.end, count: 1 };
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
export function redact(s: string): { text: string; redactions: number } {
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
