/**
 * The worker's pins: which ranges are pinned, what they hold, and what that costs. A pin holds the
 * sealed segments whose frames meet its span and, while recording goes on, the page's open segment.
 */
import type { DatabaseSync } from "node:sqlite";
import type { ReclaimCandidate } from "../store/budget.ts";
import { type PageSpan, type Pin, pinnedBy, type PinView, pinView } from "../store/protection.ts";

/** The open segment of each page: not reclaimable, but what a pin of the live tail holds. */
export type OpenSegments = () => Array<
  { session_id: string; page_id: string; startNs: number; bytes: number }
>;

export class PinBook {
  #pins = new Map<string, Pin>();
  #seq = 0;

  constructor(
    private readonly db: DatabaseSync,
    private readonly retained: () => readonly ReclaimCandidate[],
    private readonly openSegments: OpenSegments,
  ) {}

  get size(): number {
    return this.#pins.size;
  }

  values(): IterableIterator<Pin> {
    return this.#pins.values();
  }

  protects(c: ReclaimCandidate): boolean {
    return this.#pins.size > 0 && pinnedBy(c, this.#pins.values());
  }

  /** Protects every segment needed to rebuild the span, from the frame on screen at its start on. */
  add(span: PageSpan, label?: string): PinView {
    const before = this.db.prepare(
      "SELECT max(recv_ns) AS at FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns <= ?",
    ).get(span.session_id, span.page_id, Math.round(span.start_ns)) as { at: number | null } | undefined;
    const pin: Pin = {
      ...span,
      pin_id: `pin-${++this.#seq}`,
      hold_from_ns: Math.min(span.start_ns, before?.at ?? span.start_ns),
      ...(label ? { label } : {}),
      created_at: new Date().toISOString(),
    };
    this.#pins.set(pin.pin_id, pin);
    return this.#view(pin);
  }

  /** Removes the named pins; returns the ids that existed. */
  remove(ids: string[]): string[] {
    return ids.filter((id) => this.#pins.delete(id));
  }

  /** Pins whose span is this one to the millisecond (unpinning by the range that was pinned). */
  matching(span: PageSpan): string[] {
    return [...this.#pins.values()].filter((p) =>
      p.session_id === span.session_id && p.page_id === span.page_id &&
      Math.abs(p.start_ns - span.start_ns) < 1e6 && Math.abs(p.end_ns - span.end_ns) < 1e6
    ).map((p) => p.pin_id);
  }

  views(sessionId?: string): PinView[] {
    return [...this.#pins.values()].filter((p) => !sessionId || p.session_id === sessionId).map((p) =>
      this.#view(p)
    );
  }

  forgetSession(sessionId: string): void {
    for (const [id, p] of this.#pins) if (p.session_id === sessionId) this.#pins.delete(id);
  }

  pinnedBytes(): number {
    return this.#pins.size > 0 ? this.#held([...this.#pins.values()]).bytes : 0;
  }

  #view(pin: Pin): PinView {
    return pinView(pin, this.#held([pin]));
  }

  /** Sealed and open segments the given pins hold, each counted once. */
  #held(pins: Pin[]): { segments: number; bytes: number } {
    let segments = 0;
    let bytes = 0;
    for (const c of this.retained()) {
      if (pinnedBy(c, pins)) {
        segments++;
        bytes += c.bytes;
      }
    }
    for (const open of this.openSegments()) {
      const held = pins.some((p) =>
        p.session_id === open.session_id && p.page_id === open.page_id && open.startNs <= p.end_ns
      );
      if (held) {
        segments++;
        bytes += open.bytes;
      }
    }
    return { segments, bytes };
  }
}
