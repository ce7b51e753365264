/**
 * Deterministic, change-aware frame selection for storyboards and composites. Required anchors
 * come first (before, first after the anchor, first change, peak change, final, gap edges,
 * markers); the remaining tiles go to trend changes, change peaks, then frames that add the most
 * information not already shown. Reason names describe why a frame was chosen, never a diagnosis.
 */
import type { FrameMeasure } from "./analysis.ts";

export const DEFAULT_MAX_TILES = 8;
export const MIN_TILES = 3;
export const MAX_TILES = 12;

export type SelectionReason =
  | "before"
  | "first_after_anchor"
  | "first_change"
  | "peak_change"
  | "final"
  | "gap_edge"
  | "marker"
  | "trend_change"
  | "before_return"
  | "turning_point"
  | "change_peak"
  | "new_state"
  | "coverage";

/** What a tile's label can lean on besides its reasons. */
export interface LabelContext {
  /** The anchor in words ("click", "navigation"); none for a plain time range. */
  anchor?: string;
  /** The range ended after the page had stopped changing. */
  settled: boolean;
  /** The tile's frame cannot be told apart from the final frame. */
  like_final: boolean;
}

/** Which reason a label names first when a tile has several. */
const LABEL_ORDER: SelectionReason[] = [
  "before",
  "final",
  "before_return",
  "first_change",
  "peak_change",
  "trend_change",
  "turning_point",
  "first_after_anchor",
  "change_peak",
  "gap_edge",
  "marker",
  "new_state",
  "coverage",
];

/** Labels stay this short so they fit a storyboard tile at label size (30 characters, less the number). */
export const MAX_LABEL_CHARS = 24;

function reasonWords(r: SelectionReason, ctx: LabelContext): string {
  switch (r) {
    case "before":
      return ctx.anchor ? `before ${ctx.anchor}` : "start";
    case "final":
      return ctx.settled ? "settled" : "last frame";
    case "before_return":
      return ctx.like_final ? "looks settled" : "before changing again";
    case "first_after_anchor":
      return ctx.anchor ? `just after ${ctx.anchor}` : "next frame";
    case "first_change":
      return "first change";
    case "peak_change":
      return "largest change";
    case "trend_change":
      return "changes again";
    case "turning_point":
      return "turning point";
    case "change_peak":
      return "sudden change";
    case "gap_edge":
      return "at capture gap";
    case "marker":
      return "at marker";
    case "new_state":
      return "distinct state";
    case "coverage":
      return "in between";
  }
}

/** A tile's label in plain words: its leading reason, and a second one when both fit. */
export function plainLabel(reasons: SelectionReason[], ctx: LabelContext): string {
  const words = [...new Set(LABEL_ORDER.filter((r) => reasons.includes(r)).map((r) => reasonWords(r, ctx)))];
  const [first = "frame", second] = words;
  const both = second ? `${first}, ${second}` : first;
  return (both.length <= MAX_LABEL_CHARS ? both : first).slice(0, MAX_LABEL_CHARS);
}

export interface Selected {
  /** Index into the measures array. */
  index: number;
  frame_id: number;
  reasons: SelectionReason[];
}

export interface SelectionInput {
  measures: FrameMeasure[];
  anchor_ns: number;
  gaps: Array<{ start_ns: number; end_ns: number | null }>;
  markers: Array<{ at_ns: number; label: string }>;
  max_tiles: number;
  /** Choose only from the frame on screen at the anchor on (an action's range). */
  from_anchor?: boolean;
}

function argMax(values: number[], from = 0): number {
  let best = -1;
  for (let i = from; i < values.length; i++) if (best < 0 || values[i] > values[best]) best = i;
  return best;
}

/**
 * Local maxima of a series with their prominence: how far the peak stands above the higher of the
 * lowest points on each side before a higher point. Plateaus report their first index.
 */
