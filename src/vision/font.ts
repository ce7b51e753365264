/**
 * A 5×7 bitmap font of our own design for artifact labels (titles, "+201.4 ms", "#1234", legends,
 * "CAPTURE GAP 120 ms"). Each glyph sits in a 6×10 cell: 5 columns of ink plus 1 of spacing; 1 blank
 * row, 7 rows of capitals and ascenders, 2 rows of descenders. Drawn at integer scales (×2, ×3) it stays
 * legible after a vision model downsizes the image. Ambiguous pairs are told apart on purpose: slashed
 * zero vs O, flagged 1 vs serifed I vs tailed l, flat-topped 5 vs S, square-backed B vs 8.
 */
import type { Rect, RgbaImage } from "./image.ts";
import { clipRect, type Color, fillRect } from "./draw.ts";

/** Cell size in font pixels (multiply by the scale). */
export const CELL_WIDTH = 6;
export const CELL_HEIGHT = 10;
const GLYPH_ROWS = 9;
const TOP_GAP = 1;

/**
 * Glyph sheets: each band names its characters, then shows 9 rows of their 5-column bitmaps side by side
 * ('#' ink, '.' blank, one space between glyphs). Rows 0–6 are the capital height, rows 7–8 descenders.
 */
const SHEET: readonly (readonly [string, string])[] = [
  [
    " !\"#$%&'()*+,-./",
    `
..... ..#.. .#.#. .#.#. ..#.. ##... .##.. ..#.. ...#. .#... ..... ..... ..... ..... ..... ....#
..... ..#.. .#.#. .#.#. .#### ##..# #..#. ..#.. ..#.. ..#.. ..#.. ..#.. ..... ..... ..... ....#
..... ..#.. .#.#. ##### #.#.. ...#. #.#.. ..#.. .#... ...#. #.#.# ..#.. ..... ..... ..... ...#.
..... ..#.. ..... .#.#. .###. ..#.. .#... ..... .#... ...#. .###. ##### ..... .###. ..... ..#..
..... ..#.. ..... ##### ..#.# .#... #.#.# ..... .#... ...#. #.#.# ..#.. ..... ..... ..... .#...
..... ..... ..... .#.#. ####. #..## #..#. ..... ..#.. ..#.. ..#.. ..#.. .##.. ..... .##.. #....
..... ..#.. ..... .#.#. ..#.. ...## .##.# ..... ...#. .#... ..... ..... .##.. ..... .##.. #....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..#.. ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .#... ..... ..... .....
`,
  ],
  [
    "0123456789:;<=>?",
    `
.###. ..#.. .###. ##### ...#. ##### ..##. ##### .###. .###. ..... ..... ...#. ..... .#... .###.
#...# .##.. #...# ...#. ..##. #.... .#... ....# #...# #...# .##.. .##.. ..#.. ..... ..#.. #...#
#..## #.#.. ....# ..#.. .#.#. ####. #.... ...#. #...# #...# .##.. .##.. .#... ##### ...#. ....#
#.#.# ..#.. ...#. ...#. #..#. ....# ####. ..#.. .###. .#### ..... ..... #.... ..... ....# ...#.
##..# ..#.. ..#.. ....# ##### ....# #...# .#... #...# ....# ..... ..... .#... ##### ...#. ..#..
#...# ..#.. .#... #...# ...#. #...# #...# .#... #...# ...#. .##.. .##.. ..#.. ..... ..#.. .....
.###. ##### ##### .###. ...#. .###. .###. .#... .###. .##.. .##.. .##.. ...#. ..... .#... ..#..
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..#.. ..... ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .#... ..... ..... ..... .....
`,
  ],
  [
    "@ABCDEFGHIJKLMNO",
    `
.###. ..#.. ####. .###. ###.. ##### ##### .###. #...# .###. ..### #...# #.... #...# #...# .###.
#...# .#.#. #...# #...# #..#. #.... #.... #...# #...# ..#.. ...#. #..#. #.... ##.## #...# #...#
#.### #...# #...# #.... #...# #.... #.... #.... #...# ..#.. ...#. #.#.. #.... #.#.# ##..# #...#
#.#.# #...# ####. #.... #...# ####. ####. #.### ##### ..#.. ...#. ##... #.... #.#.# #.#.# #...#
#.### ##### #...# #.... #...# #.... #.... #...# #...# ..#.. ...#. #.#.. #.... #...# #..## #...#
#.... #...# #...# #...# #..#. #.... #.... #...# #...# ..#.. #..#. #..#. #.... #...# #...# #...#
.#### #...# ####. .###. ###.. ##### #.... .#### #...# .###. .##.. #...# ##### #...# #...# .###.
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....
`,
  ],
  [
    "PQRSTUVWXYZ[\\]^_",
    `
####. .###. ####. .###. ##### #...# #...# #...# #...# #...# ##### .###. #.... .###. ..#.. .....
#...# #...# #...# #...# ..#.. #...# #...# #...# #...# #...# ....# .#... #.... ...#. .#.#. .....
#...# #...# #...# #.... ..#.. #...# #...# #...# .#.#. .#.#. ...#. .#... .#... ...#. #...# .....
####. #...# ####. .###. ..#.. #...# #...# #.#.# ..#.. ..#.. ..#.. .#... ..#.. ...#. ..... .....
#.... #.#.# #.#.. ....# ..#.. #...# #...# #.#.# .#.#. ..#.. .#... .#... ...#. ...#. ..... .....
#.... #..#. #..#. #...# ..#.. #...# .#.#. #.#.# #...# ..#.. #.... .#... ....# ...#. ..... .....
#.... .##.# #...# .###. ..#.. .###. ..#.. .#.#. #...# ..#.. ##### .###. ....# .###. ..... .....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... #####
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... ..... .....
`,
  ],
  [
    "`abcdefghijklmno",
    `
.#... ..... #.... ..... ....# ..... ..##. ..... #.... ..#.. ...#. #.... .##.. ..... ..... .....
..#.. ..... #.... ..... ....# ..... .#..# ..... #.... ..... ..... #.... ..#.. ..... ..... .....
...#. .###. #.##. .###. .##.# .###. .#... .#### #.##. .##.. ..##. #..#. ..#.. ##.#. #.##. .###.
..... ....# ##..# #.... #..## #...# ###.. #...# ##..# ..#.. ...#. #.#.. ..#.. #.#.# ##..# #...#
..... .#### #...# #.... #...# ##### .#... #...# #...# ..#.. ...#. ##... ..#.. #.#.# #...# #...#
..... #...# #...# #...# #...# #.... .#... #...# #...# ..#.. ...#. #.#.. ..#.. #...# #...# #...#
..... .#### ####. .###. .#### .###. .#... .#### #...# .###. ...#. #..#. ...## #...# #...# .###.
..... ..... ..... ..... ..... ..... ..... ....# ..... ..... #..#. ..... ..... ..... ..... .....
..... ..... ..... ..... ..... ..... ..... .###. ..... ..... .##.. ..... ..... ..... ..... .....
`,
  ],
  [
    "pqrstuvwxyz{|}~→",
    `
..... ..... ..... ..... .#... ..... ..... ..... ..... ..... ..... ...## ..#.. ##... ..... .....
..... ..... ..... ..... .#... ..... ..... ..... ..... ..... ..... ..#.. ..#.. ..#.. ..... ...#.
####. .#### #.##. .#### ####. #...# #...# #...# #...# #...# ##### ..#.. ..#.. ..#.. .#... ...##
#...# #...# ##..# #.... .#... #...# #...# #...# .#.#. #...# ...#. .#... ..#.. ...#. #.#.# #####
#...# #...# #.... .###. .#... #...# #...# #.#.# ..#.. #...# ..#.. ..#.. ..#.. ..#.. ...#. ...##
#...# #...# #.... ....# .#..# #..## .#.#. #.#.# .#.#. #...# .#... ..#.. ..#.. ..#.. ..... ...#.
####. .#### #.... ####. ..##. .##.# ..#.. .#.#. #...# .#### ##### ...## ..#.. ##... ..... .....
#.... ....# ..... ..... ..... ..... ..... ..... ..... ....# ..... ..... ..#.. ..... ..... .....
#.... ....# ..... ..... ..... ..... ..... ..... ..... .###. ..... ..... ..#.. ..... ..... .....
`,
  ],
  [
    "←▶◀±×·…–—°µ",
    `
..... #.... ...#. ..#.. ..... ..... ..... ..... ..... ..#.. .....
.#... ##... ..##. ..#.. ..... ..... ..... ..... ..... .#.#. .....
##... ###.. .###. ##### .#.#. .##.. ..... ..... ..... ..#.. #...#
##### ####. ####. ..#.. ..#.. .##.. ..... ##### ##### ..... #...#
##... ###.. .###. ..#.. .#.#. ..... ..... ..... ..... ..... #...#
.#... ##... ..##. ..... ..... ..... ..... ..... ..... ..... #..##
..... #.... ...#. ##### ..... ..... #.#.# ..... ..... ..... ###.#
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... #....
..... ..... ..... ..... ..... ..... ..... ..... ..... ..... #....
`,
  ],
];

