/** What the budget reads from the index: the retained extent, the newest retained point, and WAL limits. */
import type { DatabaseSync } from "node:sqlite";

/** A point in the recording named three ways: wall clock, session and session time. */
export interface RetainedPoint {
  newest_retained_at: string;
  session_id: string;
  session_time_ms: number;
}

/**
 * The write-ahead log counts against the share and cannot be reclaimed, so it is checkpointed and
 * truncated at a sixteenth of the share (64 KiB–1 MiB): a 1 MB share used to fill with WAL alone.
 */
export function indexLimitsFor(share: number): { journal_bytes: number; checkpoint_pages: number } {
  const bytes = Number.isFinite(share)
    ? Math.max(64 * 1024, Math.min(1024 * 1024, Math.floor(share / 16)))
    : 1024 * 1024;
  return { journal_bytes: bytes, checkpoint_pages: Math.max(16, Math.floor(bytes / 4096)) };
}

/** The newest frame any session still holds (anchors a grace override). */
export function newestRetained(db: DatabaseSync): RetainedPoint | Record<string, never> {
  const row = db.prepare(
    `SELECT f.session_id AS session_id, s.started_at AS started, f.recv_ns AS at
     FROM frames f JOIN sessions s ON s.id = f.session_id ORDER BY f.id DESC LIMIT 1`,
  ).get() as { session_id: string; started: string | null; at: number } | undefined;
  if (!row?.started) return {};
  return {
    newest_retained_at: new Date(Date.parse(row.started) + row.at / 1e6).toISOString(),
    session_id: row.session_id,
    session_time_ms: Math.round(row.at / 1e4) / 100,
  };
}

/** Oldest and newest retained frame times across the given sessions, as wall-clock ISO times. */
export function retainedExtent(
  db: DatabaseSync,
  sessionIds: string[],
): { oldest_retained_at?: string; newest_retained_at?: string } {
  let oldest: number | undefined;
  let newest: number | undefined;
  for (const id of sessionIds) {
    const row = db.prepare(
      `SELECT s.started_at AS started, min(f.recv_ns) AS lo, max(f.recv_ns) AS hi
       FROM frames f JOIN sessions s ON s.id = f.session_id WHERE f.session_id = ?`,
    ).get(id) as { started: string | null; lo: number | null; hi: number | null } | undefined;
    if (!row?.started || row.lo === null || row.hi === null) continue;
    const base = Date.parse(row.started);
    oldest = Math.min(oldest ?? Infinity, base + row.lo / 1e6);
    newest = Math.max(newest ?? -Infinity, base + row.hi / 1e6);
  }
  return {
    ...(oldest !== undefined ? { oldest_retained_at: new Date(oldest).toISOString() } : {}),
    ...(newest !== undefined ? { newest_retained_at: new Date(newest).toISOString() } : {}),
  };
}
