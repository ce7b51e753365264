import { assert, assertEquals } from "../assert.ts";
import {
  e2e,
  errorCode,
  fixtures,
  type ServerHandle,
  startServer,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";
import { diskBytes, instanceRoots, sleep } from "./budget_util.ts";
import {
  allFrames,
  captureState,
  type Frame,
  type FullRetention,
  gapsOf,
  newestFrames,
  ok,
  type PinAnswer,
  type PinView,
  responseChars,
  type RetentionWarning,
  retentionWarning,
} from "./pins_util.ts";
import { segmentBytesFor } from "../../src/store/budget.ts";
import { SEGMENT_MAX_BYTES } from "../../src/store/format.ts";

/** The budget tests' tiny budget: a recording of animation.html runs past it in a few seconds. */
const BUDGET = 3_000_000;
/**
 * On a loaded machine a screencast acknowledgement can take longer than the default 1 s deadline (more
 * so while an artifact call holds the server's main thread), which ends the stream by rule
 * (capture_faults_test covers that). These tests are about retention, so their recordings get a longer
 * deadline through the test-fault plan.
 */
const patientAcks = { KROMETRAIL_TEST_FAULTS: JSON.stringify({ ack_deadline_ms: 10_000 }) };
const tiny = {
  browser: { every_nth_frame: 1 },
  env: { KROMETRAIL_DISK_BUDGET_BYTES: String(BUDGET), ...patientAcks },
};

/** What an instance root may hold on disk: the share, one segment being written, the empty index. */
function diskBound(root: string): number {
  return BUDGET + segmentBytesFor(BUDGET, SEGMENT_MAX_BYTES) + diskBytes(root) + 128 * 1024;
}

/** Frames seen so far, by id, from the newest listing of each poll. */
async function collect(server: ServerHandle, seen: Map<number, Frame>): Promise<Frame[]> {
  const frames = await newestFrames(server);
  for (const f of frames) seen.set(f.frame_id, f);
  return [...seen.values()].sort((a, b) => a.session_time_ms - b.session_time_ms);
}

/**
 * Records until `count` frames were seen, then names a window with 20 frames before it and 15 after:
 * the frames before it fill at least one segment of their own at this budget (about 10 frames each).
 */
async function earlyWindow(
  server: ServerHandle,
  seen: Map<number, Frame>,
): Promise<{ start_ms: number; end_ms: number }> {
  let sorted: Frame[] = [];
  for (let i = 0; i < 150 && sorted.length < 50; i++) {
    sorted = await collect(server, seen);
    if (sorted.length < 50) await sleep(100);
  }
  assert(
    sorted.length >= 50,
    `50 frames recorded: ${sorted.length}: ${JSON.stringify(await captureState(server))}`,
  );
  return {
    start_ms: sorted[sorted.length - 30].session_time_ms,
    end_ms: sorted[sorted.length - 15].session_time_ms,
  };
}

/**
 * Pins a recent window before its frames age out (3 s here). On a loaded box the window chosen can be older
 * than that by the time the pin lands (its frames came at 5 fps, not 60), so a pin that got nothing, or too
 * little to prove anything, is dropped and a newer window is chosen.
 */
async function pinBeforeAgeOut(
  server: ServerHandle,
  seen: Map<number, Frame>,
): Promise<{ window: { start_ms: number; end_ms: number }; pin: PinAnswer["pin"]; pinned: Frame[] }> {
  for (let attempt = 1;; attempt++) {
    const window = await earlyWindow(server, seen);
    const result = await server.call("pin_resolved_range", { range: window });
    if (result.isError) {
      if (errorCode(result) !== "range_not_captured" || attempt >= 5) {
        throw new Error(`pin_resolved_range: ${textOf(result)}`);
      }
      continue;
    }
    const pin = (structured(result) as unknown as PinAnswer).pin;
    const pinned = await allFrames(server, window);
    if (pinned.length >= 10 || attempt >= 5) return { window, pin, pinned };
    await ok(server, "unpin_resolved_range", { pin_id: pin.pin_id });
  }
}

async function fetchOne(server: ServerHandle, frameId: number): Promise<ToolResult> {
  return await server.call("fetch_source_frames", { frame_ids: [frameId] });
}

Deno.test({
  name:
    "pins: a pinned range stays readable (frames fetchable, bundle still works) after reclaim has passed it",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const [root] = instanceRoots(server.dataDir);
      const bound = diskBound(root);
      await ok(server, "navigate_page", { url: `${site.origin}/animation.html` });
      const seen = new Map<number, Frame>();
      const window = await earlyWindow(server, seen);
      const answer = structured(
        await ok(server, "pin_resolved_range", { range: window, label: "early" }),
      ) as unknown as PinAnswer;
      const pin = answer.pin;
      assert(pin.bytes > 0 && pin.segments >= 1, JSON.stringify(answer));
      // The pin reports its bounds to 0.01 ms.
      assert(
        Math.abs(pin.start_ms - window.start_ms) < 0.01 && Math.abs(pin.end_ms - window.end_ms) < 0.01,
        `pin ${JSON.stringify(pin)} of ${JSON.stringify(window)}`,
      );
      assertEquals(pin.label, "early");
      assertEquals(answer.pinned_bytes, pin.bytes);
      const pinned = await allFrames(server, window);
      assert(pinned.length >= 10, `frames in the pinned window: ${pinned.length}`);
      // Record on until reclaim has taken well over a budget's worth, on both sides of the pin.
      let max = 0;
      let status = await captureState(server);
      const t0 = performance.now();
      while (performance.now() - t0 < 60_000) {
        for (let i = 0; i < 4; i++) {
          max = Math.max(max, diskBytes(root));
          await sleep(100);
        }
        await collect(server, seen);
        status = await captureState(server);
        if ((status.retention?.reclaimed.bytes ?? 0) > BUDGET + pin.bytes) break;
      }
      const r = status.retention;
      assert(r, "status carries the retention block");
      assert(r.reclaimed.bytes > BUDGET + pin.bytes, `recorded well past the budget: ${JSON.stringify(r)}`);
      assertEquals([r.pins, r.pinned_bytes > 0], [1, true], JSON.stringify(r));
      assert(r.used_bytes <= BUDGET, `pins count against the share: ${JSON.stringify(r)}`);
      const retained = new Set((await allFrames(server)).map((f) => f.frame_id));
      const gone = [...seen.values()].filter((f) => !retained.has(f.frame_id));
      const older = gone.filter((f) => f.session_time_ms < window.start_ms);
      const newer = gone.filter((f) => f.session_time_ms > window.end_ms);
      console.error(
        `pins e2e: max ${max} B on disk (bound ${bound}), pin ${pin.bytes} B in ${pin.segments} segments, ` +
          `reclaimed ${r.reclaimed.bytes} B; ${seen.size} frames seen, ${older.length} older and ` +
          `${newer.length} newer than the pin gone`,
      );
      assert(older.length > 0, "reclaim took unpinned frames older than the pin");
      assert(newer.length > 0, "reclaim took unpinned frames newer than the pin");
      assertEquals(pinned.filter((f) => !retained.has(f.frame_id)), [], "no pinned frame went");
      assertEquals((await allFrames(server, window)).map((f) => f.frame_id), pinned.map((f) => f.frame_id));
      assert(max <= bound, `instance root peaked at ${max} bytes, over share + one segment (${bound})`);
      // The pinned frames are still readable, and a bundle of the range is still built from them.
      const middle = pinned[Math.floor(pinned.length / 2)];
      const fetched = await fetchOne(server, middle.frame_id);
      assert(!fetched.isError, textOf(fetched));
      assert(fetched.content.some((c) => c.type === "image"), "a pinned frame is fetchable");
      const bundle = await server.call("temporal_debug_bundle", { range: window, inline_images: false });
      assert(!bundle.isError, textOf(bundle));
      const bundles = structured(bundle).bundles as unknown[];
      assert(bundles.length >= 1, textOf(bundle));
      // Just outside the pin, unpinned frames are gone for good.
      const outside = await fetchOne(server, older[older.length - 1].frame_id);
      assertEquals(errorCode(outside), "frame_not_found", textOf(outside));
    }, tiny),
});

