import { setImmediate } from "node:timers";
import type { EventParams } from "../browser/cdp.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { FrameMessage, GapRow } from "./messages.ts";

/** What a stream needs from its session capture; kept narrow so streams are easy to reason about. */
export interface StreamHost {
  readonly sessionId: string;
  readonly everyNthFrame: number;
  readonly ackDeadlineMs: number;
  nowNs(): number;
  handoff(frame: FrameMessage): boolean;
  gap(row: GapRow): void;
  gapEnd(pageId: string, kind: GapRow["kind"], endNs: number): void;
  ackLatency(ms: number): void;
}

export interface StreamStats {
  received: number;
  handed_off: number;
  dropped_queue: number;
  /** Acks never answered but followed by newer frames (Chrome loses them across renderer swaps). */
  acks_superseded: number;
  terminal?: string;
}

/** Screencast JPEG quality: small frames, still legible text. */
const JPEG_QUALITY = 60;

/**
 * One page's visual stream. Every frame is acknowledged first (one-shot, bounded by the deadline),
 * then given a per-target ordinal, then handed to the bounded ingestion queue. Losses become gaps;
 * a missed acknowledgement deadline ends the stream with exactly one gap.
 */
export class ScreencastStream {
  readonly stats: StreamStats = { received: 0, handed_off: 0, dropped_queue: 0, acks_superseded: 0 };
  #ordinal = 0;
  #queueGapOpen = false;
  #lastDroppedNs = 0;
  #hidden = false;

  constructor(readonly page: PageTarget, private readonly host: StreamHost) {}

  /** Starts the screencast; re-sent when unanswered, since a renderer swap can drop it. */
  async start(): Promise<void> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await this.page.send("Page.startScreencast", {
          format: "jpeg",
          quality: JPEG_QUALITY,
          everyNthFrame: this.host.everyNthFrame,
        }, 2_000);
        return;
      } catch (err) {
        lastError = err;
        if (this.page.closed) break;
      }
    }
    throw lastError;
  }

  onFrame(params: EventParams<"Page.screencastFrame">): void {
    const recvNs = this.host.nowNs();
    const t0 = performance.now();
    if (this.stats.terminal) return;
    this.stats.received++;
    // Acknowledge before anything else; the token is used once and never retried.
    let acked = false;
    const ordinal = ++this.#ordinal;
    const generation = this.page.generation;
    const deadline = setTimeout(() =>
      setImmediate(() => {
        // Checked after the I/O phase: an answer that arrived while this thread was busy still counts.
        if (acked || this.stats.terminal) return;
        // A newer frame proves the stream moved on, and Chrome drops answers when a navigation swaps
        // the renderer. Only a stream that went silent behind an unanswered ack is terminal.
        if (this.#ordinal > ordinal || this.page.generation !== generation) {
          this.stats.acks_superseded++;
          return;
        }
        this.stats.terminal = "ack_deadline_exceeded";
        this.host.gap({
          session_id: this.host.sessionId,
          page_id: this.page.id,
          kind: "ack_deadline",
          start_ns: recvNs,
          end_ns: null,
          ordinal,
          cause: `acknowledgement not confirmed within ${this.host.ackDeadlineMs} ms; stream ended`,
        });
        this.page.send("Page.stopScreencast").catch(() => {});
      }), this.host.ackDeadlineMs);
    this.page.send("Page.screencastFrameAck", { sessionId: params.sessionId }).then(() => {
      acked = true;
      clearTimeout(deadline);
      if (!this.stats.terminal) this.host.ackLatency(performance.now() - t0);
    }, () => clearTimeout(deadline));

    const meta = params.metadata;
    const accepted = this.host.handoff({
      type: "frame",
      session_id: this.host.sessionId,
      page_id: this.page.id,
      ordinal,
      recv_ns: recvNs,
      chrome_ts: meta.timestamp ?? null,
      data: params.data,
      viewport_width: meta.deviceWidth,
      viewport_height: meta.deviceHeight,
      device_scale: meta.pageScaleFactor,
    });
    if (accepted) {
      this.stats.handed_off++;
      if (this.#queueGapOpen) {
        this.#queueGapOpen = false;
        this.host.gapEnd(this.page.id, "queue_full", this.#lastDroppedNs);
      }
      return;
    }
    this.stats.dropped_queue++;
    this.#lastDroppedNs = recvNs;
    if (!this.#queueGapOpen) {
      this.#queueGapOpen = true;
      this.host.gap({
        session_id: this.host.sessionId,
        page_id: this.page.id,
        kind: "queue_full",
        start_ns: recvNs,
        end_ns: null,
        ordinal,
        cause: "ingestion queue full; frame acknowledged and dropped",
      });
    }
  }

  /** Chrome pauses screencast for hidden pages: record that as a visibility gap, not continuity. */
  onVisibility(visible: boolean): void {
    const now = this.host.nowNs();
    if (!visible && !this.#hidden) {
      this.#hidden = true;
      this.host.gap({
        session_id: this.host.sessionId,
        page_id: this.page.id,
        kind: "visibility",
        start_ns: now,
        end_ns: null,
        ordinal: this.#ordinal,
        cause: "page hidden; Chrome paused its screencast",
      });
    } else if (visible && this.#hidden) {
      this.#hidden = false;
      this.host.gapEnd(this.page.id, "visibility", now);
    }
  }

  /** Closes open gaps at the end of the stream so none is left dangling. */
  async stop(): Promise<void> {
    const now = this.host.nowNs();
    if (this.#queueGapOpen) this.host.gapEnd(this.page.id, "queue_full", this.#lastDroppedNs);
    if (this.#hidden) this.host.gapEnd(this.page.id, "visibility", now);
    if (this.stats.terminal) this.host.gapEnd(this.page.id, "ack_deadline", now);
    this.#queueGapOpen = false;
    this.#hidden = false;
    if (!this.page.closed && !this.stats.terminal) {
      await this.page.send("Page.stopScreencast", undefined, 2_000).catch(() => {});
    }
  }
}
