/**
 * Inverse DCTs that write n×n pixels per 8×8 block (nh × nv for a component subsampled on one axis only).
 * n = 8 is the float AAN IDCT (libjpeg's jidctflt). n = 4 and 2 are exact box averages of the full IDCT's
 * output, minus the frequencies the smaller grid cannot hold: averaging the 8-point basis cos((2x+1)kπ/16)
 * over a group of s = 8/n pixels gives cos((2m+1)kπ/2n) · sin(skπ/16) / (s·sin(kπ/16)), an n-point IDCT of
 * the low n coefficients with a per-frequency weight. Every constant factor (the AAN or box weights,
 * normalisation, the final /8) lives in the dequantisation multipliers, so the transforms below are bare
 * butterflies.
 *
 * Coefficients arrive in a Float64Array laid out nv rows × nh columns (row = vertical frequency), already
 * dequantised, with +128 folded into the DC term. Outputs go to a Uint8ClampedArray, whose stores round and
 * clamp.
 */

/** Natural (row-major) index of each zigzag position. */
// deno-fmt-ignore
export const ZIGZAG = Int32Array.from([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14,
  21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53,
  60, 61, 54, 47, 55, 62, 63,
]);

/**
 * Length of the per-zigzag-position tables: a corrupt run can push the position to 63 + 16 before the
 * end-of-block check, so positions past 63 exist and point at the dump slot with a zero multiplier.
 */
export const ZIGZAG_SLOTS = 80;

export type BlockSize = 1 | 2 | 4 | 8;

/**
 * Slot of each zigzag position in an nv-row × nh-column coefficient block (row-major); coefficients the
 * block cannot hold go to the dump slot nh·nv.
 */
export function blockSlots(nh: BlockSize, nv: BlockSize): Int32Array {
  const slots = new Int32Array(ZIGZAG_SLOTS).fill(nh * nv);
  for (let k = 0; k < 64; k++) {
    const row = ZIGZAG[k] >> 3;
    const col = ZIGZAG[k] & 7;
    if (row < nv && col < nh) slots[k] = row * nh + col;
  }
  return slots;
}

const SQRT1_2 = Math.SQRT1_2;

/** Input factor of frequency k for an n-point transform along one axis, normalisation included. */
function axisFactor(k: number, n: BlockSize): number {
  // AAN pre-scale, with the 1D share (1/2√2) of jidctflt's final /8.
  if (n === 8) return (k === 0 ? 1 : Math.cos((k * Math.PI) / 16) * Math.SQRT2) / (2 * Math.SQRT2);
  const s = 8 / n;
  const c = k === 0 ? SQRT1_2 : 1; // DCT normalisation C(k)
  const box = k === 0 ? 1 : Math.sin((s * k * Math.PI) / 16) / (s * Math.sin((k * Math.PI) / 16));
  // The butterflies below leave cos(π/4) to the multiplier: idct4's coefficient 2, idct2's coefficient 1.
  const folded = (n === 4 && k === 2) || (n === 2 && k === 1) ? SQRT1_2 : 1;
  return 0.5 * c * box * folded;
}

/**
 * Dequantisation multipliers in zigzag order for an nh × nv output block (entries past what the block holds
 * are 0). `quant` is the table in zigzag order, as stored in DQT.
 */
export function dequantMultipliers(quant: Uint16Array, nh: BlockSize, nv: BlockSize): Float64Array {
  const m = new Float64Array(ZIGZAG_SLOTS);
  for (let k = 0; k < 64; k++) {
    const row = ZIGZAG[k] >> 3;
    const col = ZIGZAG[k] & 7;
    if (row < nv && col < nh) m[k] = quant[k] * axisFactor(row, nv) * axisFactor(col, nh);
  }
  return m;
}

const A1 = 1.414213562; // 2·c4
const A2 = 1.847759065; // 2·c2
const A3 = 1.0823922; // 2·(c2 − c6)
const A4 = 2.61312593; // 2·(c2 + c6)

