/**
 * Visual-change measurements over one epoch of a range: every analyzed frame against its
 * predecessor (what changed now), against the baseline (how far from before) and against the final
 * frame (how far from where it settles), plus the per-pixel accumulation the difference map and
 * motion history draw. Pixels come through PixelOps so this core runs without a browser or files.
 */
import { runSteps, type Steps } from "./steps.ts";
import type { FrameRow } from "../capture/frames.ts";
import type { AccumulatedChange } from "../vision/change_accumulator.ts";
import type { RgbaImage } from "../vision/image.ts";
import type { Rect } from "../vision/image.ts";
import { resizeImage } from "../vision/resample.ts";
import type { Epoch } from "./frames.ts";

export const ANALYSIS_ALGORITHM_VERSION = "krometrail-analysis/1";
/** Analysis width bound: frames are decoded at the JPEG scale that brings them under it. */
export const ANALYSIS_MAX_WIDTH = 480;
/** By-design bound on analyzed frames; more are sampled with accounting, never silently. */
export const MAX_ANALYZED_FRAMES = 360;
/** Max-channel difference at or below which a pixel counts as unchanged (encoder noise). */
export const DEFAULT_NOISE_FLOOR = 12;

export type JpegScale = 1 | 2 | 4 | 8;
export type { AccumulatedChange };

export interface PixelDiff {
  changed_pixels: number;
  changed_proportion: number;
  bounds: Rect | null;
  mean_abs_diff: number;
  mean_luma_diff: number;
  mean_color_diff: number;
}

export interface ChangeSink {
  add(mask: Uint8Array, t: number): void;
  result(): AccumulatedChange;
}

/** The pixel operations analysis needs; bound to the WASM kernels and the JPEG decoder in production. */
export interface PixelOps {
  decode(frame: FrameRow, scale: JpegScale): RgbaImage;
  /** Writes per-pixel change magnitude (0 when at or under the floor) into mask when given. */
  diff(a: RgbaImage, b: RgbaImage, noiseFloor: number, mask?: Uint8Array): PixelDiff;
  /** Perceptual distance in [0, 1] (0 = indistinguishable). */
  perceptual(a: RgbaImage, b: RgbaImage): number;
  accumulator(width: number, height: number): ChangeSink;
}

export interface StepMeasure {
  changed_proportion: number;
  /** In source-frame pixels. */
  bounds: Rect | null;
  mean_abs_diff: number;
  mean_luma_diff: number;
  mean_color_diff: number;
  perceptual_distance: number;
  interval_ms: number;
  /** Change-weighted centre of this step's changed pixels, in source-frame pixels. */
  centroid: { x: number; y: number } | null;
  /** The step spans a known capture gap: the change happened at an unseen time within it. */
  across_gap: boolean;
  /** Which cells of the analysis' cell grid changed in this step (one bit per cell), when any did. */
  cells?: Uint8Array;
}

export interface FrameMeasure {
  frame: FrameRow;
  /** Offset from the range anchor. */
  offset_ms: number;
  /** Position inside the range, 0 at start and 1 at end. */
  t: number;
  step?: StepMeasure;
  baseline: { changed_proportion: number; mean_abs_diff: number; bounds: Rect | null };
  to_final: { changed_proportion: number; mean_abs_diff: number };
  /** 16×9 luma thumbnail for cheap novelty comparisons. */
  signature: Float32Array;
}

export interface Sampling {
  sampling_mode: "uniform_stride";
  source_frame_count: number;
  analyzed_frame_count: number;
}

export interface EpochAnalysis {
  epoch: Epoch;
  scale: JpegScale;
  noise_floor: number;
  analysis_width: number;
  analysis_height: number;
  baseline: FrameRow;
  final: FrameRow;
  measures: FrameMeasure[];
  change: AccumulatedChange;
  /** Union of every counted step's change bounds, source pixels. */
  change_bounds: Rect | null;
  /** The grid step cells are recorded on: CHANGE_CELL analysis pixels square. */
  cell_grid: { columns: number; rows: number };
  /** True when only change after the frame on screen at the anchor counts (an action's range). */
  from_anchor: boolean;
  /** Present only when frames were dropped from analysis by design. */
  sampling?: Sampling;
  /** Source-pixel origin of the analyzed area when a region crop was analyzed. */
  crop?: { x: number; y: number };
}

