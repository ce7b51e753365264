/// <reference lib="deno.worker" />
/**
 * The ingest worker: the only writer of the index. It decodes frames off the acknowledging thread,
 * measures them, appends them to segments and commits index rows in small batches.
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { insertRow, openIndex } from "../store/index_db.ts";
import {
  type PersistenceCause,
  PersistenceError,
  realIo,
  type SegmentIo,
  SegmentWriter,
} from "../store/segments.ts";
import { type LumaImage, measureFrame } from "../vision/kernels.ts";
import { FRAME_HEADER_BYTES, SEGMENT_MAX_BYTES } from "../store/format.ts";
import { instanceCounterFor } from "../store/budget.ts";
import { StoreBudget } from "./ingest_budget.ts";
import { DomIngest } from "./ingest_dom.ts";
import type { PinView } from "../store/protection.ts";
import type {
  FaultPlan,
  FlushStats,
  FrameMessage,
  FromWorker,
  SessionStorage,
  ToWorker,
} from "./messages.ts";

const BATCH_ROWS = 64;
const BATCH_MS = 100;

let db: DatabaseSync | undefined;
let root = "";
let faults: FaultPlan = {};
let budget: StoreBudget | undefined;
/** Pages whose capture is paused at the share; the next stored frame ends their budget gap. */
const pausedPages = new Set<string>();
const writers = new Map<string, SegmentWriter>();
const previous = new Map<string, LumaImage>();
const storage = new Map<string, SessionStorage>();
const pending: Array<() => void> = [];
let batchTimer: ReturnType<typeof setTimeout> | undefined;
let released = 0;
let rowsCommitted = 0;
let opCounts: Record<string, number> = {};
/** Once a write's outcome on disk is ambiguous, this process writes no more evidence anywhere. */
let storeTerminal: PersistenceCause | undefined;

function post(message: FromWorker): void {
  self.postMessage(message);
}

/** Segment I/O with the injected faults of a test run; the real thing otherwise. */
function faultyIo(): SegmentIo {
  const plan = faults.segment_fault;
  if (!plan) return realIo;
  const trip = (operation: string) => {
    opCounts[operation] = (opCounts[operation] ?? 0) + 1;
    if (operation === plan.operation && opCounts[operation] >= plan.after) {
      throw new Error(`injected ${operation} failure`);
    }
  };
  return {
    ...realIo,
    write: (file, bytes) => {
      trip("write");
      realIo.write(file, bytes);
    },
    syncDir: (dir) => {
      trip("dir_sync");
      realIo.syncDir(dir);
    },
  };
}

function commit(): void {
  if (batchTimer !== undefined) {
    clearTimeout(batchTimer);
    batchTimer = undefined;
  }
  if (!db || pending.length === 0) return;
  const work = pending.splice(0, pending.length);
  db.exec("BEGIN");
  try {
    for (const w of work) w();
    db.exec("COMMIT");
    rowsCommitted += work.length;
  } catch (err) {
    db.exec("ROLLBACK");
    post({
      type: "failure",
      stage: "index_commit",
      message: err instanceof Error ? err.message.slice(0, 200) : "?",
    });
  }
}

function enqueue(work: () => void): void {
  pending.push(work);
  if (pending.length >= BATCH_ROWS) commit();
  else batchTimer ??= setTimeout(commit, BATCH_MS);
}

function writerFor(sessionId: string, pageId: string): SegmentWriter {
  const key = `${sessionId}/${pageId}`;
  let w = writers.get(key);
  if (!w) {
    if (!db) throw new Error("index not open");
    const b = budget;
    w = new SegmentWriter(db, join(root, "segments", sessionId, pageId), sessionId, pageId, faultyIo(), {
      maxBytes: () => b?.segmentBytes() ?? SEGMENT_MAX_BYTES,
      maxAgeNs: b?.segmentAgeNs(),
      onSealed: (seg) => b?.sealed(sessionId, pageId, seg),
    });
    writers.set(key, w);
  }
  return w;
}