export function prominentPeaks(series: number[]): Array<{ index: number; prominence: number }> {
  const peaks: Array<{ index: number; prominence: number }> = [];
  for (let i = 1; i < series.length - 1; i++) {
    const v = series[i];
    // A peak (or a plateau, reported at its first index) starts where the series rises into it.
    if (!(v > series[i - 1])) continue;
    let j = i + 1;
    while (j < series.length && series[j] === v) j++;
    if (j >= series.length || series[j] > v) continue;
    let leftMin = v;
    for (let k = i - 1; k >= 0 && series[k] <= v; k--) leftMin = Math.min(leftMin, series[k]);
    let rightMin = v;
    for (let k = j; k < series.length && series[k] <= v; k++) rightMin = Math.min(rightMin, series[k]);
    peaks.push({ index: i, prominence: v - Math.max(leftMin, rightMin) });
  }
  return peaks;
}

function signatureDistance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return sum / a.length;
}

/**
 * Trend changes, strongest first. Returns away from the settled state come first: a rise in
 * distance-to-final after it had fallen (an overshoot or reversal), scored by how far the peak
 * stands above its surroundings relative to its own height. Each return is preceded, at the same
 * score, by the frame it left from: the one closest to final before it (a motion's extreme that can
 * be pixel-identical to where it settles; without it the story reads as smooth forward motion).
 * Turning points of the path of change (centroid extremes) follow at half weight, since a flash
 * elsewhere can also move a centroid.
 */
