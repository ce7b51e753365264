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
  /** The frame showing the page at the range start (last painted before it), when one exists. */
  leading?: FrameRow;
  /** Frames painted inside the range, in paint order. */
  inside: FrameRow[];
  /** True when the range held more than MAX_RANGE_FRAMES frames and only the first were read. */
  truncated: boolean;
}

/**
 * Chrome encodes screencast frames concurrently and delivers some of them late and out of order
 * (measured: up to ~400 ms behind frames painted after them, under CPU load). Frames received this long
 * around a range are read too, so a frame painted inside it but delivered after it still counts.
 */
export const DELIVERY_SLACK_MS = 1_000;
/** A frame whose delivery latency exceeds the smallest one by more than this keeps its receipt time. */
const MAX_DELIVERY_DELAY_NS = 5_000_000_000;

/**
 * Frames in the order Chrome painted them, each timed on the session clock at its paint: Chrome's
 * frame timestamp plus the smallest receipt latency among these frames (so no frame is placed after
 * its receipt). Frames without a usable timestamp keep their receipt time.
 */
export function inPaintOrder(frames: FrameRow[]): FrameRow[] {
  const chromeNs = (f: FrameRow) =>
    f.chrome_timestamp !== null && f.chrome_timestamp > 0 ? f.chrome_timestamp * 1e9 : undefined;
  let offset = Infinity;
  for (const f of frames) {
    const c = chromeNs(f);
    if (c !== undefined) offset = Math.min(offset, f.session_time_ns - c);
  }
  const timed = frames.map((f) => {
    const c = chromeNs(f);
    if (c === undefined || !Number.isFinite(offset)) return f;
    const paint = c + offset;
    if (f.session_time_ns - paint > MAX_DELIVERY_DELAY_NS) return f;
    const ns = Math.round(paint);
    return { ...f, session_time_ns: ns, session_time_ms: Math.round(ns / 1e3) / 1e3 };
  });
  return timed.sort((a, b) => a.session_time_ns - b.session_time_ns || a.ordinal - b.ordinal);
}

/** Loads a range's frames in paint order, plus the one frame that was on screen when it began. */
export function loadRangeFrames(db: DatabaseSync, range: ResolvedRange): RangeFrames {
  const slack = DELIVERY_SLACK_MS * 1e6;
  const ids = db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns >= ? AND recv_ns <= ?
     ORDER BY recv_ns, ordinal LIMIT ?`,
  ).all(
    range.session_id,
    range.page_id,
    Math.round(range.start_ns - slack),
    Math.round(range.end_ns + slack),
    MAX_RANGE_FRAMES + 1,
  )
    .map((r) => Number((r as { id: number }).id));
  const lead = db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns < ? ORDER BY recv_ns DESC, ordinal DESC
     LIMIT 1`,
  ).get(range.session_id, range.page_id, Math.round(range.start_ns - slack)) as { id: number } | undefined;
  const read = getFrames(db, range.session_id, [...(lead ? [lead.id] : []), ...ids]);
  const all = inPaintOrder(read);
  const inside = all.filter((f) => f.session_time_ns >= range.start_ns && f.session_time_ns <= range.end_ns);
  const before = all.filter((f) => f.session_time_ns < range.start_ns);
  const truncated = ids.length > MAX_RANGE_FRAMES || inside.length > MAX_RANGE_FRAMES;
  return { leading: before[before.length - 1], inside: inside.slice(0, MAX_RANGE_FRAMES), truncated };
}

/**
 * Drops the frames painted before a document's first frame (an earlier document, or about:blank), when
 * that document had painted by `atNs`; otherwise those frames are what the screen showed then and stay.
 */
export function sinceDocument(
  frames: FrameRow[],
  documentNs: number,
  atNs: number,
): { frames: FrameRow[]; dropped: number } {
  const first = frames.findIndex((f) => f.session_time_ns >= documentNs);
  if (first <= 0 || frames[first].session_time_ns > atNs) return { frames, dropped: 0 };
  return { frames: frames.slice(first), dropped: first };
}

/** Time of the last cross-document main-frame navigation of the range's page at or before `atNs`. */
export function documentStartNs(db: DatabaseSync, range: ResolvedRange, atNs: number): number | undefined {
  const rows = db.prepare(
    `SELECT at_ns, data FROM events WHERE session_id = ? AND page_id = ? AND kind = 'navigation' AND at_ns <= ?
     ORDER BY at_ns DESC LIMIT 32`,
  ).all(range.session_id, range.page_id, Math.round(atNs)) as Array<{ at_ns: number; data: string | null }>;
  const cross = rows.find((r) => !(r.data ?? "").includes('"same_document":true'));
  return cross ? Number(cross.at_ns) : undefined;
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
