/**
 * States that appeared and vanished: per change region, the episodes of change after the anchor (steps
 * closer together than MIN_STATE_MS are one episode of ongoing change), and the looks the region held
 * between them. The look a region held between two episodes is a transient state; a region with more
 * than one episode changed more than once. Colours are named from pixels, simply: the dominant hue.
 */
import type { Rect, RgbaImage } from "../vision/image.ts";
import { CHANGE_CELL, type EpochAnalysis } from "./analysis.ts";
import type { ChangeRegion } from "./change_regions.ts";

/** A look held for less than this is a frame of ongoing change (motion, a fade), not a state. */
export const MIN_STATE_MS = 30;
/**
 * A look held briefly that lies between what it replaced and what replaced it (a moving thing caught
 * mid-way by an uneven capture) is passing motion, not a state; held this long it is a stop.
 */
export const PASSING_MS = 90;
/**
 * In a region that changed this often (a motion captured unevenly, say), only looks held markedly
 * longer than its typical one (the lower median) are states, unless the look is a turning point.
 * A loaded machine paints sparsely, so every look of a motion is held long and a real stop does not
 * stand out by duration alone; a reversal's extreme still stands out by not lying between its
 * neighbours.
 */
const BUSY_EPISODES = 6;
const BUSY_FACTOR = 1.5;
/**
 * A look is a turning point when what replaced it is clearly nearer to what it replaced than the look
 * was to either: the change went one way and came back (a reversal, a flash).
 */
const TURNING_RATIO = 0.9;
/** A look whose neighbours differ from each other by more than this many times its own change lies between them. */
const BETWEEN_RATIO = 1.2;

export interface TransientState {
  /** Indices into the analysis' measures: the frame first showing the look, and the one replacing it. */
  shown: number;
  replaced: number;
  /** The frame before the change that brought the look (what it replaced). */
  entered_from: number;
  appeared_ms: number;
  replaced_ms: number;
}

export interface RegionTimeline {
  /** The change region, source pixels. */
  region: Rect;
  /** Episodes of change after the anchor. */
  changes: number;
  first_change_ms: number;
  last_change_ms: number;
  states: TransientState[];
  /** In a busy region, how long a look that is not a turning point must be held to be a state. */
  busy_min_ms: number | null;
}

function hasCell(bits: Uint8Array, k: number): boolean {
  return (bits[k >> 3] & (1 << (k & 7))) !== 0;
}

/** The region's cells on the analysis grid (the inverse of change_regions' placement). */
function cellBox(a: EpochAnalysis, r: Rect) {
  const px = CHANGE_CELL * a.scale;
  const ox = a.crop?.x ?? 0;
  const oy = a.crop?.y ?? 0;
  const { columns, rows } = a.cell_grid;
  return {
    x0: Math.max(0, Math.floor((r.x - ox) / px)),
    y0: Math.max(0, Math.floor((r.y - oy) / px)),
    x1: Math.min(columns - 1, Math.ceil((r.x + r.width - ox) / px) - 1),
    y1: Math.min(rows - 1, Math.ceil((r.y + r.height - oy) / px) - 1),
  };
}

function lowerMedian(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] ?? 0;
}

/**
 * Each region's change after measure `from` (the frame on screen at the anchor, or the first): how
 * many episodes, when, and the looks it held between episodes.
 */
export function regionTimelines(a: EpochAnalysis, regions: ChangeRegion[], from: number): RegionTimeline[] {
  const { columns } = a.cell_grid;
  const out: RegionTimeline[] = [];
  for (const region of regions) {
    const box = cellBox(a, region.bounds);
    const changed: number[] = [];
    for (let k = Math.max(1, from + 1); k < a.measures.length; k++) {
      const bits = a.measures[k].step?.cells;
      if (!bits) continue;
      let hit = false;
      for (let y = box.y0; y <= box.y1 && !hit; y++) {
        for (let x = box.x0; x <= box.x1 && !hit; x++) hit = hasCell(bits, y * columns + x);
      }
      if (hit) changed.push(k);
    }
    if (changed.length === 0) continue;
    const at = (k: number) => a.measures[k].offset_ms;
    const episodes: Array<{ start: number; end: number }> = [];
    for (const k of changed) {
      const last = episodes[episodes.length - 1];
      if (last && at(k) - at(last.end) < MIN_STATE_MS) last.end = k;
      else episodes.push({ start: k, end: k });
    }
    const states: TransientState[] = [];
    for (let j = 0; j + 1 < episodes.length; j++) {
      const shown = episodes[j].end;
      const replaced = episodes[j + 1].start;
      const entered_from = episodes[j].start - 1;
      states.push({ shown, replaced, entered_from, appeared_ms: at(shown), replaced_ms: at(replaced) });
    }
    const busy_min_ms = episodes.length >= BUSY_EPISODES
      ? BUSY_FACTOR * lowerMedian(states.map((s) => s.replaced_ms - s.appeared_ms))
      : null;
    out.push({
      region: region.bounds,
      changes: episodes.length,
      first_change_ms: at(episodes[0].start),
      last_change_ms: at(episodes[episodes.length - 1].end),
      states,
      busy_min_ms,
    });
  }
  return out;
}

