/**
 * Scenario evidence against real Chromium: every artifact kind on a page with form state, storage and
 * history; equal digests across fresh browsers; a declared secret nowhere in artifacts or events; each
 * event family attributed to the step during which it happened.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import type { CdpConnection } from "../../src/browser/cdp.ts";
import type { BrowserSession } from "../../src/browser/session.ts";
import type { PageTarget } from "../../src/browser/targets.ts";
import { serveStatic, type StaticServer } from "../../src/demo/static_server.ts";
import { InstanceStore } from "../../src/store/instance.ts";
import { ToolError } from "../../src/errors.ts";
import {
  ARTIFACT_KINDS,
  EVENT_FAMILIES,
  type ScenarioEvent,
  type StepArtifacts,
} from "../../src/scenario/capture.ts";
import { captureArtifacts, type CaptureContext, type Redactor } from "../../src/scenario/step_capture.ts";
import { collectEvents } from "../../src/scenario/step_events.ts";
import { observedUrl, sha256Hex } from "../../src/scenario/step_capture_text.ts";
import { click, evaluate, typeInto, until } from "./dom_recorder_util.ts";
import { withScratchSession } from "./scratch_session.ts";

const SECRET = "hunter2-Xq9-planted";

class TestRedactor implements Redactor {
  constructor(readonly secrets: Record<string, string>) {}
  text(s: string): string {
    let out = s;
    for (const [id, value] of Object.entries(this.secrets)) out = out.split(value).join(`\${secret:${id}}`);
    // The page URL-encodes what it puts in a cookie or a query; the encoded form is the same secret.
    for (const [id, value] of Object.entries(this.secrets)) {
      out = out.split(encodeURIComponent(value)).join(`\${secret:${id}}`);
    }
    return out;
  }
  isSecret(value: string): string | undefined {
    return Object.entries(this.secrets).find(([, v]) => v === value)?.[0];
  }
}

interface Browser {
  session: BrowserSession;
  conn: CdpConnection;
  page: PageTarget;
  store: InstanceStore;
  site: StaticServer;
  ctx(redactor?: Redactor): CaptureContext;
}

const FIXTURE = "/scenario_evidence/";

async function withBrowser(body: (b: Browser) => Promise<void>): Promise<void> {
  const data = await Deno.makeTempDir({ prefix: "krometrail-scenario-data-" });
  const site = serveStatic();
  const store = await InstanceStore.open(data);
  try {
    await withScratchSession({ prefix: "krometrail-scenario-ev-" }, async (session, conn) => {
      const page = session.page();
      await page.send("Emulation.setDeviceMetricsOverride", {
        width: 800,
        height: 600,
        deviceScaleFactor: 1,
        mobile: false,
      });
      const noSecrets = new TestRedactor({});
      await body({
        session,
        conn,
        page,
        store,
        site,
        ctx: (redactor = noSecrets) => ({
          page,
          store,
          redactor,
          allowedOrigins: [site.origin],
          durableUrl: observedUrl(redactor),
        }),
      });
    });
  } finally {
    store.close();
    await site.close();
    await Deno.remove(data, { recursive: true }).catch(() => {});
  }
}

const ALL = new Set(ARTIFACT_KINDS);

function captured<T>(state: { state: string; value?: T; reason?: string }, kind: string): T {
  assertEquals(state.state, "captured", `${kind}: ${state.reason ?? ""}`);
  return state.value as T;
}

/** Loads the form page and puts state into it: typed text, a checked box, a chosen option, history. */
async function fillForm(b: Browser, token: string): Promise<void> {
  const loaded = await b.session.navigate(b.page, `${b.site.origin}${FIXTURE}index.html`, "load", 10_000);
  assert(loaded.loaded, "index.html loaded");
  await typeInto(b.page, "#name", "Ada");
  await typeInto(b.page, "#token", token);
  await typeInto(b.page, "#pin", "4321");
  await click(b.page, "#agree");
  await evaluate(b.page, `(() => { const s = document.getElementById("plan"); s.value = "pro"; })()`);
  await click(b.page, "#save");
  assert(await until(() => b.page.url.includes("#done")), "pushState reached the page");
  // The caret shows (and blinks) only in a focused page: the capture must hide it.
  await b.page.send("Emulation.setFocusEmulationEnabled", { enabled: true });
  await evaluate(b.page, `document.getElementById("name").focus()`);
}