Deno.test({
  name: "pins: an all-pinned share pauses capture with a budget gap and deletes nothing protected",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const [root] = instanceRoots(server.dataDir);
      const bound = diskBound(root);
      await ok(server, "navigate_page", { url: `${site.origin}/animation.html` });
      const seen = new Map<number, Frame>();
      for (let i = 0; i < 100 && (await collect(server, seen)).length < 5; i++) await sleep(100);
      // A range reaching into the live future holds the tail as it is recorded, up to its requested end.
      const pinAll = async () =>
        structured(
          await ok(server, "pin_resolved_range", { range: { start_ms: 0, end_ms: 600_000 } }),
        ) as unknown as PinAnswer;
      const answer = await pinAll();
      assert(answer.range_warnings?.includes("requested_end_not_yet_elapsed"), JSON.stringify(answer));
      assertEquals(answer.pin.end_ms, 600_000, "the pin ends where it was asked to, in the future");
      const held = new Map<number, Frame>();
      let max = 0;
      let status = await captureState(server);
      const t0 = performance.now();
      while (performance.now() - t0 < 60_000) {
        for (const f of await allFrames(server)) {
          if (f.session_time_ms <= answer.pin.end_ms) held.set(f.frame_id, f);
        }
        max = Math.max(max, diskBytes(root));
        status = await captureState(server);
        if (status.budget?.reason === "pinned" && status.retention?.recording_blocked) break;
        await sleep(200);
      }
      const paused = status.budget;
      assertEquals(paused?.reason, "pinned", `capture paused for pins: ${JSON.stringify(status)}`);
      assert(paused?.paused === true && /unpin_resolved_range/.test(paused.recovery), JSON.stringify(paused));
      const r = status.retention;
      assertEquals([r?.recording_blocked, r?.blocked_reason], [true, "pinned"], JSON.stringify(r));
      // Frames are what a full share refuses; the index rows that record the pause (the gap, events) still
      // grow it a little, within the one-segment allowance the acceptance bound gives.
      assert(
        r && r.pinned_bytes > 0 && r.used_bytes <= BUDGET + segmentBytesFor(BUDGET, SEGMENT_MAX_BYTES),
        JSON.stringify(r),
      );
      const gap = (await gapsOf(server)).find((g) => g.kind === "budget" && g.end_ns === null);
      assert(gap, `an open budget gap is listed: ${JSON.stringify(await gapsOf(server))}`);
      assert(/pins fill the disk budget/.test(gap.cause), gap.cause);
      // Frames go on arriving and are refused while paused; nothing protected is deleted for them.
      const refused = status.frames_over_budget;
      for (let i = 0; i < 100 && status.frames_over_budget < refused + 10; i++) {
        max = Math.max(max, diskBytes(root));
        await sleep(100);
        status = await captureState(server);
      }
      assert(
        status.frames_over_budget >= refused + 10,
        `frames refused while paused: ${JSON.stringify(status)}`,
      );
      const retained = new Set((await allFrames(server)).map((f) => f.frame_id));
      const lost = [...held.values()].filter((f) => !retained.has(f.frame_id));
      console.error(
        `pins e2e: one pin holds ${r.pinned_bytes} B of ${r.used_bytes} B used; ` +
          `${held.size} protected frames, ${lost.length} lost; max ${max} B on disk (bound ${bound})`,
      );
      assertEquals(lost, [], "every frame listed under a pin is still listed");
      const ids = [...held.keys()];
      for (let i = 0; i < ids.length; i += 8) {
        const fetched = await server.call("fetch_source_frames", {
          frame_ids: ids.slice(i, i + 8),
          inline_images: false,
        });
        assert(!fetched.isError, textOf(fetched));
      }
      assert(max <= bound, `instance root peaked at ${max} bytes, over share + one segment (${bound})`);
      // Unpinning makes the evidence reclaimable again: capture resumes by itself and the gap closes.
      // By the same range: it finds the pin while the recording goes on past the moment it was made.
      const unpinned = structured(
        await ok(server, "unpin_resolved_range", { range: { start_ms: 0, end_ms: 600_000 } }),
      );
      assertEquals([unpinned.unpinned, unpinned.pins_left], [[answer.pin.pin_id], 0]);
      const stored = status.frames_stored;
      for (let i = 0; i < 150; i++) {
        status = await captureState(server);
        if (
          status.frames_stored >= stored + 10 && !status.retention?.recording_blocked && !status.budget
        ) break;
        await sleep(100);
      }
      assert(status.frames_stored >= stored + 10, `capture resumed: ${JSON.stringify(status)}`);
      assertEquals([status.retention?.recording_blocked, status.budget], [false, undefined]);
      const closed = (await gapsOf(server)).filter((g) => g.kind === "budget");
      assert(closed.length >= 1 && closed.every((g) => g.end_ns !== null), JSON.stringify(closed));
    }, tiny),
});

