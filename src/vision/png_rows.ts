/**
 * PNG rows in the WASM kernels: alpha detection and row filtering for encode. png.ts builds the
 * container (chunks, CRCs, zlib) around them. The kernels' png_unfilter/png_expand served the PNG
 * decoder that left the product (tests and benches decode with npm:fast-png); nothing calls them now.
 */
import type { RgbaImage } from "./image.ts";
import { BAND_ROWS, checkImage, pad16, S_A, S_OUT, S_TMP, wasm } from "./wasm_heap.ts";

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
