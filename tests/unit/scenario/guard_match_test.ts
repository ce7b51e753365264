import { assert, assertEquals, assertThrows } from "../../assert.ts";
import {
  base64Utf8,
  decideRequest,
  errorReason,
  fulfillHeaders,
  httpOrigin,
  normalizeOrigins,
  originConditions,
  outsideGuard,
  type ReplayRoute,
  RouteTable,
} from "../../../src/scenario/guard_match.ts";
import { mediaFeatures, viewportOverride } from "../../../src/scenario/environment.ts";
import { tolerated } from "../../../src/scenario/guard.ts";
import {
  checkSeedOrigins,
  groupByOrigin,
  seedScript,
  type StorageSeedPlan,
} from "../../../src/scenario/storage_seed.ts";
import { ToolError } from "../../../src/errors.ts";

const A = "http://127.0.0.1:4100";
const route = (route_id: string, method: string, url: string): ReplayRoute => ({
  route_id,
  method,
  url,
  response: { kind: "response", status: 200, headers: [] },
});

Deno.test("httpOrigin: exact origins, WebSocket schemes mapped onto HTTP, others null", () => {
  const cases: [string, string | null][] = [
    ["http://127.0.0.1:4100/a?b#c", A],
    ["HTTP://Example.COM:80/", "http://example.com"],
    ["https://example.com:443/x", "https://example.com"],
    ["ws://127.0.0.1:4100/ws", A],
    ["wss://example.com/socket", "https://example.com"],
    ["data:text/plain,hi", null],
    ["about:blank", null],
    ["not a url", null],
  ];
  for (const [url, origin] of cases) assertEquals(httpOrigin(url), origin, url);
  assertEquals([...normalizeOrigins([`${A}/`, A, "https://example.com:443", "junk"])], [
    A,
    "https://example.com",
  ]);
});

Deno.test("RouteTable: exact method, origin and path; query as an order-free multiset", () => {
  const table = new RouteTable([
    route("list", "GET", `${A}/api/items?page=1&sort=name`),
    route("post", "POST", `${A}/api/items`),
    route("twice", "GET", `${A}/api/tags?t=a&t=a`),
    route("space", "GET", `${A}/api/search?q=a%20b`),
  ]);
  const cases: [string, string, string | undefined][] = [
    ["GET", `${A}/api/items?sort=name&page=1`, "list"],
    ["get", `${A}/api/items?page=1&sort=name#frag`, "list"],
    ["GET", `${A}/api/items?page=1`, undefined],
    ["GET", `${A}/api/items?page=1&sort=name&x=1`, undefined],
    ["GET", `${A}/api/items/?page=1&sort=name`, undefined],
    ["GET", `http://127.0.0.1:4101/api/items?page=1&sort=name`, undefined],
    ["POST", `${A}/api/items`, "post"],
    ["PUT", `${A}/api/items`, undefined],
    ["GET", `${A}/api/tags?t=a&t=a`, "twice"],
    ["GET", `${A}/api/tags?t=a`, undefined],
    ["GET", `${A}/api/search?q=a+b`, "space"],
  ];
  for (const [method, url, id] of cases) {
    assertEquals(table.match(method, url)?.route_id, id, `${method} ${url}`);
  }
});

