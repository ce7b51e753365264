/**
 * The worker's half of DOM recording: batches of rrweb events from a page become immutable, compressed
 * chunks in DOM segments beside the page's frame segments (`segments/<session>/<page>/dom/`), one index row
 * per chunk. A chunk that starts with a full snapshot is a checkpoint: any instant is rebuilt from the
 * last checkpoint at or before it, never from the start of the recording.
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { deflateSync } from "fflate";
import { insertRow } from "../store/index_db.ts";
import { storedUrl } from "../browser/url_redaction.ts";
import { type SegmentIo, SegmentWriter } from "../store/segments.ts";
import { SEGMENT_MAX_BYTES } from "../store/format.ts";
import type { DomBatchMessage } from "./messages.ts";
import type { StoreBudget } from "./ingest_budget.ts";

/** rrweb's event types this file distinguishes (the numbers are rrweb's wire format). */
const FULL_SNAPSHOT = 2;
const META = 4;

/** A chunk is written once it spans this long or holds this much JSON: small enough to lose little in a crash. */
const CHUNK_SPAN_MS = 1_000;
const CHUNK_MAX_JSON = 256 * 1024;
/** Compression level: 6 measured ~9× on the fixtures at a few ms per 100 KB chunk. */
const DEFLATE_LEVEL = 6;

interface WireEvent {
  type: number;
  timestamp: number;
  data?: { href?: unknown };
}

interface PendingChunk {
  session_id: string;
  page_id: string;
  events: string[];
  json_chars: number;
  first_ms: number;
  last_ms: number;
  clock_offset_ms: number;
  checkpoint: boolean;
  href: string | null;
  last_type: number;
}

export interface DomIngestHost {
  db: () => DatabaseSync | undefined;
  root: () => string;
  io: () => SegmentIo;
  budget: () => StoreBudget | undefined;
  enqueue: (work: () => void) => void;
  commit: () => void;
  /** Set once any write's outcome on disk is ambiguous: nothing more is written anywhere. */
  terminal: () => boolean;
}

export interface DomStorage {
  chunks: number;
  events: number;
  bytes: number;
  raw_bytes: number;
  dropped_chunks: number;
  malformed_batches: number;
}

/** Validates the page's batch: an array of objects, each with a numeric type and timestamp. */
function parseBatch(payload: string): WireEvent[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const events: WireEvent[] = [];
  for (const e of parsed) {
    if (
      typeof e !== "object" || e === null || typeof (e as WireEvent).type !== "number" ||
      typeof (e as WireEvent).timestamp !== "number" || !Number.isFinite((e as WireEvent).timestamp)
    ) {
      return undefined;
    }
    events.push(e as WireEvent);
  }
  return events;
}

export class DomIngest {
  #pending = new Map<string, PendingChunk>();
  #writers = new Map<string, SegmentWriter>();
  /** Pages whose chain of chunks is broken (a chunk was refused or lost): dropped until the next checkpoint. */
  #broken = new Map<string, { start_ns: number; cause: string }>();
  readonly storage = new Map<string, DomStorage>();

  constructor(private readonly host: DomIngestHost) {}

