import type { CdpConnection, CommandParams, CommandResult, Commands } from "./cdp.ts";
import { ToolError } from "../errors.ts";

export interface DialogState {
  type: "alert" | "confirm" | "prompt" | "beforeunload";
  message: string;
  default_prompt?: string;
  opened_at: string;
}

/** A page whose renderer died (Target.targetCrashed): it shows nothing until reloaded or navigated. */
export interface PageCrash {
  /** Session-clock ms when Chrome reported it. */
  at_ms: number;
  /** Chrome's termination status ("crashed", "killed", "oom", …). */
  status: string;
  error_code: number;
}

type LoadWaiter = { loaderId?: string; resolve: () => void };

/**
 * Target-scoped emulation that must hold for the life of the target (viewport metrics, touch).
 * `apply` sends its commands synchronously, in order, and returns their replies: initialize()
 * slots them in before the target is released, so a (re)attached target runs, paints and is
 * recorded with the override already in force.
 */
export interface TargetOverride {
  apply(page: PageTarget, timeoutMs?: number): Array<Promise<unknown>>;
}

/** Page setup is retried when Chrome drops its commands during a new tab's first renderer swap. */
const INIT_ATTEMPTS = 3;
const INIT_TIMEOUT_MS = 1_500;

/** Lifecycle moments after which the document title is read again (scripts often set it late). */
const TITLE_MOMENTS = new Set(["DOMContentLoaded", "load", "networkIdle"]);

/** Bounded memory of documents that reached load, so a late waiter still resolves. */
const LOADED_MEMORY = 16;

/**
 * One attached page target. `generation` counts documents seen through this attachment: it bumps
 * on every main-frame document replacement, so snapshot refs can tell they are stale.
 */
export class PageTarget {
  readonly id: string;
  readonly ordinal: number;
  readonly targetId: string;
  readonly sessionId: string;
  readonly openerPageId?: string;
  readonly createdAt = Date.now();
  url: string;
  generation = 1;
  mainFrameId?: string;
  loaderId?: string;
  dialog?: DialogState;
  closed = false;
  /** Set while the renderer is gone (session.ts clears it when a new document commits). */
  crash?: PageCrash;
  /** Main frame is between frameStartedLoading and frameStoppedLoading. */
  loading = false;
  #conn: CdpConnection;
  #loaded: string[] = [];
  #waiters = new Set<LoadWaiter>();
  #navigationCount = 0;
  #dialogWaiters = new Set<() => void>();
  /** The document's own title once read from it; Chrome's target title until then. */
  #title = "";
  /** Overrides re-applied whenever this target initializes, keyed by their owner ("viewport"). */
  readonly overrides = new Map<string, TargetOverride>();

  constructor(init: {
    conn: CdpConnection;
    ordinal: number;
    targetId: string;
    sessionId: string;
    url: string;
    title: string;
    openerPageId?: string;
  }) {
    this.#conn = init.conn;
    this.ordinal = init.ordinal;
    this.id = `p${init.ordinal}`;
    this.targetId = init.targetId;
    this.sessionId = init.sessionId;
    this.url = init.url;
    this.title = init.title;
    this.openerPageId = init.openerPageId;
  }

  /** The document title (`document.title`), "" when the document has none. */
  get title(): string {
    return this.#title;
  }

