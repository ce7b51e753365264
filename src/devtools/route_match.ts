/**
 * Request routing, the pure part: URL globs (Playwright's syntax), the route table of one session and the
 * decision for each paused request. No CDP here; routes.ts carries the decisions out.
 */
import { limitExceeded, ToolError } from "../errors.ts";
import { type UrlMatcher, urlMatcher } from "./route_glob.ts";

export const ROUTE_ACTIONS = ["fulfill", "abort", "delay", "fail_after"] as const;
export type RouteAction = typeof ROUTE_ACTIONS[number];

/** Network.ErrorReason by its lower-snake name, as the tools take it. */
export const ERROR_REASONS = {
  failed: "Failed",
  aborted: "Aborted",
  timed_out: "TimedOut",
  access_denied: "AccessDenied",
  connection_closed: "ConnectionClosed",
  connection_reset: "ConnectionReset",
  connection_refused: "ConnectionRefused",
  connection_aborted: "ConnectionAborted",
  connection_failed: "ConnectionFailed",
  name_not_resolved: "NameNotResolved",
  internet_disconnected: "InternetDisconnected",
  address_unreachable: "AddressUnreachable",
  blocked_by_client: "BlockedByClient",
  blocked_by_response: "BlockedByResponse",
} as const;
export type ReasonName = keyof typeof ERROR_REASONS;
export const REASON_NAMES = Object.keys(ERROR_REASONS) as [ReasonName, ...ReasonName[]];

export const ROUTE_LIMITS = {
  routes: 50,
  body_bytes: 1_000_000,
  delay_ms: 60_000,
  headers: 64,
  pattern_chars: 2048,
  count: 100_000,
  times: 100_000,
} as const;

export interface Header {
  name: string;
  value: string;
}

/** What route_requests asks for, checked. */
export interface RouteSpec {
  url: string;
  method?: string;
  action: RouteAction;
  /** fulfill (and fail_after answering with an HTTP status instead of a network error). */
  status?: number;
  headers?: Header[];
  body?: string;
  content_type?: string;
  reason?: ReasonName;
  delay_ms?: number;
  count?: number;
  times?: number;
  page_id?: string;
}

export interface Route extends RouteSpec {
  route_id: string;
  /** Requests this route has decided. */
  matched: number;
}

export type Verdict =
  | { kind: "fulfill"; status: number; body: string }
  | { kind: "fail"; reason: ReasonName }
  | { kind: "continue" };

export interface Decision {
  route: Route;
  verdict: Verdict;
  /** What the event calls it: fulfilled, aborted, delayed, passed (fail_after's first N), failed. */
  outcome: "fulfilled" | "aborted" | "delayed" | "passed" | "failed";
  /** Wait this long before carrying the verdict out (0: at once). */
  delay_ms: number;
  /** This match used up the route's `times`: it is gone from the table. */
  exhausted: boolean;
}

function invalid(argument: string, problem: string, recovery: string): ToolError {
  return new ToolError({
    code: "invalid_arguments",
    message: `Invalid arguments for route_requests: ${argument}: ${problem}.`,
    retry: "never",
    recovery,
    affected: { argument },
  });
}

export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** Raw route_requests arguments (after the schema): the body may still be given as `json`. */
export interface RouteArgs extends Omit<RouteSpec, "headers"> {
  headers?: Record<string, string> | Header[];
  json?: unknown;
}

const ONLY_FOR: Record<string, RouteAction[]> = {
  status: ["fulfill", "fail_after"],
  headers: ["fulfill", "fail_after"],
  body: ["fulfill", "fail_after"],
  json: ["fulfill", "fail_after"],
  content_type: ["fulfill", "fail_after"],
  reason: ["abort", "fail_after"],
  count: ["fail_after"],
};

