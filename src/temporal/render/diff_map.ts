/**
 * The three-panel temporal difference map: the reference frame for place, how often each pixel
 * changed (brightness = count), and when it changed (time palette, hatched where changes were spread
 * across widely separated moments so no single time is falsely precise).
 */
import { createImage, type Rect, type RgbaImage } from "../../vision/image.ts";
import { drawLegendBar, grayRamp, strokeRect, timePalette } from "../../vision/draw.ts";
import { drawText, measureText } from "../../vision/font.ts";
import type { AccumulatedChange } from "../analysis.ts";
import {
  BAND,
  blockHeight,
  changeBoundsBox,
  headerLines,
  MARK,
  MUTED,
  PAD,
  signedMs,
  SMALL_SCALE,
  textBlock,
  timeArrow,
} from "./layout.ts";
import { place, resize } from "./raster.ts";

/** Spread of change times (std dev of t in [0, 1]) above which a pixel is marked as repeated. */
export const REPEATED_SPREAD = 0.2;

export interface DiffMapSpec {
  title: string;
  subtitle: string[];
  warnings: string[];
  reference: RgbaImage;
  reference_label: string;
  change: AccumulatedChange;
  /** Source-frame size, to place change bounds. */
  source_width: number;
  source_height: number;
  change_bounds: Rect | null;
  time_labels: { start_ms: number; mid_ms: number; end_ms: number };
  panel_width: number;
}

function fieldPanel(
  change: AccumulatedChange,
  width: number,
  height: number,
  paint: (i: number) => readonly [number, number, number] | undefined,
  hatch: (i: number) => boolean,
): RgbaImage {
  const out = createImage(width, height, [0, 0, 0]);
  for (let y = 0; y < height; y++) {
    const fy = Math.min(change.height - 1, Math.floor((y * change.height) / height));
    for (let x = 0; x < width; x++) {
      const fx = Math.min(change.width - 1, Math.floor((x * change.width) / width));
      const i = fy * change.width + fx;
      const c = paint(i);
      if (!c) continue;
      const o = (y * width + x) * 4;
      // A diagonal white stripe every 6 px over hatched pixels.
      const stripe = hatch(i) && ((x + y) % 6) < 2;
      out.data[o] = stripe ? 255 : c[0];
      out.data[o + 1] = stripe ? 255 : c[1];
      out.data[o + 2] = stripe ? 255 : c[2];
    }
  }
  return out;
}

export function renderDiffMap(spec: DiffMapSpec): RgbaImage {
  const pw = spec.panel_width;
  const ph = Math.round((spec.source_height / spec.source_width) * pw);
  const { change } = spec;
  let maxCount = 0;
  for (let i = 0; i < change.count.length; i++) maxCount = Math.max(maxCount, change.count[i]);
  const header = headerLines(spec.title, spec.subtitle, spec.warnings);
  const headerH = PAD + blockHeight(header) + PAD;
  const captionH = blockHeight([{}]);
  const legendH = 110;
  const gutter = 24;
  const width = PAD * 2 + pw * 3 + gutter * 2;
  const height = headerH + captionH + ph + legendH + 56;
  const img = createImage(width, height, BAND);
  textBlock(img, PAD, PAD, width - 2 * PAD, header);
  const top = headerH + captionH;
  const xs = [PAD, PAD + pw + gutter, PAD + 2 * (pw + gutter)];
  const captions = ["1 REFERENCE", "2 CHANGE FREQUENCY", "3 CHANGE TIMING"];
  captions.forEach((c, k) => textBlock(img, xs[k], headerH, pw, [{ text: c }]));

  place(img, resize(spec.reference, pw, ph), xs[0], top);
  const freq = fieldPanel(
    change,
    pw,
    ph,
    (i) =>
      change.count[i] > 0 ? grayRamp(0.25 + 0.75 * (change.count[i] / Math.max(1, maxCount))) : undefined,
    () => false,
  );
  place(img, freq, xs[1], top);
  const timing = fieldPanel(
    change,
    pw,
    ph,
    (i) =>
      change.count[i] > 0
        ? timePalette(Number.isNaN(change.meanTime[i]) ? 0 : change.meanTime[i])
        : undefined,
    (i) => change.count[i] > 1 && change.spread[i] > REPEATED_SPREAD,
  );
  place(img, timing, xs[2], top);
  for (const x of xs) strokeRect(img, { x: x - 1, y: top - 1, width: pw + 2, height: ph + 2 }, MUTED, 1);
  const bounds = spec.change_bounds;
  if (bounds) { for (const x of xs) changeBoundsBox(img, bounds, x, top, pw / spec.source_width); }

  const ly = top + ph + 12;
  textBlock(img, xs[0], ly, pw, [
    { text: spec.reference_label, color: MUTED, scale: SMALL_SCALE + 1 },
    { text: "dashed box = bounds of all change", color: MARK, scale: SMALL_SCALE + 1 },
  ]);
  drawLegendBar(
    img,
    { x: xs[1], y: ly, width: pw, height: 14 },
    (t) => t === 0 ? [0, 0, 0] : grayRamp(0.25 + 0.75 * t),
  );
  legendEnds(img, xs[1], ly + 18, pw, "no change", `changed ${maxCount}x (count)`);
  drawLegendBar(img, { x: xs[2], y: ly, width: pw, height: 14 }, timePalette);
  const { start_ms, mid_ms, end_ms } = spec.time_labels;
  legendEnds(img, xs[2], ly + 18, pw, signedMs(start_ms), signedMs(end_ms));
  const mid = signedMs(mid_ms);
  drawText(img, xs[2] + (pw - measureText(mid, SMALL_SCALE + 1).width) / 2, ly + 18, mid, {
    scale: SMALL_SCALE + 1,
    color: MUTED,
  });
  legendEnds(img, xs[2], ly + 40, pw, "early", "late");
  textBlock(img, xs[2], ly + 62, pw, [{
    text: "white hatching = changed at separate times",
    color: MUTED,
    scale: SMALL_SCALE + 1,
  }]);
  timeArrow(img, xs[2], xs[2] + pw, height - 28, "early to late");
  return img;
}

function legendEnds(img: RgbaImage, x: number, y: number, width: number, left: string, right: string): void {
  drawText(img, x, y, left, { scale: SMALL_SCALE + 1, color: MUTED });
  const w = measureText(right, SMALL_SCALE + 1).width;
  drawText(img, x + width - w, y, right, { scale: SMALL_SCALE + 1, color: MUTED });
}
