/**
 * One browser session's capture: its screencast streams, counters, gaps and the rows it sends to the
 * ingest worker through the recorder.
 */
import type { BrowserSession } from "../browser/session.ts";
import { recordBrowserEvents } from "../browser/events.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { Admission, RetentionStatus } from "./ingest_budget.ts";
import type { PersistenceCause } from "../store/segments.ts";
import type { FlushStats, FrameMessage, FromWorker, GapRow, SessionStorage } from "./messages.ts";
import type { Recorder } from "./recorder.ts";
import { StreamInterruptions } from "./stream_interruptions.ts";
import {
  type PostActionFrameRequest,
  type PostActionFrames,
  ScreencastStream,
  type StreamHost,
  type StreamStats,
} from "./screencast.ts";

/** Frames handed to the worker but not yet appended; beyond this, frames are dropped as gaps. */
export const DEFAULT_QUEUE_CAPACITY = 120;
export const DEFAULT_ACK_DEADLINE_MS = 1_000;
const ACK_SAMPLES = 4_096;

/** Why capture is paused at the share, as the worker last said. */
interface BudgetPause {
  used_bytes: number;
  budget_bytes: number;
  pinned_bytes: number;
  instances: number;
  instances_source: string;
  /** What holds the share: pins, what reclaim cannot take (index, open segments), or a frame over it. */
  reason: NonNullable<Admission["refused"]>;
}

export interface CaptureStatus {
  configured: { every_nth_frame: number; focus: string };
  observed: { frames_received: number; seconds: number; fps: number };
  frames_received: number;
  frames_handed_off: number;
  frames_stored: number;
  frames_dropped: number;
  frames_rejected: number;
  /** Frames not stored because the disk budget was reached (capture paused). */
  frames_over_budget: number;
  budget?: BudgetPause & { paused: true; recovery: string };
  /** The shared budget as this instance sees it (spec: the retention status surface). */
  retention?: RetentionStatus;
  gaps: number;
  bytes_stored: number;
  ack_latency_ms: { p50: number; p99: number; max: number; samples: number };
  streams: Array<{ page_id: string } & StreamStats>;
  persistence_failure?: PersistenceCause & { recovery: string };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Capture state of one browser session: its streams, counters and the rows it sends. */
export class SessionCapture implements StreamHost {
  readonly sessionId: string;
  readonly everyNthFrame: number;
  readonly ackDeadlineMs: number;
  readonly streams = new Map<string, ScreencastStream>();
  readonly ackSamples: number[] = [];
  gaps = 0;
  rejected = 0;
  storage: SessionStorage = { frames: 0, bytes: 0 };
  stopped = false;
  budgetRejected = 0;
  budget?: BudgetPause;
  #budgetGapPages = new Set<string>();
  /** Outage and crash gaps, held across the page's stream objects. */
  readonly #interruptions = new StreamInterruptions(this);
  #unsubscribe: Array<() => void> = [];

  constructor(readonly session: BrowserSession, private readonly recorder: Recorder) {
    this.sessionId = session.id;
    this.everyNthFrame = session.config.every_nth_frame;
    this.ackDeadlineMs = recorder.faults.ack_deadline_ms ?? DEFAULT_ACK_DEADLINE_MS;
  }

  nowNs(): number {
    return Math.round(this.session.now() * 1e6);
  }

  handoff(frame: FrameMessage): boolean {
    return this.recorder.handoff(frame);
  }

  gap(row: GapRow): void {
    this.gaps++;
    this.recorder.send({ type: "gap", row });
  }

  gapEnd(pageId: string, kind: GapRow["kind"], endNs: number): void {
    this.recorder.send({ type: "gap_end", session_id: this.sessionId, page_id: pageId, kind, end_ns: endNs });
  }

  /** What a page's stream can prove after an action (see ScreencastStream.postActionFrame). */
  postActionFrame(pageId: string, request: PostActionFrameRequest): Promise<PostActionFrames | undefined> {
    const stream = this.streams.get(pageId);
    return Promise.resolve(stream && !this.stopped ? stream.postActionFrame(request) : undefined);
  }