/** Checks what the schema cannot (combinations, limits, braces) and settles the body and headers. */
export function checkRoute(args: RouteArgs): RouteSpec {
  const given = args as unknown as Record<string, unknown>;
  for (const [field, actions] of Object.entries(ONLY_FOR)) {
    if (given[field] !== undefined && !actions.includes(args.action)) {
      throw invalid(
        field,
        `${field} does not apply to action "${args.action}" (only to ${actions.join(", ")})`,
        `Drop ${field}, or use action ${actions.map((a) => `"${a}"`).join(" or ")}.`,
      );
    }
  }
  if (args.url.length > ROUTE_LIMITS.pattern_chars) {
    throw limitExceeded("url pattern length", args.url.length, ROUTE_LIMITS.pattern_chars);
  }
  if (!balancedBraces(args.url)) {
    throw invalid(
      "url",
      "unbalanced or nested { } in the glob",
      "Close every {a,b} group once, or escape a literal brace as \\{.",
    );
  }
  if (args.action === "delay" && args.delay_ms === undefined) {
    throw invalid("delay_ms", 'action "delay" needs delay_ms', "Give delay_ms, e.g. 2000.");
  }
  if (args.action === "fail_after" && args.count === undefined) {
    throw invalid(
      "count",
      'action "fail_after" needs count',
      "Give count: how many matching requests pass before the rest fail.",
    );
  }
  if (args.body !== undefined && args.json !== undefined) {
    throw invalid(
      "json",
      "give body or json, not both",
      "Keep json for a JSON body (it sets content-type), or body for text.",
    );
  }
  if (args.delay_ms !== undefined && args.delay_ms > ROUTE_LIMITS.delay_ms) {
    throw limitExceeded("delay_ms", args.delay_ms, ROUTE_LIMITS.delay_ms);
  }
  const headers = Array.isArray(args.headers)
    ? args.headers
    : Object.entries(args.headers ?? {}).map(([name, value]) => ({ name, value }));
  if (headers.length > ROUTE_LIMITS.headers) {
    throw limitExceeded("headers count", headers.length, ROUTE_LIMITS.headers);
  }
  let body = args.body;
  let contentType = args.content_type;
  if (args.json !== undefined) {
    body = JSON.stringify(args.json) ?? "null";
    contentType ??= "application/json";
  }
  if (body !== undefined) {
    const bytes = utf8Bytes(body);
    if (bytes > ROUTE_LIMITS.body_bytes) {
      throw limitExceeded("body bytes (UTF-8)", bytes, ROUTE_LIMITS.body_bytes);
    }
  }
  const spec: RouteSpec = { url: args.url, action: args.action };
  if (args.method !== undefined) spec.method = args.method.toUpperCase();
  const answers = args.action === "fulfill" || (args.action === "fail_after" && args.status !== undefined);
  if (args.action === "fulfill") spec.status = args.status ?? 200;
  else if (args.status !== undefined) spec.status = args.status;
  if (answers) {
    if (headers.length > 0) spec.headers = headers;
    spec.body = body ?? "";
    const declared = headers.find((h) => h.name.toLowerCase() === "content-type")?.value;
    const type = contentType ?? declared ?? (spec.body === "" ? undefined : "text/plain; charset=utf-8");
    if (type !== undefined) spec.content_type = type;
  } else if (body !== undefined || headers.length > 0 || contentType !== undefined) {
    throw invalid(
      body !== undefined ? "body" : headers.length > 0 ? "headers" : "content_type",
      "fail_after answers with a network error unless status is given, so a response body or headers do not apply",
      "Give status to fail with an HTTP response, or drop the response fields.",
    );
  }
  if (args.action === "abort" || (args.action === "fail_after" && !answers)) {
    spec.reason = args.reason ?? "failed";
  }
  if (args.delay_ms !== undefined) spec.delay_ms = args.delay_ms;
  if (args.count !== undefined) spec.count = args.count;
  if (args.times !== undefined) spec.times = args.times;
  if (args.page_id !== undefined) spec.page_id = args.page_id;
  return spec;
}

function balancedBraces(pattern: string): boolean {
  let open = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") i++;
    else if (c === "{") {
      if (open) return false;
      open = true;
    } else if (c === "}") {
      if (!open) return false;
      open = false;
    }
  }
  return !open;
}

/** The response headers a fulfilled route sends: its own, then content-type, then CORS for a cross-origin page. */
export function responseHeaders(route: RouteSpec, requestHeaders: Record<string, string>): Header[] {
  const out = (route.headers ?? []).filter((h) => h.name.toLowerCase() !== "content-type");
  if (route.content_type !== undefined) out.push({ name: "content-type", value: route.content_type });
  const origin = headerValue(requestHeaders, "origin");
  const has = (name: string) => out.some((h) => h.name.toLowerCase() === name);
  // A mocked endpoint should answer the page's cross-origin fetch as a permissive server would.
  if (origin !== undefined && origin !== "null" && !has("access-control-allow-origin")) {
    out.push({ name: "access-control-allow-origin", value: origin });
    out.push({ name: "access-control-allow-credentials", value: "true" });
    if (!has("vary")) out.push({ name: "vary", value: "Origin" });
  }
  return out;
}

/** A CORS preflight: Chrome pauses it in Fetch like any request, before the request it asks about. */
export function preflightMethod(method: string, requestHeaders: Record<string, string>): string | undefined {
  if (method.toUpperCase() !== "OPTIONS") return undefined;
  return headerValue(requestHeaders, "access-control-request-method")?.toUpperCase();
}