Deno.test({
  name: "grace: a fresh artifact's range outlives older evidence; dropping grace is sticky and warned",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await ok(server, "navigate_page", { url: `${site.origin}/animation.html` });
      const seen = new Map<number, Frame>();
      const window = await earlyWindow(server, seen);
      const artifact = await ok(server, "generate_artifacts", { range: window, inline_images: false });
      assertEquals(retentionWarning(artifact), undefined);
      const files = (structured(artifact).artifacts as Array<{ uri: string; manifest_uri: string }>)
        .flatMap((a) => [a.uri, a.manifest_uri]);
      assert(files.length >= 2, JSON.stringify(structured(artifact)));
      let status = await captureState(server);
      assert((status.retention?.grace_protected_bytes ?? 0) > 0, JSON.stringify(status.retention));
      const graced = await allFrames(server, window);
      assert(graced.length >= 10, `frames in the artifact's range: ${graced.length}`);
      // Under pressure, unprotected evidence older than the artifact's range goes and the range stays.
      const firstSeen = Math.min(...[...seen.values()].map((f) => f.session_time_ms));
      let first = firstSeen;
      const t0 = performance.now();
      while (performance.now() - t0 < 20_000 && first <= firstSeen) {
        await sleep(200);
        await collect(server, seen);
        first = (structured(await ok(server, "list_source_frames", { max_frames: 1 })).frames as Frame[])[0]
          .session_time_ms;
      }
      status = await captureState(server);
      assertEquals(status.retention?.grace_overridden_through, undefined, "grace was not needed yet");
      assert(
        first > firstSeen,
        `older unprotected frames went: first retained ${first} ms, window ${JSON.stringify(window)}: ${
          JSON.stringify(status)
        }`,
      );
      assert((status.retention?.reclaimed.segments ?? 0) > 0, JSON.stringify(status.retention));
      assertEquals((await allFrames(server, window)).map((f) => f.frame_id), graced.map((f) => f.frame_id));
      // Artifacts are what pressure takes first (they can be made again), except while in grace.
      for (const uri of files) {
        const read = await server.client.readResource({ uri });
        assert(read.contents.length === 1, `${uri} is still readable`);
      }
      assertEquals(
        (await captureState(server)).retention?.grace_overridden_through,
        undefined,
        "the range was listed before grace was dropped",
      );
      // Artifacts of everything recorded since put the whole share under grace: the next frames that do
      // not fit can only be stored by dropping it. Every call in the meantime is watched for the warning;
      // an override that falls between two calls warns none of them, so artifacts go on (and grace keeps
      // being dropped) until one call has carried it.
      const warned: Array<{ tool: string; warning: RetentionWarning; text: string }> = [];
      const watch = async (tool: string, args: Record<string, unknown>) => {
        const result = await ok(server, tool, args);
        const warning = retentionWarning(result);
        if (warning) warned.push({ tool, warning, text: textOf(result) });
        return result;
      };
      let artifacts = 0;
      const t1 = performance.now();
      while (performance.now() - t1 < 60_000) {
        if (status.retention?.grace_overridden_through !== undefined && warned.length > 0) break;
        const newest = (await collect(server, seen)).at(-1);
        await watch("generate_artifacts", {
          range: { start_ms: window.end_ms, end_ms: newest?.session_time_ms },
          inline_images: false,
        });
        artifacts++;
        await watch("wait", { time_ms: 1_000 });
        status = structured(await watch("browser_status", { detail: "expanded" })).capture as typeof status;
      }
      const through = status.retention?.grace_overridden_through;
      // Dropping grace may have taken the first artifact's whole range.
      const kept = new Set((await allFrames(server)).map((f) => f.frame_id));
      console.error(
        `grace e2e: ${artifacts} artifacts; override ${JSON.stringify(through)}; warned on ${
          warned.map((w) => w.tool).join(", ")
        }; ${graced.filter((f) => !kept.has(f.frame_id)).length} of ${graced.length} frames of the first ` +
          `artifact's range gone; reclaimed ${JSON.stringify(status.retention?.reclaimed)}; stored ` +
          `${status.frames_stored}, over budget ${status.frames_over_budget}`,
      );
      assert(through, `grace was dropped: ${JSON.stringify(status.retention)}`);
      assert(through.count >= 1 && Date.parse(through.at) > 0, JSON.stringify(through));
      assert(
        through.newest_retained_at && typeof through.session_time_ms === "number",
        JSON.stringify(through),
      );
      assert(warned.length > 0, "a call during which grace was dropped carries the warning");
      const w = warned[0];
      assertEquals(w.warning.code, "artifact_grace_overridden");
      assert(/warning artifact_grace_overridden: /.test(w.text), w.text);
      assert(w.warning.through && w.warning.through.count <= through.count, JSON.stringify(w.warning));
      // Sticky: a later poll, with no artifact since, still reports where grace was dropped.
      await ok(server, "wait", { time_ms: 500 });
      const later = (await captureState(server)).retention?.grace_overridden_through;
      assert(later && later.count >= through.count && later.at >= through.at, JSON.stringify(later));
      const concise = structured(await ok(server, "browser_status", {})).capture as {
        retention?: { grace_overridden_through?: unknown };
      };
      assert(concise.retention?.grace_overridden_through, JSON.stringify(concise.retention));
    }, tiny),
});