  /**
   * Capture pauses while nothing reclaimable is left in the share: one open gap per page, ended by
   * the next frame the worker stores (budgetResumed).
   */
  overBudget(m: Extract<FromWorker, { type: "over_budget" }>): void {
    this.budgetRejected++;
    if (this.#budgetGapPages.has(m.page_id)) return;
    this.#budgetGapPages.add(m.page_id);
    const used = m.used_bytes;
    const share = m.budget_bytes;
    this.budget = {
      used_bytes: used,
      budget_bytes: share,
      pinned_bytes: m.pinned_bytes,
      instances: m.instances,
      instances_source: m.instances_source,
      reason: m.refused ?? "unreclaimable",
    };
    const why = m.frame_bytes > share
      ? `a ${m.frame_bytes}-byte frame is larger than the ${share}-byte share`
      : m.refused === "pinned"
      ? `pins fill the disk budget: ${used} of ${share} bytes used, ${m.pinned_bytes} pinned; nothing protected was deleted`
      : `disk budget reached: ${used} of ${share} bytes used`;
    this.gap({
      session_id: this.sessionId,
      page_id: m.page_id,
      kind: "budget",
      start_ns: m.recv_ns,
      end_ns: null,
      ordinal: m.ordinal,
      cause: `${why} (share of ${m.instances} ${m.instances_source} instances); capture paused`,
    });
  }

  budgetResumed(pageId: string, recvNs: number): void {
    if (!this.#budgetGapPages.delete(pageId)) return;
    this.gapEnd(pageId, "budget", recvNs);
    if (this.#budgetGapPages.size === 0) this.budget = undefined;
  }

  ackLatency(ms: number): void {
    this.ackSamples.push(ms);
    if (this.ackSamples.length > ACK_SAMPLES) this.ackSamples.shift();
  }

  start(): void {
    const s = this.session;
    this.recorder.send({
      type: "session",
      row: {
        id: s.id,
        ordinal: s.ordinal,
        mode: s.mode,
        profile: JSON.stringify(s.profile),
        browser: s.browserVersion,
        protocol: s.protocolVersion,
        started_at: s.startedAt.toISOString(),
        every_nth_frame: s.config.every_nth_frame,
        focus: s.config.focus,
        capabilities: JSON.stringify(this.recorder.capabilities),
        record_dom: s.config.record_dom ? 1 : 0,
      },
    });
    const held = this.#interruptions;
    this.#unsubscribe.push(
      s.onPageEvent("Page.screencastFrame", (page, params) => held.frameStream(page)?.onFrame(params)),
      s.onPageEvent(
        "Page.screencastVisibilityChanged",
        (page, params) => held.streamOf(page)?.onVisibility(params.visible),
      ),
      s.onPageAdded((page, origin) => origin === "readopted" ? held.readopt(page) : this.startStream(page)),
      s.onPageRemoved((page) => this.#endStream(page)),
      ...held.subscribe(),
      // Event recording runs whether or not the event tools are exposed. Its own end-of-session row
      // (a failed reconnection) is written before this capture's stop flushes: it subscribes first.
      recordBrowserEvents(s, (row) => this.recorder.send({ type: "event", row })),
    );
    for (const page of s.pages.values()) this.startStream(page);
    s.onEnded(() => {
      this.stop().catch(() => {});
    });
  }

  /** A page new to the session: its stream and its target row. */
  startStream(page: PageTarget): void {
    if (this.stopped || this.streams.has(page.id)) return;
    const stream = new ScreencastStream(page, this);
    this.streams.set(page.id, stream);
    this.recorder.send({
      type: "target",
      row: {
        session_id: this.sessionId,
        page_id: page.id,
        target_id: page.targetId,
        opener_page_id: page.openerPageId ?? null,
        created_ns: this.nowNs(),
      },
    });
    this.startScreencast(stream);
  }

  startScreencast(stream: ScreencastStream): void {
    stream.start().catch((err) => {
      // A stream the connection dropped under is the outage gap's, not an error of its own.
      if (this.streams.get(stream.page.id) !== stream || this.#interruptions.disconnected(stream.page.id)) {
        return;
      }
      this.gap({
        session_id: this.sessionId,
        page_id: stream.page.id,
        kind: "stream_error",
        start_ns: this.nowNs(),
        end_ns: null,
        cause: `screencast did not start: ${String(err).slice(0, 120)}`,
      });
    });
  }

  #endStream(page: PageTarget): void {
    const stream = this.streams.get(page.id);
    if (!stream) return;
    const now = this.nowNs();
    // A page that did not come back after a reconnection (or a crashed page closed) ends its gap here.
    this.#interruptions.endPage(page.id, now);
    stream.stop().catch(() => {});
    this.recorder.send({
      type: "target_closed",
      session_id: this.sessionId,
      page_id: page.id,
      closed_ns: now,
    });
  }

  /** Stops every stream and flushes all accepted frames and rows; returns the flushed counts. */
  async stop(): Promise<SessionStorage & FlushStats> {
    if (!this.stopped) {
      this.stopped = true;
      // The session's end (a reconnection window that ran out, a stop while reconnecting) ends every
      // outage and crash gap, before the flush and the session_end row.
      const endNs = this.nowNs();
      this.#interruptions.endAll(endNs);
      for (const off of this.#unsubscribe) off();
      await Promise.all([...this.streams.values()].map((s) => s.stop()));
      for (const pageId of this.#budgetGapPages) this.gapEnd(pageId, "budget", this.nowNs());
    }
    const flushed = await this.recorder.flush(this.sessionId, this.nowNs());
    this.recorder.send({
      type: "session_end",
      id: this.sessionId,
      ended_at: (this.session.endedAt ?? new Date()).toISOString(),
      end_reason: this.session.endReason ?? "stopped",
      stats: JSON.stringify(this.status()),
    });
    await this.recorder.flush();
    return { ...this.storage, ...flushed.stats };
  }

  status(): CaptureStatus {
    const streams = [...this.streams.entries()].map(([page_id, s]) => ({ page_id, ...s.stats }));
    const received = streams.reduce((a, s) => a + s.received, 0);
    const sorted = [...this.ackSamples].sort((a, b) => a - b);
    const seconds = Math.max(0.001, this.session.now() / 1000);
    const failure = this.storage.persistence_failure;
    return {
      configured: { every_nth_frame: this.everyNthFrame, focus: this.session.config.focus },
      observed: {
        frames_received: received,
        seconds: Math.round(seconds * 10) / 10,
        fps: Math.round((received / seconds) * 10) / 10,
      },
      frames_received: received,
      frames_handed_off: streams.reduce((a, s) => a + s.handed_off, 0),
      frames_stored: this.storage.frames,
      frames_dropped: streams.reduce((a, s) => a + s.dropped_queue, 0),
      frames_rejected: this.rejected,
      frames_over_budget: this.budgetRejected,
      ...(this.recorder.retention ? { retention: this.recorder.retention } : {}),
      ...(this.budget
        ? {
          budget: {
            ...this.budget,
            paused: true as const,
            recovery: this.budget.reason === "pinned"
              ? "Pinned evidence fills this instance's share and is never deleted for room: unpin_resolved_range the pins you no longer need (query_pin_state lists them with their bytes), or raise KROMETRAIL_DISK_BUDGET_BYTES and restart; capture resumes by itself once a frame fits."
              : "Nothing reclaimable is left in this instance's share: raise KROMETRAIL_DISK_BUDGET_BYTES and restart, stop other krometrail processes sharing the data directory, or delete_session old sessions; capture resumes by itself once a frame fits.",
          },
        }
        : {}),
      gaps: this.gaps,
      bytes_stored: this.storage.bytes,
      ack_latency_ms: {
        p50: Math.round(percentile(sorted, 0.5) * 100) / 100,
        p99: Math.round(percentile(sorted, 0.99) * 100) / 100,
        max: Math.round((sorted[sorted.length - 1] ?? 0) * 100) / 100,
        samples: sorted.length,
      },
      streams,
      ...(failure
        ? {
          persistence_failure: {
            ...failure,
            recovery: failure.recoverability === "writer_usable"
              ? "Start a new browser session (stop_browser, then start_browser); recording continues there."
              : "Restart the krometrail MCP process; this process can no longer write evidence.",
          },
        }
        : {}),
    };
  }
}
