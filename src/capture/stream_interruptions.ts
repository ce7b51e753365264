/**
 * How a session's capture follows its troubles: the connection dropping (every stream stops, one
 * `disconnected` gap per page until the page is re-adopted, dropped or the session ends) and a renderer
 * crashing (a `crashed` gap on that page until it paints again after a reload or navigation). The gaps
 * are held here, across the page's stream objects; the bookkeeping is OutageGaps.
 */
import type { BrowserSession, PageTrouble, Reconnected } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { GapRow } from "./messages.ts";
import { type HeldGapKind, OutageGaps } from "./outage_gaps.ts";
import { ScreencastStream, type StreamHost } from "./screencast.ts";

/** What the interruptions need of their session capture. */
export interface InterruptionHost extends StreamHost {
  readonly session: BrowserSession;
  readonly streams: Map<string, ScreencastStream>;
  readonly stopped: boolean;
  gap(row: GapRow): void;
  /** A page new to the session: its stream and its target row. */
  startStream(page: PageTarget): void;
  startScreencast(stream: ScreencastStream): void;
}

export class StreamInterruptions {
  readonly #gaps = new OutageGaps();
  /** Re-adopted pages still crashed: their screencast waits for the recovery (nothing renders). */
  readonly #unstarted = new Set<string>();

  constructor(private readonly host: InterruptionHost) {}

