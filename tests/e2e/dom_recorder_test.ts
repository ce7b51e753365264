/**
 * The DOM recorder against real Chromium: rrweb in an isolated world of every page from document start,
 * batches on the session clock, masked inputs, inlined stylesheets, nothing reachable from the page, and
 * nothing at all with record_dom: false.
 */
import { EventType, IncrementalSource } from "@rrweb/types";
import { assert, assertEquals } from "../assert.ts";
import { e2e, structured, textOf, withServer } from "./harness.ts";
import {
  DOM_RECORDER_BINDING,
  DOM_RECORDER_WORLD,
  domRecorderSetup,
  domRecorderStats,
} from "../../src/pagestate/recorder.ts";
import type { PageTarget } from "../../src/browser/targets.ts";
import { click, evaluate, type Recorded, sleep, typeInto, until, withRecorder } from "./dom_recorder_util.ts";

const EARLY_PAGE = `<!doctype html><html><head><title>early</title><script>
window.__seen = [];
new MutationObserver((ms) => { for (const m of ms) for (const n of m.addedNodes) if (n.nodeType === 1) __seen.push(n.tagName); })
  .observe(document, { childList: true, subtree: true });
// A hostile page: what it can reach of a recorder in its own world, it breaks.
MutationObserver.prototype.observe = function () {};
window.MutationObserver = function () {};
EventTarget.prototype.addEventListener = new Proxy(EventTarget.prototype.addEventListener, {
  apply(target, self, args) { return args[0] === "input" ? undefined : Reflect.apply(target, self, args); },
});
</script></head><body>
<p id="static">static</p>
<script>
const p = document.createElement("p"); p.id = "parse-added"; p.textContent = "added while parsing"; document.body.appendChild(p);
document.addEventListener("DOMContentLoaded", () => {
  const q = document.createElement("p"); q.id = "dcl-added"; q.textContent = "added at DOMContentLoaded"; document.body.appendChild(q);
});
addEventListener("load", () => document.getElementById("static").setAttribute("data-loaded", "yes"));
</script>
<input id="name" type="text"><input id="pw" type="password">
<div style="height: 4000px">tall</div>
</body></html>`;

const POPUP_PAGE = `<!doctype html><title>opener</title>
<button id="open" onclick="window.open('/popup_child.html', '_blank')">open</button>`;
const POPUP_CHILD = `<!doctype html><title>child</title><p id="child">popup child</p>`;

const FRAME_PAGE =
  `<!doctype html><title>frames</title><p>top</p><iframe id="inner" src="/frame_child.html"></iframe>`;
const FRAME_CHILD = `<!doctype html><title>child</title><p id="inner-text">inside the frame</p>
<button id="grow" onclick="document.body.appendChild(document.createElement('section')).textContent = 'grown inside'">grow</button>`;

const STYLE_PAGE = `<!doctype html><title>styles</title><style>p { color: rgb(1, 2, 3); }</style>
<p id="text">text</p><input id="field" type="text"><button id="poke">poke</button>
<script>document.getElementById("poke").addEventListener("click", () => document.body.appendChild(document.createElement("hr")));</script>`;

type Ev = ReturnType<Recorded["events"]>[number];
const isMutation = (e: Ev) =>
  e.type === EventType.IncrementalSnapshot && e.data.source === IncrementalSource.Mutation;
const payloads = (r: Recorded) => r.batches.map((b) => b.payload).join("\n");

