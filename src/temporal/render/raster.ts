/**
 * Placing decoded frames into artifact canvases, through the WASM composition kernels.
 */
import { blit } from "../../vision/compose.ts";
import { createImage, type RgbaImage } from "../../vision/image.ts";
import { resizeImage } from "../../vision/resample.ts";

/** Area-average resize (bilinear when enlarging); never changes aspect by itself. */
export function resize(src: RgbaImage, width: number, height: number): RgbaImage {
  const w = Math.max(1, Math.round(width));
  const h = Math.max(1, Math.round(height));
  if (w === src.width && h === src.height) return src;
  return resizeImage(src, w, h);
}

/** Copies src into dst with its top-left at (dx, dy), clipped to dst. */
export function place(dst: RgbaImage, src: RgbaImage, dx: number, dy: number): void {
  blit(dst, src, dx, dy);
}

/** A sub-rectangle copy; parts outside the source stay as the given padding colour. */
export function crop(
  src: RgbaImage,
  rect: { x: number; y: number; width: number; height: number },
  pad: readonly [number, number, number],
): RgbaImage {
  const out = createImage(Math.max(1, Math.round(rect.width)), Math.max(1, Math.round(rect.height)), pad);
  place(out, src, -Math.round(rect.x), -Math.round(rect.y));
  return out;
}
