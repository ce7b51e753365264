/**
 * The pure half of the scenario guard: which origin a URL belongs to, whether a request matches a replay
 * route, and what the guard decides for one request. No CDP here, so every rule is unit-tested.
 *
 * Query matching: a route's query and the request's query are compared as the same multiset of decoded
 * name=value pairs, order ignored. The contract matches on a "structured query" (entries, not a string), so
 * `?a=1&b=2` and `?b=2&a=1` are the same request, while `?a=1` and `?a=1&a=1` are not (repeats count).
 * Decoding is URLSearchParams', so `%20` and `+` are both a space. The fragment never takes part (Chrome
 * does not send it).
 */

/** A replay response as the runner resolved it (secrets substituted). */
export type ReplayResponse =
  | {
    kind: "response";
    status: number;
    headers: { name: string; value: string }[];
    body?: string;
    content_type?: string;
  }
  | { kind: "redirect"; status: number; location: string }
  | { kind: "abort"; reason: string };

export interface ReplayRoute {
  route_id: string;
  method: string;
  /** Resolved absolute URL including its query. */
  url: string;
  response: ReplayResponse;
}

export interface GuardPlan {
  /** Exact origins (scheme://host[:port]). */
  allowedOrigins: string[];
  replay:
    | { mode: "disabled" }
    | {
      mode: "exact";
      unmatched: "abort" | "passthrough-declared-origins";
      routes: ReplayRoute[];
      /**
       * What `unmatched: "abort"` does to an unmatched main-frame document request (start_url, a goto, a
       * link): "continue" (the default) lets it through when its origin is allowed, so the app itself loads
       * and its other requests are aborted; "abort" fails it too, so only routed documents load.
       */
      unmatchedNavigations?: "continue" | "abort";
    };
  blockServiceWorkers: boolean;
}

/** The exact origin of an http(s)/ws(s) URL, WebSocket schemes mapped onto their HTTP origin; null otherwise. */
export function httpOrigin(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol === "ws:" || u.protocol === "wss:") {
    u = new URL(url.replace(/^ws/i, "http"));
  }
  return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
}

/** The origins of a plan, normalized (trailing slashes, default ports, case); unparsable entries dropped. */
export function normalizeOrigins(origins: readonly string[]): Set<string> {
  const set = new Set<string>();
  for (const o of origins) {
    const n = httpOrigin(o);
    if (n) set.add(n);
  }
  return set;
}

/** Decoded query pairs, sorted, as one comparable key. */
function queryKey(search: string): string {
  const pairs = [...new URLSearchParams(search)].map(([n, v]) => JSON.stringify([n, v]));
  pairs.sort();
  return pairs.join(",");
}

/** The part of a URL a route is matched on: origin + path exactly, and the query as a multiset. */
export interface UrlMatcher {
  originPath: string;
  query: string;
}

export function urlMatcher(url: string): UrlMatcher | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  return { originPath: u.origin + u.pathname, query: queryKey(u.search) };
}

/** Routes keyed by method + origin + path, for one lookup per request. */
export class RouteTable {
  readonly #routes = new Map<string, { query: string; route: ReplayRoute }[]>();

  constructor(routes: readonly ReplayRoute[]) {
    for (const route of routes) {
      const m = urlMatcher(route.url);
      if (!m) continue;
      const key = `${route.method.toUpperCase()} ${m.originPath}`;
      const list = this.#routes.get(key) ?? [];
      list.push({ query: m.query, route });
      this.#routes.set(key, list);
    }
  }

  /** The first route (in declaration order) whose method, origin, path and query multiset all match. */
  match(method: string, url: string): ReplayRoute | undefined {
    const m = urlMatcher(url);
    if (!m) return undefined;
    const list = this.#routes.get(`${method.toUpperCase()} ${m.originPath}`);
    return list?.find((e) => e.query === m.query)?.route;
  }
}

export type GuardDecision =
  | { action: "fulfill"; route: ReplayRoute; response: Extract<ReplayResponse, { kind: "response" }> }
  | { action: "redirect"; route: ReplayRoute; response: Extract<ReplayResponse, { kind: "redirect" }> }
  | { action: "replay-abort"; route: ReplayRoute; errorReason: NetworkErrorReason }
  | { action: "refuse"; origin: string }
  | { action: "unmatched-abort"; origin: string }
  | { action: "continue" };

/** Chrome's Network.ErrorReason values Fetch.failRequest accepts. */
export type NetworkErrorReason =
  | "Failed"
  | "Aborted"
  | "TimedOut"
  | "AccessDenied"
  | "ConnectionClosed"
  | "ConnectionReset"
  | "ConnectionRefused"
  | "ConnectionAborted"
  | "ConnectionFailed"
  | "NameNotResolved"
  | "InternetDisconnected"
  | "AddressUnreachable"
  | "BlockedByClient"
  | "BlockedByResponse";