  /**
   * Chrome's target title stands in the URL for a document without a title and lags behind the
   * document's own; a stand-in never replaces a title read from the document.
   */
  set title(targetTitle: string) {
    const bare = this.url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "");
    const standIn = targetTitle === this.url || targetTitle === bare ||
      targetTitle === bare.replace(/\/$/, "");
    if (!standIn) this.#title = targetTitle;
  }

  /**
   * Reads the title from the document (main world, no dialog open). Sent before load waiters are
   * released, so an observation that follows a load already reads the new title.
   */
  refreshTitle(): Promise<string> {
    if (this.dialog || this.closed) return Promise.resolve(this.#title);
    const loaderId = this.loaderId;
    return this.send("Runtime.evaluate", { expression: "document.title", returnByValue: true }, 2_000)
      .then((r) => {
        if (this.loaderId === loaderId && typeof r.result.value === "string") this.#title = r.result.value;
        return this.#title;
      }, () => this.#title);
  }

  /** Count of main-frame navigations (document or same-document) since attach. */
  get navigationCount(): number {
    return this.#navigationCount;
  }

  send<M extends keyof Commands>(
    method: M,
    params?: CommandParams<M>,
    timeoutMs?: number,
  ): Promise<CommandResult<M>> {
    if (this.closed) return Promise.reject(pageClosed(this.id));
    return this.#conn.send(method, params, this.sessionId, timeoutMs);
  }

  /**
   * Enables our domains and releases a target paused at creation. All commands go out at once:
   * the target handles them in order, so nothing runs before the domains are on, and no answer
   * is awaited while the target may still be paused. Chrome can drop commands sent while a new
   * tab swaps its first renderer, so an unanswered round is sent again (the commands are idempotent).
   */
  async initialize(): Promise<void> {
    let lastError: unknown;
    for (let attempt = 0; attempt < INIT_ATTEMPTS; attempt++) {
      try {
        const sent = [
          this.send("Page.enable", undefined, INIT_TIMEOUT_MS),
          this.send("Page.setLifecycleEventsEnabled", { enabled: true }, INIT_TIMEOUT_MS),
          this.send("Runtime.enable", undefined, INIT_TIMEOUT_MS),
          ...[...this.overrides.values()].flatMap((o) => o.apply(this, INIT_TIMEOUT_MS)),
          this.send("Runtime.runIfWaitingForDebugger", undefined, INIT_TIMEOUT_MS),
        ];
        const tree = this.send("Page.getFrameTree", undefined, INIT_TIMEOUT_MS);
        tree.catch(() => {});
        await Promise.all(sent);
        const { frameTree } = await tree;
        this.mainFrameId = frameTree.frame.id;
        this.loaderId = frameTree.frame.loaderId;
        // A tab still loading its first document reports an empty URL: the target's (pending) URL says more.
        if (frameTree.frame.url) this.url = frameTree.frame.url + (frameTree.frame.urlFragment ?? "");
        return;
      } catch (err) {
        lastError = err;
        if (this.closed) break;
      }
    }
    throw lastError;
  }

  onFrameNavigated(
    frame: { id: string; parentId?: string; loaderId: string; url: string; urlFragment?: string },
    type?: string,
  ) {
    if (frame.parentId) return;
    this.mainFrameId = frame.id;
    this.url = frame.url + (frame.urlFragment ?? "");
    this.#navigationCount++;
    if (frame.loaderId !== this.loaderId) {
      this.loaderId = frame.loaderId;
      this.generation++;
      // A new document: the old title no longer applies until the new one is read.
      this.#title = "";
    }
    // A document restored from the back/forward cache loaded long ago and fires no lifecycle event
    // again: a history move waiting for its load would otherwise wait out its whole timeout.
    if (type === "BackForwardCacheRestore") this.onLifecycle(frame.id, frame.loaderId, "load");
  }

  onSameDocumentNavigation(frameId: string, url: string) {
    if (frameId !== this.mainFrameId) return;
    this.url = url;
    this.#navigationCount++;
    this.refreshTitle();
  }

  /** DOM.documentUpdated-style replacement without a new loader (document.open and friends). */
  onDocumentReplaced() {
    this.generation++;
  }

  onLifecycle(frameId: string, loaderId: string, name: string) {
    if (frameId !== this.mainFrameId) return;
    if (TITLE_MOMENTS.has(name)) this.refreshTitle();
    if (name !== "load") return;
    this.#loaded.push(loaderId);
    if (this.#loaded.length > LOADED_MEMORY) this.#loaded.shift();
    for (const waiter of [...this.#waiters]) {
      if (!waiter.loaderId || waiter.loaderId === loaderId) {
        this.#waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  /** Resolves when the given document (or the next one, without a loader id) fires load. */
  waitForLoad(loaderId: string | undefined, timeoutMs: number): Promise<boolean> {
    if (loaderId && this.#loaded.includes(loaderId)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: LoadWaiter = {
        loaderId,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        resolve(false);
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /**
   * Sends input that may open a JavaScript dialog. A modal dialog blocks the renderer, so the
   * command would not answer until the dialog closes; the dialog opening ends the wait instead.
   * Returns true when a dialog interrupted the command.
   */
  async sendInput<M extends keyof Commands>(method: M, params: CommandParams<M>): Promise<boolean> {
    if (this.dialog) return true;
    let release: () => void = () => {};
    const opened = new Promise<true>((resolve) => {
      release = () => resolve(true);
      this.#dialogWaiters.add(release);
    });
    const sent = this.send(method, params);
    sent.catch(() => {});
    try {
      return await Promise.race([sent.then(() => false), opened]);
    } finally {
      this.#dialogWaiters.delete(release);
    }
  }

  setDialog(dialog: DialogState | undefined): void {
    this.dialog = dialog;
    if (!dialog) return;
    for (const waiter of [...this.#dialogWaiters]) waiter();
  }

  async visible(): Promise<boolean> {
    const r = await this.send("Runtime.evaluate", {
      expression: "document.visibilityState",
      returnByValue: true,
    }, 2_000)
      .catch(() => undefined);
    return r?.result.value !== "hidden";
  }

  onLoading(frameId: string, loading: boolean) {
    if (frameId === this.mainFrameId) this.loading = loading;
  }

  /** Waits until the main frame stops loading, bounded; true when it did. */
  async waitForIdle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.loading && !this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return !this.loading;
  }

  markClosed() {
    this.closed = true;
    for (const waiter of this.#waiters) waiter.resolve();
    this.#waiters.clear();
  }

  describe(selected: boolean): Record<string, unknown> {
    return {
      page_id: this.id,
      url: this.url,
      title: this.title,
      selected,
      ...(this.openerPageId ? { opener_page_id: this.openerPageId } : {}),
      dialog: this.dialog ? { open: true, type: this.dialog.type } : { open: false },
      ...(this.crash ? { crashed: { at_ms: this.crash.at_ms, status: this.crash.status } } : {}),
    };
  }
}

export function pageClosed(pageId: string): ToolError {
  return new ToolError({
    code: "page_closed",
    message: `Page ${pageId} is closed.`,
    retry: "never",
    recovery: "Call list_pages and select an open page, or create_page.",
    affected: { page_id: pageId },
  });
}
