import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import {
  type GapPresentation,
  type PlanFrame,
  planVideo,
  type VideoPlan,
  type VideoPlanInput,
} from "../../../src/temporal/video_plan.ts";

const MS = 1_000_000;

function frames(times_ms: number[], selected: number[] = []): PlanFrame[] {
  return times_ms.map((t, i) => ({
    frame_id: 100 + i,
    session_time_ns: t * MS,
    selected: selected.includes(i),
  }));
}

/** Invariants every plan keeps: contiguous output frames, tiled session spans, exact totals. */
function checkInvariants(plan: VideoPlan): void {
  let frame = 0;
  let session = plan.presented_start_ns;
  for (const iv of plan.intervals) {
    assertEquals(iv.start_frame, frame, "output frames are contiguous");
    assert(iv.frame_count >= 1, "no empty interval");
    assertEquals(iv.pts_ms, Math.round((iv.start_frame * 1e6) / plan.fps) / 1000);
    assertEquals(iv.session_start_ns, session, "session spans tile the presented timeline");
    assert(iv.session_end_ns >= iv.session_start_ns);
    frame += iv.frame_count;
    session = iv.session_end_ns;
  }
  assertEquals(session, plan.range.end_ns, "the mapping reaches the range end");
  assertEquals(frame, plan.total_frames);
  assertEquals(plan.duration_ms, Math.round((frame * 1e6) / plan.fps) / 1000);
  const covered = plan.intervals.flatMap((iv) => iv.source_frame_ids);
  assertEquals(covered, plan.source_frame_ids, "every source frame is mapped once, in order");
}

function errorOf(fn: () => unknown): ToolError {
  const err = assertThrows(fn);
  assert(err instanceof ToolError, `expected ToolError, got ${err}`);
  return err;
}

Deno.test("real_time: presentation timing equals session timing", () => {
  const plan = planVideo({
    frames: frames([1000, 1100, 1250, 1400]),
    gaps: [],
    range: { start_ns: 1000 * MS, end_ns: 1500 * MS },
    policy: "real_time",
    fps: 20,
  });
  checkInvariants(plan);
  assertEquals(
    plan.intervals.map((iv) => [iv.kind === "frame" ? iv.frame_id : -1, iv.pts_ms, iv.duration_ms]),
    [[100, 0, 100], [101, 100, 150], [102, 250, 150], [103, 400, 100]],
  );
  assertEquals(plan.duration_ms, 500);
  assertEquals(plan.omitted_frame_count, 0);
});

Deno.test("real_time: unaligned times drift at most half a frame; sub-frame frames fold into a neighbour", () => {
  const times = [0, 7, 40, 41, 90, 133, 170, 222, 260, 301];
  const plan = planVideo({
    frames: frames(times),
    gaps: [],
    range: { start_ns: 0, end_ns: 333 * MS },
    policy: "real_time",
    fps: 30,
  });
  checkInvariants(plan);
  assertEquals(plan.total_frames, 10);
  for (const iv of plan.intervals) {
    const sessionMs = iv.session_start_ns / MS;
    assert(
      Math.abs(iv.pts_ms - sessionMs) <= 1000 / 30 / 2 + 1e-6,
      `pts ${iv.pts_ms} vs session ${sessionMs}`,
    );
  }
  assert(plan.omitted_frame_count > 0, "frames shorter than an output frame are folded, and counted");
});

Deno.test("real_time: lead-in is not shown; a frame before the range carries in from the range start", () => {
  const lead = planVideo({
    frames: frames([200, 300]),
    gaps: [],
    range: { start_ns: 0, end_ns: 500 * MS },
    policy: "real_time",
    fps: 10,
  });
  checkInvariants(lead);
  assertEquals([lead.presented_start_ns, lead.lead_in_ns, lead.duration_ms], [200 * MS, 200 * MS, 300]);

  const carry = planVideo({
    frames: frames([50, 200, 300, 600]),
    gaps: [],
    range: { start_ns: 100 * MS, end_ns: 500 * MS },
    policy: "real_time",
    fps: 10,
  });
  checkInvariants(carry);
  assertEquals(carry.lead_in_ns, 0);
  assertEquals(carry.source_frame_ids, [100, 101, 102], "frames after the range end are excluded");
  const first = carry.intervals[0];
  assert(first.kind === "frame");
  assertEquals([first.frame_id, first.frame_session_time_ns, first.duration_ms], [100, 50 * MS, 100]);
});