export function trendChanges(
  measures: FrameMeasure[],
): Array<{ index: number; score: number; kind: "return" | "before_return" | "turn" }> {
  const found = new Map<number, number>();
  const kinds = new Map<number, "return" | "before_return" | "turn">();
  const note = (idx: number, score: number) => found.set(idx, Math.max(found.get(idx) ?? 0, score));
  const toFinal = measures.map((m) => m.to_final.changed_proportion);
  // Returns smaller than this share of the largest distance are jitter, not a trend.
  const floor = Math.max(...toFinal, 0) * 0.02;
  for (const p of prominentPeaks(toFinal)) {
    const height = toFinal[p.index];
    if (height <= floor || p.prominence / height < 0.3) continue;
    const score = 1 + p.prominence / height;
    note(p.index, score);
    kinds.set(p.index, "return");
    // The latest lowest point since the last higher one: where the page was closest to final before it.
    let low = p.index - 1;
    for (let k = p.index - 1; k >= 0 && toFinal[k] <= height; k--) if (toFinal[k] < toFinal[low]) low = k;
    if (low >= 0 && !found.has(low)) {
      note(low, score);
      kinds.set(low, "before_return");
    }
  }
  const moving = measures.map((m, i) => ({ c: m.step?.centroid, i })).filter((e) => e.c);
  for (const axis of ["x", "y"] as const) {
    const values = moving.map((e) => e.c?.[axis] ?? 0);
    const range = Math.max(...values) - Math.min(...values);
    if (!(range > 0)) continue;
    for (const series of [values, values.map((v) => -v)]) {
      for (const p of prominentPeaks(series)) {
        const score = p.prominence / range;
        if (score < 0.1) continue;
        note(moving[p.index].i, score / 2);
        if (!kinds.has(moving[p.index].i)) kinds.set(moving[p.index].i, "turn");
      }
    }
  }
  return [...found].map(([index, score]) => ({ index, score, kind: kinds.get(index) ?? "turn" }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

export function selectFrames(input: SelectionInput): Selected[] {
  if (input.from_anchor) {
    let before = -1;
    for (let i = 0; i < input.measures.length; i++) {
      if (input.measures[i].frame.session_time_ns <= input.anchor_ns) before = i;
    }
    if (before > 0) {
      return selectFrames({ ...input, measures: input.measures.slice(before), from_anchor: false })
        .map((s) => ({ ...s, index: s.index + before }));
    }
  }
  const { measures } = input;
  const n = measures.length;
  const limit = Math.max(1, Math.min(input.max_tiles, n));
  const chosen = new Map<number, SelectionReason[]>();
  const add = (index: number, reason: SelectionReason): boolean => {
    if (index < 0 || index >= n) return false;
    const reasons = chosen.get(index);
    if (reasons) {
      if (!reasons.includes(reason)) reasons.push(reason);
      return true;
    }
    if (chosen.size >= limit) return false;
    chosen.set(index, [reason]);
    return true;
  };
  const times = measures.map((m) => m.frame.session_time_ns);
  let before = -1;
  for (let i = 0; i < n; i++) if (times[i] <= input.anchor_ns) before = i;
  const firstAfter = times.findIndex((t) => t > input.anchor_ns);
  const firstChange = measures.findIndex((m, i) =>
    i > Math.max(0, before) && (m.step?.changed_proportion ?? 0) > 0
  );
  const peak = argMax(measures.map((m) => m.baseline.changed_proportion + m.baseline.mean_abs_diff / 255));

  // Required anchors in priority order, so a tight tile limit keeps the most orienting ones.
  add(before >= 0 ? before : 0, "before");
  add(n - 1, "final");
  if (peak >= 0 && measures[peak].baseline.changed_proportion > 0) add(peak, "peak_change");
  add(firstChange, "first_change");
  add(firstAfter, "first_after_anchor");
  for (const g of input.gaps) {
    let lastBefore = -1;
    for (let i = 0; i < n; i++) if (times[i] < g.start_ns) lastBefore = i;
    add(lastBefore, "gap_edge");
    if (g.end_ns !== null) {
      const end = g.end_ns;
      add(times.findIndex((t) => t >= end), "gap_edge");
    }
  }
  for (const m of input.markers) add(times.findIndex((t) => t >= m.at_ns), "marker");

  const trendReason = {
    return: "trend_change",
    before_return: "before_return",
    turn: "turning_point",
  } as const;
  for (const t of trendChanges(measures)) add(t.index, trendReason[t.kind]);
  const stepChange = measures.map((m) => m.step?.changed_proportion ?? 0);
  for (
    const p of prominentPeaks(stepChange).sort((a, b) => b.prominence - a.prominence || a.index - b.index)
  ) {
    if (stepChange[p.index] > 0) add(p.index, "change_peak");
  }
  // Greedy farthest-point fill: each next frame is the one least like anything already shown.
  while (chosen.size < limit) {
    let best = -1;
    let bestDistance = 0;
    for (let i = 0; i < n; i++) {
      if (chosen.has(i)) continue;
      let nearest = Infinity;
      for (const j of chosen.keys()) {
        nearest = Math.min(nearest, signatureDistance(measures[i].signature, measures[j].signature));
      }
      if (nearest > bestDistance + 1e-9) {
        best = i;
        bestDistance = nearest;
      }
    }
    if (best < 0 || bestDistance < 0.5) break;
    add(best, "new_state");
  }
  // Long stretches without a tile get one, so quiet time is shown rather than skipped; the stretches
  // before the first and after the last tile count too, so a still range still shows its extent.
  while (chosen.size < limit) {
    const sorted = [...chosen.keys()].sort((a, b) => a - b);
    const bounds = [-1, ...sorted, n];
    let best = -1;
    let bestLen = 0;
    for (let k = 1; k < bounds.length; k++) {
      const [lo, hi] = [bounds[k - 1], bounds[k]];
      if (hi - lo <= 1) continue;
      const len = (times[Math.min(hi, n - 1)] ?? 0) - (times[Math.max(lo, 0)] ?? 0);
      if (best < 0 || len > bestLen) {
        best = k;
        bestLen = len;
      }
    }
    if (best < 0) break;
    const [lo, hi] = [bounds[best - 1], bounds[best]];
    const mid = ((times[Math.max(lo, 0)]) + (times[Math.min(hi, n - 1)])) / 2;
    let pick = lo + 1;
    for (let i = lo + 1; i < hi; i++) if (Math.abs(times[i] - mid) < Math.abs(times[pick] - mid)) pick = i;
    // Below the minimum every stretch qualifies; above it only stretches that are long relative to the range.
    if (chosen.size >= Math.min(MIN_TILES, n) && bestLen < (times[n - 1] - times[0]) / limit) break;
    add(pick, "coverage");
  }
  return [...chosen.keys()].sort((a, b) => a - b).map((index) => ({
    index,
    frame_id: measures[index].frame.frame_id,
    reasons: chosen.get(index) ?? [],
  }));
}
