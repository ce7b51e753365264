/**
 * The recorder: owns the ingest worker (the only index writer), the bounded handoff queue and a
 * read-only index connection for queries. One per process; each browser session's capture state
 * lives in session_capture.ts.
 */
import type { DatabaseSync } from "node:sqlite";
import type { BrowserSession } from "../browser/session.ts";
import { openIndexReader } from "../store/index_db.ts";
import { currentConfig } from "../config.ts";
import { InstanceStore } from "../store/instance.ts";
import type { GraceOverride, RetentionStatus } from "./ingest_budget.ts";
import { type InstanceCounter, instanceCounterFor, shareOf } from "../store/budget.ts";
import type { PageSpan } from "../store/protection.ts";
import { budgetFull, overShare, refusal } from "./budget_refusals.ts";
import { logger } from "../log.ts";
import type {
  DomBatchMessage,
  FaultPlan,
  FrameMessage,
  FromWorker,
  RowMessage,
  ToWorker,
} from "./messages.ts";
import { DEFAULT_QUEUE_CAPACITY, SessionCapture } from "./session_capture.ts";

export {
  type CaptureStatus,
  DEFAULT_ACK_DEADLINE_MS,
  DEFAULT_QUEUE_CAPACITY,
  SessionCapture,
} from "./session_capture.ts";

const log = logger("capture");

export class Recorder {
  #worker: Worker;
  #inFlight = 0;
  #nextId = 0;
  #waiters = new Map<number, (m: FromWorker) => void>();
  #reader?: DatabaseSync;
  readonly captures = new Map<string, SessionCapture>();
  readonly capacity: number;
  capabilities: Record<string, boolean> = {};

  /** Bytes counted against this instance's share, as of the last flush. */
  usedBytes = 0;
  retention?: RetentionStatus;
  /** Times the worker dropped artifact grace; an operation that raised it carries the warning. */
  graceOverrides = 0;
  lastGraceOverride?: GraceOverride;
  /** The main thread's own count of N, for judging a file against the share before it is written. */
  readonly #counter: InstanceCounter;