Deno.test("decideRequest: replay first, then the origin set, then the unmatched policy", () => {
  const routes = new RouteTable([
    route("ok", "GET", `${A}/ok`),
    {
      route_id: "go",
      method: "GET",
      url: `${A}/go`,
      response: { kind: "redirect", status: 302, location: `${A}/ok` },
    },
    { route_id: "no", method: "GET", url: `${A}/no`, response: { kind: "abort", reason: "timed_out" } },
  ]);
  const allowed = new Set([A]);
  const plan = { allowed, routes, unmatchedAbort: true, abortNavigations: false };
  assertEquals(decideRequest(plan, "GET", `${A}/ok`).action, "fulfill");
  assertEquals(decideRequest(plan, "GET", `${A}/go`).action, "redirect");
  assertEquals(decideRequest(plan, "GET", `${A}/no`), {
    action: "replay-abort",
    route: routes.match("GET", `${A}/no`) as ReplayRoute,
    errorReason: "TimedOut",
  });
  assertEquals(decideRequest(plan, "GET", "http://evil.test/ok"), {
    action: "refuse",
    origin: "http://evil.test",
  });
  assertEquals(decideRequest(plan, "GET", `${A}/other`), { action: "unmatched-abort", origin: A });
  // A main-frame document is spared unless navigations are aborted too; the origin set still holds.
  assertEquals(decideRequest(plan, "GET", `${A}/other`, true), { action: "continue" });
  assertEquals(decideRequest(plan, "GET", "http://evil.test/", true).action, "refuse");
  assertEquals(
    decideRequest({ ...plan, abortNavigations: true }, "GET", `${A}/other`, true).action,
    "unmatched-abort",
  );
  assertEquals(decideRequest({ ...plan, unmatchedAbort: false }, "GET", `${A}/other`), {
    action: "continue",
  });
  assertEquals(decideRequest({ ...plan, routes: null, unmatchedAbort: false }, "GET", `${A}/ok`), {
    action: "continue",
  });
});

Deno.test("errorReason: the schema's snake_case names and Chrome's own map onto Network.ErrorReason", () => {
  const cases: [string, string][] = [
    ["failed", "Failed"],
    ["aborted", "Aborted"],
    ["timed_out", "TimedOut"],
    ["access_denied", "AccessDenied"],
    ["connection_refused", "ConnectionRefused"],
    ["connection_reset", "ConnectionReset"],
    ["internet_disconnected", "InternetDisconnected"],
    ["name_not_resolved", "NameNotResolved"],
    ["blocked_by_client", "BlockedByClient"],
    ["BlockedByResponse", "BlockedByResponse"],
    ["something-else", "Failed"],
  ];
  for (const [reason, expected] of cases) assertEquals(errorReason(reason), expected, reason);
});

Deno.test("fulfillHeaders: declared headers kept; content type declared, JSON by content, else text", () => {
  const r = (
    body: string | undefined,
    extra: Partial<{ content_type: string; headers: { name: string; value: string }[] }> = {},
  ) => ({
    kind: "response" as const,
    status: 200,
    headers: extra.headers ?? [{ name: "x-a", value: "1" }],
    body,
    ...(extra.content_type ? { content_type: extra.content_type } : {}),
  });
  assertEquals(fulfillHeaders(r('{"a":1}')), [{ name: "x-a", value: "1" }, {
    name: "content-type",
    value: "application/json",
  }]);
  assertEquals(fulfillHeaders(r("[1,2]"))[1].value, "application/json");
  assertEquals(fulfillHeaders(r("plain"))[1].value, "text/plain; charset=utf-8");
  assertEquals(fulfillHeaders(r(undefined))[1].value, "text/plain; charset=utf-8");
  assertEquals(fulfillHeaders(r("{}", { content_type: "text/html" }))[1].value, "text/html");
  const own = [{ name: "Content-Type", value: "image/svg+xml" }];
  assertEquals(fulfillHeaders(r("{}", { headers: own, content_type: "text/html" })), own);
});

Deno.test("base64Utf8 encodes UTF-8 text, long bodies included", () => {
  assertEquals(base64Utf8("é✓"), btoa(String.fromCharCode(...new TextEncoder().encode("é✓"))));
  const long = "x".repeat(100_000) + "✓";
  assertEquals(
    new TextDecoder().decode(Uint8Array.from(atob(base64Utf8(long)), (c) => c.charCodeAt(0))),
    long,
  );
});

Deno.test("outsideGuard: only http(s) is decided", () => {
  for (const url of ["data:,x", "blob:http://a/1", "about:blank", "chrome-extension://x/y", "ws://a/"]) {
    assert(outsideGuard(url), url);
  }
  for (const url of ["http://a/", "HTTPS://a/"]) assert(!outsideGuard(url), url);
});

