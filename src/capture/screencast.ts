import { ToolError } from "../errors.ts";
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

/** The most recent frame a stream received (kept for post-action observations). */
export interface LatestFrame {
  ordinal: number;
  recvNs: number;
  /** Base64 JPEG as Chrome sent it. */
  data: string;
}

export interface StreamStats {
  received: number;
  handed_off: number;
  dropped_queue: number;
  /** Acks not yet answered when a newer frame arrived (the newer frame shows they were taken). */
  acks_superseded: number;
  /** Acks Chrome never answered at all; they are not failures while frames keep coming. */
  acks_unanswered: number;
  terminal?: string;
}

/**
 * How a post-action observation picks its frame. A frame received after the rendezvous (`settledNs`)
 * stands at once. Frames received since the dispatch but before the rendezvous ended mean the page
 * painted in response, and the rendezvous's last paint can still be in flight: the next frame within
 * `settleMs` stands, else the latest. With nothing received since the dispatch, the next frame within
 * `waitMs` stands (paint-to-arrival latency), else the latest, which stays current while Chrome paints
 * nothing new.
 */
export interface PostActionFrameRequest {
  dispatchedNs: number;
  settledNs: number;
  settleMs: number;
  waitMs: number;
}

/** How long an unanswered ack is remembered before it is counted as unanswered. */
const ACK_ANSWER_WAIT_MS = 30_000;

/** Screencast JPEG quality: small frames, still legible text. */
export const JPEG_QUALITY = 60;

/**
 * One page's visual stream. Every frame is acknowledged first (one-shot, bounded by the deadline),
 * then given a per-target ordinal, then handed to the bounded ingestion queue. Losses become gaps;
 * a missed acknowledgement deadline ends the stream with exactly one gap.
 */
export class ScreencastStream {
  readonly stats: StreamStats = {
    received: 0,
    handed_off: 0,
    dropped_queue: 0,
    acks_superseded: 0,
    acks_unanswered: 0,
  };
  #ordinal = 0;
  #queueGapOpen = false;
  #lastDroppedNs = 0;
  #hidden = false;
  #unanswered = new Set<number>();
  #latest?: LatestFrame;
  #frameWaiters = new Set<(frame: LatestFrame) => void>();

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
    const ordinal = ++this.#ordinal;
    this.#unanswered.add(ordinal);
    this.page.send("Page.screencastFrameAck", { sessionId: params.sessionId }, ACK_ANSWER_WAIT_MS).then(
      () => {
        this.#unanswered.delete(ordinal);
        const latency = performance.now() - t0;
        if (latency > this.host.ackDeadlineMs) {
          this.#endByAck(recvNs, ordinal, `confirmed after ${Math.round(latency)} ms`);
        } else if (!this.stats.terminal) this.host.ackLatency(latency);
      },
      (err) => {
        this.#unanswered.delete(ordinal);
        // Chrome leaves some acks unanswered although the stream goes on; only a refusal is a failure.
        if (err instanceof ToolError && err.code === "cdp_timeout") {
          this.stats.acks_unanswered++;
          return;
        }
        if (this.page.closed || (err instanceof ToolError && err.code === "browser_disconnected")) return;
        this.#endByAck(recvNs, ordinal, "refused");
      },
    );
    // A newer frame shows Chrome took the earlier acks whether or not it answered them.
    for (const earlier of this.#unanswered) {
      if (earlier < ordinal) {
        this.#unanswered.delete(earlier);
        this.stats.acks_superseded++;
      }
    }

    const meta = params.metadata;
    this.#latest = { ordinal, recvNs, data: params.data };
    for (const waiter of [...this.#frameWaiters]) waiter(this.#latest);
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

  /**
   * The frame that shows the page after an action, for its observation (see PostActionFrameRequest).
   * Undefined when the stream cannot vouch for the present (ended, hidden, or no frame yet).
   */
  postActionFrame(request: PostActionFrameRequest): Promise<LatestFrame | undefined> {
    if (this.stats.terminal || this.#hidden) return Promise.resolve(undefined);
    const latest = this.#latest;
    if (latest && latest.recvNs >= request.settledNs) return Promise.resolve(latest);
    const painted = latest !== undefined && latest.recvNs >= request.dispatchedNs;
    return this.#nextFrameWithin(painted ? request.settleMs : request.waitMs);
  }

  /** The next frame to arrive within `waitMs`, else the latest (current while nothing is painted). */
  #nextFrameWithin(waitMs: number): Promise<LatestFrame | undefined> {
    return new Promise((resolve) => {
      const waiter = (frame: LatestFrame) => {
        clearTimeout(timer);
        this.#frameWaiters.delete(waiter);
        resolve(frame);
      };
      const timer = setTimeout(() => {
        this.#frameWaiters.delete(waiter);
        resolve(this.stats.terminal || this.#hidden ? undefined : this.#latest);
      }, waitMs);
      this.#frameWaiters.add(waiter);
    });
  }

  /** One-shot acknowledgement failed beyond the deadline: the stream ends with exactly one gap. */
  #endByAck(recvNs: number, ordinal: number, how: string): void {
    if (this.stats.terminal) return;
    this.stats.terminal = "ack_deadline_exceeded";
    this.host.gap({
      session_id: this.host.sessionId,
      page_id: this.page.id,
      kind: "ack_deadline",
      start_ns: recvNs,
      end_ns: null,
      ordinal,
      cause: `acknowledgement ${how}, beyond the ${this.host.ackDeadlineMs} ms deadline; stream ended`,
    });
    this.page.send("Page.stopScreencast").catch(() => {});
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
