/**
 * The storyboard picture: chosen source frames in chronological order, each labelled with its
 * selection reason, offset from the anchor, session time and frame id; gaps drawn between tiles;
 * a time arrow under everything. Aspect ratio is kept; nothing decorative touches the pixels.
 */
import { createImage, type RgbaImage } from "../../vision/image.ts";
import { strokeRect } from "../../vision/draw.ts";
import {
  BAND,
  blockHeight,
  gapMark,
  headerLines,
  MARK,
  MUTED,
  PAD,
  plainMs,
  signedMs,
  SMALL_SCALE,
  textBlock,
  timeArrow,
  WARN,
} from "./layout.ts";
import { place, resize } from "./raster.ts";

export interface StoryTile {
  image: RgbaImage;
  frame_id: number;
  session_time_ms: number;
  offset_ms: number;
  labels: string[];
  markers: string[];
  /** A known capture gap lies between the previous tile and this one. */
  gap_before?: { duration_ms: number | null; kinds: string[] };
}

export interface StoryboardSpec {
  title: string;
  subtitle: string[];
  warnings: string[];
  tiles: StoryTile[];
  tile_width: number;
}

const GUTTER = 28;

export function storyboardColumns(n: number): number {
  return n <= 4 ? n : n <= 8 ? Math.ceil(n / 2) : 4;
}

export function renderStoryboard(spec: StoryboardSpec): RgbaImage {
  const n = spec.tiles.length;
  const cols = Math.max(1, storyboardColumns(n));
  const rows = Math.ceil(n / cols);
  const first = spec.tiles[0]?.image;
  const tileW = spec.tile_width;
  const tileH = first ? Math.round((first.height / first.width) * tileW) : Math.round(tileW * 0.5);
  const header = headerLines(spec.title, spec.subtitle, spec.warnings);
  const headerH = PAD + blockHeight(header) + PAD;
  const labelH = blockHeight([{}, { scale: SMALL_SCALE + 1 }]);
  const markerH = blockHeight([{ scale: SMALL_SCALE + 1 }]);
  const cellH = labelH + tileH + markerH + PAD;
  const footerH = 56;
  const width = PAD * 2 + cols * tileW + (cols - 1) * GUTTER + GUTTER;
  const height = headerH + rows * cellH + footerH;
  const img = createImage(width, height, BAND);
  textBlock(img, PAD, PAD, width - 2 * PAD, header);
  spec.tiles.forEach((tile, i) => {
    const col = i % cols;
    const row = Math.floor(i / cols);
    const x = PAD + GUTTER + col * (tileW + GUTTER);
    const y = headerH + row * cellH;
    textBlock(img, x, y, tileW, [
      { text: `${i + 1}  ${tile.labels.join(" / ")}` },
      {
        text: `${signedMs(tile.offset_ms)}  t=${plainMs(tile.session_time_ms)}  #${tile.frame_id}`,
        color: MUTED,
        scale: SMALL_SCALE + 1,
      },
    ]);
    place(img, resize(tile.image, tileW, tileH), x, y + labelH);
    strokeRect(img, { x: x - 1, y: y + labelH - 1, width: tileW + 2, height: tileH + 2 }, MUTED, 1);
    if (tile.gap_before) {
      gapMark(img, x - GUTTER + 4, y + labelH, GUTTER - 8, tileH, "");
    }
    const note = [
      ...(tile.gap_before
        ? [
          `GAP before (${tile.gap_before.kinds.join(", ")}${
            tile.gap_before.duration_ms === null ? ", open" : `, ${plainMs(tile.gap_before.duration_ms)}`
          })`,
        ]
        : []),
      ...tile.markers.map((m) => `^ ${m}`),
    ].join("  ");
    if (note) {
      textBlock(img, x, y + labelH + tileH + 4, tileW, [{
        text: note,
        color: tile.gap_before ? WARN : MARK,
        scale: SMALL_SCALE + 1,
      }]);
    }
  });
  timeArrow(img, PAD + GUTTER, width - PAD, height - footerH / 2, "time, left to right, then next row");
  return img;
}
