/**
 * Component planes → RGBA: upsamples subsampled components to the output grid and converts colour, one
 * output row at a time. Ratio-2 axes use libjpeg's "fancy" triangle filter (¾ nearest + ¼ next sample, the
 * JPEG/JFIF centred siting); other integral ratios replicate. Chroma rows are carried at 16× (the filter's
 * exact weights) and divided out in the colour transform, so no intermediate rounding happens.
 */

export interface ComponentPlane {
  plane: Uint8ClampedArray;
  stride: number;
  /** Output pixels per sample across and down (hMax / h, vMax / v). */
  rh: number;
  rv: number;
  /** Samples that carry picture (the rest of the plane is block padding). */
  w: number;
  h: number;
}

/** How the three components map to RGB: JFIF YCbCr, or stored as RGB (Adobe transform 0). */
export type ColorMode = "gray" | "ycc" | "rgb";

// Row scratch, grown on demand.
let row0 = new Uint8ClampedArray(0);
let row1 = new Uint16Array(0);
let row2 = new Uint16Array(0);
let rowPx = new Uint32Array(0);
let colBuf = new Int32Array(0);

/**
 * Pixels are built as one 32-bit word, R | G << 8 | B << 16 | A << 24, and stored straight into the output
 * when that is little-endian memory at a 4-byte boundary (always, in practice); otherwise row by row
 * through a scratch row, byte by byte.
 */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Writes `width`×`height` RGBA pixels (alpha 255) into `out`. */
export function planesToRgba(
  comps: ComponentPlane[],
  mode: ColorMode,
  width: number,
  height: number,
  out: Uint8Array,
): void {
  if (row1.length < width + 16) {
    row0 = new Uint8ClampedArray(width + 16);
    row1 = new Uint16Array(width + 16);
    row2 = new Uint16Array(width + 16);
    rowPx = new Uint32Array(width + 16);
  }
  let maxW = 0;
  for (const c of comps) maxW = Math.max(maxW, c.w);
  if (colBuf.length < maxW + 2) colBuf = new Int32Array(maxW + 2);
  const direct = LITTLE_ENDIAN && out.byteOffset % 4 === 0;
  const px = direct ? new Uint32Array(out.buffer, out.byteOffset, width * height) : rowPx;

  const [c0, c1, c2] = comps;
  const fused = mode === "ycc" && fusable(c0, c1, c2);
  for (let y = 0; y < height; y++) {
    const p = direct ? y * width : 0;
    if (fused) {
      let near = y;
      let far = y;
      if (c1.rv === 2) {
        near = y >> 1;
        far = y & 1 ? near + 1 : near - 1;
        if (far < 0) far = 0;
        else if (far >= c1.h) far = c1.h - 1;
      }
      const no = near * c1.stride;
      const fo = far * c1.stride;
      if (c1.rh === 2) yccRowH2(c0.plane, y * c0.stride, c1.plane, c2.plane, no, fo, c1.w, px, p, width);
      else yccRowH1(c0.plane, y * c0.stride, c1.plane, c2.plane, no, fo, px, p, width);
    } else {
      // Luma (or R, or grey) normally has the output's own resolution and is read in place.
      let src = c0.plane;
      let so = y * c0.stride;
      if (c0.rh !== 1 || c0.rv !== 1) {
        replicateRow(c0, y, width, row0);
        src = row0;
        so = 0;
      }
      if (mode === "gray") {
        grayRow(src, so, px, p, width);
      } else {
        upsampleRow(c1, y, width, row1);
        upsampleRow(c2, y, width, row2);
        if (mode === "ycc") yccRow(src, so, row1, row2, px, p, width);
        else rgbRow(src, so, row1, row2, px, p, width);
      }
    }
    if (!direct) unpackRow(rowPx, out, y * width * 4, width);
  }
}