export function analysisScale(width: number): JpegScale {
  for (const s of [1, 2, 4] as const) if (Math.ceil(width / s) <= ANALYSIS_MAX_WIDTH) return s;
  return 8;
}

function scaleRect(r: Rect | null, s: number, w: number, h: number, origin?: Rect): Rect | null {
  if (!r) return null;
  const ox = origin?.x ?? 0;
  const oy = origin?.y ?? 0;
  const x = Math.min(w, r.x * s + ox);
  const y = Math.min(h, r.y * s + oy);
  return { x, y, width: Math.min(w - x, r.width * s), height: Math.min(h - y, r.height * s) };
}

/** Blacks out everything outside the mask so no change there can be measured. */
function maskOutside(img: RgbaImage, mask: Rect[], origin: Rect, s: number): void {
  const ox = Math.max(0, Math.floor(origin.x / s));
  const oy = Math.max(0, Math.floor(origin.y / s));
  for (let y = 0; y < img.height; y++) {
    const sy = (y + oy) * s;
    for (let x = 0; x < img.width; x++) {
      const sx = (x + ox) * s;
      // The analysis pixel covers [sx, sx + s): it is measured when that overlaps a mask rectangle.
      if (mask.some((r) => sx > r.x - s && sx < r.x + r.width && sy > r.y - s && sy < r.y + r.height)) {
        continue;
      }
      img.data.fill(0, (y * img.width + x) * 4, (y * img.width + x) * 4 + 3);
    }
  }
}

/** The part of a decoded frame (at JPEG scale s) that covers a source-pixel rectangle. */
function cropImage(img: RgbaImage, rect: Rect, s: number): RgbaImage {
  const x0 = Math.max(0, Math.floor(rect.x / s));
  const y0 = Math.max(0, Math.floor(rect.y / s));
  const x1 = Math.min(img.width, Math.max(x0 + 1, Math.ceil((rect.x + rect.width) / s)));
  const y1 = Math.min(img.height, Math.max(y0 + 1, Math.ceil((rect.y + rect.height) / s)));
  const w = x1 - x0;
  const out = new Uint8Array(w * (y1 - y0) * 4);
  for (let y = y0; y < y1; y++) {
    out.set(img.data.subarray((y * img.width + x0) * 4, (y * img.width + x1) * 4), (y - y0) * w * 4);
  }
  return { width: w, height: y1 - y0, data: out };
}

export function unionRect(a: Rect | null, b: Rect | null): Rect | null {
  if (!a) return b;
  if (!b) return a;
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return {
    x,
    y,
    width: Math.max(a.x + a.width, b.x + b.width) - x,
    height: Math.max(a.y + a.height, b.y + b.height) - y,
  };
}

/** Indices of frames to analyze: all when within bound, else required ones plus an even stride. */
export function sampleIndices(count: number, required: number[], limit = MAX_ANALYZED_FRAMES): number[] {
  if (count <= limit) return Array.from({ length: count }, (_, i) => i);
  const chosen = new Set(required.filter((i) => i >= 0 && i < count));
  const room = Math.max(0, limit - chosen.size);
  for (let k = 0; k < room; k++) chosen.add(Math.round((k * (count - 1)) / Math.max(1, room - 1)));
  return [...chosen].sort((a, b) => a - b);
}

/** A 16×9 luma thumbnail (area-averaged by the resize kernel) for cheap novelty comparisons. */
function signatureOf(img: RgbaImage): Float32Array {
  const small = resizeImage(img, 16, 9);
  const out = new Float32Array(16 * 9);
  for (let i = 0; i < out.length; i++) {
    const o = i * 4;
    out[i] = 0.299 * small.data[o] + 0.587 * small.data[o + 1] + 0.114 * small.data[o + 2];
  }
  return out;
}

