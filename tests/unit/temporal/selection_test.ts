import { assert, assertEquals } from "../../assert.ts";
import { frameRow, MS } from "./frame_rows.ts";
import type { FrameMeasure } from "../../../src/temporal/analysis.ts";
import {
  prominentPeaks,
  type Selected,
  selectFrames,
  type SelectionInput,
  type SelectionReason,
  trendChanges,
} from "../../../src/temporal/selection.ts";
import { squareAnalysis } from "./scene_ops.ts";

const CHANGE_REASONS: SelectionReason[] = [
  "first_change",
  "peak_change",
  "trend_change",
  "turning_point",
  "before_return",
  "change_peak",
];

const frame = frameRow;

interface MeasureSpec {
  step?: number;
  cx?: number;
  cy?: number;
  base?: number;
  toFinal?: number;
  sig?: number;
}

/** A hand-built measure of frame id 100+i at tMs; a step exists for every frame but the first. */
function measure(i: number, tMs: number, s: MeasureSpec = {}): FrameMeasure {
  const changed = s.step ?? 0;
  return {
    frame: frame(100 + i, tMs),
    offset_ms: tMs,
    t: 0,
    ...(i > 0
      ? {
        step: {
          changed_proportion: changed,
          bounds: changed > 0 ? { x: 0, y: 0, width: 8, height: 8 } : null,
          mean_abs_diff: changed * 235,
          mean_luma_diff: changed * 235,
          mean_color_diff: 0,
          perceptual_distance: changed > 0 ? 0.3 : 0,
          interval_ms: 100,
          centroid: s.cx === undefined ? null : { x: s.cx, y: s.cy ?? 16 },
          across_gap: false,
        },
      }
      : {}),
    baseline: { changed_proportion: s.base ?? 0, mean_abs_diff: (s.base ?? 0) * 235, bounds: null },
    to_final: { changed_proportion: s.toFinal ?? 0, mean_abs_diff: (s.toFinal ?? 0) * 235 },
    signature: new Float32Array(144).fill(s.sig ?? 255),
  };
}

function select(measures: FrameMeasure[], anchorMs: number, over: Partial<SelectionInput> = {}): Selected[] {
  return selectFrames({ measures, anchor_ns: anchorMs * MS, gaps: [], markers: [], max_tiles: 8, ...over });
}

function reasonsAt(sel: Selected[], index: number): SelectionReason[] {
  return sel.find((s) => s.index === index)?.reasons ?? [];
}

function checkShape(sel: Selected[], measures: FrameMeasure[], maxTiles: number): void {
  const n = measures.length;
  assert(sel.length <= maxTiles, `${sel.length} tiles > max_tiles ${maxTiles}`);
  assert(sel.length >= Math.min(3, n), `${sel.length} tiles < min(3, ${n} frames)`);
  for (let k = 1; k < sel.length; k++) assert(sel[k].index > sel[k - 1].index, "chronological, unique");
  for (const s of sel) {
    assertEquals(s.frame_id, measures[s.index].frame.frame_id);
    assert(s.reasons.length > 0, "every tile has a reason");
    assertEquals(new Set(s.reasons).size, s.reasons.length, "reasons are not repeated");
  }
}

/**
 * Ten frames 100 ms apart, anchor at 250 ms (before = 2, first after = 3). Nothing changes until
 * frame 5; the difference from before peaks at frame 7 and the page then settles.
 */
function story(): FrameMeasure[] {
  const specs: MeasureSpec[] = [
    { toFinal: 0.2, sig: 255 },
    { toFinal: 0.2, sig: 255 },
    { toFinal: 0.2, sig: 255 },
    { toFinal: 0.2, sig: 255 },
    { toFinal: 0.2, sig: 255 },
    { step: 0.05, base: 0.05, toFinal: 0.15, sig: 240, cx: 10 },
    { step: 0.1, base: 0.15, toFinal: 0.05, sig: 220, cx: 20 },
    { step: 0.02, base: 0.2, toFinal: 0, sig: 200, cx: 30 },
    { base: 0.2, toFinal: 0, sig: 200 },
    { base: 0.2, toFinal: 0, sig: 200 },
  ];
  return specs.map((s, i) => measure(i, i * 100, s));
}

/** Measures of a real analysis: an 8×8 dark square at xs[i] in frame i (64×32), frames 100 ms apart. */
function analyzedSquare(xs: Array<number | null>, anchorMs = 0): FrameMeasure[] {
  return squareAnalysis(xs, anchorMs).measures;
}