const ERROR_REASONS: readonly NetworkErrorReason[] = [
  "Failed",
  "Aborted",
  "TimedOut",
  "AccessDenied",
  "ConnectionClosed",
  "ConnectionReset",
  "ConnectionRefused",
  "ConnectionAborted",
  "ConnectionFailed",
  "NameNotResolved",
  "InternetDisconnected",
  "AddressUnreachable",
  "BlockedByClient",
  "BlockedByResponse",
];

/**
 * The schema's abort reason (snake_case, "timed_out") or Chrome's own name ("TimedOut") as the
 * Network.ErrorReason Fetch.failRequest takes; anything else is "Failed".
 */
export function errorReason(reason: string): NetworkErrorReason {
  const flat = reason.replace(/[_\-\s]/g, "").toLowerCase();
  return ERROR_REASONS.find((r) => r.toLowerCase() === flat) ?? "Failed";
}

/**
 * One request's fate, in the contract's order: a replay route first, then the origin set, then the
 * unmatched policy (which spares main-frame documents unless `abortNavigations`). `url` is an http(s)
 * URL (other schemes never reach the decision).
 */
export function decideRequest(
  plan: {
    allowed: Set<string>;
    routes: RouteTable | null;
    unmatchedAbort: boolean;
    abortNavigations: boolean;
  },
  method: string,
  url: string,
  navigation = false,
): GuardDecision {
  const route = plan.routes?.match(method, url);
  if (route) {
    const r = route.response;
    if (r.kind === "response") return { action: "fulfill", route, response: r };
    if (r.kind === "redirect") return { action: "redirect", route, response: r };
    return { action: "replay-abort", route, errorReason: errorReason(r.reason) };
  }
  const origin = httpOrigin(url) ?? url;
  if (!plan.allowed.has(origin)) return { action: "refuse", origin };
  if (plan.unmatchedAbort && (!navigation || plan.abortNavigations)) {
    return { action: "unmatched-abort", origin };
  }
  return { action: "continue" };
}

/** Whether a URL is one the guard leaves alone (not http/https: data:, blob:, about:, chrome internals). */
export function outsideGuard(url: string): boolean {
  return !/^https?:/i.test(url);
}

/**
 * The response headers a replay route is fulfilled with: the declared ones, plus a content-type when none
 * was declared: `content_type`, else application/json when the body parses as JSON, else text/plain.
 */
export function fulfillHeaders(
  r: Extract<ReplayResponse, { kind: "response" }>,
): { name: string; value: string }[] {
  const headers = r.headers.map((h) => ({ name: h.name, value: h.value }));
  if (headers.some((h) => h.name.toLowerCase() === "content-type")) return headers;
  headers.push({ name: "content-type", value: r.content_type ?? defaultContentType(r.body) });
  return headers;
}

function defaultContentType(body: string | undefined): string {
  if (body === undefined || body === "") return "text/plain; charset=utf-8";
  try {
    JSON.parse(body);
    return "application/json";
  } catch {
    return "text/plain; charset=utf-8";
  }
}

/** UTF-8 text as base64, the form Fetch.fulfillRequest takes a body in. */
export function base64Utf8(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** A URLPattern hostname or port part with its pattern syntax characters escaped. */
function patternLiteral(s: string): string {
  return s.replace(/[*+?(){}:\\]/g, (c) => `\\${c}`);
}

/** One entry of Network.emulateNetworkConditionsByRule. */
export interface UrlNetworkConditions {
  urlPattern: string;
  offline: boolean;
  latency: number;
  downloadThroughput: number;
  uploadThroughput: number;
}

/**
 * Network.emulateNetworkConditionsByRule entries that let HTTP(S) and WebSocket traffic reach the allowed
 * origins only and take every other http(s)/ws(s) URL offline (ws://host:port is the http origin's
 * socket, wss:// the https one's). The first matching entry wins, so the allowed entries (no throttling)
 * come first; no entry has an empty pattern, so nothing else (navigator.onLine included) is affected.
 */
export function originConditions(allowed: Iterable<string>): UrlNetworkConditions[] {
  const entry = (urlPattern: string, offline: boolean): UrlNetworkConditions => ({
    urlPattern,
    offline,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  const out: UrlNetworkConditions[] = [];
  for (const origin of allowed) {
    const u = new URL(origin);
    const secure = u.protocol === "https:";
    const host = u.hostname.startsWith("[") ? u.hostname : patternLiteral(u.hostname);
    const port = u.port ? `:${patternLiteral(u.port)}` : "";
    out.push(entry(`${secure ? "https" : "http"}://${host}${port}/*`, false));
    out.push(entry(`${secure ? "wss" : "ws"}://${host}${port}/*`, false));
  }
  for (const scheme of ["http", "https", "ws", "wss"]) out.push(entry(`${scheme}://*:*/*`, true));
  return out;
}