/** A simple, robust colour name: lightness for greys, else the hue's family. */
export function colourName(r: number, g: number, b: number): string {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  if (max - min < 48 || (max - min) / Math.max(1, max) < 0.25) {
    if (max > 215) return "white";
    if (max > 160) return "light grey";
    if (max > 90) return "grey";
    if (max > 40) return "dark grey";
    return "black";
  }
  const d = max - min;
  let h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  h = (h * 60 + 360) % 360;
  if (h < 15 || h >= 345) return "red";
  if (h < 40) return "orange";
  if (h < 70) return "yellow";
  if (h < 165) return "green";
  if (h < 195) return "cyan";
  if (h < 255) return "blue";
  if (h < 290) return "purple";
  return "magenta";
}

export interface Look {
  /** Where the two images differ inside the rectangle (image pixels), or null when they do not. */
  bounds: Rect | null;
  /** How many pixels differ. */
  pixels: number;
  /** The dominant colour name of `look`'s pixels where they differ (and differ from `before`, if any do). */
  colour: string | null;
}

/**
 * What sets `look` apart from `other` inside `rect` (image pixels): the bounds of the pixels whose
 * largest channel difference exceeds the noise floor, and the colour most of them have in `look`.
 * With `before`, the colour is voted by the pixels that are new since then, so a panel that moved is
 * named by the panel, not by the background it uncovered.
 */
export function lookApart(
  look: RgbaImage,
  other: RgbaImage,
  rect: Rect,
  noise: number,
  before?: RgbaImage,
): Look {
  const x0 = Math.max(0, Math.floor(rect.x));
  const y0 = Math.max(0, Math.floor(rect.y));
  const x1 = Math.min(look.width, other.width, Math.ceil(rect.x + rect.width));
  const y1 = Math.min(look.height, other.height, Math.ceil(rect.y + rect.height));
  const differs = (img: RgbaImage, i: number, j: number) =>
    Math.max(
      Math.abs(look.data[i] - img.data[j]),
      Math.abs(look.data[i + 1] - img.data[j + 1]),
      Math.abs(look.data[i + 2] - img.data[j + 2]),
    ) > noise;
  const votes = new Map<string, number>();
  const newVotes = new Map<string, number>();
  let [bx0, by0, bx1, by1, pixels] = [Infinity, Infinity, -1, -1, 0];
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const i = (y * look.width + x) * 4;
      if (!differs(other, i, (y * other.width + x) * 4)) continue;
      pixels++;
      [bx0, by0, bx1, by1] = [Math.min(bx0, x), Math.min(by0, y), Math.max(bx1, x), Math.max(by1, y)];
      const name = colourName(look.data[i], look.data[i + 1], look.data[i + 2]);
      votes.set(name, (votes.get(name) ?? 0) + 1);
      if (before && x < before.width && y < before.height && differs(before, i, (y * before.width + x) * 4)) {
        newVotes.set(name, (newVotes.get(name) ?? 0) + 1);
      }
    }
  }
  if (bx1 < 0) return { bounds: null, pixels: 0, colour: null };
  let colour = "";
  let most = 0;
  for (const [name, n] of newVotes.size > 0 ? newVotes : votes) {
    if (n > most) [colour, most] = [name, n];
  }
  return { bounds: { x: bx0, y: by0, width: bx1 - bx0 + 1, height: by1 - by0 + 1 }, pixels, colour };
}