Deno.test({
  name: "dom recorder: from document start, in an isolated world page scripts can neither see nor break",
  ...e2e,
  fn: () =>
    withRecorder({ files: { "early.html": EARLY_PAGE } }, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.pages.origin}/early.html`, "load", 15_000);
      const has = (needle: string) =>
        r.events(page.id).some((e) => isMutation(e) && JSON.stringify(e).includes(needle));
      assert(await until(() => has("dcl-added") && has("data-loaded")), "DCL and load mutations recorded");
      const events = r.events(page.id);
      const full = events.find((e) => e.type === EventType.FullSnapshot);
      assert(full, "a full snapshot");
      const snapshot = JSON.stringify(full.data);
      assert(snapshot.includes("parse-added"), "a parse-time mutation is in the first snapshot");
      assert(
        !snapshot.includes("dcl-added"),
        "the snapshot was taken before the page's own DOMContentLoaded listener",
      );
      assert(
        events.indexOf(full) <
          events.findIndex((e) => isMutation(e) && JSON.stringify(e).includes("dcl-added")),
      );

      // Input (masked) and scroll, although the page broke MutationObserver and input listeners in its world.
      await typeInto(page, "#name", "visible-secret");
      await typeInto(page, "#pw", "pw-secret");
      await page.send("Input.dispatchMouseEvent", {
        type: "mouseWheel",
        x: 100,
        y: 100,
        deltaX: 0,
        deltaY: 600,
      });
      const src = (s: IncrementalSource) => () =>
        r.events(page.id).some((e) => e.type === EventType.IncrementalSnapshot && e.data.source === s);
      assert(await until(src(IncrementalSource.Scroll)), "a scroll event");
      assert(await until(src(IncrementalSource.Input)), "input events");
      const inputs = r.events(page.id).filter((e) => e.data.source === IncrementalSource.Input);
      assert(inputs.every((e) => /^\**$/.test(String(e.data.text))), "every recorded input value is masked");
      assert(
        !payloads(r).includes("visible-secret") && !payloads(r).includes("pw-secret"),
        "typed values never left",
      );

      // Nothing of the recorder is visible from the main world.
      const probe = await evaluate(
        page,
        `JSON.stringify({
          globals: Object.getOwnPropertyNames(window).filter((n) => /krometrail|rrweb/i.test(n)),
          binding: typeof window[${JSON.stringify(DOM_RECORDER_BINDING)}],
          rrweb: typeof window.__krometrailRrweb,
          seen: __seen.filter((t) => t === "IFRAME"),
        })`,
      );
      assertEquals(JSON.parse(String(probe)), {
        globals: [],
        binding: "undefined",
        rrweb: "undefined",
        seen: [],
      });
      assertEquals(domRecorderStats(r.session)?.refused, 0);

      // The recorder's own world (the same named world, reached over CDP): an empty custom element
      // registry instead of null (rrweb threw per element), a console of its own that says nothing.
      const world = await page.send("Page.createIsolatedWorld", {
        frameId: page.mainFrameId ?? "",
        worldName: DOM_RECORDER_WORLD,
      });
      const inside = await page.send("Runtime.evaluate", {
        contextId: world.executionContextId,
        returnByValue: true,
        expression: `JSON.stringify({
          recorder: typeof __krometrailRrweb, registry: customElements !== null && customElements.get("x-y") === undefined,
          console: String(console.warn).includes("[native code]"),
        })`,
      });
      assertEquals(JSON.parse(String(inside.result.value)), {
        recorder: "object",
        registry: true,
        console: false,
      });

      // The setup sent again (an initialization round retried) runs the script again: still one recording.
      await Promise.all(domRecorderSetup().apply(page));
      await evaluate(page, `document.body.appendChild(document.createElement("hr"))`);
      assert(await until(() => has('"tagName":"hr"')), "the next mutation is recorded");
      await sleep(300);
      assertEquals(r.events(page.id).filter((e) => e.type === EventType.FullSnapshot).length, 1);
      assertEquals(
        r.events(page.id).filter((e) => isMutation(e) && JSON.stringify(e).includes('"hr"')).length,
        1,
      );
    }),
});

Deno.test({
  name: "dom recorder: checkout — masked inputs, inlined stylesheets, mutations on the session clock",
  ...e2e,
  fn: () =>
    withRecorder({}, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.site.origin}/checkout.html`, "load", 15_000);
      assert(await until(() => r.events(page.id).some((e) => e.type === EventType.FullSnapshot)));
      await typeInto(page, "#email", "buyer@example.com");
      await typeInto(page, "#password", "hunter2-Secret!");
      await click(page, "#load-provinces");
      const disabledMutation = () =>
        r.events(page.id).find((e) =>
          isMutation(e) &&
          (e.data.attributes as Array<{ attributes: Record<string, unknown> }>).some((a) =>
            "disabled" in a.attributes
          )
        );
      assert(
        await until(() => disabledMutation() !== undefined),
        "the submit button's disabled attribute",
      );
      const all = payloads(r);
      assert(
        !all.includes("buyer@example.com") && !all.includes("hunter2-Secret!"),
        "typed values never left",
      );
      assert(/"_cssText":"[^"]*#promo-overlay/.test(all), "the linked stylesheet is inlined as _cssText");

      // The mapping: offset sampled at receipt equals ours within the clocks' resolution.
      const offset = Date.now() - r.session.now();
      for (const b of r.batches) {
        assert(Math.abs(b.clock_offset_ms - offset) < 5, `offset ${b.clock_offset_ms} vs ${offset}`);
        for (const e of JSON.parse(b.payload) as Array<{ timestamp: number }>) {
          const ms = e.timestamp - b.clock_offset_ms;
          assert(ms <= b.recv_ns / 1e6 + 1, "no event is mapped after its batch arrived");
        }
      }
      // Against the page's own times (performance.timeOrigin + now(), mapped with the same offset).
      const truth = JSON.parse(String(await evaluate(page, "JSON.stringify(__truth)"))) as Array<
        { what: string; at_epoch_ms: number }
      >;
      const truthMs = (what: string) => (truth.find((t) => t.what === what)?.at_epoch_ms ?? NaN) - offset;
      const disabled = disabledMutation();
      assert(disabled);
      const removal = r.events(page.id).find((e) =>
        isMutation(e) && (e.data.removes as unknown[]).length > 0 &&
        JSON.stringify(e.data).includes("Province is")
      );
      assert(removal, "options removed and the error added in one mutation event");
      const dDisabled = disabled.session_ms - truthMs("submit_disabled");
      const dRemoved = removal.session_ms - truthMs("options_removed");
      console.error(
        `mutation − page truth: submit_disabled ${dDisabled.toFixed(2)} ms, options_removed ${
          dRemoved.toFixed(2)
        } ms; batches ${r.batches.map((b) => b.payload.length).join(",")} bytes`,
      );
      assert(Math.abs(dDisabled) <= 5, `submit_disabled mapped ${dDisabled} ms from the page's own time`);
      assert(Math.abs(dRemoved) <= 5, `options_removed mapped ${dRemoved} ms from the page's own time`);
      const clickMs = truthMs("load_clicked");
      assert(Math.abs(disabled.session_ms - clickMs - 700) < 60, "disabled ~700 ms after the click");
    }),
});

