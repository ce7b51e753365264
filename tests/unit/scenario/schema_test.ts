import { z } from "zod";
import { assert, assertEquals } from "../../assert.ts";
import {
  effectiveOrigins,
  flattenIssues,
  ruleOf,
  type Scenario,
  scenarioIssues,
  scenarioSchema,
  secretReferences,
  validateScenario,
} from "../../../src/scenario/schema.ts";
import { ToolError } from "../../../src/errors.ts";

type Json = Record<string, unknown>;

const START = "http://127.0.0.1:4100/app";

function base(): Json {
  return {
    browser: { mode: "launch" },
    start_url: START,
    actions: [{ step_id: "open", action: "click", selector: "#open" }],
  };
}

/** A scenario with the given top-level fields replaced. */
function withFields(fields: Json): Json {
  return { ...base(), ...fields };
}

function withActions(...actions: Json[]): Json {
  return withFields({ actions });
}

function withRoutes(...routes: Json[]): Json {
  return withFields({ request_replay: { mode: "exact", unmatched: "abort", routes } });
}

function route(id: string, request: unknown, response: Json = { kind: "response", status: 200 }): Json {
  return { route_id: id, method: "GET", request, response };
}

const secretDecl = [{ secret_id: "pw", environment_variable: "APP_PASSWORD" }];
const undeclared = { source: "secret", secret_id: "nope" };

interface Row {
  name: string;
  input: Json;
  rule: string;
  path: string;
  message: string;
}