/** Full 8×8 IDCT (AAN): `blk` (64 coefficients) → 8×8 pixels at out[o], row stride `stride`. */
export function idct8(
  blk: Float64Array,
  ws: Float64Array,
  out: Uint8ClampedArray,
  o: number,
  stride: number,
): void {
  // Columns. Most columns of a compressed block have no AC terms: those are constant.
  for (let c = 0; c < 8; c++) {
    const i1 = blk[c + 8];
    const i2 = blk[c + 16];
    const i3 = blk[c + 24];
    const i4 = blk[c + 32];
    const i5 = blk[c + 40];
    const i6 = blk[c + 48];
    const i7 = blk[c + 56];
    const i0 = blk[c];
    if (i1 === 0 && i2 === 0 && i3 === 0 && i4 === 0 && i5 === 0 && i6 === 0 && i7 === 0) {
      ws[c] = i0;
      ws[c + 8] = i0;
      ws[c + 16] = i0;
      ws[c + 24] = i0;
      ws[c + 32] = i0;
      ws[c + 40] = i0;
      ws[c + 48] = i0;
      ws[c + 56] = i0;
      continue;
    }
    const t10 = i0 + i4;
    const t11 = i0 - i4;
    const t13 = i2 + i6;
    const t12 = (i2 - i6) * A1 - t13;
    const e0 = t10 + t13;
    const e3 = t10 - t13;
    const e1 = t11 + t12;
    const e2 = t11 - t12;
    const z13 = i5 + i3;
    const z10 = i5 - i3;
    const z11 = i1 + i7;
    const z12 = i1 - i7;
    const o7 = z11 + z13;
    const o11 = (z11 - z13) * A1;
    const z5 = (z10 + z12) * A2;
    const o10 = z5 - z12 * A3;
    const o12 = z5 - z10 * A4;
    const o6 = o12 - o7;
    const o5 = o11 - o6;
    const o4 = o10 - o5;
    ws[c] = e0 + o7;
    ws[c + 56] = e0 - o7;
    ws[c + 8] = e1 + o6;
    ws[c + 48] = e1 - o6;
    ws[c + 16] = e2 + o5;
    ws[c + 40] = e2 - o5;
    ws[c + 24] = e3 + o4;
    ws[c + 32] = e3 - o4;
  }
  // Rows, straight to pixels.
  for (let r = 0; r < 64; r += 8) {
    const i0 = ws[r];
    const i1 = ws[r + 1];
    const i2 = ws[r + 2];
    const i3 = ws[r + 3];
    const i4 = ws[r + 4];
    const i5 = ws[r + 5];
    const i6 = ws[r + 6];
    const i7 = ws[r + 7];
    const t10 = i0 + i4;
    const t11 = i0 - i4;
    const t13 = i2 + i6;
    const t12 = (i2 - i6) * A1 - t13;
    const e0 = t10 + t13;
    const e3 = t10 - t13;
    const e1 = t11 + t12;
    const e2 = t11 - t12;
    const z13 = i5 + i3;
    const z10 = i5 - i3;
    const z11 = i1 + i7;
    const z12 = i1 - i7;
    const o7 = z11 + z13;
    const o11 = (z11 - z13) * A1;
    const z5 = (z10 + z12) * A2;
    const o10 = z5 - z12 * A3;
    const o12 = z5 - z10 * A4;
    const o6 = o12 - o7;
    const o5 = o11 - o6;
    const o4 = o10 - o5;
    out[o] = e0 + o7;
    out[o + 7] = e0 - o7;
    out[o + 1] = e1 + o6;
    out[o + 6] = e1 - o6;
    out[o + 2] = e2 + o5;
    out[o + 5] = e2 - o5;
    out[o + 3] = e3 + o4;
    out[o + 4] = e3 - o4;
    o += stride;
  }
}

const C1 = Math.cos(Math.PI / 8);
const C3 = Math.cos((3 * Math.PI) / 8);

/** 4×4 output from the low 4×4 coefficients (scale 2). */
export function idct4(
  blk: Float64Array,
  ws: Float64Array,
  out: Uint8ClampedArray,
  o: number,
  stride: number,
): void {
  for (let c = 0; c < 4; c++) {
    const g0 = blk[c];
    const g1 = blk[c + 4];
    const g2 = blk[c + 8];
    const g3 = blk[c + 12];
    const e0 = g0 + g2;
    const e1 = g0 - g2;
    const o0 = g1 * C1 + g3 * C3;
    const o1 = g1 * C3 - g3 * C1;
    ws[c] = e0 + o0;
    ws[c + 12] = e0 - o0;
    ws[c + 4] = e1 + o1;
    ws[c + 8] = e1 - o1;
  }
  for (let r = 0; r < 16; r += 4) {
    const g0 = ws[r];
    const g1 = ws[r + 1];
    const g2 = ws[r + 2];
    const g3 = ws[r + 3];
    const e0 = g0 + g2;
    const e1 = g0 - g2;
    const o0 = g1 * C1 + g3 * C3;
    const o1 = g1 * C3 - g3 * C1;
    out[o] = e0 + o0;
    out[o + 3] = e0 - o0;
    out[o + 1] = e1 + o1;
    out[o + 2] = e1 - o1;
    o += stride;
  }
}

