import { ToolError } from "../errors.ts";
import type { EventParams } from "../browser/cdp.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { FrameMessage, GapRow } from "./messages.ts";
import { newPictures, type StampedFrame, streamPace } from "./frame_identity.ts";

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

/** A frame a stream received (the recent ones are kept for post-action observations). */
export type LatestFrame = StampedFrame;

export interface StreamStats {
  received: number;
  handed_off: number;
  dropped_queue: number;
  /** Acks not yet answered when a newer frame arrived (the newer frame shows they were taken). */
  acks_superseded: number;
  /** Acks Chrome never answered at all; they are not failures while frames keep coming. */
  acks_unanswered: number;
  terminal?: string;
  /** Nothing can arrive while the connection is down or the renderer is crashed (a gap is open). */
  interrupted?: "disconnected" | "crashed";
}

/** What a post-action observation asks of the stream: frames stamped after `afterMs` (Unix ms). */
export interface PostActionFrameRequest {
  afterMs: number;
}

/**
 * A stream's frames after an action. They cannot stand for the page after an input (see
 * capture/frame_identity.ts), but they show whether it kept changing.
 */
export interface PostActionFrames {
  /** How many frames stamped in [fromMs, toMs) show a new picture (a repaint of the same does not). */
  newPictures(fromMs: number, toMs: number): number;
  /** How fast the stream paints and delivers frames stamped before `beforeMs` (see streamPace). */
  pace(beforeMs: number): { intervalMs: number; latencyMs: number };
  /**
   * Resolves with the first frame stamped after the request's instant for which `changed` holds (received
   * ones first), or undefined once `until` settles or the stream ends.
   */
  watch(until: Promise<unknown>, changed: (frame: LatestFrame) => boolean): Promise<LatestFrame | undefined>;
}

/** Recent frames kept per stream: a quiet window and a settle window at 60 fps, with room to spare. */
const RECENT_FRAMES = 48;

/** Unix ms on our side, sub-millisecond (Chrome stamps frames on the system clock too). */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
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
  #recent: LatestFrame[] = [];
  #frameWaiters = new Set<() => void>();
  #latestStampMs: number | undefined;

  /**
   * `continues`: the stream of the same page id before a reconnection re-adopted it under a new target
   * object. Ordinals go on after its last one (frames are keyed by session, page and ordinal) and the
   * counters keep counting, so the page is one stream on the timeline.
   */
  constructor(readonly page: PageTarget, private readonly host: StreamHost, continues?: ScreencastStream) {
    if (!continues) return;
    this.#ordinal = continues.lastOrdinal;
    const { terminal: _terminal, interrupted: _interrupted, ...counters } = continues.stats;
    Object.assign(this.stats, counters);
  }

  /** The ordinal of the last frame received (0 before the first). */
  get lastOrdinal(): number {
    return this.#ordinal;
  }

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

  /**
   * Starts the screencast again on the same page (its renderer was replaced after a crash). Chrome keeps
   * a screencast across a renderer crash and refuses a second start ("already active"): that is success.
   */
  async restart(): Promise<void> {
    try {
      await this.start();
    } catch (err) {
      if (/already active/i.test(err instanceof Error ? err.message : String(err))) return;
      throw err;
    }
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
    const frame: LatestFrame = { ordinal, recvNs, data: params.data };
    if (meta.timestamp !== undefined) {
      frame.stampMs = meta.timestamp * 1000;
      frame.latencyMs = wallMs() - frame.stampMs;
      this.#latestStampMs = Math.max(this.#latestStampMs ?? -Infinity, frame.stampMs);
    }
    this.#recent.push(frame);
    if (this.#recent.length > RECENT_FRAMES) this.#recent.shift();
    // A waker only resolves its promise (its watch removes it later), so the set can be walked as is.
    for (const wake of this.#frameWaiters) wake();
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

  /** The stream's frames after an action; undefined when it cannot vouch (ended, hidden). */
  postActionFrame(request: PostActionFrameRequest): PostActionFrames | undefined {
    if (!this.#live()) return undefined;
    return {
      newPictures: (fromMs, toMs) => newPictures(this.#recent, fromMs, toMs),
      pace: (beforeMs) => streamPace(this.#recent, beforeMs),
      watch: (until, changed) => this.#watch(request.afterMs, until, changed),
    };
  }

  #live(): boolean {
    return !this.stats.terminal && !this.#hidden;
  }

  /**
   * What a wait for the end of a window needs (temporal/tail_wait.ts): the latest paint stamp received
   * (Unix ms), whether more frames can come, and a promise of the next frame (`cancel` drops it).
   */
  tail(): {
    latestStampMs?: number;
    streaming: boolean;
    nextFrame(): { next: Promise<void>; cancel(): void };
  } {
    return {
      ...(this.#latestStampMs !== undefined ? { latestStampMs: this.#latestStampMs } : {}),
      streaming: this.#live() && !this.stats.interrupted && !this.page.closed,
      nextFrame: () => {
        let wake = () => {};
        const next = new Promise<void>((r) => (wake = r));
        this.#frameWaiters.add(wake);
        return { next, cancel: () => this.#frameWaiters.delete(wake) };
      },
    };
  }

  async #watch(
    afterMs: number,
    until: Promise<unknown>,
    changed: (frame: LatestFrame) => boolean,
  ): Promise<LatestFrame | undefined> {
    let over = false;
    const end = until.then(() => (over = true), () => (over = true));
    // Every received frame is judged once, including frames delivered together in one socket read.
    const judged = new Set<number>();
    const hit = () =>
      this.#recent.find((f) => {
        if (judged.has(f.ordinal)) return false;
        judged.add(f.ordinal);
        return f.stampMs !== undefined && f.stampMs > afterMs && changed(f);
      });
    for (;;) {
      const found = hit();
      if (found || over || !this.#live()) return found;
      let wake = () => {};
      const next = new Promise<void>((r) => (wake = r));
      this.#frameWaiters.add(wake);
      await Promise.race([next, end]);
      this.#frameWaiters.delete(wake);
    }
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