/** Change-weighted centre of a mask; only the changed bounds are scanned. */
function centroidOf(mask: Uint8Array, width: number, bounds: Rect, scale: number, origin?: Rect) {
  let sum = 0;
  let sx = 0;
  let sy = 0;
  for (let y = bounds.y; y < bounds.y + bounds.height; y++) {
    const row = y * width;
    for (let x = bounds.x; x < bounds.x + bounds.width; x++) {
      const m = mask[row + x];
      if (m === 0) continue;
      sum += m;
      sx += m * x;
      sy += m * y;
    }
  }
  if (sum === 0) return null;
  return {
    x: ((sx / sum) + 0.5) * scale + (origin?.x ?? 0),
    y: ((sy / sum) + 0.5) * scale + (origin?.y ?? 0),
  };
}

export interface AnalyzeInput {
  epoch: Epoch;
  /** The range's time span and anchor (ns). */
  start_ns: number;
  end_ns: number;
  anchor_ns: number;
  gaps: Array<{ start_ns: number; end_ns: number | null }>;
  noise_floor?: number;
  max_analyzed?: number;
  /** Analyze only this rectangle of each frame (source pixels), for region-focused artifacts. */
  crop?: Rect;
  /** Within the crop, only pixels inside these source-pixel rectangles are measured. */
  mask?: Rect[];
  /**
   * Count change (accumulation, change bounds) only from the frame on screen at the anchor on, so an
   * action is not credited with what the page did before it (a document's first paint, say).
   */
  measure_from_anchor?: boolean;
}

/** Side of the square cells (analysis pixels) step changes are recorded on; change regions use it too. */
export const CHANGE_CELL = 4;

/** The grid cells a step's change mask touches, as a bitset (row-major, one bit per cell). */
function cellsOf(mask: Uint8Array, width: number, bounds: Rect, grid: { columns: number; rows: number }) {
  const bits = new Uint8Array(Math.ceil((grid.columns * grid.rows) / 8));
  for (let y = bounds.y; y < bounds.y + bounds.height; y++) {
    const row = y * width;
    const g = Math.floor(y / CHANGE_CELL) * grid.columns;
    for (let x = bounds.x; x < bounds.x + bounds.width; x++) {
      if (mask[row + x] === 0) continue;
      const k = g + Math.floor(x / CHANGE_CELL);
      bits[k >> 3] |= 1 << (k & 7);
    }
  }
  return bits;
}

/** Index of the last frame at or before the anchor, else the first frame. */
export function baselineIndex(frames: FrameRow[], anchorNs: number): number {
  let idx = 0;
  for (let i = 0; i < frames.length; i++) if (frames[i].session_time_ns <= anchorNs) idx = i;
  return idx;
}

export function analyzeEpoch(input: AnalyzeInput, ops: PixelOps): EpochAnalysis {
  return runSteps(analyzeEpochSteps(input, ops));
}

