/**
 * The storyboard as a story: plain labels that fit, an action's frames chosen from its dispatch on,
 * change measured from the frame on screen at dispatch, and a reversal whose extreme looks exactly like
 * where the motion settles.
 */
import { assert, assertEquals } from "../../assert.ts";
import { MS } from "./frame_rows.ts";
import type { FrameMeasure } from "../../../src/temporal/analysis.ts";
import {
  type LabelContext,
  MAX_LABEL_CHARS,
  plainLabel,
  selectFrames,
  type SelectionReason,
} from "../../../src/temporal/selection.ts";
import { measure } from "../../../src/temporal/bundle.ts";
import { squareAnalysis } from "./scene_ops.ts";

function select(measures: FrameMeasure[], anchorMs: number, fromAnchor = false, maxTiles = 8) {
  return selectFrames({
    measures,
    anchor_ns: anchorMs * MS,
    gaps: [],
    markers: [],
    max_tiles: maxTiles,
    from_anchor: fromAnchor,
  });
}

const ALL_REASONS: SelectionReason[] = [
  "before",
  "first_after_anchor",
  "first_change",
  "peak_change",
  "final",
  "gap_edge",
  "marker",
  "trend_change",
  "before_return",
  "turning_point",
  "change_peak",
  "new_state",
  "coverage",
];

Deno.test("plainLabel: every reason reads as plain words that fit a tile", () => {
  const contexts: LabelContext[] = [
    { anchor: "click", settled: true, like_final: false },
    { anchor: "upload files", settled: false, like_final: true },
    { settled: true, like_final: false },
  ];
  for (const ctx of contexts) {
    for (const a of ALL_REASONS) {
      for (const b of ALL_REASONS) {
        const label = plainLabel([a, b], ctx);
        assert(label.length > 0 && label.length <= MAX_LABEL_CHARS, `"${label}" for ${a}, ${b}`);
        assert(!/_/.test(label) && label === label.toLowerCase(), `"${label}" is plain words`);
      }
    }
  }
  const click: LabelContext = { anchor: "click", settled: true, like_final: false };
  assertEquals(plainLabel(["before"], click), "before click");
  assertEquals(plainLabel(["first_after_anchor", "marker"], click), "just after click", "both would not fit");
  assertEquals(plainLabel(["first_change", "marker"], click), "first change, at marker");
  assertEquals(plainLabel(["first_change", "change_peak"], click), "first change");
  assertEquals(plainLabel(["marker", "final"], click), "settled, at marker");
  assertEquals(plainLabel(["final"], click), "settled");
  assertEquals(plainLabel(["final"], { ...click, settled: false }), "last frame");
  assertEquals(plainLabel(["before_return"], { ...click, like_final: true }), "looks settled");
  assertEquals(plainLabel(["before"], { settled: true, like_final: false }), "start");
});

Deno.test("selectFrames: a reversal's extreme is shown even when it looks exactly like the settled frame", () => {
  // Forward to x 32 (frames 4, 5), back to 20 (6, 7), forward again to rest at 32 (8, 9): frames 4 and
  // 5 are pixel-identical to the final frame, so neither distance-to-final nor novelty finds them.
  const xs = [0, 8, 16, 24, 32, 32, 20, 20, 32, 32];
  const a = squareAnalysis(xs, 0);
  assertEquals(a.measures.map((m) => m.to_final.changed_proportion === 0), [
    false,
    false,
    false,
    false,
    true,
    true,
    false,
    false,
    true,
    true,
  ]);
  for (const max of [5, 6, 8]) {
    const sel = select(a.measures, 0, false, max);
    const extreme = sel.find((s) => s.index === 4 || s.index === 5);
    const back = sel.find((s) => s.index === 6 || s.index === 7);
    assert(extreme && back, `max ${max}: extreme and return both shown: ${JSON.stringify(sel)}`);
    assert(extreme.reasons.includes("before_return"), `reasons at the extreme: ${extreme.reasons}`);
    assert(back.reasons.includes("trend_change"), `reasons at the return: ${back.reasons}`);
  }
});

Deno.test("selectFrames: an action's frames are chosen from the frame on screen at its dispatch", () => {
  // The page paints (frames 1-2) before the click at 350 ms; the click moves the square (frames 5-6).
  const xs = [null, 0, 16, 16, 16, 40, 48, 48];
  const a = squareAnalysis(xs, 350, true);
  const sel = select(a.measures, 350, true);
  assert(sel.every((s) => s.index >= 3), `nothing before the dispatch frame: ${JSON.stringify(sel)}`);
  assertEquals(sel[0].index, 3);
  assert(sel[0].reasons.includes("before"));
  assert(sel.some((s) => s.index === 5 && s.reasons.includes("first_change")));
  // The same frames without the action's rule still reach back to the first paint.
  assert(select(a.measures, 350, false).some((s) => s.index < 3));
});

Deno.test("analyzeEpoch: an action's change is measured from the frame on screen at dispatch", () => {
  const xs = [null, 0, 16, 16, 16, 40, 48, 48];
  const from = squareAnalysis(xs, 350, true);
  assertEquals(from.from_anchor, true);
  // Only the square's move after the click counts: x 16..24 (where it left) to 40..56.
  assertEquals(from.change_bounds, { x: 16, y: 12, width: 40, height: 8 });
  assertEquals(from.change.steps, 2);
  const all = squareAnalysis(xs, 350, false);
  assertEquals(all.change_bounds?.x, 0, "without the rule the first paint counts");
  // Every step that changed records the cells it touched (4 px cells over 64×32: 16×8).
  assertEquals(from.cell_grid, { columns: 16, rows: 8 });
  const cells = from.measures[5].step?.cells ?? new Uint8Array(16);
  const set = [...Array(128).keys()].filter((k) => (cells[k >> 3] & (1 << (k & 7))) !== 0);
  // Rows 3-4 (y 12..19); columns 4-5 (where it left, x 16..23) and 10-11 (where it went, x 40..47).
  assertEquals(set, [52, 53, 58, 59, 68, 69, 74, 75]);
});

Deno.test("measure: an action's peaks are its own, not the page's before the dispatch", () => {
  // The first paint moves the square as far (frame 2) as the click does (frame 5).
  const xs = [null, 0, 16, 16, 16, 40, 48, 48];
  assertEquals(measure(squareAnalysis(xs, 350, true), 350 * MS).peak_step?.offset_ms, 150);
  assertEquals(measure(squareAnalysis(xs, 350, false), 350 * MS).peak_step?.offset_ms, -150);
});
