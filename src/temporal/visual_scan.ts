/**
 * bisect's visual predicates over a page's recorded frames: the window's frames in paint order (the frame on
 * screen at its start is the baseline, when it belongs to the same document), each decoded at one JPEG scale
 * chosen for the region, its region sampled and the predicate evaluated. At most MAX_VISUAL_PROBES frames are
 * decoded; beyond that the window is sampled evenly and each flip narrowed by bisection, and the answer says so.
 */
import { nextTurn } from "./steps.ts";
import type { DatabaseSync } from "node:sqlite";
import { frameBytes, type FrameRow, frameUri, getFrames } from "../capture/frames.ts";
import { currentCallSignal } from "../browser/call_signal.ts";
import { ToolError } from "../errors.ts";
import type { VisualPredicateInput } from "../pagestate/predicates.ts";
import { decodeJpeg } from "../vision/jpeg_decode.ts";
import type { Rect } from "../vision/image.ts";
import { DELIVERY_SLACK_MS, inPaintOrder } from "./frames.ts";
import {
  canonicalVisual,
  clipRegion,
  decodeScale,
  evaluateVisual,
  type Grid,
  indexScanSteps,
  PIXEL_DELTA,
  regionGrid,
  sampleRegion,
  type VisualOutcome,
  type VisualPredicate,
} from "./visual_predicates.ts";

/** Bound on frames decoded for one visual scan (as temporal analyses bound theirs). */
export const MAX_VISUAL_PROBES = 360;
/** Decoding runs in slices this long, then yields to the event loop and honours the call's deadline. */
const SLICE_MS = 40;
/** Bound on frame rows read for one window (a window this busy is sampled anyway). */
const MAX_WINDOW_FRAMES = 20_000;

export interface VisualTransition {
  /** Paint time of the first frame showing the new value, session clock. */
  at_ns: number;
  from: boolean;
  to: boolean;
  frame_id: number;
  /** The frame's evidence resource. */
  uri: string;
  /** The last evaluated frame still showing the old value: the flip happened between its paint and at_ns. */
  previous_frame_id: number;
  previous_at_ns: number;
  /** False when sampling left unevaluated frames between the two. */
  exact: boolean;
  measure: VisualOutcome["measure"];
}

export interface VisualScan {
  initial: boolean;
  transitions: VisualTransition[];
  final: boolean;
  /** Frames decoded and evaluated (the baseline included). */
  probes: number;
  /** Frames painted inside the window. */
  frames_in_window: number;
  /** Present when more frames than MAX_VISUAL_PROBES had to be sampled. */
  sampled?: true;
  /** The frame every regionChanged comparison is against (also the first evaluated). */
  baseline: { frame_id: number; at_ns: number; on_screen_at_start: boolean };
  /** The region as evaluated (clipped to the viewport), JPEG decode scale and per-pixel rule. */
  region: Rect;
  decode_scale: 1 | 2 | 4 | 8;
  pixel_delta: number;
  /** Frames that failed to read or decode (each took the value of the frame before it). */
  unreadable: number;
  /** The value at the last frame, and its measure. */
  final_measure: VisualOutcome["measure"];
}

/** Frames of the window in paint order, led by the frame on screen at its start when it is of the same document. */
export function windowFrames(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  fromNs: number,
  toNs: number,
): { frames: FrameRow[]; leading: boolean; inside: number } {
  const slack = DELIVERY_SLACK_MS * 1e6;
  const ids = (db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns >= ? AND recv_ns <= ?
     ORDER BY recv_ns, ordinal LIMIT ?`,
  ).all(sessionId, pageId, Math.round(fromNs - slack), Math.round(toNs + slack), MAX_WINDOW_FRAMES) as Array<
    { id: number }
  >).map((r) => Number(r.id));
  const lead = db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns < ? ORDER BY recv_ns DESC, ordinal DESC
     LIMIT 1`,
  ).get(sessionId, pageId, Math.round(fromNs - slack)) as { id: number } | undefined;
  const all = inPaintOrder(getFrames(db, sessionId, [...(lead ? [Number(lead.id)] : []), ...ids]));
  const inside = all.filter((f) => f.session_time_ns >= fromNs && f.session_time_ns <= toNs);
  const before = all.filter((f) => f.session_time_ns < fromNs).at(-1);
  const leading = before !== undefined &&
    !crossDocumentBetween(db, sessionId, pageId, before.session_time_ns, fromNs);
  return { frames: leading && before ? [before, ...inside] : inside, leading, inside: inside.length };
}

/** Whether the page loaded another document in (afterNs, atNs]: a frame before that shows another page. */
function crossDocumentBetween(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  afterNs: number,
  atNs: number,
): boolean {
  const rows = db.prepare(
    `SELECT data FROM events WHERE session_id = ? AND page_id = ? AND kind = 'navigation' AND at_ns > ? AND at_ns <= ?`,
  ).all(sessionId, pageId, Math.round(afterNs), Math.round(atNs)) as Array<{ data: string | null }>;
  return rows.some((r) => !(r.data ?? "").includes('"same_document":true'));
}

