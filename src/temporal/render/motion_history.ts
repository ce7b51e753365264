/**
 * The motion-history image: where change happened over one subdued reference frame, stronger where
 * it happened more recently. It shows paths and extent, not direction; the legend maps intensity to
 * relative time.
 */
import { createImage, type Rect, type RgbaImage } from "../../vision/image.ts";
import { type Color, drawLegendBar, strokeRect } from "../../vision/draw.ts";
import type { AccumulatedChange } from "../analysis.ts";
import {
  BAND,
  blockHeight,
  changeBoundsBox,
  headerLines,
  MUTED,
  PAD,
  signedMs,
  SMALL_SCALE,
  textBlock,
  timeArrow,
} from "./layout.ts";
import { place, resize } from "./raster.ts";

const TRAIL: Color = [255, 90, 20];

export interface MotionHistorySpec {
  title: string;
  subtitle: string[];
  warnings: string[];
  reference: RgbaImage;
  change: AccumulatedChange;
  source_width: number;
  source_height: number;
  change_bounds: Rect | null;
  time_labels: { start_ms: number; end_ms: number };
  width: number;
}

/** Opacity of the trail for a change at relative time t: old change faint, recent change strong. */
export function trailAlpha(t: number): number {
  return 0.2 + 0.8 * Math.min(1, Math.max(0, t));
}

export function renderMotionHistory(spec: MotionHistorySpec): RgbaImage {
  const w = spec.width;
  const h = Math.round((spec.source_height / spec.source_width) * w);
  const header = headerLines(spec.title, spec.subtitle, spec.warnings);
  const headerH = PAD + blockHeight(header) + PAD;
  const height = headerH + h + 150;
  const img = createImage(w + 2 * PAD, height, BAND);
  textBlock(img, PAD, PAD, w, header);
  const ref = resize(spec.reference, w, h);
  const { change } = spec;
  const d = ref.data;
  for (let y = 0; y < h; y++) {
    const fy = Math.min(change.height - 1, Math.floor((y * change.height) / h));
    for (let x = 0; x < w; x++) {
      const o = (y * w + x) * 4;
      // Subdue the reference toward mid-gray so the trail reads above any page colours.
      for (let c = 0; c < 3; c++) d[o + c] = 0.35 * d[o + c] + 0.65 * 96;
      const i = fy * change.width + Math.min(change.width - 1, Math.floor((x * change.width) / w));
      const t = change.lastTime[i];
      if (t < 0) continue;
      const a = trailAlpha(t);
      for (let c = 0; c < 3; c++) d[o + c] = (1 - a) * d[o + c] + a * TRAIL[c];
    }
  }
  place(img, ref, PAD, headerH);
  strokeRect(img, { x: PAD - 1, y: headerH - 1, width: w + 2, height: h + 2 }, MUTED, 1);
  if (spec.change_bounds) changeBoundsBox(img, spec.change_bounds, PAD, headerH, w / spec.source_width);
  const ly = headerH + h + 14;
  drawLegendBar(img, { x: PAD, y: ly, width: Math.min(w, 480), height: 14 }, (t) => {
    const a = trailAlpha(t);
    return [(1 - a) * 96 + a * TRAIL[0], (1 - a) * 96 + a * TRAIL[1], (1 - a) * 96 + a * TRAIL[2]];
  });
  textBlock(img, PAD, ly + 20, w, [
    {
      text: `faint = older (${signedMs(spec.time_labels.start_ms)}), strong = recent (${
        signedMs(spec.time_labels.end_ms)
      })`,
      color: MUTED,
      scale: SMALL_SCALE + 1,
    },
    {
      text:
        "Shows where and how recently pixels changed, not direction; see the storyboard or a region filmstrip.",
      color: MUTED,
      scale: SMALL_SCALE + 1,
    },
  ]);
  timeArrow(img, PAD, PAD + Math.min(w, 480), height - 24, "older to recent");
  return img;
}
