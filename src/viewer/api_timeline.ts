/**
 * What the viewer draws, read straight from the capture index: the sessions and their pages, one
 * page's timeline (frames, interactions, events worth a tick, gaps, markers) and one frame's bytes.
 * Times are session ms (at_ns / 1e6, rounded to the µs like every tool). A frame's `ordinal` here is its
 * 0-based position among its page's frames in time order, so the scrubber runs 0..n-1.
 */
import type { DatabaseSync } from "node:sqlite";
import { frameBytes, listGaps } from "../capture/frames.ts";
import type { AppContext } from "../mcp/context.ts";

/** Frames listed per page; beyond this the list is an even sample and `frame_count` stays exact. */
export const FRAME_LIST_LIMIT = 20_000;
const TICK_LIMIT = 2_000;
const SESSION_LIMIT = 200;
const PAGE_LIMIT = 50;

/**
 * Event rows that earn a tick: navigations, errors, failed or error-status requests, dialogs, renderer
 * crashes and hangs, the connection dropping and coming back.
 */
const TICK_EVENTS = `(kind = 'navigation' OR kind = 'exception' OR kind = 'request_failed' OR kind = 'dialog'
  OR kind = 'crash' OR kind = 'unresponsive' OR kind = 'connection'
  OR (kind = 'console' AND level IN ('error', 'assert')) OR (kind = 'request' AND level = 'error'))`;
/** The page's ticks, and the session-wide connection events (page_id null) on every page's timeline. */
const TICK_PAGE = `(page_id = ? OR (page_id IS NULL AND kind = 'connection'))`;

const ms = (ns: number): number => Math.round(Number(ns) / 1e3) / 1e3;

export interface PageSummary {
  page_id: string;
  url: string | null;
  title: string | null;
  frames: number;
}

export interface SessionSummary {
  session_id: string;
  started_at: string;
  ended_at: string | null;
  live: boolean;
  pages: PageSummary[];
}

function isLive(app: AppContext, session: string): boolean {
  const live = app.browsers.current;
  return live !== undefined && live.id === session && !live.ended;
}

function pagesOf(app: AppContext, db: DatabaseSync, session: string): PageSummary[] {
  const counts = new Map<string, number>();
  for (
    const r of db.prepare("SELECT page_id, count(*) AS n FROM frames WHERE session_id = ? GROUP BY page_id")
      .all(session) as Array<{ page_id: string; n: number }>
  ) counts.set(r.page_id, Number(r.n));
  const ids = new Set<string>(
    (db.prepare("SELECT page_id FROM targets WHERE session_id = ? ORDER BY created_ns").all(session) as Array<
      { page_id: string }
    >).map((r) => r.page_id),
  );
  for (const id of counts.keys()) ids.add(id);
  const urls = new Map<string, string>();
  for (
    const r of db.prepare(
      `SELECT page_id, text FROM events WHERE session_id = ? AND kind = 'navigation' AND page_id IS NOT NULL
       ORDER BY at_ns DESC LIMIT 500`,
    ).all(session) as Array<{ page_id: string; text: string | null }>
  ) if (r.text && !urls.has(r.page_id)) urls.set(r.page_id, r.text);
  const live = isLive(app, session) ? app.browsers.current : undefined;
  return [...ids].slice(0, PAGE_LIMIT).map((id) => {
    const page = live?.pages.get(id);
    return {
      page_id: id,
      url: page?.url ?? urls.get(id) ?? null,
      title: page ? page.title || null : null,
      frames: counts.get(id) ?? 0,
    };
  });
}

export async function listSessions(app: AppContext): Promise<{ sessions: SessionSummary[] }> {
  await app.recorder.flush();
  const db = app.recorder.reader();
  const rows = db.prepare("SELECT id, started_at, ended_at FROM sessions ORDER BY started_at DESC LIMIT ?")
    .all(SESSION_LIMIT) as Array<{ id: string; started_at: string; ended_at: string | null }>;
  return {
    sessions: rows.map((r) => ({
      session_id: r.id,
      started_at: r.started_at,
      ended_at: r.ended_at,
      live: isLive(app, r.id),
      pages: pagesOf(app, db, r.id),
    })),
  };
}