Deno.test({
  name: "pins: query_pin_state lists pins with their bytes; unpin by pin_id or by range; bad unpins refused",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const nav = structured(await ok(server, "navigate_page", { url: `${site.origin}/animation.html` }));
      const seen = new Map<number, Frame>();
      let frames: Frame[] = [];
      for (let i = 0; i < 150 && frames.length < 30; i++) {
        frames = await collect(server, seen);
        if (frames.length < 30) await sleep(100);
      }
      assert(
        frames.length >= 30,
        `frames recorded: ${frames.length}: ${JSON.stringify(await captureState(server))}`,
      );
      const a = { start_ms: frames[5].session_time_ms, end_ms: frames[12].session_time_ms };
      const b = { start_ms: frames[18].session_time_ms, end_ms: frames[25].session_time_ms };
      const sizes: Record<string, { text: number; structured: number }> = {};
      const first = await ok(server, "pin_resolved_range", { range: a, label: "first" });
      sizes.pin = responseChars(first);
      const p1 = (structured(first) as unknown as PinAnswer).pin;
      const p2 =
        (structured(await ok(server, "pin_resolved_range", { range: b })) as unknown as PinAnswer).pin;
      assert(p1.pin_id !== p2.pin_id);
      const forms = [p1, p2];
      if (typeof nav.interaction_id === "string") {
        const p3 = structured(await ok(server, "pin_resolved_range", { interaction_id: nav.interaction_id }));
        forms.push((p3 as unknown as PinAnswer).pin);
      }
      const handle = structured(
        await ok(server, "resolve_temporal_range", {
          range: { start_ms: frames[13].session_time_ms, end_ms: frames[16].session_time_ms },
        }),
      )
        .range_handle as string;
      const byHandle =
        (structured(await ok(server, "pin_resolved_range", { range_handle: handle })) as unknown as PinAnswer)
          .pin;
      assertEquals(
        structured(await ok(server, "unpin_resolved_range", { range_handle: handle })).unpinned,
        [byHandle.pin_id],
        "a range_handle unpins what it pinned",
      );
      const queried = await ok(server, "query_pin_state", {});
      sizes.query = responseChars(queried);
      const state = structured(queried) as { pins: PinView[]; pinned_bytes: number; share_bytes: number };
      assertEquals(state.pins.map((p) => p.pin_id), forms.map((p) => p.pin_id));
      for (const p of state.pins) assert(p.bytes > 0 && p.segments >= 1, JSON.stringify(p));
      assertEquals(state.pins[0].label, "first");
      // Overlapping pins hold a segment once.
      assert(state.pinned_bytes > 0, JSON.stringify(state));
      assert(state.pinned_bytes <= state.pins.reduce((n, p) => n + p.bytes, 0), JSON.stringify(state));
      assertEquals(state.share_bytes, BUDGET);
      const mine = structured(await ok(server, "query_pin_state", { session_id: p1.session_id }));
      assertEquals((mine.pins as PinView[]).length, forms.length);
      // By pin_id, then by the range that was pinned.
      const byId = await ok(server, "unpin_resolved_range", { pin_id: p1.pin_id });
      sizes.unpin = responseChars(byId);
      assertEquals(structured(byId).unpinned, [p1.pin_id]);
      assertEquals(structured(byId).pins_left, forms.length - 1);
      const byRange = structured(await ok(server, "unpin_resolved_range", { range: b }));
      assertEquals(byRange.unpinned, [p2.pin_id]);
      assertEquals(byRange.pins_left, forms.length - 2);
      // An unknown pin, a pin already released, a range nobody pinned.
      for (const args of [{ pin_id: "pin-999" }, { pin_id: p1.pin_id }, { range: a }]) {
        const refused = await server.call("unpin_resolved_range", args);
        assertEquals([refused.isError, errorCode(refused)], [true, "pin_not_found"], textOf(refused));
      }
      const both = await server.call("unpin_resolved_range", { pin_id: p2.pin_id, range: b });
      assertEquals(errorCode(both), "conflicting_arguments", textOf(both));
      const neither = await server.call("unpin_resolved_range", {});
      assertEquals(errorCode(neither), "invalid_arguments", textOf(neither));
      const left = structured(await ok(server, "query_pin_state", {}));
      assertEquals((left.pins as PinView[]).map((p) => p.pin_id), forms.slice(2).map((p) => p.pin_id));
      sizes.query_after = responseChars(await ok(server, "query_pin_state", {}));
      if (typeof nav.interaction_id === "string") {
        // By the same interaction the pin was made of.
        const byInteraction = await server.call("unpin_resolved_range", {
          interaction_id: nav.interaction_id,
        });
        assertEquals(structured(byInteraction).unpinned, [forms[2].pin_id], textOf(byInteraction));
      }
      assertEquals(structured(await ok(server, "query_pin_state", {})).pins, []);
      // A pin outlives its session's recording and ends with delete_session.
      const kept =
        (structured(await ok(server, "pin_resolved_range", { range: b })) as unknown as PinAnswer).pin;
      await ok(server, "stop_browser", {});
      const stopped = structured(await ok(server, "query_pin_state", { session_id: kept.session_id }));
      const after = stopped.pins as PinView[];
      assertEquals(after.map((p) => p.pin_id), [kept.pin_id]);
      assert(after[0].bytes > 0 && stopped.pinned_bytes === after[0].bytes, JSON.stringify(stopped));
      await ok(server, "delete_session", { session_id: kept.session_id });
      const deleted = structured(await ok(server, "query_pin_state", {}));
      assertEquals([deleted.pins, deleted.pinned_bytes], [[], 0]);
      console.error(`pins e2e: ${forms.length} pins; response characters ${JSON.stringify(sizes)}`);
    }, tiny),
});