Deno.test({
  name:
    "dom recorder: popups are recorded (a popup committing into its initial window too); binding calls from other worlds are refused",
  ...e2e,
  fn: () =>
    withRecorder({ files: { "popup.html": POPUP_PAGE, "popup_child.html": POPUP_CHILD } }, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.pages.origin}/popup.html`, "load", 15_000);
      await click(page, "#open");
      const childSnapshot = () =>
        r.events().find((e) =>
          e.page_id !== page.id && e.type === EventType.FullSnapshot &&
          JSON.stringify(e.data).includes("popup child")
        );
      const seen = await until(() => childSnapshot() !== undefined);
      assert(
        seen,
        `the popup's document is recorded: pages ${
          JSON.stringify([...r.session.pages.values()].map((p) => [p.id, p.url]))
        }, batches from ${[...new Set(r.batches.map((b) => b.page_id))]}, stats ${
          JSON.stringify(domRecorderStats(r.session))
        }`,
      );
      const popup = [...r.session.pages.values()].find((p) => p.id === childSnapshot()?.page_id);
      assertEquals(popup?.openerPageId, page.id);

      // The same binding name exposed to the main world (as a hostile extension of CDP might): its calls
      // arrive from a context that is not the recorder's world and are refused.
      await page.send("Runtime.addBinding", { name: DOM_RECORDER_BINDING });
      const before = r.batches.length;
      await evaluate(page, `window[${JSON.stringify(DOM_RECORDER_BINDING)}]("[{\\"type\\":4}]")`);
      assert(
        await until(() => (domRecorderStats(r.session)?.refused ?? 0) > 0, 3_000),
        "the call was refused",
      );
      assertEquals(r.batches.slice(before).filter((b) => b.payload.includes('{"type":4}')).length, 0);
    }),
});

Deno.test({
  name: "dom recorder: page-world stylesheet and value calls are seen at the next checkpoint, not before",
  ...e2e,
  fn: () =>
    withRecorder({ options: { checkout_ms: 1_000 }, files: { "styles.html": STYLE_PAGE } }, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.pages.origin}/styles.html`, "load", 15_000);
      assert(await until(() => r.events(page.id).some((e) => e.type === EventType.FullSnapshot)));
      await evaluate(
        page,
        `document.styleSheets[0].insertRule("#text { outline: 7px solid rgb(9, 8, 7); }", 1);
         document.getElementById("field").value = "programmatic";`,
      );
      await sleep(400);
      const incremental = r.events(page.id).filter((e) => e.type === EventType.IncrementalSnapshot);
      assertEquals(incremental.filter((e) => e.data.source === IncrementalSource.StyleSheetRule).length, 0);
      assertEquals(incremental.filter((e) => e.data.source === IncrementalSource.Input).length, 0);
      // Past the checkpoint interval, the next event brings a full snapshot that reads the sheets again.
      await sleep(800);
      await click(page, "#poke");
      const checkpoint = () => r.events(page.id).filter((e) => e.type === EventType.FullSnapshot)[1];
      assert(await until(() => checkpoint() !== undefined), "a checkpoint after the interval");
      const snap = JSON.stringify(checkpoint()?.data);
      assert(snap.includes("rgb(9, 8, 7)"), "the inserted rule is in the checkpoint");
      assert(snap.includes('"value":"************"'), "the programmatic value, masked, is in the checkpoint");
    }),
});