/** The page a request without one is about: the page with the most frames, else the first target. */
export function defaultPage(db: DatabaseSync, session: string): string | undefined {
  const row = db.prepare(
    "SELECT page_id FROM frames WHERE session_id = ? GROUP BY page_id ORDER BY count(*) DESC LIMIT 1",
  ).get(session) as { page_id: string } | undefined;
  if (row) return row.page_id;
  return (db.prepare("SELECT page_id FROM targets WHERE session_id = ? ORDER BY created_ns LIMIT 1").get(
    session,
  ) as { page_id: string } | undefined)?.page_id;
}

function hasPage(db: DatabaseSync, session: string, page: string): boolean {
  return db.prepare(
    `SELECT 1 AS ok FROM targets WHERE session_id = ? AND page_id = ?
     UNION ALL SELECT 1 FROM frames WHERE session_id = ? AND page_id = ? LIMIT 1`,
  ).get(session, page, session, page) !== undefined;
}

export interface TimelineFrame {
  ordinal: number;
  frame_id: number;
  at_ms: number;
  width: number;
  height: number;
}

function frameCount(db: DatabaseSync, session: string, page: string): number {
  return Number(
    (db.prepare("SELECT count(*) AS n FROM frames WHERE session_id = ? AND page_id = ?").get(
      session,
      page,
    ) as {
      n: number;
    }).n,
  );
}

function timelineFrames(db: DatabaseSync, session: string, page: string, total: number): TimelineFrame[] {
  const step = Math.max(1, Math.ceil(total / FRAME_LIST_LIMIT));
  const rows = db.prepare(
    `SELECT id, recv_ns, width, height, idx FROM (
       SELECT id, recv_ns, width, height, row_number() OVER (ORDER BY recv_ns, ordinal) - 1 AS idx
       FROM frames WHERE session_id = ? AND page_id = ?) WHERE idx % ? = 0 ORDER BY idx`,
  ).all(session, page, step) as Array<
    { id: number; recv_ns: number; width: number; height: number; idx: number }
  >;
  return rows.map((r) => ({
    ordinal: Number(r.idx),
    frame_id: Number(r.id),
    at_ms: ms(r.recv_ns),
    width: Number(r.width),
    height: Number(r.height),
  }));
}

/** The ordinal of the frame on screen at an instant (the last received at or before it; else the first). */
function ordinalAt(db: DatabaseSync, session: string, page: string, atNs: number): number {
  const n = Number(
    (db.prepare("SELECT count(*) AS n FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns <= ?").get(
      session,
      page,
      Math.round(atNs),
    ) as { n: number }).n,
  );
  return Math.max(0, n - 1);
}

interface InteractionRow {
  id: string;
  operation: string;
  outcome: string;
  started_ns: number;
  dispatched_ns: number | null;
  completed_ns: number | null;
  observed_ns: number | null;
}

