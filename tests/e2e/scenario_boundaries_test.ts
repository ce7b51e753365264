/**
 * Issue 14 boundaries, over stdio in real Chromium: navigation, redirect and request off the origin set
 * are refused with the origin named; a storage seed off the set, raw userinfo and an undeclared secret
 * fail validation; a declared secret reaches no returned evidence and no file under the data dir; request
 * replay fulfills a JSON route and aborts an unmatched request; connect mode leaves the external browser
 * running and launch mode deletes its profile.
 */
import { assert, assertEquals } from "../assert.ts";
import { redirectingServer } from "./redirect_server.ts";
import {
  e2e,
  errorCode,
  type ServerHandle,
  startDebugChrome,
  startServer,
  structured,
  textOf,
  withServer,
} from "./harness.ts";
import type { StaticServer } from "../../src/demo/static_server.ts";

type Step = {
  step_id: string;
  status: string;
  error: { code: string; origin?: string; message: string } | null;
  interaction_id: string | null;
  artifacts: Record<string, { state: string; value?: unknown }>;
};

const steps = (r: Record<string, unknown>) => r.steps as Step[];
const launch = { mode: "launch", headless: true };

function boundaries(origin: string, query = ""): string {
  return `${origin}/scenario_boundaries/index.html${query}`;
}

/** The same page served on another origin: localhost and 127.0.0.1 are different origins. */
const otherOrigin = (origin: string) => origin.replace("127.0.0.1", "localhost");

async function offOrigin(server: ServerHandle, site: StaticServer): Promise<void> {
  const target = (origin: string) => `${otherOrigin(origin)}/index.html`;
  const off = otherOrigin(site.origin);
  const nav = structured(
    await server.call("capture_browser_scenario", {
      browser: launch,
      start_url: boundaries(site.origin, `?away=${encodeURIComponent(target(site.origin))}`),
      actions: [{ step_id: "leave", action: "click", locator: { role: "link", name: "Leave" } }],
    }),
  );
  const leave = steps(nav)[1];
  assertEquals(leave.status, "failed", JSON.stringify(leave));
  assertEquals(leave.error?.code, "origin_not_allowed");
  assertEquals(leave.error?.origin, off);
  assert(leave.error?.message.includes(off), leave.error?.message);

  const req = structured(
    await server.call("capture_browser_scenario", {
      browser: launch,
      start_url: boundaries(site.origin, `?other=${encodeURIComponent(target(site.origin))}`),
      actions: [
        { step_id: "fetch_other", action: "click", locator: { role: "button", name: "Fetch other" } },
        { step_id: "after", action: "hover", selector: "h1" },
      ],
      capture: { events: ["network"] },
    }),
  );
  const fetchStep = steps(req)[1];
  assertEquals(fetchStep.error?.code, "origin_not_allowed", JSON.stringify(fetchStep));
  assertEquals(fetchStep.error?.origin, off);
  // The run stops at the refusal; what follows is said to be skipped, never silently absent.
  assertEquals(steps(req)[2].status, "skipped");

  const redirector = redirectingServer(() => target(site.origin));
  try {
    const red = structured(
      await server.call("capture_browser_scenario", {
        browser: launch,
        start_url: boundaries(site.origin),
        allowed_origins: [site.origin, redirector.origin],
        actions: [{ step_id: "bounce", action: "goto", url: `${redirector.origin}/go` }],
      }),
    );
    const bounce = steps(red)[1];
    assertEquals(bounce.error?.code, "origin_not_allowed", JSON.stringify(bounce));
    assertEquals(bounce.error?.origin, off);
    assert(redirector.hits() >= 1, "the allowed origin was reached before the redirect was refused");
  } finally {
    await redirector.close();
  }
}

async function validation(server: ServerHandle, site: StaticServer): Promise<void> {
  const base = {
    browser: launch,
    start_url: boundaries(site.origin),
    actions: [{ step_id: "a", action: "hover", selector: "h1" }],
  };
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    [
      "storage.local_storage.0.origin",
      {
        storage: {
          local_storage: [{ origin: "http://evil.test:81", entries: [{ name: "k", value: "v" }] }],
        },
      },
      "http://evil.test:81",
      "origin_not_allowed",
    ],
    [
      "start_url",
      { start_url: site.origin.replace("http://", "http://user:pw@") + "/" },
      "userinfo",
      "url_userinfo",
    ],
    [
      "actions.0.value",
      {
        actions: [{
          step_id: "a",
          action: "fill",
          selector: "#token",
          value: { source: "secret", secret_id: "nope" },
        }],
      },
      "nope",
      "undeclared_secret",
    ],
  ];
  for (const [path, patch, words, rule] of cases) {
    const r = await server.call("capture_browser_scenario", { ...base, ...patch });
    assert(r.isError, `${path}: expected a validation error`);
    const err = structured(r).error as {
      code: string;
      message: string;
      details?: { issues?: Array<{ path: string; rule: string }> };
    };
    assertEquals(err.code, "invalid_arguments", JSON.stringify(err));
    const issue = err.details?.issues?.find((i) => i.path.startsWith(path));
    assert(issue, `${path}: ${JSON.stringify(err)}`);
    assertEquals(issue.rule, rule, JSON.stringify(err));
    assert(JSON.stringify(err).includes(words), `${path}: ${JSON.stringify(err)}`);
  }
  // Nothing ran: no session was started by any of them.
  const status = structured(await server.call("browser_status"));
  assertEquals(status.running, false);
}

