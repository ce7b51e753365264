/**
 * The process's one evidence viewer, started on first use (open_viewer, ask_human, `krometrail view`)
 * and closed with the process. The slot only sequences start and close; server.ts serves.
 */

export interface RunningViewer {
  /** http://127.0.0.1:PORT */
  readonly origin: string;
  /** The per-process secret every request must carry. */
  readonly token: string;
  /** The viewer's entry URL, token included. */
  readonly url: string;
  /** A deep link: a session, a page, an instant, or a question to answer. */
  link(to: { session_id?: string; page_id?: string; at_ms?: number; ticket?: string }): string;
  close(): Promise<void>;
}

export class ViewerSlot {
  #running?: Promise<RunningViewer>;
  #started?: RunningViewer;

  constructor(private readonly start: () => Promise<RunningViewer>) {}

  /** The running viewer, starting it if needed; a failed start is retried by the next call. */
  ensure(): Promise<RunningViewer> {
    this.#running ??= this.start().then((v) => (this.#started = v)).catch((err) => {
      this.#running = undefined;
      throw err;
    });
    return this.#running;
  }

  /** The viewer if it is already running (status lines), without starting it. */
  get started(): RunningViewer | undefined {
    return this.#started;
  }

  async close(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    this.#started = undefined;
    if (running) await (await running.catch(() => undefined))?.close().catch(() => {});
  }
}