export async function timeline(app: AppContext, session: string, requestedPage: string | undefined) {
  await app.recorder.flush();
  const db = app.recorder.reader();
  const page = requestedPage ?? defaultPage(db, session);
  if (!page || !hasPage(db, session, page)) return undefined;
  const total = frameCount(db, session, page);
  const frames = timelineFrames(db, session, page, total);
  const interactionRows = db.prepare(
    `SELECT id, operation, outcome, started_ns, dispatched_ns, completed_ns, observed_ns FROM interactions
     WHERE session_id = ? AND page_id = ? ORDER BY started_ns LIMIT ?`,
  ).all(session, page, TICK_LIMIT) as unknown as InteractionRow[];
  const interactions = interactionRows.map((r) => {
    const at = Number(r.dispatched_ns ?? r.started_ns);
    const end = r.observed_ns ?? r.completed_ns;
    // The interaction's frame: what the page showed once the action's observation ended.
    const shown = Number(r.observed_ns ?? r.completed_ns ?? at);
    return {
      interaction_id: r.id,
      tool: r.operation,
      outcome: r.outcome,
      at_ms: ms(at),
      end_ms: end === null ? null : ms(Number(end)),
      frame_ordinal: total > 0 ? ordinalAt(db, session, page, shown) : null,
    };
  });
  const interactionTotal = Number(
    (db.prepare("SELECT count(*) AS n FROM interactions WHERE session_id = ? AND page_id = ?").get(
      session,
      page,
    ) as {
      n: number;
    }).n,
  );
  const eventTotal = Number(
    (db.prepare(`SELECT count(*) AS n FROM events WHERE session_id = ? AND ${TICK_PAGE} AND ${TICK_EVENTS}`)
      .get(
        session,
        page,
      ) as { n: number }).n,
  );
  const events = (db.prepare(
    `SELECT kind, at_ns, level, text FROM events WHERE session_id = ? AND ${TICK_PAGE} AND ${TICK_EVENTS}
     ORDER BY at_ns, id LIMIT ?`,
  ).all(session, page, TICK_LIMIT) as Array<
    { kind: string; at_ns: number; level: string | null; text: string | null }
  >)
    .map((e) => ({ kind: e.kind, at_ms: ms(e.at_ns), level: e.level, text: (e.text ?? "").slice(0, 300) }));
  const markers = (db.prepare(
    `SELECT id, at_ns, label, data FROM markers WHERE session_id = ? AND (page_id = ? OR page_id IS NULL)
     ORDER BY at_ns, id LIMIT ?`,
  ).all(session, page, TICK_LIMIT) as Array<
    { id: string; at_ns: number; label: string | null; data: string | null }
  >)
    .map((m) => {
      let data: { severity?: string; author?: string } = {};
      try {
        data = m.data ? JSON.parse(m.data) : {};
      } catch { /* a marker without metadata */ }
      return {
        marker_id: m.id,
        at_ms: ms(m.at_ns),
        label: m.label ?? m.id,
        author: data.author ?? "agent",
        severity: data.severity ?? "info",
      };
    });
  const pageGaps = listGaps(db, session).filter((g) => g.page_id === page).slice(0, TICK_LIMIT);
  const target = db.prepare("SELECT created_ns, closed_ns FROM targets WHERE session_id = ? AND page_id = ?")
    .get(
      session,
      page,
    ) as { created_ns: number; closed_ns: number | null } | undefined;
  const capture = app.recorder.captures.get(session);
  const nowNs = isLive(app, session) && capture && !capture.stopped ? capture.nowNs() : undefined;
  const lastEvent = db.prepare("SELECT max(at_ns) AS t FROM events WHERE session_id = ? AND page_id = ?").get(
    session,
    page,
  ) as { t: number | null };
  const starts = [frames[0]?.at_ms, target ? ms(target.created_ns) : undefined].filter((v) =>
    v !== undefined
  );
  const ends = [
    frames.at(-1)?.at_ms,
    lastEvent.t === null ? undefined : ms(lastEvent.t),
    target?.closed_ns ? ms(target.closed_ns) : undefined,
    nowNs === undefined ? undefined : ms(nowNs),
    ...interactions.map((i) => i.end_ms ?? i.at_ms),
    ...markers.map((m) => m.at_ms),
    ...pageGaps.map((g) => ms(g.end_ns ?? g.start_ns)),
  ].filter((v): v is number => typeof v === "number");
  const startMs = starts.length > 0 ? Math.min(...(starts as number[])) : 0;
  const endMs = Math.max(startMs, ...ends);
  const gaps = pageGaps.map((g) => ({
    start_ms: ms(g.start_ns),
    end_ms: g.end_ns === null ? endMs : ms(g.end_ns),
    reason: g.cause ?? g.kind,
  }));
  const pageState = db.prepare("SELECT 1 AS ok FROM dom_chunks WHERE session_id = ? AND page_id = ? LIMIT 1")
    .get(session, page) !== undefined;
  return {
    session_id: session,
    page_id: page,
    live: nowNs !== undefined,
    start_ms: startMs,
    end_ms: endMs,
    frame_count: total,
    frames_sampled: frames.length < total,
    frames,
    interactions,
    interaction_count: interactionTotal,
    events,
    event_count: eventTotal,
    gaps,
    markers,
    page_state: pageState,
  };
}

/** The bytes of the page's `ordinal`-th frame, with its time (for the image response's headers). */
export async function frameAt(
  app: AppContext,
  session: string,
  page: string | undefined,
  ordinal: number,
): Promise<{ bytes: Uint8Array; at_ms: number; frame_id: number } | undefined> {
  await app.recorder.flush();
  const db = app.recorder.reader();
  const pid = page ?? defaultPage(db, session);
  if (!pid) return undefined;
  const row = db.prepare(
    "SELECT id, recv_ns FROM frames WHERE session_id = ? AND page_id = ? ORDER BY recv_ns, ordinal LIMIT 1 OFFSET ?",
  ).get(session, pid, ordinal) as { id: number; recv_ns: number } | undefined;
  if (!row) return undefined;
  const bytes = frameBytes(db, session, Number(row.id));
  return bytes ? { bytes, at_ms: ms(row.recv_ns), frame_id: Number(row.id) } : undefined;
}
