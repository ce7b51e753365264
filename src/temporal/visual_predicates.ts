/**
 * Visual predicates over frames (pure): a region of the viewport sampled from a decoded frame, the two
 * predicates over those samples, and the scan that finds every flip over a sequence of frames under a bound
 * on how many are evaluated.
 *
 * A pixel "differs noticeably" when any of its R, G, B channels moved by more than PIXEL_DELTA (24 of 255):
 * well above JPEG re-encoding noise of identical content, and a channel test (not luma) so an equal-luma hue
 * change (red to green) still counts.
 */
import type { Rect, RgbaImage } from "../vision/image.ts";
import type { VisualPredicateInput } from "../pagestate/predicates.ts";

export const PIXEL_DELTA = 24;
export const DEFAULT_THRESHOLD = 0.01;
export const DEFAULT_TOLERANCE = 24;
/** A region is decoded at the coarsest JPEG scale at which its shorter side keeps this many pixels. */
export const MIN_REGION_SIDE_PX = 48;
/** Samples per side of a region's grid (the cost of a comparison stays bounded on a huge region). */
export const MAX_GRID_SIDE = 384;

export type Rgb = [number, number, number];

export type VisualPredicate =
  | { kind: "regionChanged"; region: Rect; threshold: number }
  | { kind: "regionColor"; region: Rect; color: Rgb; tolerance: number };

/** The canonical form, defaults applied (validation is the schema's). */
export function canonicalVisual(p: VisualPredicateInput | VisualPredicate): VisualPredicate {
  if (p.kind === "regionChanged") {
    return { kind: p.kind, region: { ...p.region }, threshold: p.threshold ?? DEFAULT_THRESHOLD };
  }
  return {
    kind: p.kind,
    region: { ...p.region },
    color: typeof p.color === "string" ? parseHex(p.color) : [...p.color],
    tolerance: p.tolerance ?? DEFAULT_TOLERANCE,
  };
}