function ingest(m: FrameMessage): void {
  const key = `${m.session_id}/${m.page_id}`;
  const bytes = Uint8Array.fromBase64(m.data);
  const warnings: string[] = [];
  let measure: ReturnType<typeof measureFrame> | undefined;
  try {
    measure = measureFrame(bytes, previous.get(key));
    previous.set(key, measure.luma);
  } catch {
    warnings.push("measurements_unavailable");
  }
  const size = bytes.length + FRAME_HEADER_BYTES;
  const decision = budget?.admit(size, commit);
  if (decision?.grace_overridden) announceGraceOverride();
  if (decision && !decision.admitted) {
    pausedPages.add(key);
    post({
      type: "over_budget",
      session_id: m.session_id,
      page_id: m.page_id,
      ordinal: m.ordinal,
      recv_ns: m.recv_ns,
      used_bytes: decision.used,
      budget_bytes: decision.share,
      instances: decision.count.instances,
      instances_source: decision.count.source,
      frame_bytes: size,
      ...(decision.refused ? { refused: decision.refused } : {}),
      pinned_bytes: decision.pinned_bytes ?? 0,
    });
    return;
  }
  let placed;
  try {
    if (storeTerminal) throw new PersistenceError(storeTerminal);
    placed = writerFor(m.session_id, m.page_id).append(m.ordinal, m.recv_ns, bytes);
  } catch (err) {
    if (err instanceof PersistenceError) {
      if (err.persistence.recoverability === "writer_terminal") storeTerminal ??= err.persistence;
      const s = storage.get(m.session_id) ?? { frames: 0, bytes: 0 };
      s.persistence_failure ??= err.persistence;
      storage.set(m.session_id, s);
      post({
        type: "frame_rejected",
        session_id: m.session_id,
        page_id: m.page_id,
        ordinal: m.ordinal,
        recv_ns: m.recv_ns,
        cause: err.persistence,
      });
      return;
    }
    throw err;
  }
  budget?.stored(m.session_id, size);
  if (pausedPages.delete(key)) {
    post({ type: "budget_resumed", session_id: m.session_id, page_id: m.page_id, recv_ns: m.recv_ns });
  }
  const s = storage.get(m.session_id) ?? { frames: 0, bytes: 0 };
  s.frames++;
  s.bytes += bytes.length;
  storage.set(m.session_id, s);
  const row = {
    session_id: m.session_id,
    page_id: m.page_id,
    ordinal: m.ordinal,
    chrome_ts: m.chrome_ts,
    recv_ns: Math.round(m.recv_ns),
    format: "jpeg",
    width: measure?.width ?? 0,
    height: measure?.height ?? 0,
    viewport_width: m.viewport_width,
    viewport_height: m.viewport_height,
    device_scale: m.device_scale,
    segment_id: placed.segmentId,
    offset: placed.offset,
    length: placed.length,
    warnings: warnings.length > 0 ? JSON.stringify(warnings) : null,
    changed_proportion: measure?.changed_proportion ?? null,
    change_bounds: measure?.change_bounds ? JSON.stringify(measure.change_bounds) : null,
    mean_abs_diff: measure?.mean_abs_diff ?? null,
    signature: measure?.signature ?? null,
  };
  enqueue(() => db && insertRow(db, "frames", row));
}

const dom = new DomIngest({
  db: () => db,
  root: () => root,
  io: faultyIo,
  budget: () => budget,
  enqueue,
  commit,
  terminal: () => storeTerminal !== undefined,
});

/** The main thread counts overrides so the operation that caused one carries the warning. */
function announceGraceOverride(): void {
  const override = budget?.graceOverride;
  if (override) post({ type: "grace_overridden", override: { ...override } });
}

function openSegments() {
  return [
    ...[...writers.entries()].flatMap(([key, w]) => {
      const span = w.openSpan;
      const [session_id, page_id] = key.split("/");
      return span ? [{ session_id, page_id, startNs: span.startNs, bytes: span.bytes }] : [];
    }),
    ...dom.openSegments(),
  ];
}

function pinState(id: number, sessionId?: string, extra: { removed?: string[]; pin?: PinView } = {}): void {
  if (!budget) return;
  post({
    type: "pin_state",
    id,
    pins: budget.pins.views(sessionId),
    ...extra,
    retention: budget.status([...storage.keys()]),
  });
}

function sealSession(sessionId: string, endNs: number, discardDom = false): void {
  dom.seal(sessionId, endNs, discardDom);
  for (const [key, w] of writers) {
    if (!key.startsWith(`${sessionId}/`)) continue;
    try {
      w.close(endNs);
    } catch (err) {
      if (err instanceof PersistenceError) {
        const s = storage.get(sessionId) ?? { frames: 0, bytes: 0 };
        s.persistence_failure ??= err.persistence;
        storage.set(sessionId, s);
      }
    }
    writers.delete(key);
    previous.delete(key);
  }
}