  private constructor(readonly root: string, readonly faults: FaultPlan, readonly budgetBytes: number) {
    this.capacity = faults.queue_capacity ?? DEFAULT_QUEUE_CAPACITY;
    this.#counter = instanceCounterFor(root, faults);
    this.#worker = new Worker(new URL("./ingest_worker.ts", import.meta.url).href, { type: "module" });
    this.#worker.onmessage = (e: MessageEvent<FromWorker>) => this.#onMessage(e.data);
    this.#worker.onerror = (e) => {
      e.preventDefault();
      log.error("ingest worker error: {message}", { message: e.message });
    };
  }

  static async open(root: string, budgetBytes: number, faults: FaultPlan = {}): Promise<Recorder> {
    const r = new Recorder(root, faults, budgetBytes);
    await new Promise<void>((resolve) => {
      r.#waiters.set(-1, () => resolve());
      r.#worker.postMessage(
        {
          type: "open",
          root,
          faults,
          budget_bytes: budgetBytes,
          max_age_secs: currentConfig().retentionMaxAgeSecs,
        } satisfies ToWorker,
      );
    });
    const store = InstanceStore.current;
    if (store?.root === root) {
      store.onEvidence = (path, bytes) =>
        r.#worker.postMessage({ type: "evidence", path, bytes } satisfies ToWorker);
      store.admission = (what, bytes, span) => r.#admitEvidence(what, bytes, span);
    }
    return r;
  }

  #onMessage(m: FromWorker): void {
    switch (m.type) {
      case "ready":
        this.#waiters.get(-1)?.(m);
        this.#waiters.delete(-1);
        return;
      case "ingested":
        this.#inFlight = Math.max(0, this.#inFlight - m.count);
        return;
      case "frame_rejected": {
        const capture = this.captures.get(m.session_id);
        if (capture) {
          capture.rejected++;
          capture.storage.persistence_failure ??= m.cause;
          capture.gap({
            session_id: m.session_id,
            page_id: m.page_id,
            kind: "persistence",
            start_ns: m.recv_ns,
            end_ns: m.recv_ns,
            ordinal: m.ordinal,
            cause: `${m.cause.operation} failed (${m.cause.category}); ${m.cause.recoverability}`,
          });
        }
        return;
      }
      case "over_budget":
        this.captures.get(m.session_id)?.overBudget(m);
        return;
      case "budget_resumed":
        this.captures.get(m.session_id)?.budgetResumed(m.page_id, m.recv_ns);
        return;
      case "flushed":
        this.usedBytes = m.used_bytes;
        this.retention = m.retention;
        for (const [id, storage] of Object.entries(m.sessions)) {
          const capture = this.captures.get(id);
          if (capture) capture.storage = storage;
        }
        this.#waiters.get(m.id)?.(m);
        this.#waiters.delete(m.id);
        return;
      case "grace_overridden":
        this.graceOverrides++;
        this.lastGraceOverride = m.override;
        return;
      case "admitted":
      case "pin_state":
      case "deleted":
      case "closed":
        this.#waiters.get(m.id)?.(m);
        this.#waiters.delete(m.id);
        return;
      case "failure":
        log.error("ingest failure at {stage}: {message}", { stage: m.stage, message: m.message });
        return;
    }
  }

  #request<T extends FromWorker>(build: (id: number) => ToWorker): Promise<T> {
    const id = ++this.#nextId;
    return new Promise((resolve) => {
      this.#waiters.set(id, (m) => resolve(m as T));
      this.#worker.postMessage(build(id));
    });
  }

  /** Bounded handoff: false when the queue is full (the caller records the gap). */
  handoff(frame: FrameMessage): boolean {
    if (this.#inFlight >= this.capacity) return false;
    this.#inFlight++;
    this.#worker.postMessage(frame);
    return true;
  }

  /**
   * Judges a file against the share before it is written. Generated artifacts and videos wait for the
   * worker's walk (it makes room and puts their source under grace); a screenshot is judged here
   * against a fresh count, so an action never waits behind the frame queue for its picture.
   */
  async #admitEvidence(what: string, bytes: number, span?: PageSpan): Promise<void> {
    if (what === "screenshot" || what === "download") {
      const count = this.#counter.count();
      const share = shareOf(this.budgetBytes, count.instances);
      if (bytes > share) throw overShare(what, bytes, share, count.instances, count.source);
      // While pins fill the share (as of the last decision), a file that does not fit is refused too:
      // nothing it could displace may go.
      const last = this.retention;
      if (last?.blocked_reason === "pinned" && last.recording_blocked && last.used_bytes + bytes > share) {
        throw budgetFull(what, bytes, {
          admitted: false,
          refused: "pinned",
          used: last.used_bytes,
          share,
          count,
          pinned_bytes: last.pinned_bytes,
          grace_overridden: false,
        });
      }
      return;
    }
    const { admission } = await this.#request<Extract<FromWorker, { type: "admitted" }>>((id) => ({
      type: "admit_artifact",
      id,
      bytes,
      ...(span ? { span } : {}),
    }));
    if (!admission.admitted) throw refusal(what, bytes, admission);
  }

  /** Puts a span under artifact grace before its frames are read, so reclaim leaves them while it can. */
  grace(span: PageSpan): void {
    this.#worker.postMessage({ type: "grace", span } satisfies ToWorker);
  }

  async pin(span: PageSpan, label?: string): Promise<Extract<FromWorker, { type: "pin_state" }>> {
    await this.flush();
    return await this.#request((id) => ({ type: "pin", id, span, ...(label ? { label } : {}) }));
  }

  async unpin(pinIds: string[], span?: PageSpan): Promise<Extract<FromWorker, { type: "pin_state" }>> {
    return await this.#request((id) => ({ type: "unpin", id, pin_ids: pinIds, ...(span ? { span } : {}) }));
  }

  async pinState(sessionId?: string): Promise<Extract<FromWorker, { type: "pin_state" }>> {
    await this.flush();
    return await this.#request((id) => ({
      type: "pin_state",
      id,
      ...(sessionId ? { session_id: sessionId } : {}),
    }));
  }

  /**
   * Applied to every row and DOM batch before it reaches the worker: a scenario run sets it so the
   * values of its declared secrets never reach the index, whatever carried them (console text, a DOM
   * text node, a URL).
   */
  redact?: <M extends RowMessage | DomBatchMessage>(message: M) => M;

  send(message: RowMessage | DomBatchMessage): void {
    this.#worker.postMessage(this.redact ? this.redact(message) : message);
  }

  attach(session: BrowserSession): SessionCapture {
    const capture = new SessionCapture(session, this);
    this.captures.set(session.id, capture);
    capture.start();
    return capture;
  }

  async flush(sealSession?: string, endNs?: number): Promise<Extract<FromWorker, { type: "flushed" }>> {
    return await this.#request((id) => ({ type: "flush", id, seal_session: sealSession, end_ns: endNs }));
  }

  /** The read-only index connection (opened lazily; WAL readers see committed rows). */
  reader(): DatabaseSync {
    this.#reader ??= openIndexReader(this.root);
    return this.#reader;
  }

  async deleteSession(sessionId: string): Promise<Extract<FromWorker, { type: "deleted" }>> {
    this.captures.delete(sessionId);
    return await this.#request((id) => ({ type: "delete_session", id, session_id: sessionId }));
  }

  async close(): Promise<void> {
    await this.#request((id) => ({ type: "close", id }));
    this.#reader?.close();
    this.#worker.terminate();
  }
}