  /** The session listeners this needs; each returns its unsubscribe. */
  subscribe(): Array<() => void> {
    const s = this.host.session;
    return [
      s.onConnectionLost((atMs) => this.#connectionLost(atMs)),
      s.onReconnected((info) => this.#reconnected(info)),
      s.onPageTrouble((page, trouble) => this.#pageTrouble(page, trouble)),
      s.onPageRecovered((page) => this.#pageRecovered(page)),
    ];
  }

  /** Whether the page's outage gap is open (its stream's failures are the outage's, not its own). */
  disconnected(pageId: string): boolean {
    return this.#gaps.isOpen(pageId, "disconnected");
  }

  /**
   * The stream events of this very page object feed: none for an orphan of a dropped connection
   * (closed: it cannot acknowledge a frame).
   */
  streamOf(page: PageTarget): ScreencastStream | undefined {
    const stream = this.host.streams.get(page.id);
    return stream?.page === page && !page.closed ? stream : undefined;
  }

  /** The stream a screencast frame feeds; the first frame of a recovered page ends its crash gap. */
  frameStream(page: PageTarget): ScreencastStream | undefined {
    const stream = this.streamOf(page);
    if (stream && this.#gaps.frameEndsCrash(page.id)) {
      stream.stats.interrupted = this.#gaps.interruption(page.id);
      this.host.gapEnd(page.id, "crashed", this.host.nowNs());
    }
    return stream;
  }

  /** The page left the session: its held gaps end now. */
  endPage(pageId: string, endNs: number): void {
    this.#unstarted.delete(pageId);
    for (const kind of this.#gaps.endPage(pageId)) this.host.gapEnd(pageId, kind, endNs);
    const stream = this.host.streams.get(pageId);
    if (stream) stream.stats.interrupted = undefined;
  }

  /** The capture stops (the session ended, a reconnection window ran out): every held gap ends now. */
  endAll(endNs: number): void {
    for (const g of this.#gaps.endAll()) this.host.gapEnd(g.page_id, g.kind, endNs);
  }

  #openHeld(page: PageTarget | string, kind: HeldGapKind, startNs: number, cause: string): void {
    const pageId = typeof page === "string" ? page : page.id;
    if (!this.#gaps.open(pageId, kind, startNs)) return;
    const stream = this.host.streams.get(pageId);
    if (stream) stream.stats.interrupted = this.#gaps.interruption(pageId);
    this.host.gap({
      session_id: this.host.sessionId,
      page_id: pageId,
      kind,
      start_ns: startNs,
      end_ns: null,
      ordinal: stream?.lastOrdinal ?? null,
      cause,
    });
  }

  #endHeld(pageId: string, kind: HeldGapKind, endNs: number): void {
    if (!this.#gaps.end(pageId, kind)) return;
    const stream = this.host.streams.get(pageId);
    if (stream) stream.stats.interrupted = this.#gaps.interruption(pageId);
    this.host.gapEnd(pageId, kind, endNs);
  }

  /**
   * The connection dropped: every page object is closed, so no stream can be fed. Each stream's own
   * gaps end here (the outage gap covers what follows, one gap per page) without a CDP round trip.
   */
  #connectionLost(atMs: number): void {
    if (this.host.stopped) return;
    const startNs = Math.round(atMs * 1e6);
    const conn = this.host.session.connection;
    const window = conn.state === "reconnecting" ? ` for up to ${conn.window_ms} ms` : "";
    for (const [pageId, stream] of this.host.streams) {
      // Pages that left the session before the drop have nothing to cover.
      if (this.host.session.pages.get(pageId) !== stream.page) continue;
      // A crash gap gives way to the outage gap: the re-adopted page is a new renderer attachment.
      this.#endHeld(pageId, "crashed", startNs);
      stream.stop().catch(() => {});
      this.#openHeld(
        pageId,
        "disconnected",
        startNs,
        `the browser connection dropped; reconnecting${window}`,
      );
    }
  }

  /**
   * A page that kept its id across the reconnection: a new stream on the new page object, its ordinals
   * and counters continuing the old one's; no second target row (the page is the same target on our
   * timeline). Its outage gap ends here once the reconnection completes.
   */
  readopt(page: PageTarget): void {
    if (this.host.stopped) return;
    const previous = this.host.streams.get(page.id);
    if (!previous) {
      this.host.startStream(page);
      return;
    }
    if (previous.page === page) return;
    previous.stop().catch(() => {});
    const stream = new ScreencastStream(page, this.host, previous);
    stream.stats.interrupted = this.#gaps.interruption(page.id);
    this.host.streams.set(page.id, stream);
    this.#gaps.readopted(page.id, this.host.nowNs());
    if (page.crash) this.#unstarted.add(page.id);
    else {
      this.#unstarted.delete(page.id);
      this.host.startScreencast(stream);
    }
  }

  #reconnected(_info: Reconnected): void {
    if (this.host.stopped) return;
    for (const { page_id, end_ns } of this.#gaps.resumed()) {
      const stream = this.host.streams.get(page_id);
      if (stream) stream.stats.interrupted = this.#gaps.interruption(page_id);
      this.host.gapEnd(page_id, "disconnected", end_ns);
      if (!stream || !this.#unstarted.has(page_id)) continue;
      const crash = stream.page.crash;
      if (!crash) {
        // It recovered between its re-adoption and now: it renders, so its screencast starts.
        this.#unstarted.delete(page_id);
        this.host.startScreencast(stream);
        continue;
      }
      // Still crashed on the new connection: the crash gap the outage cut short reopens at the resume.
      this.#openHeld(
        page_id,
        "crashed",
        end_ns,
        `renderer still crashed (${crash.status}) after the reconnection; nothing renders until the page is reloaded or navigated`,
      );
    }
  }

  /** A crashed renderer shows nothing until reloaded: a gap for that page only. A hang opens none. */
  #pageTrouble(page: PageTarget, trouble: PageTrouble): void {
    if (this.host.stopped || trouble.kind !== "crashed" || !this.streamOf(page)) return;
    this.#openHeld(
      page,
      "crashed",
      Math.round(trouble.at_ms * 1e6),
      `renderer crashed (${trouble.status}, code ${trouble.error_code}); nothing renders until the page is reloaded or navigated`,
    );
  }

  /** A crashed page committed a new document: its screencast starts again; the gap ends at its first frame. */
  #pageRecovered(page: PageTarget): void {
    const stream = this.streamOf(page);
    if (this.host.stopped || !stream || !this.#gaps.isOpen(page.id, "crashed")) return;
    this.#gaps.recovered(page.id);
    this.#unstarted.delete(page.id);
    const recoveredNs = this.host.nowNs();
    stream.restart().catch((err) => {
      // No frame will end the gap: it ends at the recovery and the failure is a gap of its own.
      this.#endHeld(page.id, "crashed", recoveredNs);
      this.host.gap({
        session_id: this.host.sessionId,
        page_id: page.id,
        kind: "stream_error",
        start_ns: recoveredNs,
        end_ns: null,
        cause: `screencast did not restart after the crash: ${String(err).slice(0, 120)}`,
      });
    });
  }
}
