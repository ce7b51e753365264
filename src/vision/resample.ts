/**
 * Resampling of RgbaImages in the WASM kernels: integer box downscale and arbitrary resize (area
 * average when shrinking, bilinear when enlarging). compose.ts and pixels.ts share resampleInWasm.
 */
import type { Rect, RgbaImage } from "./image.ts";
import { checkImage, clipRect, S_A, S_OUT, S_TMP, S_XS, S_YS, wasm, type WasmHeap } from "./wasm_heap.ts";

/** Box-filter downscale by an integer factor: ceil(w/f) × ceil(h/f), edge blocks average what exists. */
export function downscaleBox(img: RgbaImage, factor: number): RgbaImage {
  checkImage(img, "downscaleBox");
  if (!Number.isInteger(factor) || factor < 1) {
    throw new Error(`downscaleBox: factor ${factor} must be an integer ≥ 1`);
  }
  const ow = Math.ceil(img.width / factor);
  const oh = Math.ceil(img.height / factor);
  const h = wasm();
  const src = h.slot(S_A, img.data.length);
  const dst = h.slot(S_OUT, ow * oh * 4);
  h.bytes.set(img.data, src);
  h.k.downscale_box(src, img.width, img.height, factor, dst);
  return { width: ow, height: oh, data: h.copyBytes(dst, ow * oh * 4) };
}

/**
 * Resamples `src` (already in slot S_A, `stride` bytes per row; the region `r`) to dw × dh into
 * slot `outSlot`, packed. Area averaging when shrinking an axis, bilinear when enlarging it.
 */
export function resampleInWasm(
  h: WasmHeap,
  stride: number,
  r: Rect,
  dw: number,
  dh: number,
  outSlot: number,
): number {
  const xTaps = r.width >= dw ? Math.ceil(r.width / dw) + 1 : 2;
  const yTaps = r.height >= dh ? Math.ceil(r.height / dh) + 1 : 2;
  const xs = h.slot(S_XS, dw * (8 + 4 * xTaps));
  const ys = h.slot(S_YS, dh * (8 + 4 * yTaps));
  const tmp = h.slot(S_TMP, dw * r.height * 16);
  const dst = h.slot(outSlot, dw * dh * 4);
  const src = h.slot(S_A, 0);
  h.k.resize_axis(xs, r.width, dw, xTaps);
  h.k.resize_axis(ys, r.height, dh, yTaps);
  h.k.resize_rgba(
    src + r.y * stride + r.x * 4,
    stride,
    r.width,
    r.height,
    dst,
    dw * 4,
    dw,
    dh,
    xs,
    xTaps,
    ys,
    yTaps,
    tmp,
  );
  return dst;
}

/**
 * Resizes an image (or the `source` region of it) to width × height: exact area averaging on axes
 * that shrink (good for tiles and thumbnails), bilinear on axes that grow.
 */
export function resizeImage(img: RgbaImage, width: number, height: number, source?: Rect): RgbaImage {
  checkImage(img, "resizeImage");
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new Error(`resizeImage: bad target size ${width}×${height}`);
  }
  const r = clipRect(source ?? { x: 0, y: 0, width: img.width, height: img.height }, img.width, img.height);
  if (r.width === 0 || r.height === 0) throw new Error("resizeImage: the source region is empty");
  const h = wasm();
  h.slot(S_A, img.data.length);
  h.slot(S_OUT, width * height * 4);
  h.slot(S_TMP, width * r.height * 16);
  h.bytes.set(img.data, h.slot(S_A, 0));
  const dst = resampleInWasm(h, img.width * 4, r, width, height, S_OUT);
  return { width, height, data: h.copyBytes(dst, width * height * 4) };
}
