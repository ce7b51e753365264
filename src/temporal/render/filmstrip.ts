/**
 * The region filmstrip: one region across time at a readable, consistent scale, beside a locator
 * image that shows where the region sits in the whole frame. Each crop carries a margin of context
 * around the region (outlined), and padding beyond the frame edge is hatched, never invented.
 */
import { createImage, type Rect, type RgbaImage } from "../../vision/image.ts";
import { dashedRect, fillRect, hatchRect, strokeRect } from "../../vision/draw.ts";
import {
  BAND,
  blockHeight,
  headerLines,
  MARK,
  MUTED,
  PAD,
  plainMs,
  signedMs,
  SMALL_SCALE,
  textBlock,
  timeArrow,
} from "./layout.ts";
import { crop, place, resize } from "./raster.ts";

export interface FilmstripCrop {
  /** The full decoded source frame (any JPEG scale; `scale` says which). */
  image: RgbaImage;
  frame_id: number;
  session_time_ms: number;
  offset_ms: number;
  labels: string[];
}

export interface FilmstripSpec {
  title: string;
  subtitle: string[];
  warnings: string[];
  locator: RgbaImage;
  /** Region and the context window around it, in source-frame pixels. */
  region: Rect;
  window: Rect;
  source_width: number;
  source_height: number;
  crops: FilmstripCrop[];
  /** Output pixels per source pixel for every crop. */
  crop_scale: number;
  locator_width: number;
}

const GUTTER = 20;

export function renderFilmstrip(spec: FilmstripSpec): RgbaImage {
  const lw = spec.locator_width;
  const lh = Math.round((spec.source_height / spec.source_width) * lw);
  const cw = Math.max(1, Math.round(spec.window.width * spec.crop_scale));
  const ch = Math.max(1, Math.round(spec.window.height * spec.crop_scale));
  const perRow = Math.max(1, Math.min(spec.crops.length, Math.floor(1600 / (cw + GUTTER)) || 1));
  const rows = Math.ceil(spec.crops.length / perRow);
  const header = headerLines(spec.title, spec.subtitle, spec.warnings);
  const headerH = PAD + blockHeight(header) + PAD;
  const labelH = blockHeight([{}, { scale: SMALL_SCALE + 1 }]);
  const cellH = labelH + ch + PAD;
  const stripX = PAD + lw + GUTTER * 2;
  const width = stripX + perRow * (cw + GUTTER) + PAD;
  const height = headerH + Math.max(labelH + lh + 60, rows * cellH) + 56;
  const img = createImage(width, height, BAND);
  textBlock(img, PAD, PAD, width - 2 * PAD, header);

  // Locator: the whole frame with the region outlined solid and its context window dashed.
  textBlock(img, PAD, headerH, lw, [{ text: "REGION IN CONTEXT" }, {
    text: `#${spec.crops[0]?.frame_id ?? "-"}`,
    color: MUTED,
    scale: SMALL_SCALE + 1,
  }]);
  place(img, resize(spec.locator, lw, lh), PAD, headerH + labelH);
  const ls = lw / spec.source_width;
  const toLocator = (r: Rect): Rect => ({
    x: PAD + r.x * ls,
    y: headerH + labelH + r.y * ls,
    width: Math.max(3, r.width * ls),
    height: Math.max(3, r.height * ls),
  });
  dashedRect(img, toLocator(spec.window), MUTED, 2, 5);
  strokeRect(img, toLocator(spec.region), MARK, 3);

  spec.crops.forEach((c, i) => {
    const x = stripX + (i % perRow) * (cw + GUTTER);
    const y = headerH + Math.floor(i / perRow) * cellH;
    textBlock(img, x, y, cw, [
      { text: `${i + 1} ${c.labels.join(" / ") || signedMs(c.offset_ms)}` },
      {
        text: `${signedMs(c.offset_ms)} t=${plainMs(c.session_time_ms)} #${c.frame_id}`,
        color: MUTED,
        scale: SMALL_SCALE + 1,
      },
    ]);
    const k = c.image.width / spec.source_width;
    const win = spec.window;
    const piece = crop(
      c.image,
      { x: win.x * k, y: win.y * k, width: win.width * k, height: win.height * k },
      [0, 0, 0],
    );
    const scaled = resize(piece, cw, ch);
    place(img, scaled, x, y + labelH);
    // Hatch what lies beyond the frame so padding cannot pass for page content.
    const outside: Rect[] = [];
    if (win.x < 0) outside.push({ x: 0, y: 0, width: -win.x, height: win.height });
    if (win.y < 0) outside.push({ x: 0, y: 0, width: win.width, height: -win.y });
    const right = win.x + win.width - spec.source_width;
    if (right > 0) outside.push({ x: win.width - right, y: 0, width: right, height: win.height });
    const bottom = win.y + win.height - spec.source_height;
    if (bottom > 0) outside.push({ x: 0, y: win.height - bottom, width: win.width, height: bottom });
    for (const o of outside) {
      const r = {
        x: x + o.x * spec.crop_scale,
        y: y + labelH + o.y * spec.crop_scale,
        width: o.width * spec.crop_scale,
        height: o.height * spec.crop_scale,
      };
      fillRect(img, r, BAND);
      hatchRect(img, r, MUTED, 8);
    }
    strokeRect(
      img,
      {
        x: x + (spec.region.x - win.x) * spec.crop_scale,
        y: y + labelH + (spec.region.y - win.y) * spec.crop_scale,
        width: spec.region.width * spec.crop_scale,
        height: spec.region.height * spec.crop_scale,
      },
      MARK,
      2,
    );
  });
  timeArrow(img, stripX, width - PAD, height - 28, "time");
  return img;
}

/** The context window around a region: a margin of a quarter of its size (at least 24 px) on each side. */
export function contextWindow(region: Rect): Rect {
  const mx = Math.max(24, Math.round(region.width / 4));
  const my = Math.max(24, Math.round(region.height / 4));
  return { x: region.x - mx, y: region.y - my, width: region.width + 2 * mx, height: region.height + 2 * my };
}

/** Crop scale so the window fits a readable box: enlarge small regions (≤ 3×), shrink large ones. */
export function cropScale(window: Rect, maxWidth = 360, maxHeight = 280): number {
  return Math.min(3, maxWidth / window.width, maxHeight / window.height);
}