Deno.test("every artifact kind is captured from a page with form state, storage and history", async () => {
  await withBrowser(async (b) => {
    await fillForm(b, "plain-token");
    const a = await captureArtifacts(b.ctx(), ALL);

    const shot = captured(a.screenshot, "screenshot");
    assertEquals([shot.width, shot.height, shot.mime_type], [800, 600, "image/png"]);
    const png = Uint8Array.fromBase64(shot.data_base64 ?? "");
    assertEquals(shot.sha256, sha256Hex(png));
    assertEquals(shot.bytes, png.byteLength);
    assertMatch(shot.uri, /^krometrail:\/\/evidence\/screenshots\/.+\.png$/);
    assert(b.store.evidenceExists(shot.uri), "the screenshot is an evidence file");

    const dom = captured(a.dom, "dom");
    assertEquals(dom.sha256, sha256Hex(dom.text));
    for (
      const line of [
        '<input autocomplete="off" id="name" name="name" :value="Ada">',
        '<input id="agree" type="checkbox" :checked="true">',
        '<input autocomplete="off" id="pin" type="password" :value-length="4">',
        '<option value="pro" :selected="true">',
        '"Saved plain-token"',
        "#shadow-root (open)",
        '"Shadow text"',
        '"Inside the frame"',
      ]
    ) assert(dom.text.includes(line), `dom text has ${line}\n${dom.text}`);
    assertMatch(dom.text, /<script nonce sha256=[0-9a-f]{64}>/);
    assert(!dom.text.includes("n0nce-per-response"), "nonce values are dropped");
    assert(!dom.text.includes("window.started"), "script bodies are digests");

    const ax = captured(a.accessibility, "accessibility");
    assert(ax.text.includes('textbox "Name" value="Ada"'), ax.text);
    assert(ax.text.includes('checkbox "I agree" [checked, focusable]'), ax.text);
    assert(
      ax.text.includes('Iframe "Inner frame"\n    RootWebArea "Inner"'),
      "the same-origin frame's tree is inline",
    );
    assert(ax.text.includes('StaticText "Inside the frame"'), ax.text);
    assert(!/\d{3,}/.test(ax.text), "no node ids or ports in the AX text");

    assertEquals(captured(a.url, "url"), `${b.site.origin}${FIXTURE}index.html?saved=plain-token#done`);

    const history = captured(a.history, "history");
    assertEquals(history.length, 3, JSON.stringify(history));
    assertEquals(history.current_index, 2);
    assertEquals(history.entries[1].url, `${b.site.origin}${FIXTURE}index.html`);
    assertEquals(history.entries[2].url, `${b.site.origin}${FIXTURE}index.html?saved=plain-token#done`);

    const storage = captured(a.storage, "storage");
    assertEquals(storage.origin, b.site.origin);
    assertEquals(storage.local_storage.map((e) => e.name), ["a-first", "theme", "token"]);
    assertEquals(storage.local_storage[1], {
      name: "theme",
      value_state: "hashed",
      value_sha256: sha256Hex("dark"),
    });
    assertEquals(storage.session_storage.map((e) => e.name), ["note", "visit"]);
    assertEquals(storage.cookies.map((c) => c.name), ["flavor", "session"]);
    assertEquals(storage.cookies[0], {
      name: "flavor",
      domain: "127.0.0.1",
      path: "/",
      secure: false,
      http_only: false,
      same_site: null,
      value_state: "hashed",
      value_sha256: sha256Hex("vanilla"),
    });

    const some = await captureArtifacts(b.ctx(), new Set(["url"] as const));
    assertEquals(some.dom, { state: "not_requested" });
    assertEquals(some.screenshot, { state: "not_requested" });
    assertEquals(some.url.state, "captured");
  });
});