Deno.test(
  "scenario: a declared secret reaches no returned evidence and no file under the data dir",
  e2e,
  async () => {
    const SECRET = "sek-ZQ19-planted-value";
    const site = (await import("./harness.ts")).fixtures();
    const server = await startServer({ env: { SCN_TOKEN: SECRET } });
    try {
      const result = await server.call("capture_browser_scenario", {
        browser: launch,
        start_url: {
          url: boundaries(site.origin),
          query: [{ name: "t", value: { source: "secret", secret_id: "token" } }],
        },
        secrets: [{ secret_id: "token", environment_variable: "SCN_TOKEN" }],
        actions: [
          {
            step_id: "type_token",
            action: "fill",
            locator: { label: "Token" },
            value: { source: "secret", secret_id: "token" },
          },
          { step_id: "settle", action: "wait_for", selector: "#echo", state: "visible" },
        ],
        capture: {
          after_each_step: ["screenshot", "dom", "accessibility", "url", "history", "storage"],
          at_end: ["url"],
          events: ["console", "page-errors", "network"],
        },
      });
      const text = JSON.stringify(result);
      assert(!result.isError, textOf(result));
      assert(!text.includes(SECRET), "the secret value is in the returned evidence");
      assert(text.includes("${secret:token}"), "the secret is referenced where it appeared");
      const r = structured(result);
      const dom = steps(r)[1].artifacts.dom.value as { text: string };
      assert(dom.text.includes("echo ${secret:token}"), dom.text.slice(0, 400));
      // The capture file holds the same redacted document.
      const file = await server.client.readResource({ uri: r.capture_uri as string });
      const body = JSON.stringify(file);
      assert(!body.includes(SECRET));
      // Every file under the data dir: the index, segments, DOM chunks, evidence, manifests.
      const hits = await grepTree(server.dataDir, SECRET);
      assertEquals(hits, [], `secret found in ${hits.join(", ")}`);
      // The recorded DOM says where the secret was, by reference.
      const dom2 = textOf(
        await server.call("read_dom_at", {
          interaction_id: steps(r)[2].interaction_id ?? steps(r)[1].interaction_id,
        }),
      );
      assert(!dom2.includes(SECRET), dom2);
    } finally {
      await server.close();
      await site.close();
    }
  },
);

async function grepTree(root: string, needle: string): Promise<string[]> {
  const found: string[] = [];
  const bytes = new TextEncoder().encode(needle);
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (e.isFile) {
        const data = await Deno.readFile(path);
        if (indexOf(data, bytes) >= 0) found.push(path);
      }
    }
  };
  await walk(root);
  return found;
}

