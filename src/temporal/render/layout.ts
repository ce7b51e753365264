/**
 * The annotation vocabulary every artifact shares: a title band, labelled tiles, a time-direction
 * arrow, gap marks that are hatched as well as coloured, and legends. Annotations live in their own
 * bands around the pixels, never over page content.
 */
import { type Color, dashedRect, drawArrow, fillRect, hatchRect, strokeRect } from "../../vision/draw.ts";
import { drawText, fitText, lineHeight, measureText } from "../../vision/font.ts";
import type { Rect, RgbaImage } from "../../vision/image.ts";

export const BAND: Color = [24, 24, 28];
export const INK: Color = [240, 240, 240];
export const MUTED: Color = [170, 170, 178];
export const WARN: Color = [255, 196, 0];
export const MARK: Color = [255, 64, 160];
export const TEXT_SCALE = 2;
export const SMALL_SCALE = 1;
export const PAD = 12;
export const LINE = lineHeight(TEXT_SCALE);

export function signedMs(offsetMs: number): string {
  const v = Math.round(offsetMs * 10) / 10;
  return `${v >= 0 ? "+" : "-"}${Math.abs(v).toLocaleString("en-US", { maximumFractionDigits: 1 })} ms`;
}

export function plainMs(valueMs: number): string {
  return `${(Math.round(valueMs * 10) / 10).toLocaleString("en-US", { maximumFractionDigits: 1 })} ms`;
}

/** Writes lines of text into a band of the given width; returns the height used. */
export function textBlock(
  img: RgbaImage,
  x: number,
  y: number,
  width: number,
  lines: Array<{ text: string; color?: Color; scale?: number }>,
): number {
  let cy = y;
  for (const line of lines) {
    const scale = line.scale ?? TEXT_SCALE;
    drawText(img, x, cy, fitText(line.text, width, scale), { scale, color: line.color ?? INK });
    cy += lineHeight(scale) + 4;
  }
  return cy - y;
}

export interface TextLine {
  text?: string;
  color?: Color;
  scale?: number;
}

/** The title band every artifact opens with: title, muted subtitle lines, then warnings marked "!". */
export function headerLines(
  title: string,
  subtitle: string[],
  warnings: string[],
): Array<TextLine & { text: string }> {
  return [
    { text: title },
    ...subtitle.map((text) => ({ text, color: MUTED, scale: SMALL_SCALE + 1 })),
    ...warnings.map((text) => ({ text: `! ${text}`, color: WARN, scale: SMALL_SCALE + 1 })),
  ];
}

export function blockHeight(lines: TextLine[]): number {
  return lines.reduce((h, l) => h + lineHeight(l.scale ?? TEXT_SCALE) + 4, 0);
}

/** The explicit time-direction indicator: an arrow across the width with "time" written on it. */
export function timeArrow(img: RgbaImage, x0: number, x1: number, y: number, label = "time"): void {
  drawArrow(img, x0, y, x1, INK, 3);
  const size = measureText(` ${label} `, TEXT_SCALE);
  drawText(img, (x0 + x1 - size.width) / 2, y - size.height / 2 - 2, ` ${label} `, {
    scale: TEXT_SCALE,
    color: INK,
    background: BAND,
  });
}

/** A gap mark: hatched, outlined and labelled, so it reads without colour. */
export function gapMark(
  img: RgbaImage,
  x: number,
  y: number,
  width: number,
  height: number,
  label: string,
): void {
  fillRect(img, { x, y, width, height }, BAND);
  hatchRect(img, { x, y, width, height }, WARN, 6);
  strokeRect(img, { x, y, width, height }, WARN, 2);
  if (label) {
    const size = measureText(label, SMALL_SCALE);
    if (size.width + 4 <= width) {
      drawText(img, x + (width - size.width) / 2, y + (height - size.height) / 2, label, {
        scale: SMALL_SCALE,
        color: INK,
        background: BAND,
        padding: 2,
      });
    }
  }
}

export const LEGEND_HEIGHT = lineHeight(SMALL_SCALE) + 28;

/** The dashed box marking the bounds of all change, drawn over a panel at (x, y) scaled by `scale`. */
export function changeBoundsBox(img: RgbaImage, bounds: Rect, x: number, y: number, scale: number): void {
  dashedRect(
    img,
    {
      x: x + bounds.x * scale,
      y: y + bounds.y * scale,
      width: Math.max(2, bounds.width * scale),
      height: Math.max(2, bounds.height * scale),
    },
    MARK,
    2,
    6,
  );
}
