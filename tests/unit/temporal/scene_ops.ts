import type { PixelOps } from "../../../src/temporal/analysis.ts";
import { kernelOps } from "../../../src/temporal/pixel_ops.ts";
import { createImage, type Rect } from "../../../src/vision/image.ts";

/** White 64×32 frames with dark rectangles (source pixels); the real difference kernels. */
export function sceneOps(scenes: Map<number, Rect[]>): PixelOps {
  return kernelOps((f, scale) => {
    const w = Math.ceil(f.width / scale);
    const h = Math.ceil(f.height / scale);
    const img = createImage(w, h, [255, 255, 255]);
    for (const r of scenes.get(f.frame_id) ?? []) {
      for (let y = 0; y < h; y++) {
        for (let x = 0; x < w; x++) {
          const [sx, sy] = [x * scale, y * scale];
          if (sx >= r.x && sx < r.x + r.width && sy >= r.y && sy < r.y + r.height) {
            img.data.set([20, 20, 20], (y * w + x) * 4);
          }
        }
      }
    }
    return img;
  });
}