/** The digests a comparison relies on, from one fresh browser. */
async function digestsOfOneRun(): Promise<Record<string, string>> {
  let out: Record<string, string> = {};
  await withBrowser(async (b) => {
    await fillForm(b, "plain-token");
    const kinds = new Set(["screenshot", "dom", "accessibility"] as const);
    const first = await captureArtifacts(b.ctx(), kinds);
    // Apart by more than the caret's blink interval (500 ms), so a visible caret would differ.
    await new Promise((r) => setTimeout(r, 600));
    const second = await captureArtifacts(b.ctx(), kinds);
    const digest = (x: StepArtifacts) => ({
      screenshot: captured(x.screenshot, "screenshot").sha256,
      dom: captured(x.dom, "dom").sha256,
      accessibility: captured(x.accessibility, "accessibility").sha256,
    });
    assertEquals(digest(second), digest(first), "two captures of the unchanged page agree");
    out = digest(first);
  });
  return out;
}

Deno.test("two runs of the same page in two fresh browsers give identical dom, accessibility and screenshot digests", async () => {
  const one = await digestsOfOneRun();
  const two = await digestsOfOneRun();
  assertEquals(two, one);
});

Deno.test("a declared secret typed into an input and logged appears nowhere in artifacts or events", async () => {
  await withBrowser(async (b) => {
    const redactor = new TestRedactor({ api_token: SECRET });
    const events = collectEvents(
      b.session,
      new Set(EVENT_FAMILIES),
      redactor,
      observedUrl(redactor),
      () => b.session.now(),
    );
    try {
      await fillForm(b, SECRET);
      assert(await until(() => events.snapshot().items.some((e) => e.kind === "console")), "console seen");
      const a = await captureArtifacts(b.ctx(redactor), ALL);
      const { data_base64: _png, ...shot } = captured(a.screenshot, "screenshot");
      const durable = JSON.stringify({ ...a, screenshot: shot, events: events.snapshot().items });
      assert(!durable.includes(SECRET), "the secret value is nowhere");
      assert(!durable.includes(encodeURIComponent(SECRET)), "nor its URL-encoded form");
      const console = events.snapshot().items.find((e) => e.kind === "console");
      assertEquals(console?.text, "saving token ${secret:api_token}");
      assert(captured(a.dom, "dom").text.includes('"Saved ${secret:api_token}"'));
      assert(captured(a.dom, "dom").text.includes(':value="${secret:api_token}"'));
      assertEquals(
        captured(a.url, "url"),
        `${b.site.origin}${FIXTURE}index.html?saved=\${secret:api_token}#done`,
      );
      const storage = captured(a.storage, "storage");
      assertEquals(storage.local_storage.find((e) => e.name === "token"), {
        name: "token",
        value_state: "redacted-secret",
        value_sha256: null,
      });
      assertEquals(storage.session_storage.find((e) => e.name === "note")?.value_state, "redacted-secret");
      assertEquals(storage.cookies.find((c) => c.name === "session")?.value_state, "redacted-secret");
    } finally {
      events.stop();
    }
  });
});

