import { assert, assertEquals } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import {
  checkRoute,
  preflightHeaders,
  preflightMethod,
  responseHeaders,
  ROUTE_LIMITS,
  type RouteArgs,
  RouteTable,
} from "../../../src/devtools/route_match.ts";
import { chromeUrlPattern, globRegExp, urlMatcher } from "../../../src/devtools/route_glob.ts";
import { routeEventText, scenarioGuarded } from "../../../src/devtools/routes.ts";
import type { BrowserSession } from "../../../src/browser/session.ts";

const O = "http://127.0.0.1:4321";

function toolError(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("expected a ToolError");
}

Deno.test("globs follow Playwright: * stays in a segment, ** crosses, {a,b}, ? is literal, /path is any origin", () => {
  const m = (pattern: string, url: string) => urlMatcher(pattern).test(url);
  assert(m("**/api/*", `${O}/api/items`));
  assert(m("**/api/*", `${O}/v1/api/items?x=1`), "* takes the query within the last segment");
  assert(!m("**/api/*", `${O}/api/items/7`), "* does not cross a slash");
  assert(m("**/api/**", `${O}/api/items/7`));
  assert(m(`${O}/**`, `${O}/`));
  assert(m("**/*.{png,jpg}", `${O}/a/b.jpg`));
  assert(!m("**/*.{png,jpg}", `${O}/a/b.gif`));
  assert(m("**/data.json?n=*", `${O}/r/data.json?n=3`));
  assert(!m("**/data.json?n=*", `${O}/r/data.jsonXn=3`), "? is a literal question mark");
  assert(!m("**/data.json", `${O}/r/data.json?n=3`), "without a wildcard the query must be absent");
  assert(m("/api/items", `${O}/api/items`));
  assert(m("/api/items", "https://example.test/api/items"));
  assert(!m("/api/items", `${O}/v1/api/items`));
  assert(m("**/a\\*b", `${O}/a*b`), "an escaped star is literal");
  assert(!m("**/a\\*b", `${O}/axxb`));
  assert(m("**", `${O}/anything/at/all?q`));
  assert(m("**/page", `${O}/page#frag`), "the fragment is not part of the match");
});

Deno.test("a full URL matches in its normalized form only", () => {
  const m = urlMatcher(`${O}`);
  assert(m.test(`${O}/`), "the origin alone is its root");
  assert(!m.test(`${O}/x`));
  assert(urlMatcher(`${O}/a?b=1`).test(`${O}/a?b=1`));
  assert(!urlMatcher(`${O}/a?b=1`).test(`${O}/a?b=2`));
});

