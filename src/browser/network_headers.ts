/**
 * Headers and URLs as get_network_request shows them for a live page: the real path (the page can read
 * it anyway), query values hidden unless asked, and the values of credential headers (cookies,
 * authorization, set-cookie, and any name the sanitizer calls sensitive) replaced by a placeholder that
 * keeps only their length. Pure.
 */

import { HEADER_KEYS, isSensitiveKey } from "./privacy_keys.ts";

export interface HeaderEntry {
  name: string;
  value: string;
}

export interface RedactedHeaders {
  headers: HeaderEntry[];
  /** Names whose values were replaced, lowercased, once each. */
  redacted: string[];
  /** Headers past the cap, not shown. */
  omitted: number;
}

const MAX_HEADERS = 100;
const VALUE_CHARS = 2048;

export function redactedPlaceholder(value: string): string {
  return `<redacted: ${value.length} chars>`;
}

export function isSensitiveHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return HEADER_KEYS.has(lower) || isSensitiveKey(lower);
}

/**
 * Headers whose values are URLs (or carry them): they get the request URL's treatment, so a query or
 * fragment value hidden in the URL is not shown through them. `:path` is HTTP/2's pseudo header in
 * ExtraInfo (the path and query as sent).
 */
const URL_HEADERS = new Set([
  ":path",
  "referer",
  "location",
  "content-location",
  "sourcemap",
  "x-sourcemap",
  "ping-from",
  "ping-to",
]);

/** A header value as shown: URL-valued ones masked like the request URL, others as they are. */
function headerValue(lowerName: string, value: string, showQuery: boolean): string {
  if (URL_HEADERS.has(lowerName)) return liveUrlRef(value, showQuery);
  // `Link: <url>; rel=preload, …` and `Refresh: 5; url=…` hold URLs inside other syntax.
  if (lowerName === "link") {
    return value.replace(/<([^>]*)>/g, (_, u: string) => `<${liveUrlRef(u, showQuery)}>`);
  }
  if (lowerName === "refresh") {
    return value.replace(
      /(\burl\s*=\s*)(\S+)/i,
      (_, lead: string, u: string) => lead + liveUrlRef(u, showQuery),
    );
  }
  return value;
}

/**
 * CDP's header object as entries. Chrome joins repeated headers (Set-Cookie above all) with "\n"; each
 * becomes its own entry, so each cookie's placeholder counts its own length. `showQuery` is the
 * request URL's setting, applied to URL-valued headers.
 */
export function redactHeaders(
  headers: Record<string, string> | undefined,
  showQuery = false,
): RedactedHeaders {
  const out: HeaderEntry[] = [];
  const redacted = new Set<string>();
  let total = 0;
  for (const [name, joined] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    const sensitive = isSensitiveHeader(name);
    for (const raw of String(joined).split("\n")) {
      total++;
      if (out.length >= MAX_HEADERS) continue;
      if (sensitive) {
        redacted.add(lower);
        out.push({ name, value: redactedPlaceholder(raw) });
      } else {
        const value = headerValue(lower, raw, showQuery);
        out.push({ name, value: value.length > VALUE_CHARS ? `${value.slice(0, VALUE_CHARS)}…` : value });
      }
    }
  }
  return { headers: out, redacted: [...redacted], omitted: total - out.length };
}

/**
 * `k=v&…` pairs with each value replaced by `<N chars>` unless `showQuery`; a value under a sensitive
 * key (token, api_key, …) is `<redacted: N chars>` even then. A part without `=` is kept.
 */
function maskPairs(pairs: string, showQuery: boolean): string {
  return pairs.split("&").map((p) => {
    const eq = p.indexOf("=");
    if (eq < 0) return p;
    const key = p.slice(0, eq);
    const value = p.slice(eq + 1);
    let decodedKey = key;
    try {
      decodedKey = decodeURIComponent(key.replace(/\+/g, " "));
    } catch { /* keep the raw key */ }
    if (isSensitiveKey(decodedKey)) return `${key}=${redactedPlaceholder(value)}`;
    return showQuery ? p : `${key}=<${value.length} chars>`;
  }).join("&");
}

/**
 * A fragment (without `#`) masked like a query where it holds parameters: an OAuth implicit-flow
 * `access_token=…&state=…`, or a hash router's `/route?tab=…` (the route is kept, its parameters
 * masked). A plain anchor (`#section-2`, `#/users/7`) is kept as it is.
 */
function maskFragment(fragment: string, showQuery: boolean): string {
  const q = fragment.indexOf("?");
  if (q >= 0) return `${fragment.slice(0, q)}?${maskPairs(fragment.slice(q + 1), showQuery)}`;
  return fragment.includes("=") ? maskPairs(fragment, showQuery) : fragment;
}