  #stats(sessionId: string): DomStorage {
    let s = this.storage.get(sessionId);
    if (!s) {
      s = { chunks: 0, events: 0, bytes: 0, raw_bytes: 0, dropped_chunks: 0, malformed_batches: 0 };
      this.storage.set(sessionId, s);
    }
    return s;
  }

  accept(m: DomBatchMessage): void {
    const events = parseBatch(m.payload);
    if (!events) {
      this.#stats(m.session_id).malformed_batches++;
      return;
    }
    const key = `${m.session_id}/${m.page_id}`;
    for (const e of events) {
      let chunk = this.#pending.get(key);
      // A checkpoint begins at a Meta event (rrweb emits Meta, then the FullSnapshot) or a bare FullSnapshot;
      // nothing splits a Meta from the snapshot that follows it.
      const startsCheckpoint = e.type === META || (e.type === FULL_SNAPSHOT && chunk?.last_type !== META);
      if (
        chunk && chunk.events.length > 0 &&
        (startsCheckpoint ||
          (chunk.last_type !== META &&
            (e.timestamp - chunk.first_ms >= CHUNK_SPAN_MS || chunk.json_chars >= CHUNK_MAX_JSON)))
      ) {
        this.#write(key, chunk);
        chunk = undefined;
      }
      if (!chunk) {
        chunk = {
          session_id: m.session_id,
          page_id: m.page_id,
          events: [],
          json_chars: 0,
          first_ms: e.timestamp,
          last_ms: e.timestamp,
          clock_offset_ms: m.clock_offset_ms,
          checkpoint: startsCheckpoint,
          href: null,
          last_type: e.type,
        };
        this.#pending.set(key, chunk);
      }
      // The document's URL is stored as every stored URL is (no userinfo, query values or fragment; path
      // hashed): it is the navigation URL the events index already keeps redacted.
      if (e.type === META && typeof e.data?.href === "string") e.data.href = storedUrl(e.data.href).url;
      const json = JSON.stringify(e);
      chunk.events.push(json);
      chunk.json_chars += json.length;
      chunk.last_ms = Math.max(chunk.last_ms, e.timestamp);
      chunk.last_type = e.type;
      if (e.type === META && typeof e.data?.href === "string") chunk.href = e.data.href.slice(0, 2048);
    }
  }

  #writer(sessionId: string, pageId: string): SegmentWriter {
    const key = `${sessionId}/${pageId}`;
    let w = this.#writers.get(key);
    if (!w) {
      const db = this.host.db();
      if (!db) throw new Error("index not open");
      const budget = this.host.budget();
      w = new SegmentWriter(
        db,
        join(this.host.root(), "segments", sessionId, pageId, "dom"),
        sessionId,
        pageId,
        this.host.io(),
        {
          maxBytes: () => budget?.segmentBytes() ?? SEGMENT_MAX_BYTES,
          maxAgeNs: budget?.segmentAgeNs(),
          onSealed: (seg) => budget?.sealed(sessionId, pageId, seg),
        },
        "dom",
      );
      this.#writers.set(key, w);
    }
    return w;
  }

  #toNs(ms: number, chunk: PendingChunk): number {
    return Math.round((ms - chunk.clock_offset_ms) * 1e6);
  }

  #write(key: string, chunk: PendingChunk): void {
    this.#pending.delete(key);
    const stats = this.#stats(chunk.session_id);
    const firstNs = this.#toNs(chunk.first_ms, chunk);
    const lastNs = this.#toNs(chunk.last_ms, chunk);
    const broken = this.#broken.get(key);
    if (broken && !chunk.checkpoint) {
      stats.dropped_chunks++;
      return;
    }
    if (broken) this.#closeGap(key, chunk, broken, firstNs);
    const raw = new TextEncoder().encode(`[${chunk.events.join(",")}]`);
    const packed = deflateSync(raw, { level: DEFLATE_LEVEL });
    const refusal = this.#store(chunk, packed, firstNs, lastNs, raw.length);
    if (refusal) {
      stats.dropped_chunks++;
      this.#broken.set(key, { start_ns: firstNs, cause: refusal });
      const db = this.host.db();
      this.host.enqueue(() =>
        db && insertRow(db, "dom_gaps", {
          session_id: chunk.session_id,
          page_id: chunk.page_id,
          start_ns: firstNs,
          end_ns: null,
          cause: refusal,
        })
      );
      return;
    }
    stats.chunks++;
    stats.events += chunk.events.length;
    stats.bytes += packed.length;
    stats.raw_bytes += raw.length;
  }

  #closeGap(key: string, chunk: PendingChunk, broken: { start_ns: number }, endNs: number): void {
    this.#broken.delete(key);
    const db = this.host.db();
    this.host.enqueue(() =>
      db?.prepare(
        "UPDATE dom_gaps SET end_ns = ? WHERE session_id = ? AND page_id = ? AND start_ns = ? AND end_ns IS NULL",
      ).run(endNs, chunk.session_id, chunk.page_id, broken.start_ns)
    );
  }

  /** Judges and appends one chunk; the reason it was not stored, or undefined once it is. */
  #store(chunk: PendingChunk, packed: Uint8Array, firstNs: number, lastNs: number, rawBytes: number) {
    if (this.host.terminal()) return "the store stopped writing after an ambiguous write failure";
    const budget = this.host.budget();
    const decision = budget?.admit(packed.length + 24, this.host.commit);
    if (decision && !decision.admitted) {
      return `disk budget reached: ${decision.used} of ${decision.share} bytes used; DOM recording resumes at the next checkpoint that fits`;
    }
    let placed;
    try {
      placed = this.#writer(chunk.session_id, chunk.page_id).append(0, firstNs, packed);
    } catch (err) {
      return `DOM segment write failed: ${err instanceof Error ? err.message.slice(0, 160) : String(err)}`;
    }
    budget?.stored(chunk.session_id, packed.length + 24);
    const db = this.host.db();
    const row = {
      session_id: chunk.session_id,
      page_id: chunk.page_id,
      segment_id: placed.segmentId,
      offset: placed.offset,
      length: placed.length,
      first_ns: firstNs,
      last_ns: lastNs,
      events: chunk.events.length,
      checkpoint: chunk.checkpoint ? 1 : 0,
      clock_offset_ms: chunk.clock_offset_ms,
      raw_bytes: rawBytes,
      href: chunk.href,
    };
    this.host.enqueue(() => db && insertRow(db, "dom_chunks", row));
    return undefined;
  }

  /** Writes every pending chunk (a flush barrier: readers then see everything the pages sent). */
  flush(sessionId?: string): void {
    for (const [key, chunk] of [...this.#pending]) {
      if (!sessionId || chunk.session_id === sessionId) this.#write(key, chunk);
    }
  }

  /** The open DOM segments, for what a pin of the live tail holds. */
  openSegments(): Array<{ session_id: string; page_id: string; startNs: number; bytes: number }> {
    return [...this.#writers.entries()].flatMap(([key, w]) => {
      const span = w.openSpan;
      const [session_id, page_id] = key.split("/");
      return span ? [{ session_id, page_id, startNs: span.startNs, bytes: span.bytes }] : [];
    });
  }

  /** Seals a session's DOM segments (stop, delete); pending chunks are written first unless discarded. */
  seal(sessionId: string, endNs: number, discard = false): void {
    if (discard) {
      for (const key of [...this.#pending.keys()]) {
        if (key.startsWith(`${sessionId}/`)) this.#pending.delete(key);
      }
    } else {
      this.flush(sessionId);
    }
    for (const [key, w] of [...this.#writers]) {
      if (!key.startsWith(`${sessionId}/`)) continue;
      try {
        w.close(endNs);
      } catch { /* the writer reported its failure when it happened */ }
      this.#writers.delete(key);
    }
    for (const key of [...this.#broken.keys()]) if (key.startsWith(`${sessionId}/`)) this.#broken.delete(key);
  }

  /** Writes and seals everything (the worker is closing). */
  sealAll(): void {
    const sessions = new Set([...this.#pending.values()].map((c) => c.session_id));
    for (const key of this.#writers.keys()) sessions.add(key.split("/")[0]);
    for (const s of sessions) this.seal(s, 0);
  }

  forgetSession(sessionId: string): void {
    this.storage.delete(sessionId);
  }
}