/** Drawn for characters the font does not cover, so they show up instead of vanishing. */
const BOX_ROWS = [0b11111, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b11111, 0, 0];

/** Row bitmasks, bit c = column c; bit 5 is the spacing column, used only by the em dash. */
function parseSheet(): Map<string, Uint8Array> {
  const glyphs = new Map<string, Uint8Array>();
  for (const [chars, sheet] of SHEET) {
    const lines = sheet.split("\n").filter((line) => line.length > 0);
    Array.from(chars).forEach((ch, k) => {
      const rows = new Uint8Array(GLYPH_ROWS);
      for (let r = 0; r < GLYPH_ROWS; r++) {
        for (let c = 0; c < 5; c++) if (lines[r]?.[k * 6 + c] === "#") rows[r] |= 1 << c;
      }
      glyphs.set(ch, rows);
    });
  }
  // The em dash spans the whole cell, so it reads longer than the en dash and consecutive ones join.
  const emDash = glyphs.get("—");
  if (emDash) emDash[3] |= 1 << 5;
  return glyphs;
}

const GLYPHS = parseSheet();
const BOX = Uint8Array.from(BOX_ROWS);

/** Every character with a glyph of its own: printable ASCII, then the extra symbols. */
export const COVERED_CHARACTERS: string = SHEET.map(([chars]) => chars).join("");