/** 2×2 output from the low 2×2 coefficients (scale 4). */
export function idct2(blk: Float64Array, out: Uint8ClampedArray, o: number, stride: number): void {
  const g00 = blk[0];
  const g01 = blk[1];
  const g10 = blk[2];
  const g11 = blk[3];
  const a = g00 + g10;
  const b = g01 + g11;
  const c = g00 - g10;
  const d = g01 - g11;
  out[o] = a + b;
  out[o + 1] = a - b;
  out[o + stride] = c + d;
  out[o + stride + 1] = c - d;
}

/**
 * Non-square blocks (a component subsampled on one axis only, e.g. 4:2:2 chroma at 1/2 → 8 wide × 4 high):
 * the same transforms one axis at a time. Rare, so generic rather than unrolled.
 */
export function idctRect(
  blk: Float64Array,
  ws: Float64Array,
  out: Uint8ClampedArray,
  o: number,
  stride: number,
  nh: BlockSize,
  nv: BlockSize,
): void {
  for (let c = 0; c < nh; c++) idct1d(blk, c, nh, ws, c, nh, nv);
  for (let r = 0; r < nv; r++) {
    idct1d(ws, r * nh, 1, rowOut, 0, 1, nh);
    for (let x = 0; x < nh; x++) out[o + x] = rowOut[x];
    o += stride;
  }
}

const rowOut = new Float64Array(8);

/** One n-point transform from src[si + i·step] to dst[di + i·dstep]. */
function idct1d(
  src: Float64Array,
  si: number,
  step: number,
  dst: Float64Array,
  di: number,
  dstep: number,
  n: BlockSize,
): void {
  if (n === 8) {
    const i0 = src[si];
    const i1 = src[si + step];
    const i2 = src[si + 2 * step];
    const i3 = src[si + 3 * step];
    const i4 = src[si + 4 * step];
    const i5 = src[si + 5 * step];
    const i6 = src[si + 6 * step];
    const i7 = src[si + 7 * step];
    const t10 = i0 + i4;
    const t11 = i0 - i4;
    const t13 = i2 + i6;
    const t12 = (i2 - i6) * A1 - t13;
    const e0 = t10 + t13;
    const e3 = t10 - t13;
    const e1 = t11 + t12;
    const e2 = t11 - t12;
    const z13 = i5 + i3;
    const z10 = i5 - i3;
    const z11 = i1 + i7;
    const z12 = i1 - i7;
    const o7 = z11 + z13;
    const o11 = (z11 - z13) * A1;
    const z5 = (z10 + z12) * A2;
    const o10 = z5 - z12 * A3;
    const o12 = z5 - z10 * A4;
    const o6 = o12 - o7;
    const o5 = o11 - o6;
    const o4 = o10 - o5;
    dst[di] = e0 + o7;
    dst[di + 7 * dstep] = e0 - o7;
    dst[di + dstep] = e1 + o6;
    dst[di + 6 * dstep] = e1 - o6;
    dst[di + 2 * dstep] = e2 + o5;
    dst[di + 5 * dstep] = e2 - o5;
    dst[di + 3 * dstep] = e3 + o4;
    dst[di + 4 * dstep] = e3 - o4;
  } else if (n === 4) {
    const g0 = src[si];
    const g1 = src[si + step];
    const g2 = src[si + 2 * step];
    const g3 = src[si + 3 * step];
    const e0 = g0 + g2;
    const e1 = g0 - g2;
    const o0 = g1 * C1 + g3 * C3;
    const o1 = g1 * C3 - g3 * C1;
    dst[di] = e0 + o0;
    dst[di + 3 * dstep] = e0 - o0;
    dst[di + dstep] = e1 + o1;
    dst[di + 2 * dstep] = e1 - o1;
  } else if (n === 2) {
    const g0 = src[si];
    const g1 = src[si + step];
    dst[di] = g0 + g1;
    dst[di + dstep] = g0 - g1;
  } else {
    dst[di] = src[si];
  }
}