Deno.test("Chrome patterns pause at least what the glob matches, and stay narrow otherwise", () => {
  assertEquals(chromeUrlPattern("**/api/*"), "*/api/*");
  assertEquals(chromeUrlPattern("/api/items"), "*/api/items");
  assertEquals(chromeUrlPattern("**/*.{png,jpg}"), "*/*.*");
  assertEquals(chromeUrlPattern("**/data.json?n=*"), "*/data.json?n=*");
  assertEquals(chromeUrlPattern("**/a\\*b"), "*/a?b");
  assertEquals(urlMatcher(`${O}/x`).chrome, `${O}/x`);
  // Chrome's own wildcard semantics over the same URLs: every glob match is a Chrome match.
  const chromeRe = (p: string) =>
    new RegExp(`^${p.replace(/[.+^${}()|[\]\\/]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
  const cases: Array<[string, string]> = [
    ["**/api/*", `${O}/api/items?x=1`],
    ["/api/items", `${O}/api/items`],
    ["**/*.{png,jpg}", `${O}/a/b.jpg`],
    ["**/data.json?n=*", `${O}/r/data.json?n=3`],
    ["**/a\\*b", `${O}/a*b`],
  ];
  for (const [glob, url] of cases) {
    assert(globRegExp(glob).test(url) || urlMatcher(glob).test(url), `${glob} matches ${url}`);
    assert(chromeRe(chromeUrlPattern(glob)).test(url), `Chrome pattern of ${glob} pauses ${url}`);
  }
});

const route = (args: Partial<RouteArgs> & Pick<RouteArgs, "action">) =>
  checkRoute({ url: "**/api/*", ...args });

Deno.test("checkRoute settles json, content-type, defaults and refuses what does not apply", () => {
  const json = route({ action: "fulfill", json: { items: [] } });
  assertEquals(json.status, 200);
  assertEquals(json.body, '{"items":[]}');
  assertEquals(json.content_type, "application/json");
  const text = route({ action: "fulfill", body: "hi", headers: { "X-A": "1" } });
  assertEquals(text.content_type, "text/plain; charset=utf-8");
  assertEquals(text.headers, [{ name: "X-A", value: "1" }]);
  const declared = route({
    action: "fulfill",
    body: "<p>",
    headers: [{ name: "Content-Type", value: "text/html" }],
  });
  assertEquals(declared.content_type, "text/html");
  assertEquals(route({ action: "abort" }).reason, "failed");
  assertEquals(route({ action: "fail_after", count: 2 }).reason, "failed");
  const http = route({ action: "fail_after", count: 1, status: 503, json: { error: "down" } });
  assertEquals([http.status, http.reason, http.content_type], [503, undefined, "application/json"]);
  assertEquals(route({ action: "fulfill", method: "post" }).method, "POST");

  assertEquals(toolError(() => route({ action: "abort", status: 500 })).code, "invalid_arguments");
  assertEquals(toolError(() => route({ action: "fulfill", reason: "failed" })).affected?.argument, "reason");
  assertEquals(toolError(() => route({ action: "delay" })).affected?.argument, "delay_ms");
  assertEquals(toolError(() => route({ action: "fail_after" })).affected?.argument, "count");
  assertEquals(toolError(() => route({ action: "fulfill", body: "a", json: 1 })).affected?.argument, "json");
  assertEquals(
    toolError(() => route({ action: "fail_after", count: 1, body: "x" })).affected?.argument,
    "body",
  );
  assertEquals(toolError(() => checkRoute({ url: "**/{a,b", action: "abort" })).affected?.argument, "url");
});

Deno.test("every limit names the value and the limit", () => {
  const delay = toolError(() => route({ action: "delay", delay_ms: 60_001 }));
  assertEquals(delay.code, "resource_limit_exceeded");
  assert(delay.message.includes("60001") && delay.message.includes("60000"), delay.message);
  const body = toolError(() =>
    route({ action: "fulfill", body: "é".repeat(ROUTE_LIMITS.body_bytes / 2 + 1) })
  );
  assert(
    body.message.includes("body bytes") && body.message.includes(String(ROUTE_LIMITS.body_bytes)),
    body.message,
  );
  const table = new RouteTable();
  for (let i = 0; i < ROUTE_LIMITS.routes; i++) table.add(route({ action: "abort" }));
  const full = toolError(() => table.add(route({ action: "abort" })));
  assert(
    full.message.includes(`${ROUTE_LIMITS.routes + 1}`) && full.message.includes(`${ROUTE_LIMITS.routes}`),
  );
});

Deno.test("the newest matching route decides; method, page and times narrow it", () => {
  const t = new RouteTable();
  const a = t.add(route({ action: "fulfill", json: 1 }));
  const b = t.add(checkRoute({ url: "**/api/items", action: "abort", method: "POST" }));
  const c = t.add(checkRoute({ url: "**/api/items", action: "delay", delay_ms: 50, page_id: "p2" }));
  assertEquals([a.route_id, b.route_id, c.route_id], ["r1", "r2", "r3"]);
  assertEquals(t.decide("p1", "GET", `${O}/api/items`)?.route.route_id, "r1");
  assertEquals(t.decide("p1", "POST", `${O}/api/items`)?.outcome, "aborted");
  const delayed = t.decide("p2", "GET", `${O}/api/items`);
  assertEquals([delayed?.route.route_id, delayed?.outcome, delayed?.delay_ms], ["r3", "delayed", 50]);
  assertEquals(t.decide("p1", "GET", `${O}/other`), undefined);
  assertEquals(t.list().map((r) => r.matched), [1, 1, 1]);

  const once = t.add(route({ action: "abort", times: 2, reason: "timed_out" }));
  assertEquals(t.decide("p1", "GET", `${O}/api/x`)?.exhausted, false);
  const last = t.decide("p1", "GET", `${O}/api/x`);
  assertEquals([last?.route.route_id, last?.exhausted, last?.route.matched], [once.route_id, true, 2]);
  assertEquals(t.decide("p1", "GET", `${O}/api/x`)?.route.route_id, "r1", "the used-up route is gone");
  assertEquals(t.remove((r) => r.url === "**/api/items"), ["r2", "r3"]);
  assertEquals(t.size, 1);
});

Deno.test("fail_after lets count through, then fails with the reason or answers the status", () => {
  const t = new RouteTable();
  t.add(route({ action: "fail_after", count: 2, reason: "connection_reset" }));
  const outcomes = [1, 2, 3, 4].map(() => t.decide("p1", "GET", `${O}/api/x`));
  assertEquals(outcomes.map((d) => d?.outcome), ["passed", "passed", "failed", "failed"]);
  assertEquals(outcomes[2]?.verdict, { kind: "fail", reason: "connection_reset" });
  const h = new RouteTable();
  h.add(route({ action: "fail_after", count: 0, status: 503 }));
  assertEquals(h.decide("p1", "GET", `${O}/api/x`)?.verdict, { kind: "fulfill", status: 503, body: "" });
});

Deno.test("Fetch patterns per page: deduplicated, page-scoped routes only on their page, none when unused", () => {
  const t = new RouteTable();
  assertEquals(t.patterns("p1"), []);
  t.add(route({ action: "abort" }));
  t.add(route({ action: "delay", delay_ms: 1 }));
  t.add(checkRoute({ url: "/only", action: "abort", page_id: "p2" }));
  assertEquals(t.patterns("p1"), ["*/api/*"]);
  assertEquals(t.patterns("p2"), ["*/api/*", "*/only"]);
  t.add(checkRoute({ url: "**", action: "abort" }));
  assertEquals(t.patterns("p1"), ["*"]);
  t.remove(() => true);
  assertEquals(t.patterns("p2"), []);
});

Deno.test("a fulfilled cross-origin request gets CORS headers unless the route set its own", () => {
  const spec = route({ action: "fulfill", json: {}, headers: { "X-A": "1", "content-type": "text/plain" } });
  const same = responseHeaders(spec, {});
  // json's content-type wins over a declared one; content_type would win over both.
  assertEquals(same, [{ name: "X-A", value: "1" }, { name: "content-type", value: "application/json" }]);
  const cross = responseHeaders(spec, { Origin: "http://localhost:9" });
  assert(cross.some((h) => h.name === "access-control-allow-origin" && h.value === "http://localhost:9"));
  const own = route({ action: "fulfill", headers: { "Access-Control-Allow-Origin": "*" } });
  const kept = responseHeaders(own, { origin: "http://localhost:9" });
  assertEquals(kept.filter((h) => h.name.toLowerCase() === "access-control-allow-origin").length, 1);
});

Deno.test("a CORS preflight is recognized and answered permissively; peek does not count", () => {
  const headers = {
    Origin: "http://127.0.0.1:9",
    "Access-Control-Request-Method": "put",
    "Access-Control-Request-Headers": "x-token",
  };
  assertEquals(preflightMethod("OPTIONS", headers), "PUT");
  assertEquals(preflightMethod("OPTIONS", {}), undefined, "a plain OPTIONS request is not a preflight");
  assertEquals(preflightMethod("GET", headers), undefined);
  const answer = Object.fromEntries(preflightHeaders(headers).map((h) => [h.name, h.value]));
  assertEquals(answer["access-control-allow-origin"], "http://127.0.0.1:9");
  assertEquals(answer["access-control-allow-methods"], "put");
  assertEquals(answer["access-control-allow-headers"], "x-token");
  const t = new RouteTable();
  t.add(checkRoute({ url: "**/api/*", method: "PUT", action: "fulfill" }));
  assertEquals(t.peek("p1", "PUT", `${O}/api/x`)?.route_id, "r1");
  assertEquals(t.peek("p1", "GET", `${O}/api/x`), undefined);
  assertEquals(t.list()[0].matched, 0);
});

Deno.test("route event text names the route, outcome, method, URL and what was done", () => {
  const t = new RouteTable();
  t.add(route({ action: "fulfill", status: 201, delay_ms: 5, times: 1 }));
  t.add(checkRoute({ url: "/gone", action: "abort", reason: "connection_refused" }));
  t.add(checkRoute({ url: "/slow", action: "delay", delay_ms: 800 }));
  t.add(checkRoute({ url: "/flaky", action: "fail_after", count: 1 }));
  const text = (url: string) => {
    const d = t.decide("p1", "GET", `${O}${url}`);
    assert(d, url);
    return routeEventText(d, "GET", `${O}/~h`);
  };
  assertEquals(
    text("/api/x"),
    `route r1 fulfilled GET ${O}/~h 201 after 5ms; times 1 reached, route removed`,
  );
  assertEquals(text("/gone"), `route r2 aborted GET ${O}/~h connection_refused`);
  assertEquals(text("/slow"), `route r3 delayed GET ${O}/~h 800ms`);
  assertEquals(text("/flaky"), `route r4 passed GET ${O}/~h (1 of 1 let through)`);
  assertEquals(text("/flaky"), `route r4 failed GET ${O}/~h failed`);
});

Deno.test("a session whose pages carry the scenario guard's setup is recognized", () => {
  const session = (keys: string[]) =>
    ({
      pages: new Map([["p1", { overrides: new Map(keys.map((k) => [k, {}])) }]]),
    }) as unknown as BrowserSession;
  assert(scenarioGuarded(session(["viewport", "scenario_guard:0b6f"])));
  assert(!scenarioGuarded(session(["viewport", "routes"])));
});