/** The analysis one frame at a time (steps.ts): it yields after each analyzed frame. */
export function* analyzeEpochSteps(input: AnalyzeInput, ops: PixelOps): Steps<EpochAnalysis> {
  const { epoch } = input;
  const frames = epoch.frames;
  const noise = input.noise_floor ?? DEFAULT_NOISE_FLOOR;
  const crop = input.crop;
  const scale = analysisScale(crop ? crop.width : epoch.width);
  // Decoded pixels start on the scale grid, so the analyzed area's origin is the crop's floor to it.
  const origin = crop
    ? {
      x: Math.max(0, Math.floor(crop.x / scale)) * scale,
      y: Math.max(0, Math.floor(crop.y / scale)) * scale,
      width: 0,
      height: 0,
    }
    : undefined;
  const base = baselineIndex(frames, input.anchor_ns);
  const firstAfter = frames.findIndex((f) => f.session_time_ns > input.anchor_ns);
  const indices = sampleIndices(frames.length, [0, base, firstAfter, frames.length - 1], input.max_analyzed);
  const images = new Map<number, RgbaImage>();
  const image = (i: number) => {
    let img = images.get(i);
    if (!img) {
      img = ops.decode(frames[i], scale);
      if (crop) img = cropImage(img, crop, scale);
      if (crop && input.mask) maskOutside(img, input.mask, crop, scale);
      images.set(i, img);
    }
    return img;
  };
  const baseImg = image(base);
  const finalImg = image(frames.length - 1);
  const { width: aw, height: ah } = baseImg;
  const grid = { columns: Math.ceil(aw / CHANGE_CELL), rows: Math.ceil(ah / CHANGE_CELL) };
  const fromAnchor = input.measure_from_anchor ?? false;
  const sink = ops.accumulator(aw, ah);
  const mask = new Uint8Array(aw * ah);
  const span = Math.max(1, input.end_ns - input.start_ns);
  const measures: FrameMeasure[] = [];
  let changeBounds: Rect | null = null;
  let prev: { img: RgbaImage; frame: FrameRow; index: number } | undefined;
  for (const i of indices) {
    const frame = frames[i];
    const img = image(i);
    const t = Math.min(1, Math.max(0, (frame.session_time_ns - input.start_ns) / span));
    let step: StepMeasure | undefined;
    if (prev) {
      const d = ops.diff(prev.img, img, noise, mask);
      const bounds = scaleRect(d.bounds, scale, epoch.width, epoch.height, origin);
      const prevNs = prev.frame.session_time_ns;
      const acrossGap = input.gaps.some((g) =>
        g.start_ns <= frame.session_time_ns && (g.end_ns ?? Infinity) >= prevNs
      );
      step = {
        changed_proportion: d.changed_proportion,
        bounds,
        mean_abs_diff: d.mean_abs_diff,
        mean_luma_diff: d.mean_luma_diff,
        mean_color_diff: d.mean_color_diff,
        perceptual_distance: d.changed_pixels === 0 ? 0 : ops.perceptual(prev.img, img),
        interval_ms: Math.round((frame.session_time_ns - prev.frame.session_time_ns) / 1e3) / 1e3,
        centroid: d.bounds === null ? null : centroidOf(mask, aw, d.bounds, scale, origin),
        across_gap: acrossGap,
        ...(d.bounds === null ? {} : { cells: cellsOf(mask, aw, d.bounds, grid) }),
      };
      if (d.changed_pixels > 0 && (!fromAnchor || i > base)) {
        sink.add(mask, t);
        changeBounds = unionRect(changeBounds, bounds);
      }
    }
    const vb = i === base ? undefined : ops.diff(baseImg, img, noise);
    const vf = i === frames.length - 1 ? undefined : ops.diff(finalImg, img, noise);
    measures.push({
      frame,
      offset_ms: Math.round((frame.session_time_ns - input.anchor_ns) / 1e3) / 1e3,
      t,
      ...(step ? { step } : {}),
      baseline: {
        changed_proportion: vb?.changed_proportion ?? 0,
        mean_abs_diff: vb?.mean_abs_diff ?? 0,
        bounds: scaleRect(vb?.bounds ?? null, scale, epoch.width, epoch.height, origin),
      },
      to_final: { changed_proportion: vf?.changed_proportion ?? 0, mean_abs_diff: vf?.mean_abs_diff ?? 0 },
      signature: signatureOf(img),
    });
    // Only the previous image, the baseline and the final frame need to stay decoded.
    if (prev && prev.index !== base && prev.index !== frames.length - 1) images.delete(prev.index);
    prev = { img, frame, index: i };
    yield;
  }
  return {
    epoch,
    scale,
    noise_floor: noise,
    analysis_width: aw,
    analysis_height: ah,
    baseline: frames[base],
    final: frames[frames.length - 1],
    measures,
    change: sink.result(),
    change_bounds: changeBounds,
    cell_grid: grid,
    from_anchor: fromAnchor,
    ...(origin ? { crop: { x: origin.x, y: origin.y } } : {}),
    ...(indices.length < frames.length
      ? {
        sampling: {
          sampling_mode: "uniform_stride" as const,
          source_frame_count: frames.length,
          analyzed_frame_count: indices.length,
        },
      }
      : {}),
  };
}