Deno.test({
  name: "dom recorder: a value set by page script on a page that then stays quiet still reaches a checkpoint",
  ...e2e,
  fn: () =>
    withRecorder({ options: { checkout_ms: 1_000 }, files: { "styles.html": STYLE_PAGE } }, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.pages.origin}/styles.html`, "load", 15_000);
      assert(await until(() => r.events(page.id).some((e) => e.type === EventType.FullSnapshot)));
      await sleep(1_200);
      await evaluate(page, `document.getElementById("field").value = "quietly";`);
      // No event follows: the recorder's own form-state check makes the next idle checkpoint take it.
      const checkpoint = () =>
        r.events(page.id).filter((e) => e.type === EventType.FullSnapshot).find((e) =>
          JSON.stringify(e.data).includes('"value":"*******"')
        );
      assert(
        await until(() => checkpoint() !== undefined, 6_000),
        "a checkpoint holds the quiet value change",
      );
    }),
});

Deno.test({
  name: "dom recorder: record_dom false records and sends nothing",
  ...e2e,
  fn: () =>
    withRecorder({ record_dom: false }, async (r) => {
      const page = r.session.page();
      assertEquals(r.session.config.record_dom, false);
      await r.session.navigate(page, `${r.site.origin}/checkout.html`, "load", 15_000);
      await click(page, "#load-provinces");
      await sleep(1_000);
      assertEquals(r.batches.length, 0);
      assertEquals(domRecorderStats(r.session), undefined);
      assertEquals(page.overrides.has("dom_recorder"), false);
    }),
});

Deno.test({
  name: "dom recorder: a same-target reattachment records the running document again",
  ...e2e,
  fn: () =>
    withRecorder({}, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.site.origin}/checkout.html`, "load", 15_000);
      assert(await until(() => r.events(page.id).some((e) => e.type === EventType.FullSnapshot)));
      const adopted = new Promise<PageTarget>((resolve) => {
        const off = r.session.onPageAdded((p) => {
          off();
          resolve(p);
        });
      });
      await r.conn.send("Target.detachFromTarget", { sessionId: page.sessionId });
      for (let i = 0; i < 100 && !page.closed; i++) await sleep(20);
      assert(page.closed, "the session dropped the detached page");
      await r.conn.send("Target.attachToTarget", { targetId: page.targetId, flatten: true });
      const again = await adopted;
      assertEquals(again.targetId, page.targetId);
      assert(
        await until(() => r.events(again.id).some((e) => e.type === EventType.FullSnapshot)),
        `the reattached page is snapshotted again: ${JSON.stringify(domRecorderStats(r.session))}`,
      );
      await click(again, "#flip");
      assert(
        await until(() =>
          r.events(again.id).some((e) => isMutation(e) && JSON.stringify(e).includes("data-state"))
        ),
        "and its mutations recorded",
      );
    }),
});

Deno.test({
  name: "start_browser record_dom: default true, false kept for the session and shown by browser_status",
  ...e2e,
  fn: async () => {
    await withServer(async (server) => {
      const status = structured(await server.call("browser_status", {}));
      assertEquals(status.record_dom, true, "on by default");
      const restart = await server.call("start_browser", {
        temporary: true,
        headless: true,
        record_dom: true,
      });
      assert(restart.isError, "a running session's recording is not changed by starting again");
    }, { browser: { headless: true } });
    await withServer(async (server) => {
      const status = await server.call("browser_status", {});
      assertEquals(structured(status).record_dom, false);
      assert(textOf(status).includes("DOM recording: off"), textOf(status));
      const bad = await server.call("start_browser", { temporary: true, record_dom: "yes" });
      assert(bad.isError, "record_dom must be a boolean");
    }, { browser: { headless: true, record_dom: false } });
  },
});

Deno.test({
  name: "dom recorder: a same-origin frame is recorded by its top document's recorder, once",
  ...e2e,
  fn: () =>
    withRecorder({ files: { "frames.html": FRAME_PAGE, "frame_child.html": FRAME_CHILD } }, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.pages.origin}/frames.html`, "load", 15_000);
      const text = () => r.events(page.id).map((e) => JSON.stringify(e.data)).join("\n");
      assert(await until(() => text().includes("inside the frame")), "the frame's document is recorded");
      await evaluate(page, `document.getElementById("inner").contentDocument.getElementById("grow").click()`);
      assert(await until(() => text().includes("grown inside")), "a mutation inside the frame is recorded");
      assertEquals(new Set(r.batches.map((b) => b.page_id)).size, 1, "no second recorder in the frame");
      assertEquals(r.events(page.id).filter((e) => e.type === EventType.Meta).length, 1);
    }),
});
