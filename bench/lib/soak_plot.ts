/**
 * The soak benchmark's picture: instance disk usage against the share (top panel) and process RSS
 * (bottom panel) over the run, drawn with the product's own PNG encoder and vector/text drawing, so
 * the bench needs nothing outside the repository.
 */
import { type Color, drawLine, fillRect, strokeRect } from "../../src/vision/draw.ts";
import { drawText, measureText } from "../../src/vision/font.ts";
import { createImage, type Rect, type RgbaImage } from "../../src/vision/image.ts";
import { encodePng } from "../../src/vision/png.ts";

export interface Series {
  label: string;
  color: Color;
  /** [seconds, value] in the panel's unit; a NaN value breaks the line there. */
  points: Array<[number, number]>;
  dashed?: boolean;
}

export interface Panel {
  title: string;
  unit: string;
  series: Series[];
}

const WIDTH = 1100;
const PANEL_HEIGHT = 300;
const MARGIN = { left: 90, right: 30, top: 50, bottom: 40 };
const INK: Color = [40, 44, 52];
const GRID: Color = [225, 229, 234];
const SCALE = 2;

/** 1, 2 or 5 times a power of ten, the smallest that gives at most `ticks` steps over `span`. */
function niceStep(span: number, ticks: number): number {
  const raw = span / Math.max(1, ticks);
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

const label = (v: number, step: number) => step >= 1 ? String(Math.round(v)) : v.toFixed(1);

function dashedLine(img: RgbaImage, x0: number, y0: number, x1: number, y1: number, c: Color): void {
  const len = Math.hypot(x1 - x0, y1 - y0);
  const dash = 8;
  for (let s = 0; s < len; s += 2 * dash) {
    const a = s / len;
    const b = Math.min(1, (s + dash) / len);
    drawLine(img, x0 + (x1 - x0) * a, y0 + (y1 - y0) * a, x0 + (x1 - x0) * b, y0 + (y1 - y0) * b, c, 2);
  }
}

function drawPanel(img: RgbaImage, area: Rect, panel: Panel, tMax: number): void {
  const values = panel.series.flatMap((s) => s.points.map((p) => p[1])).filter(Number.isFinite);
  const vMax = Math.max(1, ...values) * 1.08;
  const plot: Rect = {
    x: area.x + MARGIN.left,
    y: area.y + MARGIN.top,
    width: area.width - MARGIN.left - MARGIN.right,
    height: area.height - MARGIN.top - MARGIN.bottom,
  };
  const px = (t: number) => plot.x + (t / tMax) * plot.width;
  const py = (v: number) => plot.y + plot.height - (v / vMax) * plot.height;

  drawText(img, area.x + 10, area.y + 10, `${panel.title} (${panel.unit})`, { scale: SCALE, color: INK });
  const yStep = niceStep(vMax, 5);
  for (let v = 0; v <= vMax; v += yStep) {
    drawLine(img, plot.x, py(v), plot.x + plot.width, py(v), GRID, 1);
    const text = label(v, yStep);
    const w = measureText(text, SCALE).width;
    drawText(img, plot.x - w - 8, py(v) - 10, text, { scale: SCALE, color: INK });
  }
  const tStep = niceStep(tMax, 10);
  for (let t = 0; t <= tMax; t += tStep) {
    drawLine(img, px(t), plot.y + plot.height, px(t), plot.y + plot.height + 5, INK, 1);
    const text = String(Math.round(t));
    const w = measureText(text, SCALE).width;
    drawText(img, px(t) - w / 2, plot.y + plot.height + 9, text, { scale: SCALE, color: INK });
  }
  strokeRect(img, plot, INK, 1);

  for (const s of panel.series) {
    for (let i = 1; i < s.points.length; i++) {
      const [t0, v0] = s.points[i - 1];
      const [t1, v1] = s.points[i];
      if (!Number.isFinite(v0) || !Number.isFinite(v1)) continue;
      if (s.dashed) dashedLine(img, px(t0), py(v0), px(t1), py(v1), s.color);
      else drawLine(img, px(t0), py(v0), px(t1), py(v1), s.color, 3);
    }
    if (s.points.length === 1 && Number.isFinite(s.points[0][1])) {
      fillRect(img, { x: px(s.points[0][0]) - 3, y: py(s.points[0][1]) - 3, width: 7, height: 7 }, s.color);
    }
  }

  // Legend along the top edge, right of the title.
  let lx = area.x + 20 + measureText(`${panel.title} (${panel.unit})`, SCALE).width + 40;
  for (const s of panel.series) {
    fillRect(img, { x: lx, y: area.y + 16, width: 24, height: 6 }, s.color);
    drawText(img, lx + 30, area.y + 10, s.label, { scale: SCALE, color: INK });
    lx += 30 + measureText(s.label, SCALE).width + 30;
  }
}

/** Draws the panels stacked, sharing a time axis in seconds, and returns PNG bytes. */
export function plotSoak(panels: Panel[], tMaxSeconds: number, footer: string): Uint8Array {
  const height = panels.length * PANEL_HEIGHT + 40;
  const img = createImage(WIDTH, height, [255, 255, 255]);
  const tMax = Math.max(1, tMaxSeconds);
  panels.forEach((p, i) =>
    drawPanel(img, { x: 0, y: i * PANEL_HEIGHT, width: WIDTH, height: PANEL_HEIGHT }, p, tMax)
  );
  drawText(img, 10, height - 30, footer, { scale: SCALE, color: INK });
  return encodePng(img);
}
