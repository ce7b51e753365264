/**
 * Composition onto an RgbaImage: copying (optionally scaled) regions and blending colours or images
 * over it. Each function mutates its destination.
 */
import type { Rect, RgbaImage } from "./image.ts";
import { resampleInWasm } from "./resample.ts";
import { checkImage, clipRect, S_A, S_OUT, S_TMP, wasm, type WasmHeap } from "./wasm_heap.ts";

export interface BlitOptions {
  /** Region of the source to copy; default the whole source. */
  source?: Rect;
  /** Target size on the destination; default the source region's size (no scaling). */
  width?: number;
  height?: number;
}

/**
 * Copies `src` (or its `source` region) into `dst` at (dx, dy), scaled to width × height when given
 * (area average when shrinking, bilinear when enlarging), clipped to `dst`. Mutates `dst`.
 * Unscaled copies are row memcpys on the JS side: routing them through WASM memory would only add
 * two copies.
 */
export function blit(
  dst: RgbaImage,
  src: RgbaImage,
  dx: number,
  dy: number,
  options: BlitOptions = {},
): void {
  checkImage(dst, "blit");
  checkImage(src, "blit");
  const r = clipRect(
    options.source ?? { x: 0, y: 0, width: src.width, height: src.height },
    src.width,
    src.height,
  );
  const tw = Math.round(options.width ?? r.width);
  const th = Math.round(options.height ?? r.height);
  dx = Math.round(dx);
  dy = Math.round(dy);
  if (r.width === 0 || r.height === 0 || tw < 1 || th < 1) return;
  // The part of the target rectangle that lands on dst.
  const x0 = Math.max(0, dx);
  const y0 = Math.max(0, dy);
  const x1 = Math.min(dst.width, dx + tw);
  const y1 = Math.min(dst.height, dy + th);
  if (x1 <= x0 || y1 <= y0) return;
  let rows: Uint8Array;
  let rowsStride: number;
  let base: number;
  if (tw === r.width && th === r.height) {
    rows = src.data;
    rowsStride = src.width * 4;
    base = r.y * rowsStride + r.x * 4;
  } else {
    const h = wasm();
    h.slot(S_A, src.data.length);
    h.slot(S_OUT, tw * th * 4);
    h.slot(S_TMP, tw * r.height * 16);
    h.bytes.set(src.data, h.slot(S_A, 0));
    base = resampleInWasm(h, src.width * 4, r, tw, th, S_OUT);
    rows = h.bytes;
    rowsStride = tw * 4;
  }
  const bytes = (x1 - x0) * 4;
  for (let y = y0; y < y1; y++) {
    const from = base + (y - dy) * rowsStride + (x0 - dx) * 4;
    dst.data.set(rows.subarray(from, from + bytes), (y * dst.width + x0) * 4);
  }
}

/** Copies a clipped dst region into a WASM slot (packed), runs `kernel` on it and copies it back. */
function editRegion(dst: RgbaImage, r: Rect, kernel: (h: WasmHeap, ptr: number) => void): void {
  const h = wasm();
  const ptr = h.slot(S_OUT, r.width * r.height * 4);
  const into = h.bytes;
  for (let y = 0; y < r.height; y++) {
    const from = ((r.y + y) * dst.width + r.x) * 4;
    into.set(dst.data.subarray(from, from + r.width * 4), ptr + y * r.width * 4);
  }
  kernel(h, ptr);
  const bytes = h.bytes;
  for (let y = 0; y < r.height; y++) {
    const at = ptr + y * r.width * 4;
    dst.data.set(bytes.subarray(at, at + r.width * 4), ((r.y + y) * dst.width + r.x) * 4);
  }
}

const opacity256 = (opacity: number) => Math.round(Math.max(0, Math.min(1, opacity)) * 256);

/**
 * Blends a solid colour over `rect` of `dst` (clipped) with `opacity` 0–1, e.g. to subdue a reference
 * frame or tint a region. Mutates `dst`.
 */
export function blendColor(
  dst: RgbaImage,
  rect: Rect,
  rgb: readonly [number, number, number],
  opacity: number,
): void {
  checkImage(dst, "blendColor");
  const r = clipRect(rect, dst.width, dst.height);
  if (r.width === 0 || r.height === 0) return;
  const packed = (rgb[0] & 255) | ((rgb[1] & 255) << 8) | ((rgb[2] & 255) << 16);
  editRegion(
    dst,
    r,
    (h, ptr) => h.k.blend_solid(ptr, r.width * 4, r.width, r.height, packed, opacity256(opacity)),
  );
}

/**
 * Blends `overlay` over `dst` at (dx, dy), clipped, each pixel weighted by its alpha × `opacity` (0–1),
 * e.g. a tinted heatmap over a subdued frame. Mutates `dst`.
 */
export function blendImage(
  dst: RgbaImage,
  overlay: RgbaImage,
  dx: number,
  dy: number,
  opacity: number,
): void {
  checkImage(dst, "blendImage");
  checkImage(overlay, "blendImage");
  dx = Math.round(dx);
  dy = Math.round(dy);
  const r = clipRect({ x: dx, y: dy, width: overlay.width, height: overlay.height }, dst.width, dst.height);
  if (r.width === 0 || r.height === 0) return;
  const h = wasm();
  const src = h.slot(S_A, r.width * r.height * 4);
  editRegion(dst, r, (hh, ptr) => {
    const bytes = hh.bytes;
    for (let y = 0; y < r.height; y++) {
      const from = ((r.y - dy + y) * overlay.width + (r.x - dx)) * 4;
      bytes.set(overlay.data.subarray(from, from + r.width * 4), src + y * r.width * 4);
    }
    hh.k.blend_image(ptr, r.width * 4, src, r.width * 4, r.width, r.height, opacity256(opacity));
  });
}