const ROWS: Row[] = [
  {
    name: "unknown top-level field (no limits object)",
    input: withFields({ limits: { duration_ms: 1 } }),
    rule: "unknown_field",
    path: "limits",
    message: "provider-owned",
  },
  {
    name: "unknown action field (no timeout_ms)",
    input: withActions({ step_id: "a", action: "click", selector: "#x", timeout_ms: 100 }),
    rule: "unknown_field",
    path: "actions.0.timeout_ms",
    message: "unknown field timeout_ms",
  },
  {
    name: "unknown nested field",
    input: withFields({ environment: { viewport: { width: 800, depth: 3 } } }),
    rule: "unknown_field",
    path: "environment.viewport.depth",
    message: "depth",
  },
  {
    name: "unknown action tag names the vocabulary",
    input: withActions({ step_id: "a", action: "drag", selector: "#x" }),
    rule: "unknown_action",
    path: "actions.0.action",
    message: 'unknown action "drag"; the vocabulary is goto, click, fill',
  },
  {
    name: "missing action tag",
    input: withActions({ step_id: "a", selector: "#x" }),
    rule: "unknown_action",
    path: "actions.0.action",
    message: "needs an action tag",
  },
  {
    name: "duplicate step_id",
    input: withActions(
      { step_id: "a", action: "click", selector: "#x" },
      { step_id: "a", action: "hover", selector: "#y" },
    ),
    rule: "duplicate_step_id",
    path: "actions.1.step_id",
    message: "step_id a is already used at actions.0",
  },
  {
    name: "step_id shape",
    input: withActions({ step_id: "1st step", action: "click", selector: "#x" }),
    rule: "invalid_value",
    path: "actions.0.step_id",
    message: "expected an id",
  },
  {
    name: "duplicate route_id",
    input: withRoutes(route("r", `${START}/a`), route("r", `${START}/b`)),
    rule: "duplicate_route_id",
    path: "request_replay.routes.1.route_id",
    message: "route_id r is already used at request_replay.routes.0",
  },
  {
    name: "duplicate route matcher (query in the URL or structured is the same matcher)",
    input: withRoutes(
      route("a", "http://127.0.0.1:4100/api?x=1"),
      route("b", { url: "http://127.0.0.1:4100/api", query: [{ name: "x", value: "1" }] }),
    ),
    rule: "duplicate_route_matcher",
    path: "request_replay.routes.1.request",
    message: "GET http://127.0.0.1:4100/api?x=1 is already matched by request_replay.routes.0",
  },
  {
    name: "duplicate secret_id",
    input: withFields({
      secrets: [
        { secret_id: "pw", environment_variable: "A" },
        { secret_id: "pw", environment_variable: "B" },
      ],
    }),
    rule: "duplicate_secret_id",
    path: "secrets.1.secret_id",
    message: "secret_id pw is already declared at secrets.0",
  },
  {
    name: "duplicate secret variable",
    input: withFields({
      secrets: [
        { secret_id: "a", environment_variable: "SAME" },
        { secret_id: "b", environment_variable: "SAME" },
      ],
    }),
    rule: "duplicate_secret_variable",
    path: "secrets.1.environment_variable",
    message: "environment variable SAME is already bound at secrets.0",
  },
  {
    name: "secret variable with '='",
    input: withFields({ secrets: [{ secret_id: "a", environment_variable: "A=B" }] }),
    rule: "invalid_value",
    path: "secrets.0.environment_variable",
    message: "no '='",
  },
  {
    name: "undeclared secret in a fill value",
    input: withActions({ step_id: "a", action: "fill", selector: "#pw", value: undeclared }),
    rule: "undeclared_secret",
    path: "actions.0.value.secret_id",
    message: "secret nope referenced at actions.0.value is not declared",
  },
  {
    name: "undeclared secret in a start_url query entry",
    input: withFields({ start_url: { url: START, query: [{ name: "token", value: undeclared }] } }),
    rule: "undeclared_secret",
    path: "start_url.query.0.value.secret_id",
    message: "secret nope referenced at start_url.query.0.value",
  },
  {
    name: "undeclared secret in a cookie value",
    input: withFields({ storage: { cookies: [{ name: "sid", value: undeclared, url: START }] } }),
    rule: "undeclared_secret",
    path: "storage.cookies.0.value.secret_id",
    message: "secret nope",
  },
  {
    name: "undeclared secret in a session storage value",
    input: withFields({
      storage: {
        session_storage: [{ origin: "http://127.0.0.1:4100", entries: [{ name: "k", value: undeclared }] }],
      },
    }),
    rule: "undeclared_secret",
    path: "storage.session_storage.0.entries.0.value.secret_id",
    message: "not declared in secrets",
  },
  {
    name: "undeclared secret in a replay header",
    input: withRoutes(
      route("r", `${START}/api`, {
        kind: "response",
        status: 200,
        headers: [{ name: "x-token", value: undeclared }],
      }),
    ),
    rule: "undeclared_secret",
    path: "request_replay.routes.0.response.headers.0.value.secret_id",
    message: "secret nope",
  },
  {
    name: "undeclared secret in a replay body",
    input: withRoutes(route("r", `${START}/api`, { kind: "response", status: 200, body: undeclared })),
    rule: "undeclared_secret",
    path: "request_replay.routes.0.response.body.secret_id",
    message: "secret nope",
  },
  {
    name: "userinfo user:pass@ in start_url (never echoed)",
    input: withFields({ start_url: "http://admin:hunter2@127.0.0.1:4100/" }),
    rule: "url_userinfo",
    path: "start_url",
    message: "raw userinfo",
  },
  {
    name: "userinfo user@ in a goto url object",
    input: withActions({ step_id: "g", action: "goto", url: { url: "http://admin@127.0.0.1:4100/x" } }),
    rule: "url_userinfo",
    path: "actions.0.url.url",
    message: "raw userinfo",
  },
  {
    name: "empty userinfo @ is still userinfo",
    input: withActions({ step_id: "g", action: "goto", url: "http://@127.0.0.1:4100/x" }),
    rule: "url_userinfo",
    path: "actions.0.url",
    message: "raw userinfo",
  },
  {
    name: "non-http scheme",
    input: withFields({ start_url: "file:///etc/passwd" }),
    rule: "invalid_value",
    path: "start_url",
    message: "only http and https",
  },
  {
    name: "relative URL",
    input: withActions({ step_id: "g", action: "goto", url: "/next" }),
    rule: "invalid_value",
    path: "actions.0.url",
    message: "absolute http",
  },
  {
    name: "origin with a trailing slash says the expected form",
    input: withFields({ allowed_origins: ["http://127.0.0.1:4100/"] }),
    rule: "invalid_value",
    path: "allowed_origins.0",
    message: 'write "http://127.0.0.1:4100"',
  },
  {
    name: "origin with upper-case host",
    input: withFields({ allowed_origins: ["http://A.test"] }),
    rule: "invalid_value",
    path: "allowed_origins.0",
    message: 'write "http://a.test"',
  },
  {
    name: "origin with a default port",
    input: withFields({ allowed_origins: ["https://a.test:443"] }),
    rule: "invalid_value",
    path: "allowed_origins.0",
    message: "no default port",
  },
  {
    name: "origin with userinfo",
    input: withFields({ allowed_origins: ["http://u:p@a.test"] }),
    rule: "url_userinfo",
    path: "allowed_origins.0",
    message: "no userinfo",
  },
  {
    name: "start_url outside explicit allowed_origins",
    input: withFields({ allowed_origins: ["http://127.0.0.1:4200"] }),
    rule: "origin_not_allowed",
    path: "start_url",
    message: "origin http://127.0.0.1:4100 is not in allowed_origins [http://127.0.0.1:4200]",
  },
  {
    name: "goto outside the default set (start_url's origin)",
    input: withActions({ step_id: "g", action: "goto", url: "http://evil.test:81/x" }),
    rule: "origin_not_allowed",
    path: "actions.0.url",
    message: "origin http://evil.test:81 is not in the effective origin set",
  },
  {
    name: "cookie url outside the set",
    input: withFields({ storage: { cookies: [{ name: "sid", value: "1", url: "http://evil.test/" }] } }),
    rule: "origin_not_allowed",
    path: "storage.cookies.0.url",
    message: "origin http://evil.test is not in",
  },
  {
    name: "local storage origin outside the set",
    input: withFields({ storage: { local_storage: [{ origin: "http://evil.test", entries: [] }] } }),
    rule: "origin_not_allowed",
    path: "storage.local_storage.0.origin",
    message: "origin http://evil.test is not in the effective origin set [http://127.0.0.1:4100]",
  },
  {
    name: "route request outside the set",
    input: withRoutes(route("r", "http://evil.test/api")),
    rule: "origin_not_allowed",
    path: "request_replay.routes.0.request",
    message: "origin http://evil.test",
  },
  {
    name: "redirect destination outside the set",
    input: withRoutes(
      route("r", `${START}/go`, { kind: "redirect", status: 302, destination: "http://evil.test/" }),
    ),
    rule: "origin_not_allowed",
    path: "request_replay.routes.0.response.destination",
    message: "origin http://evil.test",
  },
  {
    name: "provider-owned header",
    input: withRoutes(
      route("r", `${START}/api`, {
        kind: "response",
        status: 200,
        headers: [{ name: "Content-Length", value: "3" }],
      }),
    ),
    rule: "provider_owned_header",
    path: "request_replay.routes.0.response.headers.0.name",
    message: "header content-length is provider-owned",
  },
  {
    name: "set-cookie goes through storage seeds",
    input: withRoutes(
      route("r", `${START}/api`, {
        kind: "response",
        status: 200,
        headers: [{ name: "set-cookie", value: "a=1" }],
      }),
    ),
    rule: "provider_owned_header",
    path: "request_replay.routes.0.response.headers.0.name",
    message: "storage.cookies",
  },
  {
    name: "duplicate header (case-insensitive)",
    input: withRoutes(route("r", `${START}/api`, {
      kind: "response",
      status: 200,
      headers: [{ name: "X-A", value: "1" }, { name: "x-a", value: "2" }],
    })),
    rule: "duplicate_header",
    path: "request_replay.routes.0.response.headers.1.name",
    message: "header x-a is given more than once",
  },
  {
    name: "content-type header beside content_type",
    input: withRoutes(route("r", `${START}/api`, {
      kind: "response",
      status: 200,
      content_type: "application/json",
      headers: [{ name: "content-type", value: "text/plain" }],
    })),
    rule: "duplicate_header",
    path: "request_replay.routes.0.response.headers.0.name",
    message: "content_type sets it too",
  },
  {
    name: "header value with a line break",
    input: withRoutes(
      route("r", `${START}/api`, {
        kind: "response",
        status: 200,
        headers: [{ name: "x-a", value: "1\r\nx-b: 2" }],
      }),
    ),
    rule: "invalid_value",
    path: "request_replay.routes.0.response.headers.0.value",
    message: "no line breaks",
  },
  {
    name: "redirect status outside 301/302/303/307/308",
    input: withRoutes(route("r", `${START}/go`, { kind: "redirect", status: 200, destination: START })),
    rule: "invalid_value",
    path: "request_replay.routes.0.response.status",
    message: "301",
  },
  {
    name: "route request URL with a fragment",
    input: withRoutes(route("r", `${START}/api#x`)),
    rule: "invalid_value",
    path: "request_replay.routes.0.request",
    message: "no fragment",
  },
  {
    name: "exact replay without routes",
    input: withRoutes(),
    rule: "invalid_value",
    path: "request_replay.routes",
    message: ">=1",
  },
  {
    name: "click without a target",
    input: withActions({ step_id: "a", action: "click" }),
    rule: "target_required",
    path: "actions.0",
    message: "give locator or selector",
  },
  {
    name: "locator without role, label, text or test_id",
    input: withActions({ step_id: "a", action: "hover", locator: { name: "Save", exact: true } }),
    rule: "target_required",
    path: "actions.0.locator",
    message: "role (with an optional name), label, text or test_id",
  },
  {
    name: "locator with scope (not in the scenario form)",
    input: withActions({ step_id: "a", action: "hover", locator: { role: "button", scope: "s1p1g1n2" } }),
    rule: "unknown_field",
    path: "actions.0.locator.scope",
    message: "unknown field scope",
  },
  {
    name: "both locator and selector",
    input: withActions({ step_id: "a", action: "check", locator: { label: "Agree" }, selector: "#agree" }),
    rule: "target_conflict",
    path: "actions.0",
    message: "not both",
  },
  {
    name: "press with both targets",
    input: withActions({
      step_id: "a",
      action: "press",
      keys: "Enter",
      locator: { test_id: "q" },
      selector: "#q",
    }),
    rule: "target_conflict",
    path: "actions.0",
    message: "not both",
  },
  {
    name: "press with an unknown key",
    input: withActions({ step_id: "a", action: "press", keys: "Hyper+a" }),
    rule: "invalid_keys",
    path: "actions.0.keys",
    message: "is not a modifier",
  },
  {
    name: "scroll with neither target nor delta",
    input: withActions({ step_id: "a", action: "scroll" }),
    rule: "scroll_needs_target_or_delta",
    path: "actions.0",
    message: "dx or dy",
  },
  {
    name: "upload with a relative path",
    input: withActions({ step_id: "a", action: "upload", selector: "input[type=file]", files: ["a.txt"] }),
    rule: "invalid_value",
    path: "actions.0.files.0",
    message: "absolute file path",
  },
  {
    name: "click_count above 3",
    input: withActions({ step_id: "a", action: "click", selector: "#x", click_count: 4 }),
    rule: "invalid_value",
    path: "actions.0.click_count",
    message: "<=3",
  },
  {
    name: "no actions",
    input: withFields({ actions: [] }),
    rule: "invalid_value",
    path: "actions",
    message: ">=1",
  },
  {
    name: "connect endpoint off loopback",
    input: withFields({
      browser: { mode: "connect", cdp_endpoint: "http://10.0.0.5:9222", target_id: "T1" },
    }),
    rule: "endpoint_not_loopback",
    path: "browser.cdp_endpoint",
    message: 'host "10.0.0.5" is not loopback',
  },
  {
    name: "connect endpoint by a public name",
    input: withFields({
      browser: { mode: "connect", cdp_endpoint: "ws://example.com:9222/devtools", target_id: "T" },
    }),
    rule: "endpoint_not_loopback",
    path: "browser.cdp_endpoint",
    message: "not loopback",
  },
  {
    name: "connect endpoint without a port",
    input: withFields({ browser: { mode: "connect", cdp_endpoint: "http://127.0.0.1", target_id: "T1" } }),
    rule: "endpoint_port_required",
    path: "browser.cdp_endpoint",
    message: "explicit port",
  },
  {
    name: "connect endpoint over https",
    input: withFields({
      browser: { mode: "connect", cdp_endpoint: "https://127.0.0.1:9222", target_id: "T1" },
    }),
    rule: "invalid_value",
    path: "browser.cdp_endpoint",
    message: "http:// or ws://",
  },
  {
    name: "unknown browser mode",
    input: withFields({ browser: { mode: "spawn" } }),
    rule: "invalid_value",
    path: "browser.mode",
    message: "launch",
  },
  {
    name: "viewport width 0",
    input: withFields({ environment: { viewport: { width: 0 } } }),
    rule: "invalid_value",
    path: "environment.viewport.width",
    message: ">=1",
  },
  {
    name: "bad locale",
    input: withFields({ environment: { locale: "not a locale" } }),
    rule: "invalid_value",
    path: "environment.locale",
    message: "BCP 47",
  },
  {
    name: "bad timezone",
    input: withFields({ environment: { timezone: "Mars/Olympus" } }),
    rule: "invalid_value",
    path: "environment.timezone",
    message: "IANA",
  },
  {
    name: "SameSite=None cookie that is not secure",
    input: withFields({ storage: { cookies: [{ name: "sid", value: "1", url: START, same_site: "None" }] } }),
    rule: "invalid_value",
    path: "storage.cookies.0.same_site",
    message: "requires secure",
  },
  {
    name: "duplicate capture kind",
    input: withFields({ capture: { after_each_step: ["screenshot", "dom", "screenshot"] } }),
    rule: "duplicate_capture_entry",
    path: "capture.after_each_step.2",
    message: "screenshot is listed more than once",
  },
  {
    name: "unknown event family",
    input: withFields({ capture: { events: ["console", "telepathy"] } }),
    rule: "invalid_value",
    path: "capture.events.1",
    message: "console",
  },
  {
    name: "value of the wrong type",
    input: withActions({ step_id: "a", action: "fill", selector: "#x", value: 42 }),
    rule: "invalid_value",
    path: "actions.0.value",
    message: "expected string or object",
  },
];