Deno.test({
  name: "pins: a pinned range outlives age-out until it is unpinned, then expires on the next operation",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await ok(server, "navigate_page", { url: `${site.origin}/animation.html` });
      const seen = new Map<number, Frame>();
      const { window, pin, pinned } = await pinBeforeAgeOut(server, seen);
      assert(pinned.length >= 10, `frames in the pinned window: ${pinned.length}`);
      // Evidence expires 3 s after its segment sealed (segments seal at a quarter of that): unpinned
      // frames on both sides of the pin go, the pinned ones stay.
      let older: Frame[] = [];
      let newer: Frame[] = [];
      let retained = new Set<number>();
      const t0 = performance.now();
      while (performance.now() - t0 < 40_000 && (older.length === 0 || newer.length === 0)) {
        await sleep(250);
        await collect(server, seen);
        retained = new Set((await allFrames(server)).map((f) => f.frame_id));
        const gone = [...seen.values()].filter((f) => !retained.has(f.frame_id));
        older = gone.filter((f) => f.session_time_ms < window.start_ms);
        newer = gone.filter((f) => f.session_time_ms > window.end_ms);
      }
      const r = (await captureState(server)).retention;
      console.error(
        `pins age-out e2e: ${older.length} older and ${newer.length} newer frames expired; ${
          JSON.stringify(r?.reclaimed)
        }`,
      );
      assert(older.length > 0 && newer.length > 0, "unpinned frames expired on both sides of the pin");
      assert(r && r.reclaimed.expired_segments > 0 && r.reclaimed.segments === r.reclaimed.expired_segments);
      assertEquals(pinned.filter((f) => !retained.has(f.frame_id)), [], "no pinned frame expired");
      const fetched = await fetchOne(server, pinned[0].frame_id);
      assert(fetched.content.some((c) => c.type === "image"), textOf(fetched));
      // Unpinned, the range is as old as it is: the next operation expires it.
      await ok(server, "unpin_resolved_range", { pin_id: pin.pin_id });
      let left = pinned.length;
      for (let i = 0; i < 40 && left > 0; i++) {
        await captureState(server);
        const now = new Set((await allFrames(server)).map((f) => f.frame_id));
        left = pinned.filter((f) => now.has(f.frame_id)).length;
        if (left > 0) await sleep(250);
      }
      assertEquals(left, 0, "the unpinned range expired");
    }, { browser: { every_nth_frame: 1 }, env: { KROMETRAIL_RETENTION_MAX_AGE_SECS: "3", ...patientAcks } }),
});