/**
 * Whether a look is the final one: identical inside the region, or nearly (what sets it apart from the
 * final frame is at most a sixth of what set it apart from its replacement: a few pixels of a moved
 * edge, or a final frame still a step short of rest).
 */
export function looksFinal(vsFinal: Look, vsReplacement: Look): "identical" | "nearly" | null {
  if (vsFinal.pixels === 0) return "identical";
  return vsFinal.pixels <= vsReplacement.pixels / 6 ? "nearly" : null;
}

/** A transient state as responses report it; times are offsets from the range's anchor. */
export interface TransientView {
  /** Where the look differed from what replaced it, source pixels. */
  bounds: Rect;
  colour: string | null;
  appeared_ms: number;
  replaced_ms: number;
  duration_ms: number;
  frame_id: number;
  replaced_by_frame_id: number;
  /** The look was already (or nearly) the one the range ends with, and was left again. */
  looks_final: "identical" | "nearly" | null;
}

export interface RepeatedChange {
  bounds: Rect;
  changes: number;
  first_change_ms: number;
  last_change_ms: number;
}

export interface Transients {
  transient_states: TransientView[];
  repeated_changes: RepeatedChange[];
}

/**
 * Names each transient state from pixels: the frames are decoded at the analysis scale (through
 * `decode`, by measure index), compared inside the region with the frame that replaced the look, with
 * the final one and with measure `from` (the frame on screen at the anchor).
 */
export function describeTransients(
  a: EpochAnalysis,
  timelines: RegionTimeline[],
  decode: (measureIndex: number) => RgbaImage,
  from = 0,
): Transients {
  const s = a.scale;
  const ox = a.crop?.x ?? 0;
  const oy = a.crop?.y ?? 0;
  const toImage = (r: Rect): Rect => ({
    x: (r.x - ox) / s,
    y: (r.y - oy) / s,
    width: r.width / s,
    height: r.height / s,
  });
  const toSource = (r: Rect): Rect => {
    const x = Math.min(a.epoch.width, r.x * s + ox);
    const y = Math.min(a.epoch.height, r.y * s + oy);
    return {
      x,
      y,
      width: Math.min(a.epoch.width - x, r.width * s),
      height: Math.min(a.epoch.height - y, r.height * s),
    };
  };
  const finalImage = decode(a.measures.length - 1);
  const beforeImage = decode(from);
  const states: TransientView[] = [];
  for (const t of timelines) {
    const rect = toImage(t.region);
    for (const st of t.states) {
      const look = decode(st.shown);
      const next = decode(st.replaced);
      const apart = lookApart(look, next, rect, a.noise_floor, beforeImage);
      const held = st.replaced_ms - st.appeared_ms;
      const busy = t.busy_min_ms !== null && held < t.busy_min_ms;
      if (held < PASSING_MS || busy) {
        const prev = decode(st.entered_from);
        const came = lookApart(prev, look, rect, a.noise_floor).pixels;
        const across = lookApart(prev, next, rect, a.noise_floor).pixels;
        const widest = Math.max(came, apart.pixels);
        if (held < PASSING_MS && across > BETWEEN_RATIO * widest) continue;
        if (busy && across >= TURNING_RATIO * widest) continue;
      }
      const final = lookApart(look, finalImage, rect, a.noise_floor);
      states.push({
        bounds: apart.bounds ? toSource(apart.bounds) : t.region,
        colour: apart.colour,
        appeared_ms: st.appeared_ms,
        replaced_ms: st.replaced_ms,
        duration_ms: Math.round((st.replaced_ms - st.appeared_ms) * 10) / 10,
        frame_id: a.measures[st.shown].frame.frame_id,
        replaced_by_frame_id: a.measures[st.replaced].frame.frame_id,
        looks_final: looksFinal(final, apart),
      });
    }
  }
  return {
    transient_states: states.sort((x, y) => x.appeared_ms - y.appeared_ms || x.bounds.y - y.bounds.y),
    repeated_changes: timelines.filter((t) => t.changes > 1).map((t) => ({
      bounds: t.region,
      changes: t.changes,
      first_change_ms: t.first_change_ms,
      last_change_ms: t.last_change_ms,
    })),
  };
}
