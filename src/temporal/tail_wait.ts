/**
 * When a window that ends in the live present is complete enough to analyse (a bundle asked for right
 * after an action waits for the action's settle window). Frames reach the index after Chrome paints,
 * encodes and delivers them (tens of ms, more under load), so the window's last frames may still be on
 * their way when it closes. Two things say they are not:
 *
 * - a frame Chrome stamped at or after the window's end has arrived: Chrome delivers a page's frames
 *   about in paint order, so those painted before it are in (the flush that re-resolves the range then
 *   puts them in the index);
 * - the stream can send nothing more (ended, hidden, interrupted, the page closed).
 *
 * A page that stopped changing sends no frame at all; then the wait ends TAIL_MARGIN_MS after the window
 * (the delivery allowance the fixed wait used before), which is also the most it ever waits past it.
 * Pure: the caller (mcp/tools/temporal_tail.ts) supplies the clock and the stream's state.
 */

/** How long past the window's end a frame painted inside it may still be in delivery; the wait's bound. */
export const TAIL_MARGIN_MS = 120;

export interface TailView {
  /** Now and the window's end on the clock Chrome stamps frames with (Unix ms). */
  nowMs: number;
  endMs: number;
  /** The latest paint stamp among the page's frames received so far; absent before any. */
  latestStampMs?: number;
  /** false: the page's stream can deliver nothing more. */
  streaming: boolean;
}

export type TailStep =
  | { done: true; why: "painted_after_end" | "margin_elapsed" | "not_streaming" }
  /** Sleep this long; `onFrame`: a frame arriving sooner may end the wait (look again then). */
  | { done: false; sleepMs: number; onFrame: boolean };

export function tailStep(v: TailView, marginMs = TAIL_MARGIN_MS): TailStep {
  if (!v.streaming) return { done: true, why: "not_streaming" };
  // Still open: whatever arrives now, frames painted before the end are yet to come.
  if (v.nowMs < v.endMs) return { done: false, sleepMs: v.endMs - v.nowMs, onFrame: false };
  if (v.latestStampMs !== undefined && v.latestStampMs >= v.endMs) {
    return { done: true, why: "painted_after_end" };
  }
  const left = v.endMs + marginMs - v.nowMs;
  if (left <= 0) return { done: true, why: "margin_elapsed" };
  return { done: false, sleepMs: left, onFrame: true };
}
