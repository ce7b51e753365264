/**
 * load_recording over stdio: the file is made here, by the npm rrweb recorder (RECORDER_BUNDLE, plain
 * `record()` in the page's main world, as an app would) in a real headless Chromium on the checkout
 * fixture while #load-provinces is clicked; never hand-written JSON. The page-state tools answer on the
 * loaded session, `render: true` gives it frames and a storyboard, and bad files are structured errors
 * that leave the server serving.
 */
import type { eventWithTime } from "@rrweb/types";
import { assert, assertEquals } from "../assert.ts";
import { RECORDER_BUNDLE } from "../../src/pagestate/bundles_generated.ts";
import { withRawPage } from "./scratch_session.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import {
  e2e,
  errorCode,
  fixtures,
  type ServerHandle,
  startServer,
  structured,
  type ToolResult,
} from "./harness.ts";

const APP_RECORDER = `${RECORDER_BUNDLE};
if (window.top === window && location.protocol !== "about:") {
  window.__rrwebEvents = [];
  __krometrailRrweb.record({
    emit(event) { window.__rrwebEvents.push(event); },
    maskAllInputs: true,
    inlineStylesheet: true,
    checkoutEveryNms: 5000,
  });
}`;

interface Made {
  events: eventWithTime[];
  truth: Array<{ what: string; at_epoch_ms: number }>;
}

/** Records the checkout page with rrweb while #load-provinces is clicked, until the submit is disabled. */
async function recordCheckout(): Promise<Made> {
  const site = fixtures();
  try {
    return await withRawPage("krometrail-profile-loadrec-", async (conn, sessionId) => {
      const evaluate = async (expression: string) => {
        const r = await conn.send(
          "Runtime.evaluate",
          { expression, returnByValue: true, awaitPromise: true },
          sessionId,
        );
        if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
        return r.result.value;
      };
      await conn.send("Page.enable", {}, sessionId);
      await conn.send("Emulation.setDeviceMetricsOverride", {
        width: 1000,
        height: 700,
        deviceScaleFactor: 1,
        mobile: false,
      }, sessionId);
      await conn.send("Page.addScriptToEvaluateOnNewDocument", { source: APP_RECORDER }, sessionId);
      await conn.send("Page.navigate", { url: `${site.origin}/checkout.html` }, sessionId);
      await new Promise((r) => setTimeout(r, 800));
      const click = async (selector: string) => {
        const box = await evaluate(
          `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
          return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`,
        ) as { x: number; y: number };
        await conn.send("Input.dispatchMouseEvent", { type: "mouseMoved", ...box }, sessionId);
        for (const type of ["mousePressed", "mouseReleased"] as const) {
          await conn.send(
            "Input.dispatchMouseEvent",
            { type, ...box, button: "left", clickCount: 1 },
            sessionId,
          );
        }
      };
      await click("#load-provinces");
      await new Promise((r) => setTimeout(r, 1_500));
      // Later mutations (the flipper), so the disabled transition is not the recording's last event.
      await click("#flip");
      await new Promise((r) => setTimeout(r, 1_000));
      return await evaluate("({ events: window.__rrwebEvents, truth: window.__truth })") as Made;
    });
  } finally {
    await site.close();
  }
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The colour just inside a box's top-left corner in a frame (viewport CSS px; frames at scale 1). */
async function framePixel(
  server: ServerHandle,
  session: string,
  frameId: number,
  box: Box,
): Promise<[number, number, number]> {
  const fetched = await server.call("fetch_source_frames", { session_id: session, frame_ids: [frameId] });
  const image = fetched.content.find((c) => c.type === "image");
  assert(image?.data, `frame ${frameId} is inlined: ${fetched.content[0]?.text}`);
  const img = decodeJpeg(Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0)));
  const i = (Math.round(box.y + 6) * img.width + Math.round(box.x + 6)) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

function ok(r: ToolResult, what: string): Record<string, unknown> {
  assert(!r.isError, `${what}: ${r.content[0]?.text}`);
  return structured(r);
}

async function expectError(
  server: ServerHandle,
  path: string,
  code: string,
  includes: RegExp,
): Promise<void> {
  const r = await server.call("load_recording", { path });
  assert(r.isError, `${path} should fail: ${r.content[0]?.text}`);
  assertEquals(errorCode(r), code, r.content[0]?.text);
  const err = structured(r).error as { message: string; recovery?: string };
  assert(includes.test(err.message), `${err.message} should match ${includes}`);
  assert(err.recovery, "a recovery");
}

