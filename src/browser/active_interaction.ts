/**
 * Which interaction was in flight at a given wall-clock instant. Browser events reach us a little
 * after they happen, so an event Chrome stamped just before an action began can arrive once the
 * action is already active; attributing by arrival would give the action an event it did not
 * cause. Events carry Chrome's own timestamps (same machine, same clock), so they are attributed
 * to the interaction whose span (dispatch start to the end of its observation) contains them.
 */

interface Span {
  id: string;
  from: number;
  to?: number;
}

/** Spans kept for late events: a few seconds of actions is far more than any delivery delay. */
const SPAN_MEMORY = 32;

export class ActiveInteractions {
  #spans: Span[] = [];

  get current(): string | undefined {
    const last = this.#spans.at(-1);
    return last && last.to === undefined ? last.id : undefined;
  }

  /** Starts a span (closing the open one) or, with undefined, closes the open span. */
  set current(id: string | undefined) {
    const now = Date.now();
    const last = this.#spans.at(-1);
    if (last && last.to === undefined) {
      if (last.id === id) return;
      last.to = now;
    }
    if (id === undefined) return;
    this.#spans.push({ id, from: now });
    if (this.#spans.length > SPAN_MEMORY) this.#spans.shift();
  }

  /** The interaction begun last, open or already closed. */
  get latest(): string | undefined {
    return this.#spans.at(-1)?.id;
  }

  /** The interaction active at `epochMs` (Chrome's timestamp of the event), if any. */
  at(epochMs: number): string | undefined {
    for (let i = this.#spans.length - 1; i >= 0; i--) {
      const s = this.#spans[i];
      if (epochMs >= s.from) return s.to === undefined || epochMs <= s.to ? s.id : undefined;
    }
    return undefined;
  }
}
