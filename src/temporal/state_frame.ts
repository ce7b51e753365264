/**
 * The source frame that shows a page's DOM state at an instant, so pixels and DOM of one moment arrive
 * together. A mutation reaches the screen one paint later: the first frame painted after the instant
 * shows that state when it arrives before the page's next DOM mutation; otherwise the next paint may
 * already show the next state, and the last frame painted at or before the instant is the one.
 */
import type { DatabaseSync } from "node:sqlite";
import { type FrameRow, getFrames } from "../capture/frames.ts";
import { inPaintOrder } from "./frames.ts";

/** Frames are read this far around the instant (paint order needs neighbours; delivery can lag). */
const AROUND_NS = 2_000_000_000;

export interface StateFrame {
  frame_id: number;
  session_time_ms: number;
  uri: string;
  /** Which rule chose it: the next paint (before any later mutation), or the last paint at or before. */
  relation: "first_painted_after" | "last_painted_at_or_before";
  /** Paint time minus the instant, ms (negative: painted before it). */
  offset_ms: number;
}

export function stateFrame(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  atNs: number,
  nextMutationNs: number | undefined,
): StateFrame | undefined {
  const ids = (db.prepare(
    `SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns BETWEEN ? AND ? ORDER BY recv_ns`,
  ).all(sessionId, pageId, Math.round(atNs - AROUND_NS), Math.round(atNs + AROUND_NS)) as Array<
    { id: number }
  >)
    .map((r) => Number(r.id));
  if (ids.length === 0) {
    const lead = db.prepare(
      "SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns < ? ORDER BY recv_ns DESC LIMIT 1",
    ).get(sessionId, pageId, Math.round(atNs)) as { id: number } | undefined;
    if (lead) ids.push(Number(lead.id));
  }
  const frames = inPaintOrder(getFrames(db, sessionId, ids));
  const after = frames.find((f) => f.session_time_ns > atNs);
  const before = frames.filter((f) => f.session_time_ns <= atNs).at(-1);
  const pick = (f: FrameRow, relation: StateFrame["relation"]): StateFrame => ({
    frame_id: f.frame_id,
    session_time_ms: f.session_time_ms,
    uri: f.uri,
    relation,
    offset_ms: Math.round((f.session_time_ns - atNs) / 1e3) / 1e3,
  });
  if (after && (nextMutationNs === undefined || after.session_time_ns < nextMutationNs)) {
    return pick(after, "first_painted_after");
  }
  if (before) return pick(before, "last_painted_at_or_before");
  return after ? pick(after, "first_painted_after") : undefined;
}
