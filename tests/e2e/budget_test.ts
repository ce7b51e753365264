import { assert, assertEquals } from "../assert.ts";
import { e2e, startServer, structured, textOf, withServer } from "./harness.ts";
import { captureOf, diskBytes, instanceRoots, type Retention, sleep } from "./budget_util.ts";
import { segmentBytesFor } from "../../src/store/budget.ts";
import { SEGMENT_MAX_BYTES } from "../../src/store/format.ts";
import { fixtures } from "./harness.ts";

/**
 * Small enough that a recording runs well past it in seconds, with room beside what reclaim cannot
 * take (the open segment, the index's write-ahead log, checkpointed at a sixteenth of the share).
 */
const BUDGET = 3_000_000;

Deno.test({
  name:
    "budget: a recording well past a tiny budget trims oldest first, stays within its share, and keeps storing",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const [root] = instanceRoots(server.dataDir);
      // The empty index is the store's fixed cost, not counted against the share.
      const fixed = diskBytes(root) + 128 * 1024;
      const bound = BUDGET + segmentBytesFor(BUDGET, SEGMENT_MAX_BYTES) + fixed;
      await server.call("navigate_page", { url: `${site.origin}/animation.html` });
      let max = 0;
      let samples = 0;
      let status = await captureOf(server);
      const t0 = performance.now();
      // Runs until reclaim has gone round several times (well past the budget), bounded generously.
      while (performance.now() - t0 < 45_000) {
        for (let i = 0; i < 4; i++) {
          max = Math.max(max, diskBytes(root));
          samples++;
          await sleep(100);
        }
        status = await captureOf(server);
        if ((status.retention?.reclaimed.bytes ?? 0) > BUDGET) break;
      }
      const r = status.retention;
      console.error(
        `budget e2e: ${samples} samples, max ${max} B on disk (bound ${bound}), stored ${status.frames_stored}, ` +
          `reclaimed ${r?.reclaimed.bytes} B in ${r?.reclaimed.segments} segments`,
      );
      assert(r, "status carries the retention block");
      assertEquals([r.budget_bytes, r.share_bytes, r.instances, r.instances_source], [
        BUDGET,
        BUDGET,
        1,
        "counted",
      ]);
      assert(r.reclaimed.bytes > BUDGET, `recorded well past the budget: ${JSON.stringify(r)}`);
      assert(max <= bound, `instance root peaked at ${max} bytes, over share + one segment (${bound})`);
      assert(r.used_bytes <= BUDGET, JSON.stringify(r));
      // The oldest evidence went first: the first retained frame is well after the session began.
      const listed = structured(await server.call("list_source_frames", { max_frames: 1 }));
      const frames = listed.frames as Array<{ frame_id: number; session_time_ms: number }>;
      assert(frames[0].session_time_ms > 1_000, `earliest frames are gone: ${JSON.stringify(frames[0])}`);
      // Recording and reclaim go on between two listings, so the count can shrink under the offset.
      let recent: { frame_id: number } | undefined;
      for (let i = 0; i < 5 && !recent; i++) {
        const total = structured(await server.call("list_source_frames", { max_frames: 1 }))
          .total_frame_count as number;
        const last = structured(
          await server.call("list_source_frames", { offset: total - 1, max_frames: 1 }),
        );
        recent = (last.frames as Array<{ frame_id: number }>)[0];
      }
      assert(recent, "a recent frame is listed");
      const fetched = await server.call("fetch_source_frames", { frame_ids: [recent.frame_id] });
      assert(!fetched.isError, textOf(fetched));
      assert(fetched.content.some((c) => c.type === "image"), "a recent frame is fetchable");
      // A second session in the same process records on (it used to store one frame and pause).
      await server.call("stop_browser");
      await server.call("start_browser", {
        temporary: true,
        every_nth_frame: 1,
        url: `${site.origin}/animation.html`,
      });
      let second = await captureOf(server);
      for (let i = 0; i < 60 && second.frames_stored < 10; i++) {
        await sleep(250);
        second = await captureOf(server);
      }
      assert(second.frames_stored >= 10, `the next session keeps storing: ${JSON.stringify(second)}`);
      // Under load a frame can arrive before reclaim has made room; it is refused as a declared budget
      // gap, and recording is not left blocked.
      assert(
        second.frames_over_budget <= 2,
        `frames refused in the next session: ${second.frames_over_budget}`,
      );
      assert(!second.retention?.recording_blocked, `recording resumed: ${JSON.stringify(second.retention)}`);
    }, { browser: { every_nth_frame: 1 }, env: { KROMETRAIL_DISK_BUDGET_BYTES: String(BUDGET) } }),
});

