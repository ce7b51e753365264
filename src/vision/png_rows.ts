/**
 * PNG rows in the WASM kernels: filtering for encode, unfiltering and expansion to RGBA for decode.
 * png.ts builds the container (chunks, CRCs, zlib) around these.
 */
import type { RgbaImage } from "./image.ts";
import {
  BAND_ROWS,
  checkImage,
  pad16,
  S_A,
  S_B,
  S_OUT,
  S_STATS,
  S_TMP,
  wasm,
  type WasmHeap,
} from "./wasm_heap.ts";

/** PNG filter choice for encoding: a fixed type for every row, or per-row adaptive (Sub/Up/Paeth). */
export type PngFilter = "none" | "sub" | "up" | "average" | "paeth" | "adaptive";
const FILTER_MODES: Record<PngFilter, number> = { none: 0, sub: 1, up: 2, average: 3, paeth: 4, adaptive: 5 };

/**
 * Filters an RGBA image into PNG scanlines (filter byte + pixels per row), dropping alpha when every
 * pixel is opaque, and hands them to `use` while they are still in WASM memory (no copy out). The
 * view is only valid inside `use`, and `use` must not call other WASM kernel functions (they share
 * the scratch memory of wasm_heap.ts).
 */
export function withPngScanlines<T>(
  img: RgbaImage,
  filter: PngFilter,
  use: (scanlines: Uint8Array, channels: 3 | 4) => T,
): T {
  checkImage(img, "PNG encode");
  const h = wasm();
  const n = img.width * img.height;
  const rowBytes = img.width * 4;
  const src = h.slot(S_A, pad16(n) * 4);
  const tmp = h.slot(S_TMP, 5 * (rowBytes + 16));
  const dst = h.slot(S_OUT, img.height * (rowBytes + 1));
  h.bytes.set(img.data, src);
  const channels = h.k.rgba_opaque(src, n) === 1 ? 3 : 4;
  const outRow = img.width * channels + 1;
  for (let y0 = 0; y0 < img.height; y0 += BAND_ROWS) {
    const y1 = Math.min(img.height, y0 + BAND_ROWS);
    h.k.png_filter(src, img.width, y0, y1, channels, FILTER_MODES[filter], dst + y0 * outRow, tmp);
  }
  return use(h.bytes.subarray(dst, dst + img.height * outRow), channels);
}

/**
 * Reverses PNG filtering in place of a copy: `filtered` holds `height` rows of (filter byte +
 * rowBytes); `bpp` is bytes per pixel (1–8). Returns height × rowBytes bytes.
 */
export function unfilterScanlines(
  filtered: Uint8Array,
  height: number,
  rowBytes: number,
  bpp: number,
): Uint8Array {
  const h = wasm();
  const dst = unfilterInWasm(h, filtered, height, rowBytes, bpp);
  return h.copyBytes(dst, height * rowBytes);
}

function unfilterInWasm(
  h: WasmHeap,
  filtered: Uint8Array,
  height: number,
  rowBytes: number,
  bpp: number,
): number {
  if (!Number.isInteger(bpp) || bpp < 1 || bpp > 8) throw new Error(`PNG: ${bpp} bytes per pixel is not 1–8`);
  const need = height * (rowBytes + 1);
  if (filtered.length < need) {
    throw new Error(`PNG image data is truncated: ${filtered.length} bytes, ${height} rows need ${need}`);
  }
  // 16 bytes of slack: the RGB fast path reads and writes one byte past a row.
  const src = h.slot(S_B, need + 16);
  const dst = h.slot(S_A, height * rowBytes + 16);
  h.bytes.set(filtered.subarray(0, need), src);
  for (let y0 = 0; y0 < height; y0 += BAND_ROWS) {
    const rows = Math.min(height - y0, BAND_ROWS);
    const out = dst + y0 * rowBytes;
    const status = h.k.png_unfilter(
      src + y0 * (rowBytes + 1),
      out,
      rows,
      rowBytes,
      bpp,
      y0 ? out - rowBytes : 0,
    );
    if (status < 0) {
      const row = y0 - status - 1;
      throw new Error(`PNG row ${row} has unknown filter type ${filtered[row * (rowBytes + 1)]}`);
    }
  }
  return dst;
}

/** Colour types of 8-bit PNGs: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA. */
export type PngColorType = 0 | 2 | 3 | 4 | 6;
const CHANNELS: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export interface PngPixelsInput {
  width: number;
  height: number;
  colorType: PngColorType;
  /** Inflated IDAT data: filtered scanlines. */
  filtered: Uint8Array;
  /** For colour type 3: RGBA entries (4 bytes each, tRNS applied), at most 256. */
  palette?: Uint8Array;
  /** tRNS key for gray (value) or RGB (r | g << 8 | b << 16); -1 when none. */
  transparentKey?: number;
}

/** Unfilters 8-bit scanlines and expands them to RGBA. Throws on bad filter types or palette indexes. */
export function pngScanlinesToRgba(input: PngPixelsInput): RgbaImage {
  const { width, height, colorType } = input;
  const channels = CHANNELS[colorType];
  const h = wasm();
  const n = width * height;
  // Reserve everything before taking a view: allocation may grow memory and detach views.
  const pal = h.slot(S_STATS, 1024);
  const out = h.slot(S_OUT, n * 4);
  const rows = unfilterInWasm(h, input.filtered, height, width * channels, channels);
  const bytes = h.bytes;
  bytes.fill(0, pal, pal + 1024);
  const entries = input.palette ? input.palette.length / 4 : 0;
  if (input.palette) bytes.set(input.palette.subarray(0, 1024), pal);
  const maxIndex = h.k.png_expand(rows, out, n, colorType, pal, input.transparentKey ?? -1);
  if (colorType === 3 && maxIndex >= entries) {
    throw new Error(`PNG pixel uses palette index ${maxIndex} but the palette has ${entries} entries`);
  }
  return { width, height, data: h.copyBytes(out, n * 4) };
}