function failure(input: unknown): ToolError {
  try {
    validateScenario(input);
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  throw new Error("the scenario was accepted");
}

interface IssueOut {
  path: string;
  rule: string;
  problem: string;
}

for (const row of ROWS) {
  Deno.test(`scenario schema rejects: ${row.name} -> ${row.rule} at ${row.path}`, () => {
    const err = failure(row.input);
    assertEquals(err.code, "invalid_scenario");
    assertEquals(err.retry, "never");
    const issues = err.details?.issues as IssueOut[];
    const hit = issues.find((i) => i.rule === row.rule && i.path === row.path);
    assert(hit !== undefined, `expected ${row.rule} at ${row.path}, got ${JSON.stringify(issues)}`);
    assert(hit.problem.includes(row.message), `problem ${JSON.stringify(hit.problem)} lacks ${row.message}`);
    // The first issue is the message, the recovery and the affected argument.
    const first = issues[0];
    assert(first !== undefined);
    assertEquals(err.message, `${first.path}: ${first.problem}`);
    assertEquals(err.affected?.argument, first.path);
    assert(err.recovery?.startsWith(`Fix the scenario at ${first.path}`) === true);
    assert(err.recovery?.endsWith("nothing was run.") === true);
  });
}

Deno.test("scenario schema: a userinfo password never appears in the error", () => {
  const err = failure(withFields({ start_url: "http://admin:hunter2@127.0.0.1:4100/" }));
  assert(!JSON.stringify(err.toJSON()).includes("hunter2"));
});

Deno.test("scenario schema: the minimal scenario parses to the fully defaulted request", () => {
  const s = validateScenario(base());
  const expected: Scenario = {
    browser: { mode: "launch", headless: true },
    start_url: { url: START, query: [] },
    allowed_origins: [],
    environment: {
      viewport: { width: 1280, height: 720, device_scale_factor: 1 },
      locale: "en-US",
      timezone: "UTC",
      color_scheme: "light",
      reduced_motion: "reduce",
      service_workers: "block",
    },
    actions: [{ step_id: "open", action: "click", selector: "#open", button: "left", click_count: 1 }],
    storage: { cookies: [], local_storage: [], session_storage: [] },
    request_replay: { mode: "disabled" },
    secrets: [],
    capture: { after_each_step: [], at_end: ["url"], events: [] },
  };
  assertEquals(s, expected);
  assertEquals(effectiveOrigins(s), ["http://127.0.0.1:4100"]);
});

const FULL: Json = {
  browser: { mode: "connect", cdp_endpoint: "http://127.0.0.1:80", target_id: "ABCDEF0123" },
  start_url: {
    url: "http://127.0.0.1:4100/app?bug=1#top",
    query: [{ name: "token", value: { source: "secret", secret_id: "tok" } }],
  },
  allowed_origins: ["http://127.0.0.1:4100", "http://localhost:4200"],
  environment: {
    viewport: { width: 800, height: 600, device_scale_factor: 2 },
    locale: "de-DE",
    timezone: "Europe/Berlin",
    color_scheme: "dark",
    reduced_motion: "no-preference",
    service_workers: "allow",
  },
  actions: [
    { step_id: "go", action: "goto", url: "http://localhost:4200/other", wait_until: "domcontentloaded" },
    {
      step_id: "c",
      action: "click",
      locator: { role: "button", name: "Save", exact: true },
      button: "right",
      click_count: 2,
    },
    {
      step_id: "f",
      action: "fill",
      locator: { label: "Password" },
      value: { source: "secret", secret_id: "pw" },
    },
    { step_id: "f2", action: "fill", selector: "#name", value: { source: "literal", value: "Ada" } },
    { step_id: "p", action: "press", keys: "Control+A" },
    { step_id: "p2", action: "press", keys: "Enter", selector: "#q" },
    { step_id: "s", action: "select_option", locator: { test_id: "size" }, value: "L" },
    { step_id: "ck", action: "check", locator: { text: "Agree" } },
    { step_id: "uk", action: "uncheck", selector: "#news" },
    { step_id: "h", action: "hover", selector: "#menu" },
    { step_id: "w", action: "wait_for", selector: "#toast", state: "hidden" },
    { step_id: "sc", action: "scroll", dy: 400 },
    { step_id: "sc2", action: "scroll", selector: "#footer" },
    { step_id: "up", action: "upload", selector: "input[type=file]", files: ["/tmp/a.txt", "/tmp/b.png"] },
  ],
  storage: {
    cookies: [
      {
        name: "sid",
        value: { source: "secret", secret_id: "pw" },
        url: "http://127.0.0.1:4100/",
        http_only: true,
      },
      { name: "pref", value: "x", url: "http://localhost:4200/", secure: true, same_site: "None" },
    ],
    local_storage: [{ origin: "http://127.0.0.1:4100", entries: [{ name: "theme", value: "dark" }] }],
    session_storage: [{
      origin: "http://localhost:4200",
      entries: [{ name: "k", value: { source: "secret", secret_id: "tok" } }],
    }],
  },
  request_replay: {
    mode: "exact",
    unmatched: "passthrough-declared-origins",
    routes: [
      {
        route_id: "api",
        method: "GET",
        request: { url: "http://127.0.0.1:4100/api/items", query: [{ name: "page", value: "1" }] },
        response: {
          kind: "response",
          status: 200,
          headers: [{ name: "X-Token", value: { source: "secret", secret_id: "tok" } }],
          body: '{"items":[]}',
          content_type: "application/json",
        },
      },
      {
        route_id: "old",
        method: "POST",
        request: "http://127.0.0.1:4100/old",
        response: { kind: "redirect", status: 308, destination: "http://localhost:4200/new" },
      },
      {
        route_id: "ads",
        method: "GET",
        request: "http://127.0.0.1:4100/ads.js",
        response: { kind: "abort" },
      },
    ],
  },
  secrets: [
    { secret_id: "pw", environment_variable: "APP_PASSWORD" },
    { secret_id: "tok", environment_variable: "APP_TOKEN" },
  ],
  capture: {
    after_each_step: ["screenshot", "dom", "url"],
    at_end: ["storage", "history"],
    events: ["console", "network"],
  },
};

Deno.test("scenario schema: a scenario with every section parses, defaults filled in", () => {
  const s = validateScenario(FULL);
  assertEquals(s.browser, { mode: "connect", cdp_endpoint: "http://127.0.0.1/", target_id: "ABCDEF0123" });
  assertEquals(s.start_url, {
    url: "http://127.0.0.1:4100/app?bug=1#top",
    query: [{ name: "token", value: { source: "secret", secret_id: "tok" } }],
  });
  assertEquals(effectiveOrigins(s), ["http://127.0.0.1:4100", "http://localhost:4200"]);
  assertEquals(s.environment.viewport, { width: 800, height: 600, device_scale_factor: 2 });
  assertEquals(s.actions.map((a) => a.action), [
    "goto",
    "click",
    "fill",
    "fill",
    "press",
    "press",
    "select_option",
    "check",
    "uncheck",
    "hover",
    "wait_for",
    "scroll",
    "scroll",
    "upload",
  ]);
  assertEquals(s.actions[0], {
    step_id: "go",
    action: "goto",
    url: { url: "http://localhost:4200/other", query: [] },
    wait_until: "domcontentloaded",
  });
  assertEquals(s.actions[3], {
    step_id: "f2",
    action: "fill",
    selector: "#name",
    value: { source: "literal", value: "Ada" },
  });
  assertEquals(s.actions[6], {
    step_id: "s",
    action: "select_option",
    locator: { test_id: "size" },
    value: { source: "literal", value: "L" },
  });
  assertEquals(s.actions[10], { step_id: "w", action: "wait_for", selector: "#toast", state: "hidden" });
  assertEquals(s.storage.cookies[0], {
    name: "sid",
    value: { source: "secret", secret_id: "pw" },
    url: { url: "http://127.0.0.1:4100/", query: [] },
    http_only: true,
    secure: false,
    same_site: "Lax",
  });
  assert(s.request_replay.mode === "exact");
  const [api, old, ads] = s.request_replay.routes;
  assertEquals(api?.response, {
    kind: "response",
    status: 200,
    headers: [{ name: "x-token", value: { source: "secret", secret_id: "tok" } }],
    body: { source: "literal", value: '{"items":[]}' },
    content_type: "application/json",
  });
  assertEquals(old?.response, {
    kind: "redirect",
    status: 308,
    destination: { url: "http://localhost:4200/new", query: [] },
  });
  assertEquals(ads?.response, { kind: "abort", reason: "failed" });
  assertEquals(s.capture, {
    after_each_step: ["screenshot", "dom", "url"],
    at_end: ["storage", "history"],
    events: ["console", "network"],
  });
});

Deno.test("scenario schema: loopback endpoints accepted in every form", () => {
  for (
    const endpoint of [
      "http://localhost:9222",
      "ws://[::1]:9222/devtools/browser/x",
      "http://127.8.9.10:9222",
    ]
  ) {
    const s = validateScenario(
      withFields({ browser: { mode: "connect", cdp_endpoint: endpoint, target_id: "T" } }),
    );
    assertEquals(s.browser.mode, "connect");
  }
});

Deno.test("scenario schema: ordinary query values and fragments are kept", () => {
  const s = validateScenario(withFields({ start_url: "http://127.0.0.1:4100/a?x=1&y=two%20words#frag" }));
  assertEquals(s.start_url.url, "http://127.0.0.1:4100/a?x=1&y=two%20words#frag");
});

Deno.test("scenario schema: independent failures are all reported, capped at 20", () => {
  const actions = Array.from(
    { length: 25 },
    (_, i) => ({ step_id: `s${i}`, action: "click", selector: "#x", wait: 1 }),
  );
  const err = failure(withFields({ actions }));
  const issues = err.details?.issues as IssueOut[];
  assertEquals(issues.length, 20);
  assertEquals(err.details?.omitted_issues, 5);
  assertEquals(issues[0], { path: "actions.0.wait", rule: "unknown_field", problem: "unknown field wait" });
  assertEquals(
    err.recovery,
    "Fix the scenario at actions.0.wait and the 24 other issues (details.issues lists the first 20); nothing was run.",
  );
});

Deno.test("ruleOf: zod's own issues map to rules", () => {
  const probe = z.strictObject({ a: z.string() });
  const unknown = probe.safeParse({ a: "x", b: 1 });
  assertEquals(unknown.error?.issues.map(ruleOf), ["unknown_field"]);
  const typed = probe.safeParse({ a: 1 });
  assertEquals(typed.error?.issues.map(ruleOf), ["invalid_value"]);
  // zod 4.6 reports an unknown discriminator value as invalid_union with `discriminator` set.
  const badTag = scenarioSchema.safeParse(withActions({ step_id: "a", action: "teleport" }));
  const issue = badTag.error?.issues[0];
  assertEquals(issue?.code, "invalid_union");
  assertEquals(issue?.path, ["actions", 0, "action"]);
  assertEquals(issue && ruleOf(issue), "unknown_action");
  // A string-or-object union reports through its one informative branch.
  const userinfo = scenarioSchema.safeParse(withFields({ start_url: "http://u:p@127.0.0.1:4100/" }));
  const raw = userinfo.error?.issues[0];
  assertEquals(raw?.code, "invalid_union");
  assertEquals(raw && ruleOf(raw), "url_userinfo");
  assertEquals(scenarioIssues(userinfo.error?.issues ?? []).map((i) => [i.path, i.rule]), [[
    "start_url",
    "url_userinfo",
  ]]);
});

Deno.test("scenario schema: the input JSON Schema can be generated for tools/list", () => {
  // A tool definition's input must be an object schema: the cross-field refinement keeps it one.
  const asToolInput: z.ZodObject = scenarioSchema;
  assert(asToolInput instanceof z.ZodObject);
  const schema = z.toJSONSchema(scenarioSchema, { target: "draft-2020-12", io: "input" }) as Json;
  assertEquals(schema.type, "object");
  assertEquals(schema.additionalProperties, false);
  assertEquals(schema.required, ["browser", "start_url", "actions"]);
});

/** Every path of a JSON value, leaves and containers alike. */
function paths(node: unknown, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(node)) node.forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) out.push(...paths(v, [...at, k]));
  }
  return out;
}