Deno.test("real_time: a gap becomes a slate lasting until capture resumes, never interpolated", () => {
  const plan = planVideo({
    frames: frames([0, 100, 350, 400]),
    gaps: [{ start_ns: 200 * MS, end_ns: 300 * MS, kind: "visibility" }],
    range: { start_ns: 0, end_ns: 500 * MS },
    policy: "real_time",
    fps: 20,
  });
  checkInvariants(plan);
  assertEquals(
    plan.intervals.map((
      iv,
    ) => [iv.kind, iv.pts_ms, iv.duration_ms, iv.session_start_ns / MS, iv.session_end_ns / MS]),
    [
      ["frame", 0, 100, 0, 100],
      ["frame", 100, 100, 100, 200],
      ["gap", 200, 150, 200, 350],
      ["frame", 350, 50, 350, 400],
      ["frame", 400, 100, 400, 500],
    ],
  );
  const gap = plan.intervals[2] as GapPresentation;
  assertEquals([gap.gap_kind, gap.gap_start_ns, gap.gap_end_ns], ["visibility", 200 * MS, 300 * MS]);
  assertEquals(plan.gap_count, 1);
});

Deno.test("gaps: zero-length and overlapping gaps stay visible; frames inside a gap are mapped, not shown", () => {
  const plan = planVideo({
    frames: frames([0, 100, 250, 300]),
    gaps: [
      { start_ns: 200 * MS, end_ns: 280 * MS, kind: "queue_full" },
      { start_ns: 260 * MS, end_ns: 290 * MS, kind: "persistence" },
      { start_ns: 120 * MS, end_ns: 120 * MS, kind: "queue_full" },
    ],
    range: { start_ns: 0, end_ns: 400 * MS },
    policy: "real_time",
    fps: 10,
  });
  checkInvariants(plan);
  const gaps = plan.intervals.filter((iv): iv is GapPresentation => iv.kind === "gap");
  assertEquals(gaps.length, 2);
  assert(gaps.every((g) => g.frame_count >= 1), "every gap gets at least one frame");
  assertEquals(gaps[1].gap_kind, "persistence+queue_full");
  assertEquals([gaps[1].gap_start_ns, gaps[1].gap_end_ns], [200 * MS, 290 * MS]);
  assertEquals(gaps[1].source_frame_ids, [102], "the frame inside the gap is mapped to the slate");
  assert(!plan.presented_frame_ids.includes(102));
});

Deno.test("model_optimized: selected frames are held at least the minimum hold; others are compressed", () => {
  const times = Array.from({ length: 60 }, (_, i) => i * 16);
  const input: VideoPlanInput = {
    frames: frames(times, [0, 20, 40]),
    gaps: [{ start_ns: 500 * MS, end_ns: 520 * MS, kind: "queue_full" }],
    range: { start_ns: 0, end_ns: 1000 * MS },
    policy: "model_optimized",
  };
  const plan = planVideo(input);
  checkInvariants(plan);
  assertEquals(plan.fps, 10);
  const held = plan.intervals.filter((iv) => iv.kind === "frame" && iv.selected);
  assertEquals(held.map((iv) => (iv.kind === "frame" ? iv.frame_id : 0)), [100, 120, 140]);
  assert(held.every((iv) => iv.duration_ms >= 500 && iv.duration_ms <= 1000), "held within min..max hold");
  const gap = plan.intervals.find((iv) => iv.kind === "gap");
  assertEquals(gap?.duration_ms, 1000, "model_optimized gaps get a fixed hold");
  assert(plan.timing_statement.includes("do not reflect recorded durations"));
  // Each unselected run lasts at most max_unselected_run_ms.
  let run = 0;
  for (const iv of plan.intervals) {
    if (iv.kind === "frame" && !iv.selected) run += iv.duration_ms;
    else run = 0;
    assert(run <= 1000 + 1e-6, `unselected run ${run} ms`);
  }
  // A long stable selected state is held to max_hold, not its recorded length.
  const stable = planVideo({ ...input, frames: frames([0], [0]), gaps: [] });
  assertEquals(stable.intervals.map((iv) => iv.duration_ms), [1000]);
});