function indexOf(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

async function replay(server: ServerHandle, site: StaticServer): Promise<void> {
  const r = structured(
    await server.call("capture_browser_scenario", {
      browser: launch,
      start_url: boundaries(site.origin),
      request_replay: {
        mode: "exact",
        unmatched: "passthrough-declared-origins",
        routes: [{
          route_id: "items",
          method: "GET",
          request: { url: `${site.origin}/api/items`, query: [{ name: "page", value: "1" }] },
          response: {
            kind: "response",
            status: 200,
            body: JSON.stringify([{ name: "alpha" }, { name: "beta" }]),
          },
        }, {
          route_id: "unlisted",
          method: "GET",
          request: `${site.origin}/api/unlisted`,
          response: { kind: "abort", reason: "failed" },
        }],
      },
      actions: [
        { step_id: "load", action: "click", locator: { role: "button", name: "Load items" } },
        { step_id: "done", action: "wait_for", selector: "#status:not(:empty)", state: "attached" },
      ],
      capture: { at_end: ["dom"], events: ["network"] },
    }),
  );
  const last = steps(r)[2];
  assertEquals(last.status, "completed", JSON.stringify(last));
  const dom = (last.artifacts.dom.value as { text: string }).text;
  assert(dom.includes("items: alpha, beta"), dom);
  assert(dom.includes("unlisted aborted"), dom);
  const decisions = (r.events as { items: Array<{ kind: string; decision?: string; route_id?: string }> })
    .items
    .filter((e) => e.kind === "request-replayed").map((e) => `${e.decision}:${e.route_id}`);
  assert(
    decisions.includes("fulfilled:items") && decisions.includes("aborted:unlisted"),
    decisions.join(" "),
  );

  // Unmatched requests abort when the replay says so; the start page here comes from a route.
  const strict = structured(
    await server.call("capture_browser_scenario", {
      browser: launch,
      start_url: boundaries(site.origin),
      request_replay: {
        mode: "exact",
        unmatched: "abort",
        routes: [{
          route_id: "page",
          method: "GET",
          request: boundaries(site.origin),
          response: {
            kind: "response",
            status: 200,
            content_type: "text/html",
            body:
              "<!doctype html><title>replayed</title><button onclick=\"fetch('/api/items').then(()=>document.title='answered',()=>document.title='aborted')\">Go</button>",
          },
        }],
      },
      actions: [
        { step_id: "go", action: "click", locator: { role: "button", name: "Go" } },
        { step_id: "seen", action: "wait_for", selector: "title", state: "attached" },
      ],
      capture: { at_end: ["dom"], events: ["network"] },
    }),
  );
  const events = (strict.events as {
    items: Array<{ kind: string; url?: string; step_index: number; decision?: string }>;
  }).items;
  const ofItems = (e: { url?: string; step_index: number }) =>
    e.step_index === 1 && String(e.url).includes("/api/items");
  assert(events.some((e) => e.kind === "request-failed" && ofItems(e)), JSON.stringify(events));
  assert(
    events.some((e) => e.kind === "request-replayed" && e.decision === "unmatched-aborted" && ofItems(e)),
    JSON.stringify(events),
  );
  assertEquals(
    (strict.steps as Step[]).map((s) => s.status),
    ["completed", "completed", "completed"],
    "the replayed start page loaded although unmatched requests abort",
  );
}

async function connectAndLaunch(server: ServerHandle, site: StaticServer): Promise<void> {
  const profile = await Deno.makeTempDir({ prefix: "krometrail-scn-external-" });
  const chrome = await startDebugChrome(profile);
  try {
    const list = await (await fetch(`http://127.0.0.1:${chrome.port}/json/list`)).json() as Array<
      { id: string; type: string }
    >;
    const page = list.find((t) => t.type === "page");
    assert(page, JSON.stringify(list));
    const connected = structured(
      await server.call("capture_browser_scenario", {
        browser: { mode: "connect", cdp_endpoint: `http://127.0.0.1:${chrome.port}`, target_id: page.id },
        start_url: boundaries(site.origin),
        actions: [{ step_id: "look", action: "hover", selector: "h1" }],
        capture: { events: ["console"] },
      }),
    );
    assertEquals(steps(connected)[1].status, "completed", JSON.stringify(steps(connected)[1]));
    const b = connected.browser as Record<string, unknown>;
    assertEquals(b.cleanup, "disconnected-external");
    assert(connected.pre_attach_gap !== null, "connect mode declares the pre-attach gap");
    // The external browser is alive and still serves its endpoint.
    const alive = await Promise.race([
      chrome.child.status.then(() => false),
      new Promise((r) => setTimeout(() => r(true), 300)),
    ]);
    assertEquals(alive, true);
    assert((await fetch(`http://127.0.0.1:${chrome.port}/json/version`)).ok);

    const launched = structured(
      await server.call("capture_browser_scenario", {
        browser: launch,
        start_url: boundaries(site.origin),
        actions: [{ step_id: "look", action: "hover", selector: "h1" }],
      }),
    );
    const lb = launched.browser as { profile_dir?: string; profile_removed?: boolean; cleanup: string };
    assertEquals(lb.cleanup, "terminated-owned-process");
    assert(lb.profile_dir, JSON.stringify(lb));
    assertEquals(lb.profile_removed, true);
    const gone = await Deno.stat(lb.profile_dir).then(() => false, () => true);
    assert(gone, `${lb.profile_dir} still exists`);
    // The scenario ended its session: another can start at once.
    assertEquals(structured(await server.call("browser_status")).running, false);
    assertEquals(errorCode(await server.call("browser_status")), undefined);
  } finally {
    chrome.child.kill("SIGKILL");
    await chrome.child.status;
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}

Deno.test(
  "scenario: with a session already running, the scenario is refused and that session keeps running",
  e2e,
  async () => {
    await withServer(async (server, site) => {
      const refused = await server.call("capture_browser_scenario", {
        browser: launch,
        start_url: boundaries(site.origin),
        actions: [{ step_id: "look", action: "hover", selector: "h1" }],
      });
      assertEquals(errorCode(refused), "browser_already_running", textOf(refused));
      const status = structured(await server.call("browser_status"));
      assertEquals(status.running, true);
      const nav = await server.call("navigate_page", { url: boundaries(site.origin) });
      assert(!nav.isError, textOf(nav));
    }, { browser: { headless: true } });
  },
);

/**
 * The scenario checks that need no session of their own share one server process (its start is most of
 * what each would otherwise cost under load): every scenario launches its own browser and ends its
 * session before the next.
 */
Deno.test("scenario boundaries", e2e, async (t) => {
  await withServer(async (server, site) => {
    const checks: Array<[string, (server: ServerHandle, site: StaticServer) => Promise<void>]> = [
      [
        "scenario: navigation, request and redirect off the origin set fail the step naming the origin",
        offOrigin,
      ],
      [
        "scenario: validation refuses a storage seed off the set, raw userinfo and an undeclared secret",
        validation,
      ],
      ["scenario: request replay fulfills a JSON route and aborts an unmatched request", replay],
      ["scenario: connect leaves the external browser running; launch deletes its profile", connectAndLaunch],
    ];
    for (const [name, check] of checks) await t.step({ name, ...e2e, fn: () => check(server, site) });
  });
});
