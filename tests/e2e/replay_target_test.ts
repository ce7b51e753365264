/**
 * The replay target against real Chromium, on a recording made in the test by the real rrweb recorder:
 * covered buttons, visibility and movement at the right instant, the seek boundary, no recorded script
 * run and no network request during replay, selector validation, LRU, timings on a long recording.
 */
import { EventType, type eventWithTime, IncrementalSource } from "@rrweb/types";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ToolError } from "../../src/errors.ts";
import { MAX_LOADED_KEYS, ReplayTarget } from "../../src/pagestate/replay.ts";
import { normalizeEvents } from "../../src/pagestate/replay_layout.ts";
import { countingServer, type Recording, recordPage, repeatRecording } from "./replay_record_util.ts";

const e2e = { sanitizeOps: false, sanitizeResources: false };
const VIEWPORT = { width: 1000, height: 700 };

/** The first attribute mutation at or after `from` whose attributes mention `needle`. */
function mutationAt(events: eventWithTime[], from: number, needle: string): number {
  for (const e of events) {
    if (e.timestamp < from - 5) continue;
    if (e.type !== EventType.IncrementalSnapshot || e.data.source !== IncrementalSource.Mutation) continue;
    if (JSON.stringify(e.data.attributes).includes(needle)) return e.timestamp;
  }
  throw new Error(`no mutation with ${needle} after ${from}`);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

let recording: Recording | undefined;
let recordedRequests = 0;
let recordedConnections = 0;

async function theRecording(site: ReturnType<typeof countingServer>): Promise<Recording> {
  if (!recording) {
    // 6.5 s: rrweb's 5 s checkout gives a second checkpoint inside the recording.
    recording = await recordPage(`${site.origin}/replay_layout.html`, 6_500, VIEWPORT);
    recordedRequests = site.requests.length;
    recordedConnections = site.connections();
  }
  return recording;
}

Deno.test("replay target: layout at recorded instants, sandboxed and offline", e2e, async () => {
  const site = countingServer();
  const target = new ReplayTarget();
  try {
    const rec = await theRecording(site);
    assert(rec.pageScriptRan, "the page script ran in the live page");
    assert(site.requests.includes("/beacon") && site.requests.includes("/logo.png"), "live page loaded");
    const { events, pageTimes } = rec;
    assert(events.filter((e) => e.type === EventType.Meta).length >= 2, "a checkpoint after 5 s");

    const t0 = performance.now();
    const loaded = await target.load("page-1", events);
    const coldMs = performance.now() - t0;
    assertEquals(loaded.events, events.length);

    const overlayAt = mutationAt(events, pageTimes.overlay, "open");
    const hiddenAt = mutationAt(events, pageTimes.hidden, "none");
    const movedAt = mutationAt(events, pageTimes.moved, "500px");
    assert(
      Math.abs(overlayAt - pageTimes.overlay) <= 20,
      "the overlay mutation is recorded when it happened",
    );

    // Before the overlay opens the button is visible and uncovered.
    const before = await target.measureLayout("page-1", overlayAt - 0.5, [
      "#buy",
      "#overlay",
      "#banner",
      "#mover",
    ]);
    assertEquals(before.viewport, VIEWPORT, "the replay viewport is the recorded one");
    const [buy0, overlay0] = before.results;
    assert(buy0.found && buy0.visible && buy0.in_viewport, JSON.stringify(buy0));
    assertEquals(buy0.box, { x: 40, y: 40, width: 160, height: 48 });
    assertEquals(buy0.covered_by, undefined, "nothing covers the button yet");
    assert(overlay0.found && !overlay0.visible && overlay0.display === "none", JSON.stringify(overlay0));
    assert(
      before.applied_through_ms !== null && before.applied_through_ms < overlayAt,
      JSON.stringify(before),
    );

    // From the overlay's own mutation on, the overlay covers the button: found without pixels.
    const after = await target.measureLayout("page-1", overlayAt, ["#buy", "#overlay"]);
    assertEquals(after.applied_through_ms, overlayAt, "the event at the instant itself is applied");
    const [buy1, overlay1] = after.results;
    assert(buy1.visible, "the covered button is still visible");
    assert(buy1.covered_by?.selector_hint.startsWith("div#overlay"), JSON.stringify(buy1));
    assertEquals(buy1.covered_by?.coverage, 1);
    assertEquals(overlay1.z_index, "10");
    assertEquals(overlay1.position, "fixed");
    const overlap = after.overlaps.find((o) => o.a === "#buy" && o.b === "#overlay");
    assert(overlap && overlap.on_top === "#overlay" && !overlap.nested, JSON.stringify(after.overlaps));
    assertEquals(overlap.area, 160 * 48);

    // Visibility flips exactly at the banner's mutation.
    const times = JSON.stringify({ pageTimes, overlayAt, hiddenAt, movedAt });
    assertEquals(await target.isVisible("page-1", hiddenAt - 0.5, "#banner"), true, `just before: ${times}`);
    assertEquals(await target.isVisible("page-1", hiddenAt, "#banner"), false, `at: ${times}`);
    assertEquals(await target.isVisible("page-1", hiddenAt, "#no-such-thing"), "elementMissing");
    const hidden = await target.measureLayout("page-1", hiddenAt, ["#banner"]);
    assertEquals(hidden.results[0].display, "none");
    // Backward again: the banner is back.
    assertEquals(await target.isVisible("page-1", overlayAt - 0.5, "#banner"), true, `back: ${times}`);

    // The box moves at its mutation.
    const m0 = await target.measureLayout("page-1", movedAt - 0.5, ["#mover"]);
    const m1 = await target.measureLayout("page-1", movedAt, ["#mover"]);
    assertEquals(m0.results[0].box?.x, 40);
    assertEquals(m1.results[0].box?.x, 500);

    // Recorded scripts and inline handlers never run in the replay: the script's own element exists once
    // (recorded), and the image's onerror (its load is failed in the replay) adds nothing.
    const scripts = await target.measureLayout("page-1", movedAt, [".script-ran", ".handler-ran", "#logo"]);
    assertEquals(scripts.results[0].count, 1, "the recorded script did not run again");
    assertEquals(scripts.results[1].found, false, "the recorded onerror handler did not run");
    assertEquals(
      scripts.results[2].box,
      { x: 400, y: 120, width: 64, height: 32 },
      "img sized by attributes",
    );

    const frame = await target.frameInfo("page-1");
    assertEquals(frame, { sandbox: "allow-same-origin", scripts_allowed: false, ...VIEWPORT });

    // No network: the image request was failed by the Fetch domain and nothing reached the server.
    assert(target.blockedRequests >= 1, "the replay's image request was intercepted");
    assert(target.blockedUrls.some((u) => u.endsWith("/logo.png")), JSON.stringify(target.blockedUrls));
    assert(!target.blockedUrls.some((u) => u.includes("/beacon")), "the page script's beacon never fired");
    assertEquals(site.requests.slice(recordedRequests), [], "no request reached the site during replay");
    // Not even a connection (the page's <link rel=preconnect> is neutralized before the replay builds it).
    await new Promise((r) => setTimeout(r, 300));
    assertEquals(site.connections(), recordedConnections, "no connection reached the site during replay");

    // Timings (reported; the budget, seek + measure <= 150 ms, is bench:pagestate's).
    const tk = performance.now();
    await target.load("page-2", events);
    const newKeyMs = performance.now() - tk;
    const last = events[events.length - 1].timestamp;
    // A load leaves the document at the recording's end: go back to the start, then forward again.
    const back = await target.seek("page-2", overlayAt - 0.5);
    const fwd = await target.seek("page-2", last);
    const four = await target.measureLayout("page-2", overlayAt, ["#buy", "#overlay", "#banner", "#mover"]);
    console.error(
      `replay timings: cold load ${coldMs.toFixed(0)} ms, new key ${newKeyMs.toFixed(0)} ms, ` +
        `seek forward ${fwd.elapsed_ms} ms, seek backward ${back.elapsed_ms} ms, ` +
        `measure 4 selectors ${four.elapsed_ms} ms (${events.length} events)`,
    );
    // The ≤ 150 ms budget is bench:pagestate's verdict, not a timed assertion here (it failed at 177 ms
    // beside a soak); the test holds the measurement's content.
    assertEquals(four.results.length, 4, "one result per selector");
  } finally {
    await target.close();
    await site.close();
  }
});

Deno.test(
  "replay target: seek applies every event at or before the instant and none after",
  e2e,
  async () => {
    const site = countingServer();
    const target = new ReplayTarget();
    try {
      const { events } = await theRecording(site);
      await target.load("k", events);
      // Every distinct event time (as replayed: a checkpoint's Meta sits on its snapshot): at t the event
      // at t is applied; just before it, it is not.
      const times = [...new Set(normalizeEvents(events).map((e) => e.timestamp))].sort((a, b) => a - b);
      const firstFull = events.find((e) => e.type === EventType.FullSnapshot);
      assert(firstFull, "a full snapshot");
      const after = times.filter((t) => t > firstFull.timestamp);
      for (const t of after.filter((_, i) => i % 3 === 0)) {
        const at = await target.seek("k", t);
        assertEquals(at.applied_through_ms, t, `seek(${t})`);
        const prior = times[times.indexOf(t) - 1];
        const before = await target.seek("k", t - 0.5);
        assert(prior < t - 0.5, "rrweb timestamps are whole milliseconds");
        assertEquals(before.applied_through_ms, prior, `seek(${t} - 0.5)`);
        assertEquals(before.next_event_ms, t);
      }
      // A checkpoint exactly at the instant, and just before it, both show a full document, in either order.
      const metas = events.filter((e) => e.type === EventType.Meta);
      const snapshotAt = events.find((e) =>
        e.type === EventType.FullSnapshot && e.timestamp >= metas[1].timestamp
      );
      assert(snapshotAt, "second full snapshot");
      for (
        const t of [
          snapshotAt.timestamp,
          snapshotAt.timestamp - 0.5,
          snapshotAt.timestamp,
          metas[1].timestamp,
        ]
      ) {
        const layout = await target.measureLayout("k", t, ["#buy"]);
        assert(layout.results[0].found, `#buy at ${t}: ${JSON.stringify(layout)}`);
      }
      // Before the first full snapshot is an error, not an empty (or a later, stale) document; rrweb's
      // DomContentLoaded event comes before it. Checked after seeks to later states.
      for (const t of [events[0].timestamp - 1, firstFull.timestamp - 0.5]) {
        const early = await assertRejects(() => target.measureLayout("k", t, ["#banner"]), ToolError);
        assertEquals((early as ToolError).code, "instant_out_of_recording");
      }
      assert((await target.measureLayout("k", firstFull.timestamp, ["#banner"])).results[0].visible);
    } finally {
      await target.close();
      await site.close();
    }
  },
);

Deno.test("replay target: invalid selectors, append, LRU and close", e2e, async () => {
  const site = countingServer();
  const target = new ReplayTarget();
  try {
    const { events } = await theRecording(site);
    const half = Math.floor(events.length / 2);
    await target.load("live", events.slice(0, half));
    const invalid = await assertRejects(
      () => target.measureLayout("live", events[half - 1].timestamp, ["#buy", "button[", '"]);x(']),
      ToolError,
    );
    assertEquals((invalid as ToolError).code, "invalid_selector");
    const bad = (invalid as ToolError).details?.invalid as Array<{ selector: string }>;
    assertEquals(bad.map((b) => b.selector), ["button[", '"]);x(']);
    const empty = await assertRejects(() => target.measureLayout("live", events[0].timestamp, []), ToolError);
    assertEquals((empty as ToolError).code, "invalid_selector");

    // A live recording grows: appended events become seekable.
    const lastTs = events[events.length - 1].timestamp;
    assertEquals((await target.seek("live", lastTs)).applied_through_ms, events[half - 1].timestamp);
    assertEquals((await target.append("live", events.slice(half))).events, events.length);
    assertEquals((await target.seek("live", lastTs)).applied_through_ms, lastTs);
    assertEquals(target.loadedEvents("live"), events.length);

    // Beyond MAX_LOADED_KEYS the least recently used key is dropped.
    for (let i = 0; i < MAX_LOADED_KEYS; i++) await target.load(`k${i}`, events);
    assertEquals(target.loadedEvents("live"), undefined);
    const gone = await assertRejects(() => target.seek("live", lastTs), ToolError);
    assertEquals((gone as ToolError).code, "replay_not_loaded");
    assert(target.loadedEvents("k0") !== undefined);
  } finally {
    await target.close();
    await site.close();
  }
  assertEquals(target.loadedKeys, []);
});

Deno.test(
  "replay target: seek + measure keep answering minutes into a recording, forward and back",
  e2e,
  async () => {
    const site = countingServer();
    const target = new ReplayTarget();
    try {
      const { events } = await theRecording(site);
      const long = repeatRecording(events, 5 * 60_000);
      await target.load("warm", events); // the browser's launch is not part of the long load
      const t0 = performance.now();
      await target.load("long", long);
      const loadMs = performance.now() - t0;
      const first = long[0].timestamp;
      const end = long[long.length - 1].timestamp;
      const sels = ["#buy", "#overlay", "#banner", "#mover"];
      const forward: number[] = [];
      const backward: number[] = [];
      for (let i = 1; i <= 10; i++) {
        forward.push(
          (await target.measureLayout("long", first + (end - first) * i / 10 - 1_234, sels)).elapsed_ms,
        );
      }
      for (let i = 10; i >= 1; i--) {
        backward.push(
          (await target.measureLayout("long", first + (end - first) * i / 10 - 2_345, sels)).elapsed_ms,
        );
      }
      const deep = await target.measureLayout("long", end - 1_000, sels);
      assert(deep.results[0].covered_by !== undefined, "the repeated segment replays the overlay");
      console.error(
        `replay long recording: ${long.length} events over ${((end - first) / 60_000).toFixed(1)} min, ` +
          `load ${loadMs.toFixed(0)} ms, seek+measure forward median ${median(forward)} max ${
            Math.max(...forward)
          } ms, backward median ${median(backward)} max ${Math.max(...backward)} ms`,
      );
      // Timings are printed above; the budget is bench:pagestate's verdict, not a timed assertion here.
      assertEquals(forward.length + backward.length, 20, "every seek measured");
    } finally {
      await target.close();
      await site.close();
    }
  },
);