/** The common layouts: full-resolution luma, and both chroma planes alike, halved or not on each axis. */
function fusable(l: ComponentPlane, cb: ComponentPlane, cr: ComponentPlane): boolean {
  return l.rh === 1 && l.rv === 1 && (cb.rh === 1 || cb.rh === 2) && (cb.rv === 1 || cb.rv === 2) &&
    cb.rh === cr.rh && cb.rv === cr.rv && cb.stride === cr.stride && cb.w === cr.w && cb.h === cr.h;
}

function unpackRow(src: Uint32Array, out: Uint8Array, o: number, width: number): void {
  for (let x = 0; x < width; x++, o += 4) {
    const v = src[x];
    out[o] = v & 255;
    out[o + 1] = (v >>> 8) & 255;
    out[o + 2] = (v >>> 16) & 255;
    out[o + 3] = v >>> 24;
  }
}

// JFIF's full-range BT.601 in 16.16 fixed point on 16× chroma (0–4080), rounding folded into the offsets;
// results (−180 to 435) are clamped by table.
const K_CR_R = Math.round((1.402 / 16) * 65536);
const K_CB_G = Math.round((-0.344136 / 16) * 65536);
const K_CR_G = Math.round((-0.714136 / 16) * 65536);
const K_CB_B = Math.round((1.772 / 16) * 65536);
const K_R0 = Math.round(-1.402 * 128 * 65536) + 32768;
const K_G0 = Math.round((0.344136 + 0.714136) * 128 * 65536) + 32768;
const K_B0 = Math.round(-1.772 * 128 * 65536) + 32768;
const CLAMP_OFFSET = 512;
const CLAMP = new Uint8Array(1024);
for (let i = 0; i < 1024; i++) CLAMP[i] = Math.min(255, Math.max(0, i - CLAMP_OFFSET));

/** One RGBA word from luma and 16× chroma. */
function ycc(l: number, cb: number, cr: number): number {
  const lo = l + CLAMP_OFFSET;
  return CLAMP[lo + ((cr * K_CR_R + K_R0) >> 16)] |
    (CLAMP[lo + ((cb * K_CB_G + cr * K_CR_G + K_G0) >> 16)] << 8) |
    (CLAMP[lo + ((cb * K_CB_B + K_B0) >> 16)] << 16) | 0xff000000;
}

/**
 * One output row with chroma halved across: the vertical triangle tap (3·near + far, 4×) is taken as the
 * loop walks the chroma row, the horizontal one (3·this + neighbour, 16×) from the previous, current and
 * next columns, and each chroma sample yields two pixels.
 */
function yccRowH2(
  ys: Uint8ClampedArray,
  so: number,
  cbp: Uint8ClampedArray,
  crp: Uint8ClampedArray,
  no: number,
  fo: number,
  cw: number,
  px: Uint32Array,
  p: number,
  width: number,
): void {
  let cbCur = 3 * cbp[no] + cbp[fo];
  let crCur = 3 * crp[no] + crp[fo];
  let cbPrev = cbCur;
  let crPrev = crCur;
  const pairs = width >> 1;
  const last = cw - 1;
  for (let i = 0; i < pairs; i++) {
    const j = i < last ? i + 1 : last;
    const cbNext = 3 * cbp[no + j] + cbp[fo + j];
    const crNext = 3 * crp[no + j] + crp[fo + j];
    const cb3 = 3 * cbCur;
    const cr3 = 3 * crCur;
    const x = so + 2 * i;
    px[p] = ycc(ys[x], cb3 + cbPrev, cr3 + crPrev);
    px[p + 1] = ycc(ys[x + 1], cb3 + cbNext, cr3 + crNext);
    p += 2;
    cbPrev = cbCur;
    crPrev = crCur;
    cbCur = cbNext;
    crCur = crNext;
  }
  // An odd last pixel is the left half of the last chroma sample.
  if (width & 1) px[p] = ycc(ys[so + width - 1], 3 * cbCur + cbPrev, 3 * crCur + crPrev);
}

