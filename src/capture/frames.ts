import type { DatabaseSync } from "node:sqlite";
import { readFrame } from "../store/segments.ts";

/** One stored frame as queries present it (session time in nanoseconds and milliseconds). */
export interface FrameRow {
  frame_id: number;
  session_id: string;
  page_id: string;
  ordinal: number;
  session_time_ns: number;
  session_time_ms: number;
  chrome_timestamp: number | null;
  format: string;
  width: number;
  height: number;
  viewport: { width: number; height: number; device_scale: number };
  changed_proportion: number | null;
  change_bounds: { x: number; y: number; width: number; height: number } | null;
  warnings: string[];
  uri: string;
}

interface RawFrame {
  id: number;
  session_id: string;
  page_id: string;
  ordinal: number;
  recv_ns: number;
  chrome_ts: number | null;
  format: string;
  width: number;
  height: number;
  viewport_width: number;
  viewport_height: number;
  device_scale: number;
  changed_proportion: number | null;
  change_bounds: string | null;
  warnings: string | null;
}

export function frameUri(sessionId: string, frameId: number): string {
  return `krometrail://evidence/frames/${sessionId}/${frameId}.jpg`;
}

function present(r: RawFrame): FrameRow {
  return {
    frame_id: r.id,
    session_id: r.session_id,
    page_id: r.page_id,
    ordinal: r.ordinal,
    session_time_ns: r.recv_ns,
    session_time_ms: Math.round(r.recv_ns / 1e3) / 1e3,
    chrome_timestamp: r.chrome_ts,
    format: r.format,
    width: r.width,
    height: r.height,
    viewport: { width: r.viewport_width, height: r.viewport_height, device_scale: r.device_scale },
    changed_proportion: r.changed_proportion,
    change_bounds: r.change_bounds ? JSON.parse(r.change_bounds) : null,
    warnings: r.warnings ? JSON.parse(r.warnings) : [],
    uri: frameUri(r.session_id, r.id),
  };
}

export interface FrameQuery {
  sessionId: string;
  pageId?: string;
  startNs?: number;
  endNs?: number;
  offset: number;
  limit: number;
}

/** Frames in resolved order (time, then ordinal), one page of them plus the total. */
export function listFrames(db: DatabaseSync, q: FrameQuery): { frames: FrameRow[]; total: number } {
  const where = ["session_id = ?"];
  const args: Array<string | number> = [q.sessionId];
  if (q.pageId) {
    where.push("page_id = ?");
    args.push(q.pageId);
  }
  if (q.startNs !== undefined) {
    where.push("recv_ns >= ?");
    args.push(Math.round(q.startNs));
  }
  if (q.endNs !== undefined) {
    where.push("recv_ns <= ?");
    args.push(Math.round(q.endNs));
  }
  const clause = where.join(" AND ");
  const total =
    (db.prepare(`SELECT count(*) AS n FROM frames WHERE ${clause}`).get(...args) as { n: number }).n;
  const rows = db.prepare(
    `SELECT * FROM frames WHERE ${clause} ORDER BY recv_ns, page_id, ordinal LIMIT ? OFFSET ?`,
  ).all(...args, q.limit, q.offset) as unknown as RawFrame[];
  return { frames: rows.map(present), total };
}

export interface OnScreenFrame {
  /** The last frame received at or before the instant: what the page showed then. */
  frame: FrameRow;
  /** The frame that replaced it, if one has been received since. */
  next?: { frame_id: number; session_time_ns: number };
}

/** The frame a page showed at an instant (Chrome sends a frame only when it paints). */
export function frameOnScreen(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  atNs: number,
): OnScreenFrame | undefined {
  const at = Math.round(atNs);
  const row = db.prepare(
    `SELECT * FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns <= ?
     ORDER BY recv_ns DESC, ordinal DESC LIMIT 1`,
  ).get(sessionId, pageId, at) as unknown as RawFrame | undefined;
  if (!row) return undefined;
  const next = db.prepare(
    `SELECT id, recv_ns FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns > ?
     ORDER BY recv_ns, ordinal LIMIT 1`,
  ).get(sessionId, pageId, at) as { id: number; recv_ns: number } | undefined;
  return {
    frame: present(row),
    ...(next ? { next: { frame_id: next.id, session_time_ns: next.recv_ns } } : {}),
  };
}

export function getFrames(db: DatabaseSync, sessionId: string, ids: number[]): FrameRow[] {
  if (ids.length === 0) return [];
  const rows = db.prepare(
    `SELECT * FROM frames WHERE session_id = ? AND id IN (${ids.map(() => "?").join(",")})`,
  ).all(sessionId, ...ids) as unknown as RawFrame[];
  const byId = new Map(rows.map((r) => [r.id, present(r)]));
  return ids.map((id) => byId.get(id)).filter((f): f is FrameRow => f !== undefined);
}

/** The encoded bytes of one stored frame, verified against its segment record. */
export function frameBytes(db: DatabaseSync, sessionId: string, frameId: number): Uint8Array | undefined {
  const row = db.prepare(
    `SELECT f.offset AS offset, f.length AS length, s.path AS path FROM frames f
     JOIN segments s ON s.id = f.segment_id WHERE f.session_id = ? AND f.id = ?`,
  ).get(sessionId, frameId) as { offset: number; length: number; path: string } | undefined;
  if (!row) return undefined;
  try {
    return readFrame(row.path, row.offset, row.length);
  } catch (err) {
    // The worker may seal the segment (rename .open to .seg) between our query and the read.
    if (!row.path.endsWith(".open")) throw err;
    return readFrame(row.path.replace(/\.open$/, ".seg"), row.offset, row.length);
  }
}

export interface GapView {
  page_id: string;
  kind: string;
  start_ns: number;
  end_ns: number | null;
  ordinal: number | null;
  cause: string | null;
}

export function listGaps(db: DatabaseSync, sessionId: string): GapView[] {
  return db.prepare(
    "SELECT page_id, kind, start_ns, end_ns, ordinal, cause FROM gaps WHERE session_id = ? ORDER BY start_ns",
  )
    .all(sessionId) as unknown as GapView[];
}

export function knownSession(db: DatabaseSync, sessionId: string): boolean {
  return db.prepare("SELECT 1 AS ok FROM sessions WHERE id = ?").get(sessionId) !== undefined;
}