Deno.test("originConditions: allowed origins (and their sockets) online first, every other http/ws URL offline", () => {
  const c = originConditions([A, "https://example.com"]);
  assertEquals(c.map((e) => [e.urlPattern, e.offline]), [
    ["http://127.0.0.1:4100/*", false],
    ["ws://127.0.0.1:4100/*", false],
    ["https://example.com/*", false],
    ["wss://example.com/*", false],
    ["http://*:*/*", true],
    ["https://*:*/*", true],
    ["ws://*:*/*", true],
    ["wss://*:*/*", true],
  ]);
  assert(c.every((e) => e.latency === 0 && e.downloadThroughput === -1 && e.uploadThroughput === -1));
});

Deno.test("environment: media features and the viewport override as given", () => {
  const plan = {
    viewport: { width: 390, height: 844, device_scale_factor: 3 },
    locale: "en-GB",
    timezone: "Europe/London",
    color_scheme: "no-preference" as const,
    reduced_motion: "reduce" as const,
  };
  assertEquals(mediaFeatures(plan), [
    { name: "prefers-color-scheme", value: "no-preference" },
    { name: "prefers-reduced-motion", value: "reduce" },
  ]);
  const o = viewportOverride(plan);
  assertEquals([o.metrics.width, o.metrics.height, o.metrics.device_scale_factor, o.metrics.mobile], [
    390,
    844,
    3,
    false,
  ]);
});

const seeds = (origin: string): StorageSeedPlan => ({
  cookies: [{ name: "c", value: "1", url: `${A}/`, http_only: false, secure: false, same_site: "Lax" }],
  local_storage: [{ origin: A, entries: [{ name: "a", value: "1" }] }, {
    origin: `${A}/`,
    entries: [{ name: "b", value: "2" }],
  }],
  session_storage: [{ origin, entries: [{ name: "s", value: "</script>\u2028" }] }],
});

Deno.test("storage seeds: origins outside the set are refused, naming the origin and the set", () => {
  checkSeedOrigins(seeds(A), [`${A}/`]);
  const err = assertThrows(() => checkSeedOrigins(seeds("http://evil.test:81"), [A]));
  assert(err instanceof ToolError);
  assertEquals(err.code, "origin_not_allowed");
  assertEquals(
    err.message,
    `The session_storage seed origin http://evil.test:81 is not in allowed_origins [${A}].`,
  );
  assertEquals(err.details, { origin: "http://evil.test:81", allowed_origins: [A] });
  const cookie = assertThrows(() =>
    checkSeedOrigins({ ...seeds(A), cookies: [{ ...seeds(A).cookies[0], url: "https://other.test/x" }] }, [A])
  );
  assert(cookie.message.includes("cookie origin https://other.test"), cookie.message);
});

Deno.test("storage seeds: grouped per normalized origin; the script carries values as JSON data", () => {
  const grouped = groupByOrigin(seeds(A));
  assertEquals([...grouped.keys()], [A]);
  assertEquals(grouped.get(A), {
    local: [{ name: "a", value: "1" }, { name: "b", value: "2" }],
    session: [{ name: "s", value: "</script>\u2028" }],
  });
  const source = seedScript(A, grouped.get(A) as { local: []; session: [] });
  const data = source.match(/const seed = (.*);\n/);
  assert(data, source);
  assertEquals(JSON.parse(data[1]).session[0].value, "</script>\u2028");
  assert(source.includes("window !== window.top"), "top-level documents only");
});

Deno.test("tolerated: a refusal is reported and settles; an unanswered command still fails the round", async () => {
  const reported: string[] = [];
  assertEquals(
    await tolerated(Promise.reject(new Error("Fetch.enable: not supported")), (m) => reported.push(m)),
    undefined,
  );
  assertEquals(reported, ["Fetch.enable: not supported"]);
  const timeout = new ToolError({ code: "cdp_timeout", message: "no answer", retry: "after_recovery" });
  let thrown: unknown;
  await tolerated(Promise.reject(timeout), (m) => reported.push(m)).catch((e) => thrown = e);
  assertEquals(thrown, timeout);
  assertEquals(reported.length, 1);
  assertEquals(await tolerated(Promise.resolve(7), (m) => reported.push(m)), 7);
});