/** A WebSocket echo and a download that never finishes (so it can be cancelled), on their own origin. */
function sideServer(): { origin: string; close: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/ws") {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onmessage = (m) => socket.send(typeof m.data === "string" ? `echo ${m.data}` : m.data);
      return response;
    }
    if (path === "/slow.bin") {
      let timer: ReturnType<typeof setInterval> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          timer = setInterval(() => c.enqueue(new Uint8Array(512)), 100);
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, {
        headers: {
          "content-type": "application/octet-stream",
          "content-disposition": "attachment; filename=report.bin",
        },
      });
    }
    return new Response("not found", { status: 404 });
  });
  return { origin: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test("each event family is attributed to the step during which it happened", async () => {
  const side = sideServer();
  try {
    await withBrowser(async (b) => {
      const loaded = await b.session.navigate(
        b.page,
        `${b.site.origin}${FIXTURE}events.html`,
        "load",
        10_000,
      );
      assert(loaded.loaded, "events.html loaded");
      const redactor = new TestRedactor({});
      const c = collectEvents(
        b.session,
        new Set(EVENT_FAMILIES),
        redactor,
        observedUrl(redactor),
        () => b.session.now(),
      );
      const has = (kind: string, step: number, extra: (e: ScenarioEvent) => boolean = () => true) => () =>
        c.snapshot().items.some((e) => e.kind === kind && e.step_index === step && extra(e));
      const cancelled: string[] = [];
      b.conn.on("Browser.downloadWillBegin", (p) => {
        cancelled.push(p.guid);
        b.conn.send("Browser.cancelDownload", { guid: p.guid }).catch(() => {});
      });
      const steps: Array<
        { run: () => Promise<unknown>; expect: Array<[string, (e: ScenarioEvent) => boolean]> }
      > = [
        {
          run: () => evaluate(b.page, "steps.console()"),
          expect: [["console", (e) => e.level === "warning"]],
        },
        { run: () => evaluate(b.page, "steps.error()"), expect: [["page-error", () => true]] },
        {
          run: () => evaluate(b.page, "steps.fetch()"),
          expect: [
            ["request", (e) => String(e.url).endsWith("/data.json")],
            ["response", (e) => String(e.url).endsWith("/data.json") && e.status === 200],
          ],
        },
        {
          run: () =>
            evaluate(b.page, `steps.socket(${JSON.stringify(side.origin.replace("http", "ws") + "/ws")})`),
          expect: [
            ["websocket-opened", () => true],
            ["websocket-frame-sent", (e) => e.payload_text === "hello socket"],
            ["websocket-frame-received", (e) => e.payload_text === "echo hello socket"],
            ["websocket-frame-sent", (e) => e.payload_type === "binary" && e.payload_bytes === 3],
            ["websocket-frame-received", (e) => e.payload_type === "binary" && e.payload_bytes === 3],
            ["websocket-closed", () => true],
          ],
        },
        {
          run: () => evaluate(b.page, "steps.frame()"),
          expect: [
            ["frame-attached", () => true],
            ["frame-navigated", (e) => e.name === "child" && String(e.url).endsWith("/frame.html")],
            ["frame-detached", (e) => e.name === "child"],
          ],
        },
        {
          run: () => evaluate(b.page, "steps.worker()"),
          expect: [
            ["worker-created", (e) => String(e.url).endsWith("/worker.js") && e.worker_type === "worker"],
            ["worker-closed", (e) => String(e.url).endsWith("/worker.js")],
          ],
        },
        {
          run: () => evaluate(b.page, "steps.otherWorkers()"),
          expect: [
            [
              "worker-created",
              (e) => String(e.url).endsWith("/shared_worker.js") && e.worker_type === "shared_worker",
            ],
            [
              "worker-created",
              (e) => String(e.url).endsWith("/service_worker.js") && e.worker_type === "service_worker",
            ],
          ],
        },
        {
          run: async () => {
            await click(b.page, "#popup");
            await until(has("popup-opened", 8, (e) => e.url !== null), 5_000);
            await evaluate(b.page, "window.popup.close()");
          },
          expect: [
            ["popup-opened", (e) => String(e.url).endsWith("/frame.html")],
            ["popup-closed", (e) => String(e.url).endsWith("/frame.html")],
          ],
        },
        {
          run: () => evaluate(b.page, `steps.download(${JSON.stringify(side.origin + "/slow.bin")})`),
          expect: [[
            "download-cancelled",
            (e) => e.suggested_filename === "report.bin" && String(e.url).endsWith("/slow.bin"),
          ]],
        },
      ];
      try {
        // Our own isolated worlds are not the page: their console output is not the scenario's.
        const { executionContextId } = await b.page.send("Page.createIsolatedWorld", {
          frameId: b.page.mainFrameId ?? "",
          worldName: "scenario-evidence-test",
        });
        await b.page.send("Runtime.evaluate", {
          expression: `console.log("from an isolated world")`,
          contextId: executionContextId,
        });
        for (const [i, s] of steps.entries()) {
          const index = i + 1;
          c.beginStep(index);
          await s.run();
          for (const [kind, extra] of s.expect) {
            assert(await until(has(kind, index, extra), 5_000), `step ${index}: ${kind} seen in its step`);
          }
        }
        const snap = c.snapshot();
        assertEquals(snap.dropped, 0);
        assertEquals(snap.items.map((e) => e.sequence), snap.items.map((_, i) => i + 1));
        for (const [i, s] of steps.entries()) {
          const index = i + 1;
          const { start, end } = snap.bounds(index);
          for (const [kind, extra] of s.expect) {
            const e = snap.items.find((x) => x.kind === kind && extra(x));
            assert(e, `${kind} recorded`);
            assertEquals(e.step_index, index, `${kind} belongs to step ${index}`);
            assert(e.sequence >= start && e.sequence <= end, `${kind} lies inside step ${index}'s bounds`);
          }
        }
        // Families never claim another step's sources: the fetched file is only step 3's.
        assert(
          snap.items.filter((e) => String(e.url ?? "").endsWith("/data.json")).every((e) =>
            e.step_index === 3
          ),
        );
        assertEquals(snap.bounds(99), { start: snap.items.length + 1, end: snap.items.length });
        assert(cancelled.length === 1, "one download was cancelled");
        assertEquals(snap.items.filter((e) => String(e.kind).startsWith("websocket-frame")).length, 4);
        assert(
          !snap.items.some((e) => String(e.text ?? "").includes("isolated world")),
          "isolated worlds are not heard",
        );
        assert(
          snap.items.every((e) => !("request_id" in e) && !("frame_id" in e) && !("target_id" in e)),
          "no per-run ids in events",
        );
      } finally {
        c.stop();
      }
    });
  } finally {
    await side.close();
  }
});

Deno.test("families not asked for are not collected", async () => {
  await withBrowser(async (b) => {
    await b.session.navigate(b.page, `${b.site.origin}${FIXTURE}events.html`, "load", 10_000);
    const redactor = new TestRedactor({});
    const c = collectEvents(
      b.session,
      new Set(["page-errors"] as const),
      redactor,
      observedUrl(redactor),
      () => b.session.now(),
    );
    try {
      await evaluate(b.page, "steps.console(); steps.fetch(); steps.error()");
      assert(await until(() => c.snapshot().items.length > 0), "the error arrives");
      await evaluate(b.page, "steps.fetch()");
      assertEquals([...new Set(c.snapshot().items.map((e) => e.kind))], ["page-error"]);
    } finally {
      c.stop();
    }
  });
});

Deno.test("an artifact that cannot be had is missing with its reason; the others are still captured", async () => {
  await withBrowser(async (b) => {
    await b.session.navigate(b.page, `${b.site.origin}/animation.html`, "load", 10_000);
    // A page that never holds still still gives its picture, within the shot bound.
    const t0 = performance.now();
    const moving = await captureArtifacts(b.ctx(), new Set(["screenshot"] as const));
    assertEquals(moving.screenshot.state, "captured");
    assert(performance.now() - t0 < 5_000, "bounded on a page that keeps moving");

    b.store.admission = () =>
      Promise.reject(
        new ToolError({
          code: "disk_budget_exceeded",
          message: "screenshot of 9 bytes is over the share",
          retry: "never",
        }),
      );
    const refused = await captureArtifacts(b.ctx(), new Set(["screenshot", "url"] as const));
    b.store.admission = undefined;
    assertEquals(refused.screenshot.state, "missing");
    assert(
      refused.screenshot.state === "missing" && refused.screenshot.reason.includes("over the share"),
      JSON.stringify(refused.screenshot),
    );
    assertEquals(refused.url.state, "captured");

    await b.session.closePage(b.page);
    const closed = await captureArtifacts(b.ctx(), ALL);
    for (const kind of ARTIFACT_KINDS) {
      const state = closed[kind];
      assert(
        state.state === "missing" && state.reason.includes("closed"),
        `${kind}: ${JSON.stringify(state)}`,
      );
    }
  });
});