Deno.test("prominentPeaks: local maxima with prominence; ends are never peaks", () => {
  assertEquals(prominentPeaks([]), []);
  assertEquals(prominentPeaks([5]), []);
  assertEquals(prominentPeaks([0, 1, 0]), [{ index: 1, prominence: 1 }]);
  assertEquals(prominentPeaks([0, 3, 1, 2, 0]), [{ index: 1, prominence: 3 }, { index: 3, prominence: 1 }]);
  assertEquals(prominentPeaks([0, 1, 2, 3]), [], "monotonic: no peak");
  assertEquals(prominentPeaks([3, 2, 1, 0]), []);
  assertEquals(prominentPeaks([0, 2, 2, 3]), [], "a plateau that rises again is no peak");
  assertEquals(prominentPeaks([1, 4, 2, 5, 0]), [{ index: 1, prominence: 2 }, { index: 3, prominence: 4 }]);
});

Deno.test("prominentPeaks: a plateau reports its first index only", () => {
  assertEquals(prominentPeaks([0, 2, 2, 0]), [{ index: 1, prominence: 2 }]);
  assertEquals(prominentPeaks([0, 2, 2, 2, 0]), [{ index: 1, prominence: 2 }]);
});

Deno.test("trendChanges: a centroid that turns back is a trend change at the turning frame", () => {
  const xs = [undefined, 8, 16, 32, 16, 8];
  const measures = xs.map((cx, i) =>
    measure(i, i * 100, { step: cx === undefined ? 0 : 0.05, cx, toFinal: 0.5 - i * 0.1 })
  );
  const found = trendChanges(measures);
  assertEquals(found.map((f) => f.index), [3]);
  assert(found[0].score > 0, "scored");
});

Deno.test("trendChanges: wiggles under a tenth of the range are not trend changes", () => {
  const xs = [undefined, 0, 50, 49, 100];
  const measures = xs.map((cx, i) => measure(i, i * 100, { step: 0.05, cx, toFinal: 0.5 - i * 0.1 }));
  assertEquals(trendChanges(measures), []);
});

Deno.test("trendChanges: a return away from the settled state is a trend change", () => {
  const toFinal = [0.3, 0.1, 0.25, 0.05, 0];
  const measures = toFinal.map((v, i) => measure(i, i * 100, { toFinal: v }));
  const found = trendChanges(measures);
  // The return (2), preceded at the same score by the frame it left from (1, the closest to final).
  assertEquals(found.map((f) => [f.index, f.kind]), [[1, "before_return"], [2, "return"]]);
  assert(found[0].score > 0 && found[0].score === found[1].score, "scored");
  // A steady settle (distance-to-final only falls) has no return.
  const settle = [0.3, 0.2, 0.1, 0.05, 0].map((v, i) => measure(i, i * 100, { toFinal: v }));
  assertEquals(trendChanges(settle), []);
});

Deno.test("selectFrames: required anchors are present with their reasons", () => {
  const measures = story();
  const sel = select(measures, 250);
  checkShape(sel, measures, 8);
  assert(reasonsAt(sel, 2).includes("before"), "before = last frame at or before the anchor");
  assert(reasonsAt(sel, 3).includes("first_after_anchor"));
  assert(reasonsAt(sel, 5).includes("first_change"));
  assert(reasonsAt(sel, 7).includes("peak_change"));
  assert(reasonsAt(sel, 9).includes("final"));
  assertEquals(sel.filter((s) => s.reasons.includes("before")).length, 1);
  assertEquals(sel.filter((s) => s.reasons.includes("final")).length, 1);
  assertEquals(sel.length, 8, "a busy enough sequence fills the tile budget");
});

Deno.test("selectFrames: a tight tile limit keeps the most orienting anchors first", () => {
  const measures = story();
  const three = select(measures, 250, { max_tiles: 3 });
  assertEquals(three.map((s) => [s.index, s.reasons[0]]), [[2, "before"], [7, "peak_change"], [9, "final"]]);
  const four = select(measures, 250, { max_tiles: 4 });
  assertEquals(four.map((s) => s.index), [2, 5, 7, 9]);
  assertEquals(reasonsAt(four, 5), ["first_change"]);
});

Deno.test("selectFrames: tile count within [min(3, frames), max_tiles], chronological, for every budget", () => {
  let seed = 7;
  const rnd = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296;
  };
  const busy = Array.from({ length: 40 }, (_, i) =>
    measure(i, i * 33, {
      step: rnd() < 0.5 ? rnd() * 0.2 : 0,
      base: rnd() * 0.3,
      toFinal: rnd() * 0.3,
      sig: Math.floor(rnd() * 255),
      cx: rnd() * 64,
      cy: rnd() * 32,
    }));
  for (let max = 3; max <= 12; max++) {
    for (const measures of [busy, busy.slice(0, 2), busy.slice(0, 3), busy.slice(0, 5), story()]) {
      const sel = select(measures, measures[0].frame.session_time_ms + 10, { max_tiles: max });
      checkShape(sel, measures, max);
      assertEquals(sel.length, Math.min(max, measures.length), `max ${max}, ${measures.length} frames`);
    }
  }
});