function replaced(root: unknown, at: (string | number)[], value: unknown): unknown {
  if (at.length === 0) return value;
  const [head, ...rest] = at;
  if (Array.isArray(root)) return root.map((v, i) => (i === head ? replaced(v, rest, value) : v));
  const rec = root as Json;
  return { ...rec, [String(head)]: replaced(rec[String(head)], rest, value) };
}

Deno.test("scenario schema: any one field replaced by junk parses or fails as invalid_scenario, never throws otherwise", () => {
  const junk = [null, 7, "x", "http://u:p@127.0.0.1:4100/", {}, [], { source: "secret", secret_id: "zz" }];
  let rejected = 0;
  for (const at of paths(FULL).slice(1)) {
    for (const j of junk) {
      try {
        validateScenario(replaced(FULL, at, j));
      } catch (err) {
        assert(
          err instanceof ToolError && err.code === "invalid_scenario",
          `${at.join(".")} = ${JSON.stringify(j)}: ${err}`,
        );
        rejected++;
      }
    }
  }
  assert(rejected > 500, `only ${rejected} rejections`);
});

Deno.test("scenario schema: a declared secret may be referenced anywhere a value goes", () => {
  const ref = { source: "secret" as const, secret_id: "pw" };
  const s = validateScenario(withFields({
    secrets: secretDecl,
    start_url: { url: START, query: [{ name: "t", value: ref }] },
    actions: [{ step_id: "f", action: "fill", selector: "#pw", value: ref }],
    storage: { cookies: [{ name: "sid", value: ref, url: START }] },
  }));
  assertEquals(s.secrets, secretDecl);
  assertEquals(s.start_url.query, [{ name: "t", value: ref }]);
});