/** One output row with chroma at full width (vertical tap only; 4:4:4 passes near = far). */
function yccRowH1(
  ys: Uint8ClampedArray,
  so: number,
  cbp: Uint8ClampedArray,
  crp: Uint8ClampedArray,
  no: number,
  fo: number,
  px: Uint32Array,
  p: number,
  width: number,
): void {
  for (let x = 0; x < width; x++) {
    px[p + x] = ycc(ys[so + x], (3 * cbp[no + x] + cbp[fo + x]) << 2, (3 * crp[no + x] + crp[fo + x]) << 2);
  }
}

function yccRow(
  ys: Uint8ClampedArray,
  so: number,
  cbs: Uint16Array,
  crs: Uint16Array,
  px: Uint32Array,
  p: number,
  width: number,
): void {
  for (let x = 0; x < width; x++) px[p + x] = ycc(ys[so + x], cbs[x], crs[x]);
}

function grayRow(src: Uint8ClampedArray, so: number, px: Uint32Array, p: number, width: number): void {
  for (let x = 0; x < width; x++) px[p + x] = (src[so + x] * 0x010101) | 0xff000000;
}

/** Stored RGB: G and B come back at 16× from the upsampler, like chroma. */
function rgbRow(
  rs: Uint8ClampedArray,
  so: number,
  gs: Uint16Array,
  bs: Uint16Array,
  px: Uint32Array,
  p: number,
  width: number,
): void {
  for (let x = 0; x < width; x++) {
    px[p + x] = rs[so + x] | (((gs[x] + 8) >> 4) << 8) | (((bs[x] + 8) >> 4) << 16) | 0xff000000;
  }
}

/** Output row `y` of a component at output resolution, 16× (Uint16). */
function upsampleRow(c: ComponentPlane, y: number, width: number, dst: Uint16Array): void {
  const { plane, stride, rh, rv, w, h } = c;
  if ((rh !== 1 && rh !== 2) || (rv !== 1 && rv !== 2)) {
    const so = Math.min(h - 1, (y / rv) | 0) * stride;
    for (let x = 0; x < width; x++) dst[x] = plane[so + Math.min(w - 1, (x / rh) | 0)] << 4;
    return;
  }
  // Vertical pass into colBuf[1..w] at 4×, edges duplicated for the horizontal taps.
  const col = colBuf;
  if (rv === 1) {
    const so = y * stride;
    if (rh === 1) {
      for (let x = 0; x < width; x++) dst[x] = plane[so + x] << 4;
      return;
    }
    for (let i = 0; i < w; i++) col[i + 1] = plane[so + i] << 2;
  } else {
    const near = y >> 1;
    let far = y & 1 ? near + 1 : near - 1;
    if (far < 0) far = 0;
    else if (far >= h) far = h - 1;
    const no = near * stride;
    const fo = far * stride;
    if (rh === 1) {
      for (let x = 0; x < width; x++) dst[x] = (3 * plane[no + x] + plane[fo + x]) << 2;
      return;
    }
    for (let i = 0; i < w; i++) col[i + 1] = 3 * plane[no + i] + plane[fo + i];
  }
  col[0] = col[1];
  col[w + 1] = col[w];
  // Horizontal: two outputs per sample; the last may fall past `width`, into the row's slack.
  for (let i = 0, x = 0; i < w; i++, x += 2) {
    const c3 = 3 * col[i + 1];
    dst[x] = c3 + col[i];
    dst[x + 1] = c3 + col[i + 2];
  }
}

function replicateRow(c: ComponentPlane, y: number, width: number, dst: Uint8ClampedArray): void {
  const so = Math.min(c.h - 1, (y / c.rv) | 0) * c.stride;
  for (let x = 0; x < width; x++) dst[x] = c.plane[so + Math.min(c.w - 1, (x / c.rh) | 0)];
}
