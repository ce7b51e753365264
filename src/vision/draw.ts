/**
 * Vector drawing onto RGBA images for the temporal artifacts (boxes, gap hatching, time arrows, legends).
 * Every function clips at the image edges and ignores non-finite input, so layout code can draw with
 * computed coordinates without bounds checks. Coordinates are rounded to whole pixels.
 */
import type { Rect, RgbaImage } from "./image.ts";

/** An sRGB colour, each channel 0–255. Readonly so palette constants can be shared safely. */
export type Color = readonly [number, number, number];

const EMPTY: Rect = { x: 0, y: 0, width: 0, height: 0 };

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

function channel(v: number): number {
  return Number.isFinite(v) ? clamp(Math.round(v), 0, 255) : 0;
}

/** Rounds a rect to whole pixels by its edges; undefined when any field is non-finite. */
function roundRect(rect: Rect): Rect | undefined {
  const { x, y, width, height } = rect;
  if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(width) || !Number.isFinite(height)) {
    return undefined;
  }
  const x0 = Math.round(x);
  const y0 = Math.round(y);
  return { x: x0, y: y0, width: Math.round(x + width) - x0, height: Math.round(y + height) - y0 };
}

/** The part of `rect` inside the image (whole pixels); zero-sized, never negative, when none is. */
export function clipRect(img: RgbaImage, rect: Rect): Rect {
  const r = roundRect(rect);
  if (!r) return EMPTY;
  const x0 = clamp(r.x, 0, img.width);
  const y0 = clamp(r.y, 0, img.height);
  const x1 = clamp(r.x + r.width, 0, img.width);
  const y1 = clamp(r.y + r.height, 0, img.height);
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/**
 * Fills `rect` with `color`. With 0 < alpha < 1 the colour is composited over the existing pixel
 * (source-over, so a translucent canvas stays correct); alpha ≤ 0 draws nothing.
 */
export function fillRect(img: RgbaImage, rect: Rect, color: Color, alpha = 1): void {
  const a = Number.isFinite(alpha) ? clamp(alpha, 0, 1) : 1;
  if (a <= 0) return;
  const c = clipRect(img, rect);
  if (c.width === 0 || c.height === 0) return;
  const r = channel(color[0]);
  const g = channel(color[1]);
  const b = channel(color[2]);
  const { data, width } = img;
  for (let py = c.y; py < c.y + c.height; py++) {
    let i = (py * width + c.x) * 4;
    for (let px = 0; px < c.width; px++, i += 4) {
      if (a >= 1) {
        data[i] = r;
        data[i + 1] = g;
        data[i + 2] = b;
        data[i + 3] = 255;
        continue;
      }
      const da = data[i + 3] / 255;
      const keep = da * (1 - a);
      const oa = a + keep;
      data[i] = Math.round((r * a + data[i] * keep) / oa);
      data[i + 1] = Math.round((g * a + data[i + 1] * keep) / oa);
      data[i + 2] = Math.round((b * a + data[i + 2] * keep) / oa);
      data[i + 3] = Math.round(oa * 255);
    }
  }
}

function lineWidth(thickness: number): number {
  return Number.isFinite(thickness) ? Math.max(1, Math.round(thickness)) : 1;
}

/** An outline drawn inside `rect`, so the rect's outer bounds stay exact. */
export function strokeRect(img: RgbaImage, rect: Rect, color: Color, thickness = 1): void {
  const r = roundRect(rect);
  if (!r || r.width <= 0 || r.height <= 0) return;
  const t = Math.min(lineWidth(thickness), r.width, r.height);
  fillRect(img, { x: r.x, y: r.y, width: r.width, height: t }, color);
  fillRect(img, { x: r.x, y: r.y + r.height - t, width: r.width, height: t }, color);
  fillRect(img, { x: r.x, y: r.y, width: t, height: r.height }, color);
  fillRect(img, { x: r.x + r.width - t, y: r.y, width: t, height: r.height }, color);
}

/**
 * Like strokeRect but dash-on / dash-off along each side, every side starting with a dash at its corner
 * so corners always show. Only dashes that can reach the image are visited, so huge rects are cheap.
 */
export function dashedRect(img: RgbaImage, rect: Rect, color: Color, thickness = 1, dash = 4): void {
  const r = roundRect(rect);
  if (!r || r.width <= 0 || r.height <= 0) return;
  const t = Math.min(lineWidth(thickness), r.width, r.height);
  const d = lineWidth(dash);
  const period = 2 * d;
  const firstDash = (origin: number) => Math.max(0, Math.floor(-origin / period) * period);
  const xEnd = Math.min(r.width, img.width - r.x);
  for (let i = firstDash(r.x); i < xEnd; i += period) {
    const w = Math.min(d, r.width - i);
    fillRect(img, { x: r.x + i, y: r.y, width: w, height: t }, color);
    fillRect(img, { x: r.x + i, y: r.y + r.height - t, width: w, height: t }, color);
  }
  const yEnd = Math.min(r.height, img.height - r.y);
  for (let i = firstDash(r.y); i < yEnd; i += period) {
    const h = Math.min(d, r.height - i);
    fillRect(img, { x: r.x, y: r.y + i, width: t, height: h }, color);
    fillRect(img, { x: r.x + r.width - t, y: r.y + i, width: t, height: h }, color);
  }
}

/**
 * Diagonal "/" stripes, `spacing` pixels apart (measured along a row), each half a period wide. Marks
 * capture gaps so that colour is never the only signal. The phase is relative to the rect's corner, so
 * the same rect always hatches the same way.
 */
export function hatchRect(img: RgbaImage, rect: Rect, color: Color, spacing = 6): void {
  const r = roundRect(rect);
  if (!r) return;
  const c = clipRect(img, r);
  const period = Math.max(2, lineWidth(spacing));
  const stripe = Math.max(1, Math.floor(period / 2));
  const rgb = [channel(color[0]), channel(color[1]), channel(color[2])];
  for (let py = c.y; py < c.y + c.height; py++) {
    for (let px = c.x; px < c.x + c.width; px++) {
      if ((px - r.x + (py - r.y)) % period >= stripe) continue;
      const i = (py * img.width + px) * 4;
      img.data.set(rgb, i);
      img.data[i + 3] = 255;
    }
  }
}

/**
 * Liang–Barsky: the part of the segment inside [lo, hiX]×[lo, hiY], as parameters t0 ≤ t1 on 0..1;
 * undefined when the segment misses the box. Keeps Bresenham from walking a billion off-image pixels.
 */
function clipSegment(
  x0: number,
  y0: number,
  dx: number,
  dy: number,
  lo: number,
  hiX: number,
  hiY: number,
): [number, number] | undefined {
  let t0 = 0;
  let t1 = 1;
  const edges: [number, number][] = [[-dx, x0 - lo], [dx, hiX - x0], [-dy, y0 - lo], [dy, hiY - y0]];
  for (const [p, q] of edges) {
    if (p === 0) {
      if (q < 0) return undefined;
      continue;
    }
    const t = q / p;
    if (p < 0) t0 = Math.max(t0, t);
    else t1 = Math.min(t1, t);
    if (t0 > t1) return undefined;
  }
  return [t0, t1];
}

/**
 * A straight line (Bresenham). Thickness spreads across the minor axis: a mostly horizontal line gets
 * vertical spans of `thickness` pixels, so horizontal and vertical lines are exactly that thick.
 */
export function drawLine(
  img: RgbaImage,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  color: Color,
  thickness = 1,
): void {
  if (![x0, y0, x1, y1].every(Number.isFinite)) return;
  const t = Math.min(lineWidth(thickness), Math.max(img.width, img.height) + 1);
  const margin = t + 1;
  const seg = clipSegment(x0, y0, x1 - x0, y1 - y0, -margin, img.width + margin, img.height + margin);
  if (!seg) return;
  let ax = Math.round(x0 + (x1 - x0) * seg[0]);
  let ay = Math.round(y0 + (y1 - y0) * seg[0]);
  const bx = Math.round(x0 + (x1 - x0) * seg[1]);
  const by = Math.round(y0 + (y1 - y0) * seg[1]);
  const dx = Math.abs(bx - ax);
  const dy = -Math.abs(by - ay);
  const sx = ax < bx ? 1 : -1;
  const sy = ay < by ? 1 : -1;
  const horizontal = dx >= -dy;
  const offset = Math.floor((t - 1) / 2);
  let err = dx + dy;
  for (;;) {
    if (horizontal) fillRect(img, { x: ax, y: ay - offset, width: 1, height: t }, color);
    else fillRect(img, { x: ax - offset, y: ay, width: t, height: 1 }, color);
    if (ax === bx && ay === by) break;
    const e2 = 2 * err;
    if (e2 >= dy) {
      err += dy;
      ax += sx;
    }
    if (e2 <= dx) {
      err += dx;
      ay += sy;
    }
  }
}

/**
 * A horizontal time-direction arrow from x0 to x1 (either way) at row y, with a filled triangular head
 * whose tip is at x1. The head shrinks to fit a short arrow.
 */
export function drawArrow(
  img: RgbaImage,
  x0: number,
  y: number,
  x1: number,
  color: Color,
  thickness = 1,
): void {
  if (![x0, y, x1].every(Number.isFinite)) return;
  const t = Math.min(lineWidth(thickness), Math.max(img.width, img.height) + 1);
  const from = Math.round(x0);
  const to = Math.round(x1);
  const dir = to >= from ? 1 : -1;
  const length = Math.abs(to - from);
  const spread = Math.max(4, 3 * t); // how far the head's barbs reach beyond the shaft
  const headLength = Math.min(length, Math.round(spread * 1.6));
  const top = Math.round(y) - Math.floor((t - 1) / 2);
  const shaftEnd = to - dir * headLength;
  fillRect(
    img,
    { x: Math.min(from, shaftEnd), y: top, width: Math.abs(shaftEnd - from) + 1, height: t },
    color,
  );
  for (let i = 0; i < headLength; i++) {
    const px = to - dir * i;
    if (px < 0 || px >= img.width) continue;
    const reach = headLength <= 1 ? 0 : Math.round((spread * i) / (headLength - 1));
    fillRect(img, { x: px, y: top - reach, width: 1, height: t + 2 * reach }, color);
  }
}

/** A left-to-right gradient: column i of n gets palette(i / (n - 1)), so both ends are exact. */
export function drawLegendBar(img: RgbaImage, rect: Rect, palette: (t: number) => Color): void {
  const r = roundRect(rect);
  if (!r) return;
  const c = clipRect(img, r);
  for (let px = c.x; px < c.x + c.width; px++) {
    const t = r.width > 1 ? (px - r.x) / (r.width - 1) : 0;
    fillRect(img, { x: px, y: c.y, width: 1, height: c.height }, palette(t));
  }
}

function unit(t: number): number {
  return Number.isFinite(t) ? clamp(t, 0, 1) : 0;
}

/** Black (t = 0) to white (t = 1). Values outside 0..1 clamp; NaN reads as 0. */
export function grayRamp(t: number): [number, number, number] {
  const v = Math.round(unit(t) * 255);
  return [v, v, v];
}

/**
 * Early (t = 0) to late (t = 1): deep violet → blue → teal → green → yellow. Our own control points,
 * chosen so luma rises by roughly equal steps: the order survives grayscale and red–green colour
 * blindness, because it runs along the blue–yellow axis and brightness alone already orders it.
 */
const TIME_STOPS: readonly Color[] = [
  [62, 14, 92],
  [66, 64, 148],
  [36, 134, 150],
  [60, 188, 118],
  [150, 215, 64],
  [250, 232, 50],
];

export function timePalette(t: number): [number, number, number] {
  const pos = unit(t) * (TIME_STOPS.length - 1);
  const i = Math.min(Math.floor(pos), TIME_STOPS.length - 2);
  const f = pos - i;
  const a = TIME_STOPS[i];
  const b = TIME_STOPS[i + 1];
  return [
    Math.round(a[0] + (b[0] - a[0]) * f),
    Math.round(a[1] + (b[1] - a[1]) * f),
    Math.round(a[2] + (b[2] - a[2]) * f),
  ];
}
