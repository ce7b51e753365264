/**
 * Reads recorded DOM back: which pages of a session have DOM, and the events needed to rebuild a page at
 * an instant or across a window (from the last checkpoint at or before its start). Decoded chunks are
 * cached for the process, so repeated probes of one recording (bisect, diff) decode each chunk once.
 */
import type { DatabaseSync } from "node:sqlite";
import { inflateSync } from "fflate";
import type { eventWithTime } from "@rrweb/types";
import { readFrame } from "../store/segments.ts";

/** An rrweb event on the session clock (the same shape as pagestate's TimedDomEvent; capture sits below it). */
export interface TimedDomEvent {
  at_ns: number;
  event: eventWithTime;
}

export interface DomPageExtent {
  page_id: string;
  first_ns: number;
  last_ns: number;
  chunks: number;
  events: number;
  bytes: number;
  /** The first checkpoint still retained: instants before it cannot be rebuilt. */
  first_checkpoint_ns: number | null;
}

export interface DomGap {
  start_ns: number;
  end_ns: number | null;
  cause: string;
}

interface ChunkRow {
  id: number;
  path: string;
  offset: number;
  length: number;
  first_ns: number;
  last_ns: number;
  checkpoint: number;
  clock_offset_ms: number;
}

/** Decoded chunks, most recently used last; bounded by the JSON characters they held. */
const cache = new Map<number, { events: TimedDomEvent[]; weight: number }>();
const CACHE_WEIGHT = 64 * 1024 * 1024;
let cacheWeight = 0;

export function domPages(db: DatabaseSync, sessionId: string): DomPageExtent[] {
  const rows = db.prepare(
    `SELECT page_id, min(first_ns) AS first_ns, max(last_ns) AS last_ns, count(*) AS chunks, sum(events) AS events,
       sum(length) AS bytes, min(CASE WHEN checkpoint = 1 THEN first_ns END) AS first_checkpoint_ns
     FROM dom_chunks WHERE session_id = ? GROUP BY page_id ORDER BY min(first_ns)`,
  ).all(sessionId) as unknown as DomPageExtent[];
  return rows.map((r) => ({
    ...r,
    first_ns: Number(r.first_ns),
    last_ns: Number(r.last_ns),
    first_checkpoint_ns: r.first_checkpoint_ns === null ? null : Number(r.first_checkpoint_ns),
  }));
}

export function domGaps(db: DatabaseSync, sessionId: string, pageId: string): DomGap[] {
  return db.prepare(
    "SELECT start_ns, end_ns, cause FROM dom_gaps WHERE session_id = ? AND page_id = ? ORDER BY start_ns",
  ).all(sessionId, pageId) as unknown as DomGap[];
}

function decode(row: ChunkRow): TimedDomEvent[] {
  const hit = cache.get(row.id);
  if (hit) {
    cache.delete(row.id);
    cache.set(row.id, hit);
    return hit.events;
  }
  const raw = inflateSync(readFrame(row.path, row.offset, row.length));
  const parsed = JSON.parse(new TextDecoder().decode(raw)) as eventWithTime[];
  const events = parsed.map((event) => ({
    at_ns: Math.round((event.timestamp - row.clock_offset_ms) * 1e6),
    event,
  }));
  cache.set(row.id, { events, weight: raw.length });
  cacheWeight += raw.length;
  for (const [id, v] of cache) {
    if (cacheWeight <= CACHE_WEIGHT || cache.size <= 1) break;
    cache.delete(id);
    cacheWeight -= v.weight;
  }
  return events;
}

export interface DomEventsWindow {
  /** Events in time order, from the checkpoint through the last chunk starting at or before `toNs`. */
  events: TimedDomEvent[];
  /** Session time of the checkpoint the events start from. */
  checkpoint_ns: number;
}

/**
 * The events that rebuild a page from the last checkpoint at or before `fromNs` through `toNs`; undefined
 * when no retained checkpoint precedes `fromNs` (not recorded yet, or reclaimed).
 */
export function domEvents(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  fromNs: number,
  toNs: number,
): DomEventsWindow | undefined {
  const start = db.prepare(
    `SELECT max(first_ns) AS at FROM dom_chunks WHERE session_id = ? AND page_id = ? AND checkpoint = 1
       AND first_ns <= ?`,
  ).get(sessionId, pageId, Math.round(fromNs)) as { at: number | null } | undefined;
  if (!start || start.at === null) return undefined;
  const rows = db.prepare(
    `SELECT c.id, s.path, c.offset, c.length, c.first_ns, c.last_ns, c.checkpoint, c.clock_offset_ms
     FROM dom_chunks c JOIN segments s ON s.id = c.segment_id
     WHERE c.session_id = ? AND c.page_id = ? AND c.first_ns >= ? AND c.first_ns <= ? ORDER BY c.first_ns, c.id`,
  ).all(sessionId, pageId, start.at, Math.round(toNs)) as unknown as ChunkRow[];
  const events: TimedDomEvent[] = [];
  for (const row of rows) {
    for (const e of decode(row)) events.push(e);
  }
  // Chunks are written in page order; a stable sort keeps rrweb's order for events of one millisecond.
  events.sort((a, b) => a.at_ns - b.at_ns);
  return { events, checkpoint_ns: Number(start.at) };
}

/** Session times of a page's retained checkpoints, oldest first. */
export function domCheckpoints(db: DatabaseSync, sessionId: string, pageId: string): number[] {
  return (db.prepare(
    "SELECT first_ns FROM dom_chunks WHERE session_id = ? AND page_id = ? AND checkpoint = 1 ORDER BY first_ns",
  ).all(sessionId, pageId) as Array<{ first_ns: number }>).map((r) => Number(r.first_ns));
}