/** The path, query and fragment of a URL reference, query and fragment masked. */
function maskReference(ref: string): (showQuery: boolean) => string {
  const hash = ref.indexOf("#");
  const beforeHash = hash < 0 ? ref : ref.slice(0, hash);
  const fragment = hash < 0 ? null : ref.slice(hash + 1);
  const q = beforeHash.indexOf("?");
  const path = q < 0 ? beforeHash : beforeHash.slice(0, q);
  const query = q < 0 ? null : beforeHash.slice(q + 1);
  return (showQuery) =>
    path + (query !== null ? `?${query ? maskPairs(query, showQuery) : ""}` : "") +
    (fragment !== null ? `#${maskFragment(fragment, showQuery)}` : "");
}

/**
 * A request URL for the live page: userinfo dropped, path kept, each query value replaced by
 * `<N chars>` unless `showQuery`; a value under a sensitive key (token, api_key, …) stays
 * `<redacted: N chars>` even then. A fragment holding parameters is masked the same way (see
 * maskFragment). data: URLs show their mime and length only.
 */
export function liveUrl(raw: string, showQuery: boolean): string {
  // Already in this form (the log keeps data: URLs this way).
  if (/^data:[^,]{0,64},<\d+ chars>$/.test(raw)) return raw;
  if (/^data:/i.test(raw)) {
    const mime = /^data:([^;,]{0,64})/i.exec(raw)?.[1] || "text/plain";
    return `data:${mime},<${raw.length} chars>`;
  }
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return "<invalid-url>";
  }
  u.username = "";
  u.password = "";
  const base = u.href.slice(0, u.href.length - u.search.length - u.hash.length);
  return base + maskReference(u.search + u.hash)(showQuery);
}

/**
 * A URL as a header carries it: absolute ones as liveUrl shows them; a relative one (`Location:
 * /login?next=…`, `:path`) keeps its own form with its query and fragment masked the same way.
 */
export function liveUrlRef(value: string, showQuery: boolean): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(value) || value.startsWith("//")) {
    const shown = liveUrl(value.startsWith("//") ? `http:${value}` : value, showQuery);
    return value.startsWith("//") && shown.startsWith("http:") ? shown.slice(5) : shown;
  }
  return maskReference(value)(showQuery);
}

/** Chrome's ResourceTiming (ms offsets from requestTime, -1 when a phase did not happen). */
export interface ResourceTimingLike {
  requestTime: number;
  proxyStart: number;
  proxyEnd: number;
  dnsStart: number;
  dnsEnd: number;
  connectStart: number;
  connectEnd: number;
  sslStart: number;
  sslEnd: number;
  workerStart: number;
  sendStart: number;
  sendEnd: number;
  receiveHeadersEnd: number;
}

export interface TimingPhases {
  /** From the request's creation until Chrome started on it (queueing). */
  queued_ms: number | null;
  /** From start until the first network phase (stalled: sockets, proxy, cache checks). */
  blocked_ms: number | null;
  dns_ms: number | null;
  /** TCP connect, TLS included. */
  connect_ms: number | null;
  ssl_ms: number | null;
  send_ms: number | null;
  /** Waiting for the first response byte (TTFB): request sent to headers received. */
  wait_ms: number | null;
  /** Headers received to the last body byte. */
  receive_ms: number | null;
  /** Creation to finish (or to the failure, or to now while in flight: see `complete`). */
  total_ms: number | null;
}

const r1 = (ms: number) => Math.round(ms * 10) / 10;
const span = (start: number, end: number) => (start >= 0 && end >= start ? r1(end - start) : null);

/**
 * The DevTools timing phases. `issued` and `ended` are Chrome's monotonic seconds (the
 * requestWillBeSent and loadingFinished/Failed timestamps); `timing` is absent for cache hits and
 * failures before a response.
 */
export function timingPhases(
  issued: number,
  timing: ResourceTimingLike | undefined,
  ended: number | undefined,
): TimingPhases {
  const total = ended !== undefined ? r1((ended - issued) * 1000) : null;
  if (!timing) {
    return {
      queued_ms: null,
      blocked_ms: null,
      dns_ms: null,
      connect_ms: null,
      ssl_ms: null,
      send_ms: null,
      wait_ms: null,
      receive_ms: null,
      total_ms: total,
    };
  }
  const firstNet = [timing.proxyStart, timing.dnsStart, timing.connectStart, timing.sendStart]
    .filter((t) => t >= 0);
  const headers = timing.receiveHeadersEnd;
  const receive = ended !== undefined && headers >= 0
    ? r1(Math.max(0, (ended - timing.requestTime) * 1000 - headers))
    : null;
  return {
    queued_ms: r1(Math.max(0, (timing.requestTime - issued) * 1000)),
    blocked_ms: firstNet.length ? r1(Math.min(...firstNet)) : null,
    dns_ms: span(timing.dnsStart, timing.dnsEnd),
    connect_ms: span(timing.connectStart, timing.connectEnd),
    ssl_ms: span(timing.sslStart, timing.sslEnd),
    send_ms: span(timing.sendStart, timing.sendEnd),
    wait_ms: span(timing.sendEnd, headers),
    receive_ms: receive,
    total_ms: total,
  };
}