function deleteSession(id: number, sessionId: string): void {
  commit();
  sealSession(sessionId, 0, true);
  if (!db) return;
  const count = (sql: string) => (db?.prepare(sql).get(sessionId) as { n: number }).n;
  const frames = count("SELECT count(*) AS n FROM frames WHERE session_id = ?");
  const segments = count("SELECT count(*) AS n FROM segments WHERE session_id = ?");
  const events = count("SELECT count(*) AS n FROM events WHERE session_id = ?");
  db.exec("BEGIN");
  for (
    const table of [
      "frames",
      "dom_chunks",
      "dom_gaps",
      "segments",
      "gaps",
      "interactions",
      "events",
      "markers",
      "targets",
    ]
  ) {
    db.prepare(`DELETE FROM ${table} WHERE session_id = ?`).run(sessionId);
  }
  db.prepare("DELETE FROM sessions WHERE id = ?").run(sessionId);
  db.exec("COMMIT");
  try {
    Deno.removeSync(join(root, "segments", sessionId), { recursive: true });
  } catch { /* nothing stored */ }
  budget?.forgetSession(sessionId);
  for (const key of [...pausedPages]) if (key.startsWith(`${sessionId}/`)) pausedPages.delete(key);
  storage.delete(sessionId);
  dom.forgetSession(sessionId);
  post({ type: "deleted", id, frames, segments, events });
}

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  try {
    switch (m.type) {
      case "open": {
        root = m.root;
        faults = m.faults;
        opCounts = {};
        const opened = openIndex(root);
        db = opened.db;
        budget = new StoreBudget(
          opened.db,
          root,
          m.budget_bytes,
          (m.max_age_secs ?? 0) * 1000,
          instanceCounterFor(root, faults),
          openSegments,
        );
        post({ type: "ready", found: opened.found });
        return;
      }
      case "frame":
        ingest(m);
        released++;
        // Queue slots are released in small groups to keep messages few.
        if (released >= 4) {
          post({ type: "ingested", count: released });
          released = 0;
        }
        return;
      case "dom":
        dom.accept(m);
        return;
      case "session":
        enqueue(() => db && insertRow(db, "sessions", { ...m.row }));
        return;
      case "session_end":
        enqueue(() =>
          db?.prepare("UPDATE sessions SET ended_at = ?, end_reason = ?, stats = ? WHERE id = ?")
            .run(m.ended_at, m.end_reason, m.stats, m.id)
        );
        return;
      case "target":
        enqueue(() => db && insertRow(db, "targets", m.row));
        return;
      case "target_closed":
        enqueue(() =>
          db?.prepare("UPDATE targets SET closed_ns = ? WHERE session_id = ? AND page_id = ?")
            .run(Math.round(m.closed_ns), m.session_id, m.page_id)
        );
        return;
      case "gap":
        enqueue(() => db && insertRow(db, "gaps", { ...m.row }));
        return;
      case "gap_end":
        enqueue(() =>
          db?.prepare(
            "UPDATE gaps SET end_ns = ? WHERE session_id = ? AND page_id = ? AND kind = ? AND end_ns IS NULL",
          ).run(Math.round(m.end_ns), m.session_id, m.page_id, m.kind)
        );
        return;
      case "interaction":
        enqueue(() => db && insertRow(db, "interactions", m.row));
        return;
      case "event":
        enqueue(() => db && insertRow(db, "events", m.row));
        return;
      case "marker":
        enqueue(() => db && insertRow(db, "markers", m.row));
        return;
      case "flush": {
        if (released > 0) {
          post({ type: "ingested", count: released });
          released = 0;
        }
        if (m.seal_session) sealSession(m.seal_session, m.end_ns ?? 0);
        dom.flush();
        commit();
        // Announced before the answer, so the operation waiting on this flush carries the warning.
        if (budget?.enforce(commit).grace_overridden) announceGraceOverride();
        const stats: FlushStats = {
          frames_stored: [...storage.values()].reduce((a, s) => a + s.frames, 0),
          bytes_stored: [...storage.values()].reduce((a, s) => a + s.bytes, 0),
          rows_committed: rowsCommitted,
        };
        post({
          type: "flushed",
          id: m.id,
          stats,
          sessions: Object.fromEntries(storage),
          dom: Object.fromEntries(dom.storage),
          used_bytes: budget?.usage() ?? 0,
          ...(budget ? { retention: budget.status([...storage.keys()]) } : {}),
        });
        return;
      }
      case "delete_session":
        deleteSession(m.id, m.session_id);
        return;
      case "evidence":
        budget?.evidence(m.path, m.bytes);
        if (budget?.enforce(commit).grace_overridden) announceGraceOverride();
        return;
      case "grace":
        budget?.grace(m.span);
        return;
      case "admit_artifact": {
        if (!budget) return;
        const admission = budget.admitArtifact(m.bytes, m.span, commit);
        if (admission.grace_overridden) announceGraceOverride();
        post({ type: "admitted", id: m.id, admission });
        return;
      }
      case "pin": {
        const pin = budget?.pin(m.span, m.label, commit);
        pinState(m.id, undefined, pin ? { pin } : {});
        return;
      }
      case "unpin": {
        if (!budget) return;
        const ids = [...(m.pin_ids ?? []), ...(m.span ? budget.pins.matching(m.span) : [])];
        pinState(m.id, undefined, { removed: budget.pins.remove(ids) });
        return;
      }
      case "pin_state":
        pinState(m.id, m.session_id);
        return;
      case "close":
        dom.sealAll();
        commit();
        for (const key of [...writers.keys()]) sealSession(key.split("/")[0], 0);
        db?.close();
        db = undefined;
        post({ type: "closed", id: m.id });
        return;
    }
  } catch (err) {
    post({
      type: "failure",
      stage: m.type,
      message: err instanceof Error ? err.message.slice(0, 200) : String(err),
    });
  }
};