Deno.test("secretReferences: every referenced id once, sorted; a declaration alone is not a reference", () => {
  const s = validateScenario({
    ...FULL,
    secrets: [...(FULL.secrets as Json[]), { secret_id: "redact_only", environment_variable: "OBSERVED" }],
  });
  assertEquals(secretReferences(s), ["pw", "tok"]);
  assertEquals(secretReferences(validateScenario(base())), []);
});

Deno.test("flattenIssues: a union's informative branch replaces the bare union issue, paths made whole", () => {
  const parsed = scenarioSchema.safeParse(
    withActions({ step_id: "g", action: "goto", url: "http://u@127.0.0.1:4100/" }),
  );
  const flat = flattenIssues(parsed.error?.issues ?? []);
  assertEquals(flat.map((i) => [i.code, i.path, ruleOf(i)]), [[
    "custom",
    ["actions", 0, "url"],
    "url_userinfo",
  ]]);
  // Not a union: left as it is.
  const plain = scenarioSchema.safeParse(withFields({ extra: 1 }));
  assertEquals(flattenIssues(plain.error?.issues ?? []), plain.error?.issues);
});

Deno.test("scenario schema: the reference contract's destination and key are read as url and keys", () => {
  const s = validateScenario(withFields({
    actions: [
      { step_id: "go", action: "goto", destination: { url: `${START}/next`, query: [] }, wait_until: "load" },
      { step_id: "enter", action: "press", key: "Enter" },
    ],
    storage: {
      cookies: [{
        name: "k",
        value: "v",
        destination: { url: START },
        http_only: false,
        secure: false,
        same_site: "Lax",
      }],
    },
  }));
  const [go, enter] = s.actions;
  assert(go.action === "goto" && go.url.url === `${START}/next`, JSON.stringify(go));
  assert(enter.action === "press" && enter.keys === "Enter", JSON.stringify(enter));
  assertEquals(s.storage.cookies[0].url.url, START);
  // Both names at once: the alias is an unknown field, never silently preferred.
  const both = failure(withActions({ step_id: "go", action: "goto", url: START, destination: START }));
  const issues = (both.details?.issues ?? []) as Array<{ path: string; rule: string }>;
  assertEquals(issues.map((i) => [i.path, i.rule]), [["actions.0.destination", "unknown_field"]]);
});
