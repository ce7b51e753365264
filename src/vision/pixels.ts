/**
 * Pixel difference and perceptual distance of two RgbaImages, run in the WASM kernels (the module,
 * its memory and scratch slots are in wasm_heap.ts).
 */
import type { Rect, RgbaImage } from "./image.ts";
import { resampleInWasm } from "./resample.ts";
import {
  BAND_ROWS,
  checkImage,
  pad16,
  putImage,
  S_A,
  S_AUX,
  S_AUX2,
  S_B,
  S_OUT,
  S_STATS,
  S_TMP,
  wasm,
  type WasmHeap,
} from "./wasm_heap.ts";

// ---------------------------------------------------------------------------------------------
// Difference

export interface DiffOptions {
  /** Pixels whose largest channel difference is ≤ this (0–255) count as unchanged. Default 0. */
  noiseFloor?: number;
  /**
   * true: return a fresh per-pixel change-magnitude mask (width × height bytes, 0 = unchanged);
   * a Uint8Array of that length: fill it instead.
   */
  mask?: boolean | Uint8Array;
}

export interface DiffResult {
  changedPixels: number;
  /** changedPixels / pixel count, 0–1. */
  changedProportion: number;
  /** Smallest rectangle holding every changed pixel; null when none changed. */
  bounds: Rect | null;
  /** Mean over all pixels of the largest channel difference (unchanged pixels count 0), 0–255. */
  meanAbsDiff: number;
  /** Mean over all pixels of |ΔY|, BT.601 luma (0.299R + 0.587G + 0.114B), 0–255. */
  meanLumaDiff: number;
  /** Mean over all pixels of max(|ΔCb|, |ΔCr|) (BT.601 chroma), 0–255. */
  meanColorDiff: number;
  /** Largest channel difference of any changed pixel, 0–255 (0 when none changed). */
  maxDiff: number;
  mask?: Uint8Array;
}

/** Compares two same-size RGBA images pixel by pixel; throws when the sizes differ. */
export function diffImages(a: RgbaImage, b: RgbaImage, options: DiffOptions = {}): DiffResult {
  checkImage(a, "diffImages");
  checkImage(b, "diffImages");
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`diffImages: sizes differ (${a.width}×${a.height} vs ${b.width}×${b.height})`);
  }
  const h = wasm();
  const n = a.width * a.height;
  const wantMask = options.mask !== undefined && options.mask !== false;
  if (options.mask instanceof Uint8Array && options.mask.length !== n) {
    throw new Error(`diffImages: mask needs ${n} bytes, has ${options.mask.length}`);
  }
  const maskPtr = wantMask ? h.slot(S_OUT, pad16(n)) : 0;
  const pa = putImage(h, S_A, a);
  const pb = putImage(h, S_B, b);
  const result = runDiff(h, pa, pb, a.width, a.height, options.noiseFloor ?? 0, maskPtr);
  if (wantMask) {
    const view = h.bytes.subarray(maskPtr, maskPtr + n);
    if (options.mask instanceof Uint8Array) options.mask.set(view);
    result.mask = options.mask instanceof Uint8Array ? options.mask : h.copyBytes(maskPtr, n);
  }
  return result;
}

/**
 * Diffs two padded images already in WASM memory, band by band, merging the band statistics
 * (diffImages and ChangeAccumulator share it).
 */
export function runDiff(
  h: WasmHeap,
  pa: number,
  pb: number,
  w: number,
  height: number,
  noiseFloor: number,
  maskPtr: number,
): DiffResult {
  const n = w * height;
  const stats = h.slot(S_STATS, 9 * 8);
  const floor = Math.max(0, Math.min(255, Math.round(noiseFloor)));
  let changed = 0;
  let sumAbs = 0;
  let sumY = 0;
  let sumC = 0;
  let maxDiff = 0;
  let minX = w;
  let minY = -1;
  let maxX = -1;
  let maxY = -1;
  for (let y0 = 0; y0 < height; y0 += BAND_ROWS) {
    const first = y0 * w;
    const count = pad16(Math.min(height - y0, BAND_ROWS) * w);
    h.k.diff_rgba(pa + first * 4, pb + first * 4, count, w, floor, maskPtr ? maskPtr + first : 0, stats);
    const s = h.f64(stats, 9);
    if (s[0] === 0) continue;
    changed += s[0];
    sumAbs += s[1];
    sumY += s[2];
    sumC += s[3];
    maxDiff = Math.max(maxDiff, s[4]);
    minX = Math.min(minX, s[5]);
    if (minY < 0) minY = y0 + s[6];
    maxX = Math.max(maxX, s[7]);
    maxY = y0 + s[8];
  }
  const total = Math.max(1, n);
  return {
    changedPixels: changed,
    changedProportion: n ? changed / n : 0,
    bounds: changed > 0 ? { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } : null,
    meanAbsDiff: sumAbs / total,
    meanLumaDiff: sumY / 256 / total,
    meanColorDiff: sumC / 256 / total,
    maxDiff,
  };
}

// ---------------------------------------------------------------------------------------------
// Perceptual distance

/** Longest side of the luma planes SSIM compares: UI-scale structure survives, noise and cost do not. */
const SSIM_SIDE = 256;
const SSIM_WINDOW = 8;

/**
 * Perceptual distance of two same-size images, in [0, 1]: 1 − mean SSIM, where both images are first
 * area-averaged so the longer side is ≤ 256 px, converted to BT.601 luma, and SSIM is taken over
 * non-overlapping 8×8 windows (standard C1/C2 constants), each window's value clamped to [0, 1].
 * 0 = structurally identical; ≈1 = unrelated content.
 */
export function perceptualDistance(a: RgbaImage, b: RgbaImage): number {
  checkImage(a, "perceptualDistance");
  checkImage(b, "perceptualDistance");
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`perceptualDistance: sizes differ (${a.width}×${a.height} vs ${b.width}×${b.height})`);
  }
  if (a.width === 0 || a.height === 0) return 0;
  const scale = Math.min(1, SSIM_SIDE / Math.max(a.width, a.height));
  const w = Math.max(1, Math.round(a.width * scale));
  const hgt = Math.max(1, Math.round(a.height * scale));
  const h = wasm();
  const lumaA = h.slot(S_AUX, w * hgt);
  const lumaB = h.slot(S_AUX2, w * hgt);
  for (const [img, luma] of [[a, lumaA], [b, lumaB]] as const) {
    h.slot(S_A, img.data.length);
    h.slot(S_OUT, w * hgt * 4);
    h.slot(S_TMP, w * img.height * 16);
    h.bytes.set(img.data, h.slot(S_A, 0));
    const small = scale < 1
      ? resampleInWasm(h, img.width * 4, { x: 0, y: 0, width: img.width, height: img.height }, w, hgt, S_OUT)
      : h.slot(S_A, 0);
    h.k.luma_plane(small, w * hgt, luma);
  }
  const win = Math.max(1, Math.min(SSIM_WINDOW, w, hgt));
  const ssim = h.k.ssim_mean(lumaA, lumaB, w, hgt, win);
  return Math.min(1, Math.max(0, 1 - ssim));
}