Deno.test("selectFrames: the same input selects the same frames", () => {
  const a = select(story(), 250, { gaps: [{ start_ns: 420 * MS, end_ns: 680 * MS }] });
  const b = select(story(), 250, { gaps: [{ start_ns: 420 * MS, end_ns: 680 * MS }] });
  assertEquals(a, b);
  const m1 = analyzedSquare([0, 8, 16, 24, 32, 24, 16, 8]);
  const m2 = analyzedSquare([0, 8, 16, 24, 32, 24, 16, 8]);
  assertEquals(select(m1, 0, { max_tiles: 5 }), select(m2, 0, { max_tiles: 5 }));
});

Deno.test("selectFrames: a motion that reverses is a turning point at the turning frame", () => {
  // The square moves right to x=32 (frame index 4) and comes back.
  const measures = analyzedSquare([0, 8, 16, 24, 32, 24, 16, 8]);
  assertEquals(measures.map((m) => m.step?.centroid?.x ?? null), [null, 8, 16, 24, 32, 32, 24, 16]);
  const trends = trendChanges(measures);
  assert(trends.some((t) => t.index === 4 && t.score > 0), `turning frame among ${JSON.stringify(trends)}`);
  const sel = select(measures, 0, { max_tiles: 8 });
  checkShape(sel, measures, 8);
  assert(reasonsAt(sel, 4).includes("turning_point"), `reasons at the turn: ${reasonsAt(sel, 4)}`);
  assert(reasonsAt(sel, 0).includes("before"));
  assert(reasonsAt(sel, 1).includes("first_change"));
  assert(reasonsAt(sel, 1).includes("first_after_anchor"));
  assert(reasonsAt(sel, 7).includes("final"));
});

Deno.test("selectFrames: gap edges are the last frame before and the first at or after a gap", () => {
  const measures = story();
  const sel = select(measures, 250, { gaps: [{ start_ns: 420 * MS, end_ns: 680 * MS }], max_tiles: 12 });
  assert(reasonsAt(sel, 4).includes("gap_edge"), "400 ms is the last frame before 420 ms");
  assert(reasonsAt(sel, 7).includes("gap_edge"), "700 ms is the first frame at or after 680 ms");
  assertEquals(sel.filter((s) => s.reasons.includes("gap_edge")).map((s) => s.index), [4, 7]);
  // An open gap has only a leading edge.
  const open = select(measures, 250, { gaps: [{ start_ns: 420 * MS, end_ns: null }], max_tiles: 12 });
  assertEquals(open.filter((s) => s.reasons.includes("gap_edge")).map((s) => s.index), [4]);
});

Deno.test("selectFrames: a marker selects the first frame at or after it", () => {
  const sel = select(story(), 250, { markers: [{ at_ns: 550 * MS, label: "m" }], max_tiles: 12 });
  assertEquals(sel.filter((s) => s.reasons.includes("marker")).map((s) => s.index), [6]);
});

Deno.test("selectFrames: a static sequence invents no change", () => {
  const measures = analyzedSquare(Array.from({ length: 10 }, () => 16));
  assert(measures.every((m) => (m.step?.changed_proportion ?? 0) === 0), "the fake frames are identical");
  for (const max of [3, 5, 8, 12]) {
    const sel = select(measures, 0, { max_tiles: max });
    checkShape(sel, measures, max);
    const reasons = sel.flatMap((s) => s.reasons);
    for (const r of CHANGE_REASONS) assert(!reasons.includes(r), `static sequence has no ${r}`);
    assert(!reasons.includes("new_state"), "identical frames are no new state");
    assert(reasonsAt(sel, 0).includes("before"));
    assert(reasonsAt(sel, 9).includes("final"));
    assert(
      reasons.every((r) => ["before", "final", "first_after_anchor", "coverage"].includes(r)),
      `${reasons}`,
    );
  }
});

Deno.test("selectFrames: a static sequence anchored late still shows at least three tiles", () => {
  // Ten identical frames; the anchor is at frame 8 of 10 (so before = 8, final = 9).
  const measures = analyzedSquare(Array.from({ length: 10 }, () => 16), 800);
  const sel = select(measures, 800, { max_tiles: 8 });
  assert(sel.length >= 3, `only ${sel.length} tiles (${JSON.stringify(sel)}) for 10 frames and max_tiles 8`);
  checkShape(sel, measures, 8);
});

Deno.test("selectFrames: one and two frames", () => {
  const one = [measure(0, 100)];
  assertEquals(select(one, 100), [{ index: 0, frame_id: 100, reasons: ["before", "final"] }]);
  assertEquals(select(one, 50), [{
    index: 0,
    frame_id: 100,
    reasons: ["before", "final", "first_after_anchor"],
  }]);
  const two = [measure(0, 100), measure(1, 200)];
  assertEquals(select(two, 100), [
    { index: 0, frame_id: 100, reasons: ["before"] },
    { index: 1, frame_id: 101, reasons: ["final", "first_after_anchor"] },
  ]);
});