function refuse(code: string, message: string, recovery: string, argument: string): never {
  throw new ToolError({ code, message, retry: "never", recovery, affected: { argument } });
}

/**
 * Every flip of a visual predicate over the window [fromNs, toNs] of a page's frames. Throws ToolError
 * `no_source_frames` when no frame shows the window, `predicate_not_applicable` when the region lies
 * outside the viewport.
 */
export async function scanVisual(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  fromNs: number,
  toNs: number,
  predicate: VisualPredicateInput | VisualPredicate,
  options: { maxProbes?: number } = {},
): Promise<VisualScan> {
  const p = canonicalVisual(predicate);
  const { frames, leading, inside } = windowFrames(db, sessionId, pageId, fromNs, toNs);
  const first = frames[0];
  if (!first) {
    refuse(
      "no_source_frames",
      `No frame of page ${pageId} was painted in ${Math.round(fromNs / 1e6)}–${Math.round(toNs / 1e6)} ms.`,
      "Widen the window, or choose a window the page's frames cover (list_source_frames).",
      "range",
    );
  }
  const region = clipRegion(p.region, first.viewport);
  if (!region) {
    refuse(
      "predicate_not_applicable",
      `The region ${
        JSON.stringify(p.region)
      } lies outside the ${first.viewport.width}×${first.viewport.height} viewport.`,
      "Give the region in CSS px of the page's viewport.",
      "predicate",
    );
  }
  const scale = decodeScale(region, first.width, first.viewport);
  const decoded = (f: FrameRow) => {
    const bytes = frameBytes(db, sessionId, f.frame_id);
    return bytes ? decodeJpeg(bytes, { scale }) : undefined;
  };
  let unreadable = 0;
  let grid: Grid | undefined;
  let baseline: Uint8Array | undefined;
  const samplesOf = (f: FrameRow): Uint8Array | undefined => {
    let image;
    try {
      image = decoded(f);
    } catch {
      image = undefined;
    }
    if (!image) return undefined;
    // One grid for the whole window, fixed by the first frame, so frames of any size compare cell by cell.
    grid ??= regionGrid(region, image, f.viewport);
    const fRegion = clipRegion(p.region, f.viewport) ?? region;
    return sampleRegion(image, f.viewport, fRegion, grid);
  };
  const outcomes = new Map<number, VisualOutcome>();
  const outcomeAt = (i: number): VisualOutcome => {
    const known = outcomes.get(i);
    if (known) return known;
    const samples = samplesOf(frames[i]);
    // The first readable frame evaluated is the baseline (index 0 is always evaluated first).
    baseline ??= samples;
    let outcome: VisualOutcome | undefined;
    if (samples && baseline) outcome = evaluateVisual(p, samples, baseline);
    else {
      unreadable++;
      // Carry the value of the nearest evaluated frame before it (false when none was readable yet).
      let k = i - 1;
      while (k >= 0 && !outcomes.has(k)) k--;
      outcome = outcomes.get(k) ??
        {
          value: false,
          measure: p.kind === "regionChanged" ? { changed_share: 0 } : { mean_color: "", distance: 255 },
        };
    }
    outcomes.set(i, outcome);
    return outcome;
  };
  const signal = currentCallSignal();
  const steps = indexScanSteps(frames.length, options.maxProbes ?? MAX_VISUAL_PROBES);
  let step = steps.next();
  let slice = performance.now();
  while (!step.done) {
    if (performance.now() - slice > SLICE_MS) {
      await nextTurn();
      signal?.throwIfAborted();
      slice = performance.now();
    }
    step = steps.next(outcomeAt(step.value).value);
  }
  const scan = step.value;
  const transitions: VisualTransition[] = scan.transitions.map((t) => ({
    at_ns: frames[t.index].session_time_ns,
    from: t.from,
    to: t.to,
    frame_id: frames[t.index].frame_id,
    uri: frameUri(sessionId, frames[t.index].frame_id),
    previous_frame_id: frames[t.previous].frame_id,
    previous_at_ns: frames[t.previous].session_time_ns,
    exact: t.previous === t.index - 1,
    measure: outcomeAt(t.index).measure,
  }));
  const last = frames.length - 1;
  return {
    initial: scan.initial,
    transitions,
    final: scan.final,
    probes: scan.probes,
    frames_in_window: inside,
    ...(scan.sampled ? { sampled: true as const } : {}),
    baseline: { frame_id: first.frame_id, at_ns: first.session_time_ns, on_screen_at_start: leading },
    region,
    decode_scale: scale,
    pixel_delta: PIXEL_DELTA,
    unreadable,
    final_measure: outcomeAt(last).measure,
  };
}