function glyphFor(ch: string): Uint8Array {
  return GLYPHS.get(ch === "\t" ? " " : ch) ?? BOX;
}

function normScale(scale: number | undefined): number {
  return scale !== undefined && Number.isFinite(scale) ? Math.max(1, Math.round(scale)) : 1;
}

/** Lines as arrays of code points (so a surrogate pair is one box, not two). */
function splitLines(text: string): string[][] {
  return text.split(/\r?\n/).map((line) => Array.from(line));
}

/** Height of one text line in image pixels. */
export function lineHeight(scale: number): number {
  return CELL_HEIGHT * normScale(scale);
}

/**
 * The ink box drawText uses (without padding): the widest line's cells minus the trailing spacing
 * column, by one cell height per line ('\n' separates lines). Scale rounds to a whole number ≥ 1.
 */
export function measureText(text: string, scale: number): { width: number; height: number } {
  const s = normScale(scale);
  const lines = splitLines(text);
  const cols = lines.reduce((widest, line) => Math.max(widest, line.length), 0);
  return { width: cols === 0 ? 0 : (cols * CELL_WIDTH - 1) * s, height: lines.length * CELL_HEIGHT * s };
}

/**
 * Truncates each line to fit maxWidth pixels at this scale, ending it with '…' when anything was cut;
 * "" when not even the ellipsis fits.
 */
export function fitText(text: string, maxWidth: number, scale: number): string {
  const s = normScale(scale);
  if (!(maxWidth >= 0)) return "";
  const maxCols = Math.floor((maxWidth / s + 1) / CELL_WIDTH);
  return splitLines(text).map((line) => {
    if (line.length <= maxCols) return line.join("");
    if (maxCols < 1) return "";
    return line.slice(0, maxCols - 1).join("").trimEnd() + "…";
  }).join("\n");
}

export interface TextOptions {
  /** Whole-number magnification, default 1. */
  scale?: number;
  /** Ink colour, default black. */
  color?: Color;
  /** When set, the padded text box is filled with it first. */
  background?: Color;
  /** Pixels around the text inside the box, default 0. */
  padding?: number;
}

/**
 * Draws text with its box's top-left corner at (x, y) and returns that box (text plus padding) clipped to
 * the image; zero-sized when nothing lands on it. Never throws for off-image or non-finite coordinates.
 */
export function drawText(
  img: RgbaImage,
  x: number,
  y: number,
  text: string,
  options: TextOptions = {},
): Rect {
  const s = normScale(options.scale);
  const pad = options.padding !== undefined && Number.isFinite(options.padding)
    ? Math.max(0, Math.round(options.padding))
    : 0;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return { x: 0, y: 0, width: 0, height: 0 };
  const left = Math.round(x);
  const top = Math.round(y);
  const size = measureText(text, s);
  const box = { x: left, y: top, width: size.width + 2 * pad, height: size.height + 2 * pad };
  if (options.background) fillRect(img, box, options.background);
  const color = options.color ?? [0, 0, 0];
  const cellWidth = CELL_WIDTH * s;
  const cellHeight = CELL_HEIGHT * s;
  splitLines(text).forEach((line, li) => {
    const cy = top + pad + li * cellHeight;
    if (cy >= img.height || cy + cellHeight <= 0) return;
    // Skip straight to the first cell that can reach the image: long off-image runs cost nothing.
    const first = Math.max(0, Math.floor((-(left + pad)) / cellWidth));
    for (let k = first; k < line.length; k++) {
      const cx = left + pad + k * cellWidth;
      if (cx >= img.width) break;
      const rows = glyphFor(line[k]);
      // Only the em dash inks the spacing column; on a line's last cell that would leave the box.
      const cols = k === line.length - 1 ? CELL_WIDTH - 1 : CELL_WIDTH;
      for (let r = 0; r < GLYPH_ROWS; r++) {
        for (let c = 0; c < cols; c++) {
          if ((rows[r] >> c) & 1) {
            fillRect(img, { x: cx + c * s, y: cy + (r + TOP_GAP) * s, width: s, height: s }, color);
          }
        }
      }
    }
  });
  return clipRect(img, box);
}
