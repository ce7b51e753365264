/**
 * Questions the agent asks a person (ask_human, Traces' ask_human_visual): a bounded in-process
 * registry shared by the ask_human tool, which asks and waits, and the evidence viewer, which shows
 * the question and takes the answer. The first answer wins; later ones are ignored. Nothing here
 * knows MCP or HTTP.
 */

export type QuestionState = "pending" | "answered" | "dismissed";

export interface HumanAnswer {
  choice: string;
  /** Session time the person marked on the timeline, when they marked one. */
  marked_time_ms?: number;
  /** The human-authored marker made from the mark. */
  marker_id?: string;
  answered_at: string;
}

export interface HumanQuestion {
  ticket: string;
  question: string;
  choices: string[];
  session_id: string;
  page_id?: string;
  /** The instant the question points at (session ms), when the agent gave one. */
  at_ms?: number;
  created_at: string;
  state: QuestionState;
  answer?: HumanAnswer;
  dismissed_at?: string;
  /**
   * How the agent's MCP client put the question before the person besides the viewer: a URL
   * elicitation (the viewer link) or a form (choices only). A retried call's input responses are
   * only taken for the kind the server itself asked for.
   */
  elicited?: "url" | "form";
}

export interface AskInput {
  question: string;
  choices: string[];
  session_id: string;
  page_id?: string;
  at_ms?: number;
}

export type AnswerOutcome =
  | { accepted: true; question: HumanQuestion }
  | {
    accepted: false;
    reason: "unknown_ticket" | "already_answered" | "dismissed" | "invalid_choice";
    question?: HumanQuestion;
  };

export type DismissOutcome =
  | { outcome: "unknown_ticket" }
  | { outcome: "dismissed" | "already_dismissed" | "already_answered"; question: HumanQuestion };

/** Pending questions at once; a new ask beyond this is refused by the tool (it names both numbers). */
export const PENDING_LIMIT = 20;
/** Settled questions kept so a late retry with its ticket still gets the answer. */
export const SETTLED_LIMIT = 200;

/** Makes the human-authored marker for a mark; returns its id. */
export type MarkerMaker = (question: HumanQuestion, markedTimeMs: number, choice: string) => Promise<string>;

export class HumanQuestions {
  readonly #questions = new Map<string, HumanQuestion>();
  /** Tickets whose answer is being stored (marker write in flight): a second answer is already late. */
  readonly #claimed = new Set<string>();
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #listeners = new Set<() => void>();

  pendingCount(): number {
    let n = 0;
    for (const q of this.#questions.values()) if (q.state === "pending") n++;
    return n;
  }

  ask(input: AskInput, now = new Date()): HumanQuestion {
    const q: HumanQuestion = {
      ticket: `q-${crypto.randomUUID().replace(/-/g, "").slice(0, 12)}`,
      question: input.question,
      choices: [...input.choices],
      session_id: input.session_id,
      ...(input.page_id !== undefined ? { page_id: input.page_id } : {}),
      ...(input.at_ms !== undefined ? { at_ms: input.at_ms } : {}),
      created_at: now.toISOString(),
      state: "pending",
    };
    this.#questions.set(q.ticket, q);
    this.#trim();
    this.#changed(q.ticket);
    return q;
  }

  get(ticket: string): HumanQuestion | undefined {
    return this.#questions.get(ticket);
  }

  /** Newest first. */
  list(): HumanQuestion[] {
    return [...this.#questions.values()].reverse();
  }

  pending(): HumanQuestion[] {
    return this.list().filter((q) => q.state === "pending");
  }

  /**
   * Takes the person's answer. The first valid answer wins (a second one, even while the first's
   * marker is being written, is `already_answered`); the mark becomes a marker through `makeMarker`.
   */
  async answer(
    ticket: string,
    input: { choice: string; marked_time_ms?: number },
    makeMarker?: MarkerMaker,
    now: () => Date = () => new Date(),
  ): Promise<AnswerOutcome> {
    const q = this.#questions.get(ticket);
    if (!q) return { accepted: false, reason: "unknown_ticket" };
    if (q.state === "answered" || this.#claimed.has(ticket)) {
      return { accepted: false, reason: "already_answered", question: q };
    }
    if (q.state === "dismissed") return { accepted: false, reason: "dismissed", question: q };
    if (!q.choices.includes(input.choice)) return { accepted: false, reason: "invalid_choice", question: q };
    this.#claimed.add(ticket);
    try {
      let markerId: string | undefined;
      if (input.marked_time_ms !== undefined && makeMarker) {
        markerId = await makeMarker(q, input.marked_time_ms, input.choice);
      }
      q.answer = {
        choice: input.choice,
        ...(input.marked_time_ms !== undefined ? { marked_time_ms: input.marked_time_ms } : {}),
        ...(markerId !== undefined ? { marker_id: markerId } : {}),
        answered_at: now().toISOString(),
      };
      q.state = "answered";
    } finally {
      this.#claimed.delete(ticket);
    }
    this.#changed(ticket);
    return { accepted: true, question: q };
  }

  /** Notes that the client was asked to show the question (see `HumanQuestion.elicited`). */
  noteElicited(ticket: string, how: "url" | "form"): void {
    const q = this.#questions.get(ticket);
    if (q) q.elicited = how;
  }

  /**
   * The person (or their client) declined the question. Only a pending question is dismissed: one
   * whose answer is being stored (claimed) is already answered, since that answer is about to stand.
   */
  dismiss(ticket: string, now = new Date()): DismissOutcome {
    const q = this.#questions.get(ticket);
    if (!q) return { outcome: "unknown_ticket" };
    if (q.state === "answered" || this.#claimed.has(ticket)) {
      return { outcome: "already_answered", question: q };
    }
    if (q.state === "dismissed") return { outcome: "already_dismissed", question: q };
    q.state = "dismissed";
    q.dismissed_at = now.toISOString();
    this.#changed(ticket);
    return { outcome: "dismissed", question: q };
  }

  /** Resolves when the question is settled, `ms` passes or `signal` aborts; returns it as it then is. */
  wait(ticket: string, ms: number, signal?: AbortSignal): Promise<HumanQuestion | undefined> {
    const q = this.#questions.get(ticket);
    if (!q || q.state !== "pending" || signal?.aborted) return Promise.resolve(q);
    return new Promise((resolve) => {
      const set = this.#waiters.get(ticket) ?? new Set();
      this.#waiters.set(ticket, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(wake);
        signal?.removeEventListener("abort", done);
        resolve(this.#questions.get(ticket));
      };
      const wake = () => {
        if (this.#questions.get(ticket)?.state !== "pending") done();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      set.add(wake);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Called on every change (the viewer's live question list). Returns an unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(ticket: string): void {
    for (const wake of [...(this.#waiters.get(ticket) ?? [])]) wake();
    for (const l of [...this.#listeners]) {
      try {
        l();
      } catch { /* a listener's failure is its own */ }
    }
  }

  /** Drops the oldest settled questions beyond the limit; pending ones are never dropped. */
  #trim(): void {
    const settled = [...this.#questions.values()].filter((q) => q.state !== "pending");
    for (const q of settled.slice(0, Math.max(0, settled.length - SETTLED_LIMIT))) {
      this.#questions.delete(q.ticket);
      this.#waiters.delete(q.ticket);
    }
  }
}