Deno.test({
  name: "budget: two servers on one data dir each take total / 2 on their next operation",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-budget-" });
    // Each half is 1 MB: the index's write-ahead log is checkpointed relative to the share, so a small
    // share is not filled by what reclaim cannot take.
    const BUDGET = 2_000_000;
    const env = { KROMETRAIL_DISK_BUDGET_BYTES: String(BUDGET) };
    const a = await startServer({ dataDir, env });
    let b: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      await a.call("start_browser", {
        temporary: true,
        every_nth_frame: 1,
        url: `${site.origin}/animation.html`,
      });
      await sleep(1_500);
      assertEquals((await captureOf(a)).retention?.share_bytes, BUDGET, "alone, a takes the whole budget");
      b = await startServer({ dataDir, env });
      // b records nothing: its idle status still counts N and reports its share.
      const idle = structured(await b.call("browser_status", {})).server as { retention?: Retention };
      assertEquals(
        [idle.retention?.share_bytes, idle.retention?.instances, idle.retention?.instances_source],
        [BUDGET / 2, 2, "counted"],
      );
      const shared = (await captureOf(a)).retention;
      assertEquals([shared?.share_bytes, shared?.instances], [BUDGET / 2, 2]);
      // Every status poll is an enforcement pass, so a is at its new share from this poll on.
      const r = (await captureOf(a)).retention;
      assert(r && r.used_bytes <= BUDGET / 2, `a trimmed to its new share: ${JSON.stringify(r)}`);
      await b.close();
      b = undefined;
      let alone = (await captureOf(a)).retention;
      for (let i = 0; i < 40 && alone?.instances !== 1; i++) {
        await sleep(250);
        alone = (await captureOf(a)).retention;
      }
      assertEquals([alone?.share_bytes, alone?.instances], [BUDGET, 1], "a departed peer returns its share");
    } finally {
      await b?.close();
      await a.close();
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "age-out: evidence older than the maximum age is removed on the next operation, well inside the budget",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/animation.html` });
      // Every status poll is an operation: it removes what has aged out by then. Polled until the first
      // second of the session is gone (was a 5 s sleep; a loaded machine may need longer).
      const firstRetained = async () =>
        (structured(await server.call("list_source_frames", { max_frames: 1 })).frames as Array<
          { session_time_ms: number }
        >)[0]?.session_time_ms ?? 0;
      let r = (await captureOf(server)).retention;
      for (let i = 0; i < 120; i++) {
        if (r && r.reclaimed.expired_segments > 0 && await firstRetained() > 1_000) break;
        await sleep(250);
        r = (await captureOf(server)).retention;
      }
      assert(r && r.reclaimed.expired_segments > 0, `segments expired: ${JSON.stringify(r)}`);
      assertEquals(r.reclaimed.segments, r.reclaimed.expired_segments, "nothing went for budget pressure");
      assert(r.used_bytes < (r.share_bytes ?? 0) / 100, "the store is far inside its budget");
      // Segments seal at a quarter of the age, so nothing retained is older than 1.25 × 3 s, plus load slack.
      const oldest = Date.parse(r.oldest_retained_at ?? "");
      assert(Date.now() - oldest < 3_750 + 2_000, `oldest retained ${r.oldest_retained_at} is too old`);
      const listed = structured(await server.call("list_source_frames", { max_frames: 1 }));
      const first = (listed.frames as Array<{ session_time_ms: number }>)[0];
      assert(first.session_time_ms > 1_000, `the earliest frames expired: ${JSON.stringify(first)}`);
    }, { browser: { every_nth_frame: 1 }, env: { KROMETRAIL_RETENTION_MAX_AGE_SECS: "3" } }),
});
