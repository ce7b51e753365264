import { analyzeEpoch, type PixelOps } from "../../../src/temporal/analysis.ts";
import { splitEpochs } from "../../../src/temporal/frames.ts";
import { kernelOps } from "../../../src/temporal/pixel_ops.ts";
import { createImage, type Rect } from "../../../src/vision/image.ts";
import { frameRow, MS } from "./frame_rows.ts";

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

/** An 8×8 square at xs[i] in frame i (100 ms apart; null: no square), analyzed around the anchor. */
export function squareAnalysis(xs: Array<number | null>, anchorMs: number, fromAnchor = false) {
  const frames = xs.map((_, i) => frameRow(i + 1, i * 100));
  const scenes = new Map(frames.map((f, i) => {
    const x = xs[i];
    return [f.frame_id, x === null ? [] : [{ x, y: 12, width: 8, height: 8 }]];
  }));
  const [epoch] = splitEpochs(frames);
  return analyzeEpoch({
    epoch,
    start_ns: epoch.start_ns,
    end_ns: epoch.end_ns,
    anchor_ns: anchorMs * MS,
    gaps: [],
    measure_from_anchor: fromAnchor,
  }, sceneOps(scenes));
}
