/**
 * Where change concentrated: connected clusters of changed cells in the accumulated change field,
 * in source-frame pixels, largest first. Descriptive only; a cluster is not an element.
 */
import type { Rect } from "../vision/image.ts";
import { type AccumulatedChange, CHANGE_CELL } from "./analysis.ts";

export interface ChangeRegion {
  bounds: Rect;
  /** Changed analysis pixels in the cluster, and that as a share of all changed pixels. */
  changed_pixels: number;
  share: number;
  /** Highest change count of any pixel in the cluster. */
  max_count: number;
}

/**
 * Clusters changed pixels on a grid of `cell`-pixel squares (8-connected), so nearby specks of
 * one moving thing join while separate things stay apart.
 */
export function changeRegions(
  change: AccumulatedChange,
  scale: number,
  origin = { x: 0, y: 0 },
  cell = CHANGE_CELL,
) {
  const gw = Math.ceil(change.width / cell);
  const gh = Math.ceil(change.height / cell);
  const pixels = new Uint32Array(gw * gh);
  const peak = new Uint32Array(gw * gh);
  let total = 0;
  for (let y = 0; y < change.height; y++) {
    for (let x = 0; x < change.width; x++) {
      const c = change.count[y * change.width + x];
      if (c === 0) continue;
      const g = Math.floor(y / cell) * gw + Math.floor(x / cell);
      pixels[g]++;
      peak[g] = Math.max(peak[g], c);
      total++;
    }
  }
  const label = new Int32Array(gw * gh).fill(-1);
  const regions: ChangeRegion[] = [];
  for (let start = 0; start < gw * gh; start++) {
    if (pixels[start] === 0 || label[start] >= 0) continue;
    const id = regions.length;
    const stack = [start];
    label[start] = id;
    let [x0, y0, x1, y1, n, max] = [gw, gh, -1, -1, 0, 0];
    while (stack.length > 0) {
      const g = stack.pop() as number;
      const gx = g % gw;
      const gy = (g - gx) / gw;
      [x0, y0, x1, y1] = [Math.min(x0, gx), Math.min(y0, gy), Math.max(x1, gx), Math.max(y1, gy)];
      n += pixels[g];
      max = Math.max(max, peak[g]);
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const nx = gx + dx;
          const ny = gy + dy;
          if (nx < 0 || ny < 0 || nx >= gw || ny >= gh) continue;
          const k = ny * gw + nx;
          if (pixels[k] > 0 && label[k] < 0) {
            label[k] = id;
            stack.push(k);
          }
        }
      }
    }
    const px = cell * scale;
    regions.push({
      bounds: {
        x: origin.x + x0 * px,
        y: origin.y + y0 * px,
        width: (x1 - x0 + 1) * px,
        height: (y1 - y0 + 1) * px,
      },
      changed_pixels: n,
      share: Math.round((n / Math.max(1, total)) * 1e4) / 1e4,
      max_count: max,
    });
  }
  return regions.sort((a, b) =>
    b.changed_pixels - a.changed_pixels || a.bounds.y - b.bounds.y || a.bounds.x - b.bounds.x
  );
}