/**
 * The permissive answer to a preflight for a mocked endpoint (there may be no server to ask), allowing the
 * method and headers it asks for, as Playwright does.
 */
export function preflightHeaders(requestHeaders: Record<string, string>): Header[] {
  const asked = headerValue(requestHeaders, "access-control-request-headers");
  return [
    { name: "access-control-allow-origin", value: headerValue(requestHeaders, "origin") ?? "*" },
    {
      name: "access-control-allow-methods",
      value: headerValue(requestHeaders, "access-control-request-method") ??
        "GET, POST, PUT, PATCH, DELETE, OPTIONS",
    },
    { name: "access-control-allow-credentials", value: "true" },
    ...(asked ? [{ name: "access-control-allow-headers", value: asked }] : []),
    { name: "vary", value: "Origin" },
  ];
}

export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

interface Entry {
  route: Route;
  matcher: UrlMatcher;
}

/** One session's routes; the newest matching route decides (like Playwright). */
export class RouteTable {
  #entries: Entry[] = [];
  #ordinal = 0;

  get size(): number {
    return this.#entries.length;
  }

  add(spec: RouteSpec): Route {
    if (this.#entries.length >= ROUTE_LIMITS.routes) {
      throw limitExceeded(
        "routes in this session",
        this.#entries.length + 1,
        ROUTE_LIMITS.routes,
        "Remove routes you no longer need with unroute (route_id, url or all: true), then route again.",
      );
    }
    const route: Route = { route_id: `r${++this.#ordinal}`, ...spec, matched: 0 };
    this.#entries.push({ route, matcher: urlMatcher(spec.url) });
    return route;
  }

  list(): Route[] {
    return this.#entries.map((e) => ({ ...e.route }));
  }

  get(routeId: string): Route | undefined {
    return this.#entries.find((e) => e.route.route_id === routeId)?.route;
  }

  /** Removes the routes `which` selects; returns their ids. */
  remove(which: (r: Route) => boolean): string[] {
    const removed = this.#entries.filter((e) => which(e.route)).map((e) => e.route.route_id);
    this.#entries = this.#entries.filter((e) => !which(e.route));
    return removed;
  }

  /** The Fetch patterns a page needs (deduplicated); none: Fetch stays off there. */
  patterns(pageId: string): string[] {
    const set = new Set<string>();
    for (const e of this.#entries) {
      if (e.route.page_id === undefined || e.route.page_id === pageId) set.add(e.matcher.chrome);
    }
    return set.has("*") ? ["*"] : [...set];
  }

  /** The route that would decide a request, without counting it. */
  peek(pageId: string, method: string, url: string): Route | undefined {
    return this.#find(pageId, method, url)?.entry.route;
  }

  #find(pageId: string, method: string, url: string): { entry: Entry; index: number } | undefined {
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const entry = this.#entries[i];
      const { route, matcher } = entry;
      if (route.page_id !== undefined && route.page_id !== pageId) continue;
      if (route.method !== undefined && route.method !== method.toUpperCase()) continue;
      if (matcher.test(url)) return { entry, index: i };
    }
    return undefined;
  }

  /** Decides one request of a page and counts it against the route that took it. */
  decide(pageId: string, method: string, url: string): Decision | undefined {
    const found = this.#find(pageId, method, url);
    if (!found) return undefined;
    const route = found.entry.route;
    route.matched++;
    const exhausted = route.times !== undefined && route.matched >= route.times;
    if (exhausted) this.#entries.splice(found.index, 1);
    return { route: { ...route }, ...verdictOf(route), delay_ms: route.delay_ms ?? 0, exhausted };
  }
}

function verdictOf(route: Route): Pick<Decision, "verdict" | "outcome"> {
  const answer = (): Verdict => ({ kind: "fulfill", status: route.status ?? 200, body: route.body ?? "" });
  switch (route.action) {
    case "fulfill":
      return { verdict: answer(), outcome: "fulfilled" };
    case "abort":
      return { verdict: { kind: "fail", reason: route.reason ?? "failed" }, outcome: "aborted" };
    case "delay":
      return { verdict: { kind: "continue" }, outcome: "delayed" };
    case "fail_after":
      if (route.matched <= (route.count ?? 0)) return { verdict: { kind: "continue" }, outcome: "passed" };
      return {
        verdict: route.status !== undefined ? answer() : { kind: "fail", reason: route.reason ?? "failed" },
        outcome: "failed",
      };
  }
}
