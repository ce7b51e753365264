import { sanitizeUrl } from "../browser/privacy.ts";

/**
 * The raw trace as it is stored: the same URL treatment as stored event rows (origin kept, path hashed,
 * query values dropped, fragment and userinfo gone; see sanitizeUrl) and no request/response headers.
 * Only string values are replaced and header fields removed; every event keeps its shape, so the trace
 * engine and DevTools still open the file. The same URL always becomes the same string, so what the
 * engine joins by URL (frames, scripts, requests) still joins.
 */

export interface SanitizedTrace {
  /** The trace JSON; unchanged subtrees are shared with the input (serialize it before mutating that). */
  trace: unknown;
  /** String values that held a URL and were replaced. */
  urls: number;
  /** Header arrays/objects removed. */
  headers: number;
}

/** One short line for the response: what the stored trace no longer holds. */
export const TRACE_PRIVACY = "URLs hashed, query values and headers dropped";

/** A value that is a URL from its first character: `scheme://…`, `data:…`, `blob:…`. */
const WHOLE_URL = /^\s*(?:[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/|data:|blob:)/;
/** URLs inside a longer value (`{ http://a.test/ }`, a message); stops at whitespace and quotes. */
const EMBEDDED_URL = /(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}:\/\/[^\s"'<>`{}|\\^]+/g;
/** Fields that hold a URL whatever it looks like (documentURL, requestURL, source_location_url, …). */
const URL_KEY = /(?:url|^fileName)$/i;
/** ResourceSendRequest/ResourceReceiveResponse `headers`, `requestHeaders`, `responseHeaders`. */
const HEADER_KEY = /headers$/i;
/** Deeper than any event Chrome writes; a value below it is dropped rather than left unscanned. */
const MAX_DEPTH = 64;

class Walker {
  urls = 0;
  headers = 0;
  readonly #memo = new Map<string, string>();

  #url(raw: string): string {
    let out = this.#memo.get(raw);
    if (out === undefined) {
      out = sanitizeUrl(raw).redacted;
      this.#memo.set(raw, out);
    }
    return out;
  }

  string(s: string, key: string): string {
    if (s === "") return s;
    if (URL_KEY.test(key) || WHOLE_URL.test(s)) {
      const out = this.#url(s);
      if (out !== s) this.urls++;
      return out;
    }
    if (!s.includes("://")) return s;
    return s.replace(EMBEDDED_URL, (m) => {
      const out = this.#url(m);
      if (out !== m) this.urls++;
      return out;
    });
  }

  value(v: unknown, key: string, depth: number): unknown {
    if (typeof v === "string") return this.string(v, key);
    if (v === null || typeof v !== "object") return v;
    if (depth >= MAX_DEPTH) return null;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const c = this.value(v[i], key, depth + 1);
        if (c !== v[i]) (out ??= v.slice())[i] = c;
      }
      return out ?? v;
    }
    const obj = v as Record<string, unknown>;
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(obj)) {
      const x = obj[k];
      if (HEADER_KEY.test(k) && x !== null && typeof x === "object") {
        out ??= { ...obj };
        delete out[k];
        this.headers++;
        continue;
      }
      const c = this.value(x, k, depth + 1);
      if (c !== x) (out ??= { ...obj })[k] = c;
    }
    return out ?? obj;
  }
}

/** Sanitize a parsed trace: `{traceEvents, metadata}` or a bare event array. Pure; the input is not changed. */
export function sanitizeTrace(trace: unknown): SanitizedTrace {
  const w = new Walker();
  const out = w.value(trace, "", 0);
  return { trace: out, urls: w.urls, headers: w.headers };
}