Deno.test({
  name:
    "load_recording: an rrweb file recorded here answers every page-state tool, renders frames and a storyboard",
  ...e2e,
  fn: async () => {
    const made = await recordCheckout();
    assert(made.events.length > 5, `events: ${made.events.length}`);
    const disabledAt = made.truth.find((t) => t.what === "submit_disabled")?.at_epoch_ms;
    assert(disabledAt, JSON.stringify(made.truth));
    const dir = await Deno.makeTempDir({ prefix: "krometrail-loadrec-" });
    const file = `${dir}/checkout-recording.json`;
    await Deno.writeTextFile(file, JSON.stringify(made.events));
    const server = await startServer();
    try {
      const loaded = ok(await server.call("load_recording", { path: file, label: "checkout" }), "load");
      const session = String(loaded.session_id);
      assertEquals(session, "r1");
      assertEquals(loaded.page_id, "p1");
      assertEquals(loaded.events, made.events.length);
      assertEquals((loaded.viewport as { width: number }).width, 1000);
      assert(String(loaded.href).endsWith("/checkout.html"), String(loaded.href));
      const first = made.events[0].timestamp;
      const fullMs = (made.events.find((e) => e.type === 2)?.timestamp ?? first) - first;
      assertEquals(loaded.duration_ms, made.events[made.events.length - 1].timestamp - first);

      // read_dom_at at the end: the disabled submit, the error, the emptied select.
      const end = ok(
        await server.call("read_dom_at", { session_id: session, scope: "form#checkout" }),
        "read_dom_at end",
      );
      const dom = String(end.dom);
      assert(dom.includes("[DISABLED]") && dom.includes("Province is required"), dom);
      assert(dom.includes("empty options: 0"), dom);

      // bisect finds the disabled transition at the recorded mutation.
      const bis = ok(
        await server.call("bisect", {
          session_id: session,
          selector: "#submit",
          predicate: { kind: "propertyEquals", property: "disabled", equals: true },
        }),
        "bisect",
      );
      // rrweb's first snapshot is taken while the page still parses, so the button first appears (enabled).
      const transitions = (bis.transitions as Array<{ at_ms: number; from: unknown; to: unknown }>)
        .filter((t) => t.to === true);
      assertEquals(transitions.length, 1, JSON.stringify(bis));
      assertEquals(transitions[0].from, false);
      const truthMs = disabledAt - first;
      // Plain rrweb stamps a mutation when it emits it (after serializing), a few ms after the page's own time.
      assert(
        transitions[0].at_ms >= truthMs - 5 && transitions[0].at_ms <= truthMs + 30,
        `bisect ${transitions[0].at_ms} vs the page's ${truthMs}`,
      );
      const before = ok(
        await server.call("read_dom_at", {
          session_id: session,
          at_ms: transitions[0].at_ms - 5,
          scope: "form#checkout",
        }),
        "read_dom_at before",
      );
      assert(!String(before.dom).includes("[DISABLED]"), String(before.dom));

      const diff = await server.call("diff_dom", {
        session_id: session,
        // Not before the first full snapshot: rrweb's Meta can precede it by ~100 ms, with no document yet.
        from: { at_ms: Math.max(fullMs + 1, transitions[0].at_ms - 1_000) },
        to: { at_ms: transitions[0].at_ms + 5 },
        scope: "form#checkout",
      });
      const dtext = diff.content[0]?.text ?? "";
      ok(diff, "diff_dom");
      assert(
        /removed .*option/.test(dtext) && /disabled/.test(dtext) && /Province is required/.test(dtext),
        dtext,
      );

      const layout = ok(
        await server.call("measure_layout", { session_id: session, selectors: ["#submit", "#province"] }),
        "measure_layout",
      );
      const elements = layout.elements as Array<
        { selector: string; found: boolean; box: { width: number } | null }
      >;
      assert(elements.every((e) => e.found && (e.box?.width ?? 0) > 0), JSON.stringify(elements));

      const found = ok(
        await server.call("find_element", { session_id: session, text: "Province is required" }),
        "find_element",
      );
      assert((found.matches as unknown[]).length >= 1, JSON.stringify(found));

      // No frames yet: the temporal tools say so rather than inventing any.
      const noFrames = await server.call("list_source_frames", {
        session_id: session,
        range: { start_ms: 0, end_ms: Number(loaded.duration_ms) },
      });
      assert(
        noFrames.isError || (structured(noFrames).frames as unknown[]).length === 0,
        noFrames.content[0]?.text,
      );

      // render: true → a second session whose frames are the replayed recording.
      const rendered = ok(await server.call("load_recording", { path: file, render: true }), "load render");
      const rs = String(rendered.session_id);
      assertEquals(rs, "r2");
      const render = rendered.render as { frames: number; speed: number; dropped: number };
      assert(render.frames >= 2, JSON.stringify(render));
      assertEquals(render.speed, 1);
      const duration = Number(rendered.duration_ms);
      const listed = ok(
        await server.call("list_source_frames", {
          session_id: rs,
          range: { start_ms: 0, end_ms: duration },
          max_frames: 200,
        }),
        "list_source_frames",
      );
      const frames = listed.frames as Array<{ frame_id: number; session_time_ms: number; width: number }>;
      assert(frames.length >= 2, JSON.stringify(listed).slice(0, 500));
      assert(
        frames.every((f) => f.session_time_ms >= 0 && f.session_time_ms <= duration),
        JSON.stringify(frames),
      );
      assertEquals(frames[0].width, 1000);
      // A frame shows the state after the disabled transition (the replay painted it).
      assert(
        frames.some((f) => f.session_time_ms >= truthMs - 5),
        JSON.stringify(frames.map((f) => f.session_time_ms)),
      );
      const after = ok(
        await server.call("read_dom_at", {
          session_id: rs,
          at_ms: transitions[0].at_ms + 1,
          scope: "form#checkout",
        }),
        "read_dom_at render",
      );
      assert(String(after.dom).includes("[DISABLED]"), String(after.dom));
      const shown = after.frame as { frame_id: number; session_time_ms: number; relation: string } | null;
      assert(shown, `read_dom_at names a frame of the rendered session: ${JSON.stringify(after)}`);
      // The replay painted the disabled state after the mutation: the first paint after the instant shows it.
      assertEquals(shown.relation, "first_painted_after", JSON.stringify(shown));
      assert(shown.session_time_ms - transitions[0].at_ms < 200, JSON.stringify(shown));
      // Its pixels show it: the submit button's corner is the disabled grey, green in the frame just before.
      const box = (ok(
        await server.call("measure_layout", {
          session_id: rs,
          at_ms: transitions[0].at_ms + 1,
          selectors: ["#submit"],
        }),
        "measure_layout render",
      ).elements as Array<{ box: Box }>)[0].box;
      const beforeRender = ok(
        await server.call("read_dom_at", {
          session_id: rs,
          at_ms: transitions[0].at_ms - 5,
          scope: "form#checkout",
        }),
        "read_dom_at render before",
      );
      const grey = await framePixel(server, rs, shown.frame_id, box);
      const green = await framePixel(server, rs, (beforeRender.frame as { frame_id: number }).frame_id, box);
      assert(grey.every((c) => Math.abs(c - 0x9a) < 24), `disabled frame pixel ${grey}`);
      assert(green[1] > 110 && green[0] < 70 && green[2] < 90, `enabled frame pixel ${green}`);

      const artifacts = ok(
        await server.call("generate_artifacts", {
          session_id: rs,
          range: { start_ms: 0, end_ms: duration },
          generators: ["storyboard"],
          inline_images: false,
        }),
        "generate_artifacts",
      );
      const list = artifacts.artifacts as Array<{ uri?: string; selected_frame_ids?: number[] }>;
      assert(list.length >= 1 && list[0].uri, JSON.stringify(artifacts).slice(0, 600));
      const bundle = ok(
        await server.call("temporal_debug_bundle", {
          session_id: rs,
          range: { start_ms: Math.max(0, truthMs - 1_000), end_ms: Math.min(duration, truthMs + 300) },
          inline_images: false,
        }),
        "temporal_debug_bundle",
      );
      assert((bundle.bundles as unknown[]).length >= 1, JSON.stringify(bundle).slice(0, 400));
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "load_recording: truncated, wrongly typed, out-of-order and oversized files are structured errors; the server keeps serving",
  ...e2e,
  fn: async () => {
    const made = await recordCheckout();
    const dir = await Deno.makeTempDir({ prefix: "krometrail-loadrec-bad-" });
    const server = await startServer();
    try {
      const text = JSON.stringify(made.events);
      const truncated = `${dir}/truncated.json`;
      await Deno.writeTextFile(truncated, text.slice(0, Math.floor(text.length * 0.6)));
      await expectError(server, truncated, "recording_truncated", /ends before its JSON is complete/);

      const typed = `${dir}/typed.json`;
      const wrong = made.events.map((e, i) => (i === 3 ? { ...e, type: "mutation" } : e));
      await Deno.writeTextFile(typed, JSON.stringify(wrong));
      await expectError(server, typed, "recording_malformed", /^\[3\]\.type is a string \("mutation"\)/);

      const order = `${dir}/order.json`;
      const swapped = [...made.events];
      const last = swapped.length - 1;
      swapped[last] = { ...swapped[last], timestamp: swapped[last - 1].timestamp - 10 };
      await Deno.writeTextFile(order, JSON.stringify({ events: swapped }));
      await expectError(
        server,
        order,
        "recording_out_of_order",
        new RegExp(`^events\\[${last}\\]\\.timestamp \\d+ is before events\\[${last - 1}\\]\\.timestamp`),
      );

      const big = `${dir}/big.json`;
      await Deno.writeTextFile(big, "[");
      await Deno.truncate(big, 64 * 1024 * 1024 + 10);
      await expectError(server, big, "recording_too_large", /67108874 bytes .* over the 67108864-byte/);

      await expectError(server, "https://example.com/r.json", "recording_not_found", /is a URL/);
      await expectError(server, `${dir}/missing.json`, "recording_not_found", /No file at/);

      // Nothing was written for any of them: the next good file is r1, and it answers.
      const good = `${dir}/good.json`;
      await Deno.writeTextFile(good, text);
      const loaded = ok(await server.call("load_recording", { path: good }), "good load");
      assertEquals(loaded.session_id, "r1");
      ok(await server.call("read_dom_at", { session_id: "r1" }), "read_dom_at");
      // Deleted like any session, and its id is not handed out again.
      ok(await server.call("delete_session", { session_id: "r1" }), "delete_session");
      assertEquals(errorCode(await server.call("read_dom_at", { session_id: "r1" })), "session_not_found");
      assertEquals(ok(await server.call("load_recording", { path: good }), "reload").session_id, "r2");
    } finally {
      await server.close();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
