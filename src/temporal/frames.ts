/**
 * The frames a resolved range stands on, split into visual epochs: runs of frames that share one
 * image size, viewport and device scale. Artifacts never stretch frames of different epochs together.
 */
import type { DatabaseSync } from "node:sqlite";
import { type FrameRow, getFrames } from "../capture/frames.ts";
import type { ResolvedRange } from "./range.ts";

export interface Epoch {
  /** 0-based, in time order within the range. */
  index: number;
  width: number;
  height: number;
  viewport: { width: number; height: number; device_scale: number };
  frames: FrameRow[];
  start_ns: number;
  end_ns: number;
}

/** Bound on frames read for one range; analyses sample beyond this and say so. */
export const MAX_RANGE_FRAMES = 20_000;

function epochKey(f: FrameRow): string {
  const v = f.viewport;
  return `${f.width}x${f.height}@${Math.round(v.width)}x${Math.round(v.height)}x${v.device_scale}`;
}

export interface RangeFrames {
  /** The frame showing the page at the range start (last painted at or before it), when one exists. */
  leading?: FrameRow;
  /** Frames received inside the range, in resolved order. */
  inside: FrameRow[];
  /** True when the range held more than MAX_RANGE_FRAMES frames and only the first were read. */
  truncated: boolean;
}

/** Loads a range's frames plus the one frame that was on screen when it began. */
export function loadRangeFrames(db: DatabaseSync, range: ResolvedRange): RangeFrames {
  const ids = db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns >= ? AND recv_ns <= ?
     ORDER BY recv_ns, ordinal LIMIT ?`,
  ).all(
    range.session_id,
    range.page_id,
    Math.round(range.start_ns),
    Math.round(range.end_ns),
    MAX_RANGE_FRAMES + 1,
  )
    .map((r) => Number((r as { id: number }).id));
  const truncated = ids.length > MAX_RANGE_FRAMES;
  const inside = getFrames(db, range.session_id, ids.slice(0, MAX_RANGE_FRAMES));
  const lead = db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns < ? ORDER BY recv_ns DESC, ordinal DESC
     LIMIT 1`,
  ).get(range.session_id, range.page_id, Math.round(range.start_ns)) as { id: number } | undefined;
  const leading = lead ? getFrames(db, range.session_id, [lead.id])[0] : undefined;
  return { leading, inside, truncated };
}

/** Splits time-ordered frames into epochs at every change of image size, viewport or scale. */
export function splitEpochs(frames: FrameRow[]): Epoch[] {
  const epochs: Epoch[] = [];
  let key = "";
  for (const f of frames) {
    const k = epochKey(f);
    const last = epochs[epochs.length - 1];
    if (!last || k !== key) {
      epochs.push({
        index: epochs.length,
        width: f.width,
        height: f.height,
        viewport: { ...f.viewport },
        frames: [f],
        start_ns: f.session_time_ns,
        end_ns: f.session_time_ns,
      });
      key = k;
    } else {
      last.frames.push(f);
      last.end_ns = f.session_time_ns;
    }
  }
  return epochs;
}

/**
 * The epoch an anchor belongs to: the one whose span (first to last frame) contains it, else the
 * nearest span; an exact tie chooses the earlier epoch.
 */
export function epochAt(epochs: Epoch[], atNs: number): Epoch | undefined {
  let best: Epoch | undefined;
  let bestDistance = Infinity;
  for (const e of epochs) {
    if (atNs >= e.start_ns && atNs <= e.end_ns) return e;
    const distance = atNs < e.start_ns ? e.start_ns - atNs : atNs - e.end_ns;
    if (distance < bestDistance) {
      best = e;
      bestDistance = distance;
    }
  }
  return best;
}