Deno.test("plans are deterministic, independent of input order", () => {
  const base: VideoPlanInput = {
    frames: frames([0, 33, 66, 120, 400, 410, 700], [1, 4]),
    gaps: [{ start_ns: 450 * MS, end_ns: 600 * MS, kind: "visibility" }, {
      start_ns: 130 * MS,
      end_ns: 130 * MS,
      kind: "queue_full",
    }],
    range: { start_ns: 0, end_ns: 900 * MS },
    policy: "model_optimized",
  };
  for (const policy of ["real_time", "model_optimized"] as const) {
    const a = planVideo({ ...base, policy });
    const b = planVideo({
      ...base,
      policy,
      frames: [...base.frames].reverse(),
      gaps: [...base.gaps].reverse(),
    });
    assertEquals(JSON.stringify(a), JSON.stringify(b));
    checkInvariants(a);
  }
});

Deno.test("limits: real_time beyond the duration cap fails naming the range, with a speed suggestion", () => {
  const input: VideoPlanInput = {
    frames: frames([0, 60_000]),
    gaps: [],
    range: { start_ns: 0, end_ns: 120_000 * MS },
    policy: "real_time",
  };
  const err = errorOf(() => planVideo(input));
  assertEquals(err.code, "resource_limit_exceeded");
  assertEquals(err.retry, "never");
  assertEquals(err.details, {
    subject: "real_time video duration (resolved range ÷ speed, ms)",
    actual: 120_000,
    limit: 60_000,
  });
  assert(err.recovery?.includes("speed ≥ 2"), err.recovery);
  const fast = planVideo({ ...input, speed: 2 });
  checkInvariants(fast);
  assertEquals([fast.speed, fast.duration_ms, fast.intervals[1].pts_ms], [2, 60_000, 30_000]);
  assert(fast.timing_statement.includes("2x speed"));
});

Deno.test("limits: presentation frames, model_optimized duration, source items, bad arguments", () => {
  const range = { start_ns: 0, end_ns: 10_000 * MS };
  const frameErr = errorOf(() =>
    planVideo({
      frames: frames([0]),
      gaps: [],
      range,
      policy: "real_time",
      limits: { max_presentation_frames: 100 },
    })
  );
  assertEquals(frameErr.details?.subject, "video presentation frame count");
  const many = Array.from({ length: 200 }, (_, i) => i * 50);
  const heldErr = errorOf(() =>
    planVideo({ frames: frames(many, many.map((_, i) => i)), gaps: [], range, policy: "model_optimized" })
  );
  assertEquals(heldErr.code, "resource_limit_exceeded");
  assertEquals(heldErr.details?.subject, "model_optimized video duration (ms)");
  const itemsErr = errorOf(() =>
    planVideo({
      frames: frames(many),
      gaps: [],
      range,
      policy: "real_time",
      limits: { max_source_items: 10 },
    })
  );
  assertEquals(itemsErr.details?.actual, 200);
  assertEquals(
    errorOf(() => planVideo({ frames: frames([0]), gaps: [], range, policy: "real_time", fps: 0 })).code,
    "invalid_argument",
  );
  assertEquals(
    errorOf(() =>
      planVideo({ frames: frames([0]), gaps: [], range: { start_ns: 5, end_ns: 5 }, policy: "real_time" })
    ).code,
    "invalid_argument",
  );
  assertEquals(
    errorOf(() => planVideo({ frames: frames([0]), gaps: [], range, policy: "model_optimized", speed: 2 }))
      .code,
    "invalid_argument",
  );
  assertEquals(
    errorOf(() => planVideo({ frames: frames([20_000]), gaps: [], range, policy: "real_time" })).code,
    "no_source_frames",
  );
});

Deno.test("a range with only a gap is a slate-only plan; a tiny range still shows one frame", () => {
  const slate = planVideo({
    frames: [],
    gaps: [{ start_ns: 0, end_ns: 2_000 * MS, kind: "visibility" }],
    range: { start_ns: 0, end_ns: 1_000 * MS },
    policy: "real_time",
    fps: 10,
  });
  checkInvariants(slate);
  assertEquals(slate.intervals.map((iv) => [iv.kind, iv.frame_count]), [["gap", 10]]);
  const tiny = planVideo({
    frames: frames([0]),
    gaps: [],
    range: { start_ns: 0, end_ns: 5 * MS },
    policy: "real_time",
  });
  checkInvariants(tiny);
  assertEquals(tiny.total_frames, 1);
});
