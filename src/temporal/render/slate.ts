/** The full-frame slate a video shows for a capture gap: hatched, outlined and labelled in large text. */
import { fillRect, hatchRect, strokeRect } from "../../vision/draw.ts";
import { drawText, fitText, lineHeight, measureText } from "../../vision/font.ts";
import { createImage, type RgbaImage } from "../../vision/image.ts";
import { BAND, INK, WARN } from "./layout.ts";

export function renderSlate(width: number, height: number, lines: string[]): RgbaImage {
  const img = createImage(width, height, BAND);
  hatchRect(img, { x: 0, y: 0, width, height }, [70, 60, 20], 24);
  const border = Math.max(4, Math.round(Math.min(width, height) / 80));
  strokeRect(img, { x: 0, y: 0, width, height }, WARN, border);
  const scale = Math.max(2, Math.floor(Math.min(width / 420, height / 200)));
  const gap = Math.round(lineHeight(scale) * 0.4);
  const total = lines.length * lineHeight(scale) + (lines.length - 1) * gap;
  let y = Math.round((height - total) / 2);
  lines.forEach((line, i) => {
    const s = i === 0 ? scale + 1 : scale;
    const text = fitText(line, width - 4 * border, s);
    const w = measureText(text, s).width;
    const x = Math.round((width - w) / 2);
    fillRect(img, { x: x - 8, y: y - 6, width: w + 16, height: lineHeight(s) + 12 }, BAND);
    drawText(img, x, y, text, { scale: s, color: i === 0 ? WARN : INK });
    y += lineHeight(s) + gap;
  });
  return img;
}