export function parseHex(hex: string): Rgb {
  const n = Number.parseInt(hex.slice(1, 7), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

export function hexOf(c: Rgb): string {
  return "#" + c.map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
}

/** The viewport a frame shows, in CSS px (its image may be any size: device scale, JPEG scaled decode). */
export interface ViewportSize {
  width: number;
  height: number;
}

/** The region clipped to the viewport, or undefined when nothing of it is inside. */
export function clipRegion(region: Rect, viewport: ViewportSize): Rect | undefined {
  const x0 = Math.max(0, region.x);
  const y0 = Math.max(0, region.y);
  const x1 = Math.min(viewport.width, region.x + region.width);
  const y1 = Math.min(viewport.height, region.y + region.height);
  if (x1 - x0 <= 0 || y1 - y0 <= 0) return undefined;
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** The coarsest JPEG decode scale that keeps the region's shorter side at MIN_REGION_SIDE_PX or more. */
export function decodeScale(region: Rect, imageWidth: number, viewport: ViewportSize): 1 | 2 | 4 | 8 {
  const pxPerCss = imageWidth / viewport.width;
  const side = Math.min(region.width, region.height) * pxPerCss;
  for (const s of [8, 4, 2] as const) if (side / s >= MIN_REGION_SIDE_PX) return s;
  return 1;
}

export interface Grid {
  cols: number;
  rows: number;
}

/** One sample per decoded pixel the region covers in `image` (capped), so frames of any size compare. */
export function regionGrid(
  region: Rect,
  image: { width: number; height: number },
  viewport: ViewportSize,
): Grid {
  const side = (css: number, px: number, vp: number) =>
    Math.max(1, Math.min(MAX_GRID_SIDE, Math.round((css * px) / vp)));
  return {
    cols: side(region.width, image.width, viewport.width),
    rows: side(region.height, image.height, viewport.height),
  };
}

/**
 * The region's RGB samples on `grid`, nearest pixel to each cell's centre, mapped from CSS px through the
 * image's own size against its viewport.
 */
export function sampleRegion(image: RgbaImage, viewport: ViewportSize, region: Rect, grid: Grid): Uint8Array {
  const out = new Uint8Array(grid.cols * grid.rows * 3);
  const sx = image.width / viewport.width;
  const sy = image.height / viewport.height;
  const xs = new Int32Array(grid.cols);
  for (let c = 0; c < grid.cols; c++) {
    const css = region.x + ((c + 0.5) * region.width) / grid.cols;
    xs[c] = Math.min(image.width - 1, Math.max(0, Math.floor(css * sx)));
  }
  let o = 0;
  for (let r = 0; r < grid.rows; r++) {
    const css = region.y + ((r + 0.5) * region.height) / grid.rows;
    const y = Math.min(image.height - 1, Math.max(0, Math.floor(css * sy)));
    const row = y * image.width;
    for (let c = 0; c < grid.cols; c++) {
      const i = (row + xs[c]) * 4;
      out[o++] = image.data[i];
      out[o++] = image.data[i + 1];
      out[o++] = image.data[i + 2];
    }
  }
  return out;
}

export function meanColor(samples: Uint8Array): Rgb {
  let r = 0, g = 0, b = 0;
  const n = samples.length / 3;
  for (let i = 0; i < samples.length; i += 3) {
    r += samples[i];
    g += samples[i + 1];
    b += samples[i + 2];
  }
  return n === 0 ? [0, 0, 0] : [r / n, g / n, b / n];
}

/** Largest channel distance between two colours. */
export function colorDistance(a: Rgb, b: Rgb): number {
  return Math.max(Math.abs(a[0] - b[0]), Math.abs(a[1] - b[1]), Math.abs(a[2] - b[2]));
}

/** Share (0–1) of samples where some channel moved by more than PIXEL_DELTA. Same-length sample sets. */
export function changedShare(base: Uint8Array, samples: Uint8Array): number {
  const n = Math.min(base.length, samples.length);
  let changed = 0;
  for (let i = 0; i + 2 < n; i += 3) {
    if (
      Math.abs(base[i] - samples[i]) > PIXEL_DELTA || Math.abs(base[i + 1] - samples[i + 1]) > PIXEL_DELTA ||
      Math.abs(base[i + 2] - samples[i + 2]) > PIXEL_DELTA
    ) changed++;
  }
  return n < 3 ? 0 : changed / Math.floor(n / 3);
}

export interface VisualOutcome {
  value: boolean;
  /** regionChanged: the share of changed pixels; regionColor: the region's mean colour (#rrggbb). */
  measure: { changed_share: number } | { mean_color: string; distance: number };
}

/** One predicate at one frame's samples; `baseline` is the window's first frame's samples (same grid). */
export function evaluateVisual(p: VisualPredicate, samples: Uint8Array, baseline: Uint8Array): VisualOutcome {
  if (p.kind === "regionChanged") {
    const share = changedShare(baseline, samples);
    return { value: share > p.threshold, measure: { changed_share: Math.round(share * 1e4) / 1e4 } };
  }
  const mean = meanColor(samples);
  const distance = colorDistance(mean, p.color);
  return {
    value: distance <= p.tolerance,
    measure: { mean_color: hexOf(mean), distance: Math.round(distance * 10) / 10 },
  };
}

export interface IndexTransition {
  /** The first evaluated index showing the new value. */
  index: number;
  /** The last evaluated index before it still showing the old value. */
  previous: number;
  from: boolean;
  to: boolean;
}

export interface IndexScan {
  initial: boolean;
  final: boolean;
  transitions: IndexTransition[];
  /** Indices evaluated. */
  probes: number;
  /** True when not every index was evaluated (flips between two equal samples can be missed). */
  sampled: boolean;
}

/**
 * Every flip over indices 0..n-1, evaluating at most `budget` of them. Within budget every index is
 * evaluated. Beyond it, evenly spaced indices (index 0 and n-1 included) are evaluated with a sixth of the
 * budget kept back, and each flip between two samples is narrowed by bisection while budget lasts, so a
 * transition is exact (previous = index - 1) unless the budget ran out. A generator: it yields each index it
 * needs (never one twice) and takes back its value, so a caller may pause between evaluations.
 */
export function* indexScanSteps(n: number, budget: number): Generator<number, IndexScan, boolean> {
  if (n <= 0) throw new RangeError("an index scan needs at least one index");
  const seen = new Map<number, boolean>();
  function* at(i: number): Generator<number, boolean, boolean> {
    const known = seen.get(i);
    if (known !== undefined) return known;
    const v = yield i;
    seen.set(i, v);
    return v;
  }
  const limit = Math.max(2, Math.floor(budget));
  const sampled = n > limit;
  const picks: number[] = [];
  if (!sampled) { for (let i = 0; i < n; i++) picks.push(i); }
  else {
    const count = Math.max(2, limit - Math.floor(limit / 6));
    for (let k = 0; k < count; k++) {
      const i = Math.round((k * (n - 1)) / (count - 1));
      if (picks[picks.length - 1] !== i) picks.push(i);
    }
  }
  for (const i of picks) yield* at(i);
  const transitions: IndexTransition[] = [];
  for (let k = 1; k < picks.length; k++) {
    let a = picks[k - 1];
    let b = picks[k];
    const from = yield* at(a);
    const to = yield* at(b);
    if (from === to) continue;
    while (b - a > 1 && seen.size < limit) {
      const m = (a + b) >> 1;
      if ((yield* at(m)) === from) a = m;
      else b = m;
    }
    transitions.push({ index: b, previous: a, from, to });
  }
  return {
    initial: yield* at(0),
    final: yield* at(n - 1),
    transitions,
    probes: seen.size,
    sampled: sampled && seen.size < n,
  };
}

/** `indexScanSteps` driven synchronously by `valueAt`. */
export function scanIndices(n: number, budget: number, valueAt: (i: number) => boolean): IndexScan {
  const steps = indexScanSteps(n, budget);
  let step = steps.next();
  while (!step.done) step = steps.next(valueAt(step.value));
  return step.value;
}