Deno.test({
  name: "grace: the status poll that drops grace for a peer's arrival carries the retention warning",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-grace-" });
    const env = { KROMETRAIL_DISK_BUDGET_BYTES: String(BUDGET), ...patientAcks };
    const a = await startServer({ dataDir, env });
    let b: ServerHandle | undefined;
    try {
      await ok(a, "start_browser", {
        temporary: true,
        every_nth_frame: 1,
        url: `${site.origin}/animation.html`,
      });
      // Past half the budget, short of the full budget's high-water mark: nothing reclaimed yet.
      let status = await captureState(a);
      for (let i = 0; i < 300 && (status.retention?.used_bytes ?? 0) < 0.6 * BUDGET; i++) {
        await sleep(50);
        status = await captureState(a);
      }
      assertEquals(status.retention?.reclaimed.segments, 0, JSON.stringify(status.retention));
      const last = (await newestFrames(a)).at(-1);
      assert(last, "frames recorded");
      // A still page paints (almost) nothing, so no frame decides anything from here on.
      await ok(a, "navigate_page", { url: `${site.origin}/untitled.html` });
      const artifact = await ok(a, "generate_artifacts", {
        range: { start_ms: 0, end_ms: last.session_time_ms },
        inline_images: false,
      });
      assertEquals(retentionWarning(artifact), undefined);
      const before = (await captureState(a)).retention;
      assert(before && before.grace_protected_bytes > BUDGET / 2, JSON.stringify(before));
      assertEquals(before.grace_overridden_through, undefined);
      // A peer halves the share; a's next operation, a status poll, can only make room by dropping grace.
      b = await startServer({ dataDir, env });
      const poll = await ok(a, "browser_status", { detail: "expanded" });
      const after = (structured(poll).capture as { retention?: FullRetention }).retention;
      console.error(`grace peer e2e: ${JSON.stringify(after)}`);
      assertEquals([after?.share_bytes, after?.instances], [BUDGET / 2, 2]);
      assert(after?.grace_overridden_through, `grace was dropped: ${JSON.stringify(after)}`);
      const warning = retentionWarning(poll);
      assertEquals(warning?.code, "artifact_grace_overridden", textOf(poll));
      assert(/warning artifact_grace_overridden: /.test(textOf(poll)), textOf(poll));
    } finally {
      await b?.close();
      await a.close();
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});
