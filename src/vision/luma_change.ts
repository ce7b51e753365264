/** Cheap visual-change measures over 1/8-scale luma grids (see jpeg_dc.ts). */
import type { LumaImage } from "./jpeg_dc.ts";

export interface LumaBounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface LumaChange {
  /** Share of blocks (0–1) whose mean moved by more than the noise floor. */
  changedProportion: number;
  /** Source-pixel box around every changed block; absent when nothing changed. */
  bounds?: LumaBounds;
  /** Mean |Δ| over all blocks, 0–255; 255 when the sizes differ. */
  meanAbsDiff: number;
}

/**
 * Compares two frames block by block. JPEG requantisation jitters block means by a few levels, hence the
 * noise floor: a block counts as changed only when |Δ| > noiseFloor. Frames of different sizes are not
 * comparable, so everything counts as changed.
 */
export function compareLuma(prev: LumaImage, next: LumaImage, noiseFloor = 8): LumaChange {
  const { width, height, blocksWide, blocksHigh } = next;
  if (
    prev.width !== width || prev.height !== height || prev.blocksWide !== blocksWide ||
    prev.blocksHigh !== blocksHigh || prev.luma.length !== next.luma.length
  ) {
    return { changedProportion: 1, bounds: { x: 0, y: 0, width, height }, meanAbsDiff: 255 };
  }
  const a = prev.luma;
  const b = next.luma;
  const total = blocksWide * blocksHigh;
  if (total === 0) return { changedProportion: 0, meanAbsDiff: 0 };
  let changed = 0;
  let sum = 0;
  let minX = blocksWide;
  let minY = blocksHigh;
  let maxX = -1;
  let maxY = -1;
  for (let by = 0, i = 0; by < blocksHigh; by++) {
    for (let bx = 0; bx < blocksWide; bx++, i++) {
      const d = Math.abs(a[i] - b[i]);
      sum += d;
      if (d <= noiseFloor) continue;
      changed++;
      if (bx < minX) minX = bx;
      if (bx > maxX) maxX = bx;
      if (by < minY) minY = by;
      if (by > maxY) maxY = by;
    }
  }
  const meanAbsDiff = sum / total;
  if (changed === 0) return { changedProportion: 0, meanAbsDiff };
  const x = minX * 8;
  const y = minY * 8;
  return {
    changedProportion: changed / total,
    bounds: {
      x,
      y,
      width: Math.min((maxX + 1) * 8, width) - x,
      height: Math.min((maxY + 1) * 8, height) - y,
    },
    meanAbsDiff,
  };
}

/**
 * Per output cell, the source indices it overlaps and the overlap weights (summing to 1), for an
 * area-average resample of `from` cells onto `to` cells.
 */
function overlaps(from: number, to: number): { index: number[]; weight: number[]; start: number[] } {
  const index: number[] = [];
  const weight: number[] = [];
  const start: number[] = [];
  const scale = from / to;
  for (let o = 0; o < to; o++) {
    start.push(index.length);
    const lo = o * scale;
    const hi = (o + 1) * scale;
    for (let s = Math.floor(lo); s < hi && s < from; s++) {
      const w = Math.min(hi, s + 1) - Math.max(lo, s);
      if (w <= 0) continue;
      index.push(s);
      weight.push(w / scale);
    }
  }
  start.push(index.length);
  return { index, weight, start };
}

/**
 * A fixed-size fingerprint of a frame: the block grid area-averaged to cols×rows (row-major, 0–255), so
 * frames of any size compare cell by cell and small shifts blur rather than flip values.
 */
export function lumaSignature(img: LumaImage, cols = 32, rows = 18): Uint8Array {
  if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1) {
    throw new RangeError(`signature size must be positive integers, got ${cols}×${rows}`);
  }
  const { blocksWide: w, blocksHigh: h, luma } = img;
  const out = new Uint8Array(cols * rows);
  if (w === 0 || h === 0) return out;
  const hx = overlaps(w, cols);
  const vy = overlaps(h, rows);
  // Horizontal pass: h rows × cols.
  const tmp = new Float64Array(h * cols);
  for (let y = 0; y < h; y++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let k = hx.start[c]; k < hx.start[c + 1]; k++) acc += luma[y * w + hx.index[k]] * hx.weight[k];
      tmp[y * cols + c] = acc;
    }
  }
  // Vertical pass: rows × cols.
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      let acc = 0;
      for (let k = vy.start[r]; k < vy.start[r + 1]; k++) acc += tmp[vy.index[k] * cols + c] * vy.weight[k];
      const v = Math.round(acc);
      out[r * cols + c] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  return out;
}
