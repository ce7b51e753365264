/**
 * The capture gaps a session holds open on behalf of its pages while no stream can feed them: the
 * connection outage (every page at once) and a crashed renderer (one page). A stream's own gaps
 * (queue, visibility, acknowledgement) stay with the stream; these outlive the stream object, since a
 * re-adopted page gets a new one. Pure bookkeeping: the caller sends the rows.
 */
export type HeldGapKind = "disconnected" | "crashed";

export interface HeldGap {
  page_id: string;
  kind: HeldGapKind;
  start_ns: number;
}

export class OutageGaps {
  /** page id → kind → start (session-clock ns). */
  #open = new Map<string, Map<HeldGapKind, number>>();
  /** Where a re-adopted page's outage gap ends, kept until the reconnection completes. */
  #resumedAt = new Map<string, number>();
  /** Crashed pages that committed a new document: their gap ends at their next frame. */
  #recovered = new Set<string>();

  /** Opens the page's gap of this kind; false when one is already open (nothing to send). */
  open(pageId: string, kind: HeldGapKind, startNs: number): boolean {
    let kinds = this.#open.get(pageId);
    if (!kinds) {
      kinds = new Map();
      this.#open.set(pageId, kinds);
    }
    if (kinds.has(kind)) return false;
    kinds.set(kind, startNs);
    return true;
  }

  isOpen(pageId: string, kind: HeldGapKind): boolean {
    return this.#open.get(pageId)?.has(kind) ?? false;
  }

  /** The page's open gap of this kind, if any. */
  get(pageId: string, kind: HeldGapKind): HeldGap | undefined {
    const start = this.#open.get(pageId)?.get(kind);
    return start === undefined ? undefined : { page_id: pageId, kind, start_ns: start };
  }

  /** Closes the page's gap of this kind; false when none was open. */
  end(pageId: string, kind: HeldGapKind): boolean {
    const kinds = this.#open.get(pageId);
    if (!kinds?.delete(kind)) return false;
    if (kinds.size === 0) this.#open.delete(pageId);
    if (kind === "disconnected") this.#resumedAt.delete(pageId);
    if (kind === "crashed") this.#recovered.delete(pageId);
    return true;
  }

  /** Closes every gap of the page (it left the session); returns the kinds that were open. */
  endPage(pageId: string): HeldGapKind[] {
    const kinds = [...(this.#open.get(pageId)?.keys() ?? [])];
    for (const kind of kinds) this.end(pageId, kind);
    return kinds;
  }

  /** Closes every open gap (the capture stops); returns them. */
  endAll(): HeldGap[] {
    const all = this.list();
    for (const g of all) this.end(g.page_id, g.kind);
    return all;
  }

  /** Every open gap, in the order opened per page. */
  list(): HeldGap[] {
    return [...this.#open].flatMap(([page_id, kinds]) =>
      [...kinds].map(([kind, start_ns]) => ({ page_id, kind, start_ns }))
    );
  }

  /**
   * A page came back under its id during a reconnection: its outage gap ends here, but only once the
   * reconnection completes (an attempt that fails after re-adopting drops the page again). A later
   * re-adoption of the same page moves the instant.
   */
  readopted(pageId: string, atNs: number): void {
    if (this.isOpen(pageId, "disconnected")) this.#resumedAt.set(pageId, atNs);
  }

  /**
   * The reconnection completed: ends the outage gap of every re-adopted page at its re-adoption (pages
   * not re-adopted keep theirs: they are dropped, or the session ends). Returns the gaps to close.
   */
  resumed(): Array<{ page_id: string; end_ns: number }> {
    const closed = [...this.#resumedAt].map(([page_id, end_ns]) => ({ page_id, end_ns }));
    for (const { page_id } of closed) this.end(page_id, "disconnected");
    return closed;
  }

  /** A crashed page renders again (reload or navigation): its gap ends at its next frame. */
  recovered(pageId: string): void {
    if (this.isOpen(pageId, "crashed")) this.#recovered.add(pageId);
  }

  /** A frame arrived: true when it ends the page's crash gap (the page was recovered). */
  frameEndsCrash(pageId: string): boolean {
    if (!this.#recovered.has(pageId)) return false;
    return this.end(pageId, "crashed");
  }

  /** The kind of the page's open gap that stops its stream, if any (disconnected first). */
  interruption(pageId: string): HeldGapKind | undefined {
    const kinds = this.#open.get(pageId);
    if (!kinds) return undefined;
    return kinds.has("disconnected") ? "disconnected" : kinds.has("crashed") ? "crashed" : undefined;
  }
}
