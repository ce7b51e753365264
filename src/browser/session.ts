import { ActiveInteractions } from "./active_interaction.ts";
import { phase } from "../phase_timing.ts";
import type { CdpConnection, CommandParams, CommandResult, Commands, EventParams, Events } from "./cdp.ts";
import { pageClosed, type PageTarget, type TargetOverride } from "./targets.ts";
import { DownloadTracker } from "./downloads.ts";
import {
  browserReconnecting,
  navigationFailed,
  noPage,
  pageAttachFailed,
  pageCrashed,
  pageCreationUnsupported,
  pageNotFound,
  sessionEnded,
  targetHidden,
} from "./session_errors.ts";
import {
  type ConnectionState,
  type Reconnected,
  type ReconnectHost,
  type ReconnectPlan,
  SessionReconnector,
} from "./reconnect.ts";
import { type PageTrouble, PageTroubleSignals } from "./page_trouble.ts";
import { type PageOrigin, PageRegistry } from "./page_registry.ts";
import { logger } from "../log.ts";

const log = logger("browser");

export type FocusPolicy = "foreground" | "preserve";

/** Immutable for the life of the session (spec: capture configuration is never changed mid-session). */
export interface SessionConfig {
  readonly every_nth_frame: number;
  readonly focus: FocusPolicy;
  readonly headless: boolean;
  /** DOM recording (rrweb in an isolated world of every page, src/pagestate/recorder.ts). */
  readonly record_dom: boolean;
}

/** What a session is built with: DOM recording is on unless said otherwise. */
export type SessionConfigInit = Omit<SessionConfig, "record_dom"> & { readonly record_dom?: boolean };

export type ProfileIdentity =
  | { kind: "managed"; name: string }
  | { kind: "temporary" }
  | { kind: "attached"; endpoint: string };

// Moved out with their concerns; callers keep importing them from here.
export type { ConnectionState, PageOrigin, PageTrouble, Reconnected, ReconnectPlan };

export interface SessionInit {
  conn: CdpConnection;
  ordinal: number;
  mode: "launched" | "attached";
  profile: ProfileIdentity;
  config: SessionConfigInit;
  process?: Deno.ChildProcess;
  cleanup?: () => Promise<void>;
  /** Where managed downloads are kept (inside the instance root, so a crash's leftovers are reclaimed). */
  downloadsRoot?: string;
  /** A launched browser's user-data directory (a scenario reports that its temporary one was deleted). */
  profileDir?: string;
  /** Attached sessions only: a dropped connection is retried here instead of ending the session. */
  reconnect?: ReconnectPlan;
}

/** Bound on waiting for Chrome to hand us a page it created. */
const ATTACH_TIMEOUT_MS = 5_000;

let processSessionSeed = Math.floor(Math.random() * 900) + 100;
/** Session ordinals start at a random seed so refs from a previous process rarely collide. */
export function nextSessionOrdinal(): number {
  return ++processSessionSeed;
}

/**
 * One connection to one browser: its pages, the selected page, and the monotonic session clock.
 * Everything here is CDP-level; presentation and MCP live above.
 */
export class BrowserSession {
  readonly id = crypto.randomUUID();
  readonly ordinal: number;
  readonly mode: "launched" | "attached";
  readonly profile: ProfileIdentity;
  readonly config: SessionConfig;
  readonly startedAt = new Date();
  readonly #clockOrigin = performance.now();
  browserVersion = "";
  protocolVersion = "";
  endedAt?: Date;
  endReason?: string;
  selectedPageId?: string;
  #started = false;
  /** Interaction spans on the wall clock, so events are attributed by when Chrome saw them. */
  readonly interactions = new ActiveInteractions();
  readonly pages: Map<string, PageTarget>;
  /** Download observation, active from start() on (before any page runs). */
  readonly downloads: DownloadTracker = new DownloadTracker(this);
  readonly #registry: PageRegistry;
  #interactionOrdinal = 0;
  #conn: CdpConnection;
  #process?: Deno.ChildProcess;
  #cleanup?: () => Promise<void>;
  readonly #reconnector: SessionReconnector;
  readonly #trouble = new PageTroubleSignals();
  #stopping = false;
  #endedListeners = new Set<(reason: string) => void>();

  readonly #downloadsRoot?: string;

  readonly profileDir?: string;

  constructor(init: SessionInit) {
    this.#conn = init.conn;
    this.ordinal = init.ordinal;
    this.mode = init.mode;
    this.profile = init.profile;
    this.config = Object.freeze({ ...init.config, record_dom: init.config.record_dom ?? true });
    this.#process = init.process;
    this.#cleanup = init.cleanup;
    this.#downloadsRoot = init.downloadsRoot;
    this.profileDir = init.profileDir;
    this.#registry = new PageRegistry({
      conn: init.conn,
      trouble: this.#trouble,
      now: () => this.now(),
      claimOrphan: (info) => this.#reconnector.claimOrphan(info),
      // Once started, a page arriving while none is selected (an app that had no window open) is selected.
      initialized: (page) => {
        if (this.#started && !this.selectedPageId && !page.closed) this.selectedPageId = page.id;
      },
      removed: (page) => {
        if (this.selectedPageId === page.id) this.#selectLast();
      },
    });
    this.pages = this.#registry.pages;
    this.#reconnector = new SessionReconnector(
      this.#reconnectHost(),
      init.mode === "attached" ? init.reconnect : undefined,
    );
  }

  /** The session's side of reconnection (reconnect.ts), as closures so its state stays private. */
  #reconnectHost(): ReconnectHost {
    return {
      conn: this.#conn,
      pages: this.pages,
      ended: () => this.ended,
      stopping: () => this.#stopping,
      now: () => this.now(),
      forgetAttachments: () => this.#registry.forgetAttachments(),
      readVersion: () => this.#readVersion(),
      resumeDownloads: () => this.downloads.resume(this.#conn, this.mode === "launched"),
      discoverPages: () => this.#discoverPages(),
      dropPage: (page) => this.#registry.drop(page),
      reselect: () => {
        if (!this.selectedPageId || !this.pages.has(this.selectedPageId)) this.#selectLast();
      },
      markEnded: (reason) => this.#markEnded(reason),
      endDisconnected: () => this.#endDisconnected(),
    };
  }

  /** Connected, or reconnecting since when and after how many tries. */
  get connection(): ConnectionState {
    return this.#reconnector.state;
  }

  get reconnecting(): boolean {
    return this.#reconnector.reconnecting;
  }

  /** The connection dropped: capture opens its outage gap here. */
  onConnectionLost(listener: (atMs: number) => void): () => void {
    return this.#reconnector.onConnectionLost(listener);
  }

  /** The connection is back and the pages re-adopted (their pageAdded listeners ran with "readopted"). */
  onReconnected(listener: (info: Reconnected) => void): () => void {
    return this.#reconnector.onReconnected(listener);
  }

  /** A page's renderer crashed or stopped answering. */
  onPageTrouble(listener: (page: PageTarget, trouble: PageTrouble) => void): () => void {
    return this.#trouble.onTrouble(listener);
  }

  /** A crashed page committed a new document (reloaded or navigated): it renders again. */
  onPageRecovered(listener: (page: PageTarget) => void): () => void {
    return this.#trouble.onRecovered(listener);
  }

  /** A deadline's probe found the page's main thread stuck (mcp/deadlines.ts): recorded as an event. */
  noteUnresponsive(page: PageTarget, tool: string): void {
    if (page.closed || this.ended) return;
    this.#trouble.unresponsive(page, this.now(), tool);
  }

  get ended(): boolean {
    return this.endedAt !== undefined;
  }

  /** The interaction being dispatched or observed, so events can be attributed to it. */
  get activeInteractionId(): string | undefined {
    return this.interactions.current;
  }

  set activeInteractionId(id: string | undefined) {
    this.interactions.current = id;
  }

  /** The interaction begun last, even when its observation has already ended. */
  get latestInteractionId(): string | undefined {
    return this.interactions.latest;
  }

  /** Session-relative milliseconds on the monotonic clock. */
  now(): number {
    return Math.round((performance.now() - this.#clockOrigin) * 1000) / 1000;
  }

  nextInteractionId(): string {
    return `s${this.ordinal}-i${++this.#interactionOrdinal}`;
  }

  /** `origin` is "readopted" for a page that came back after a reconnection (same id, new attachment). */
  onPageAdded(listener: (page: PageTarget, origin: PageOrigin) => void): () => void {
    return this.#registry.onAdded(listener);
  }

  onPageRemoved(listener: (page: PageTarget) => void): () => void {
    return this.#registry.onRemoved(listener);
  }

  onEnded(listener: (reason: string) => void): void {
    this.#endedListeners.add(listener);
  }

  /** Subscribes to a CDP event of any attached page, delivered with the page it came from. */
  onPageEvent<E extends keyof Events>(
    event: E,
    handler: (page: PageTarget, params: EventParams<E>) => void,
  ): () => void {
    return this.#conn.on(event, (params, sid) => {
      const page = sid ? this.#registry.bySession(sid) : undefined;
      if (page) handler(page, params);
    });
  }

  /**
   * Gives every page, adopted now or later (popups and same-target reattachments included), `setup` in
   * its initialization round, before it runs; a page already running gets it at once. Idempotent by key.
   */
  addPageSetup(key: string, setup: TargetOverride): void {
    this.#registry.addSetup(key, setup);
  }

  async start(): Promise<void> {
    await this.#readVersion();
    this.#registry.wire();
    await this.downloads.activate(this.#conn, this.mode === "launched", this.#downloadsRoot);
    this.#conn.onDisconnect(() => this.#reconnector.disconnected());
    this.#process?.status.then(() => this.#markEnded("browser_exited"));
    await this.#discoverPages();
    if (!this.selectedPageId) {
      const first = [...this.pages.values()][0];
      if (first) this.selectedPageId = first.id;
      else if (this.mode === "attached") {
        // An app with no window yet (Electron: no browser-level Target.createTarget) is attached as it is;
        // the first window it opens is adopted and selected.
        const created = await this.createPage("about:blank").catch((err) => {
          log.info("attached without a page: {err}", { err: String(err) });
          return undefined;
        });
        if (created && !this.selectedPageId) this.selectedPageId = created.id;
      } else {
        const created = await this.createPage("about:blank");
        this.selectedPageId = created.id;
      }
    }
    this.#started = true;
  }

  /** Asks Chrome for every page target, adopted (and released) before this resolves. */
  async #discoverPages(): Promise<void> {
    await this.#conn.send("Target.setDiscoverTargets", { discover: true });
    // Chrome attaches every page itself (existing ones before it answers) and pauses new ones
    // until we have enabled our domains, so no early event is lost.
    await this.#conn.send("Target.setAutoAttach", {
      autoAttach: true,
      waitForDebuggerOnStart: true,
      flatten: true,
      filter: [{ type: "page" }],
    });
    await Promise.allSettled(this.#registry.pending());
  }

  async #readVersion(): Promise<void> {
    const version = await this.#conn.send("Browser.getVersion");
    this.browserVersion = version.product;
    this.protocolVersion = version.protocolVersion;
  }

  /** The socket closed and no reconnection follows (launched, or stopping). */
  #endDisconnected(): void {
    const process = this.#process;
    if (!process || this.#stopping) {
      this.#markEnded("browser_disconnected");
      return;
    }
    // A launched browser's socket closes a moment before its exit is seen: name the exit when it is one.
    const exited = process.status.then(() => "browser_exited");
    const stillRunning = new Promise<string>((r) => setTimeout(() => r("browser_disconnected"), 1_000));
    Promise.race([exited, stillRunning]).then((reason) => this.#markEnded(reason));
  }

  #selectLast(): void {
    const remaining = [...this.pages.values()];
    this.selectedPageId = remaining.length > 0 ? remaining[remaining.length - 1].id : undefined;
  }

  #markEnded(reason: string): void {
    if (this.endedAt) return;
    // The browser going away because we asked it to is a stop, not a disconnection.
    if (this.#stopping) reason = "stopped";
    this.endedAt = new Date();
    this.endReason = reason;
    for (const listener of this.#endedListeners) listener(reason);
    for (const page of this.pages.values()) page.markClosed();
  }

  /** A command on a transient flat child session, e.g. an out-of-process frame attached briefly. */
  sendToSession<M extends keyof Commands>(
    sessionId: string,
    method: M,
    params?: CommandParams<M>,
    timeoutMs?: number,
  ): Promise<CommandResult<M>> {
    return this.#conn.send(method, params, sessionId, timeoutMs);
  }

  assertLive(): void {
    if (this.ended) throw sessionEnded(this.id, this.endReason);
    const c = this.#reconnector.state;
    if (c.state === "reconnecting") throw browserReconnecting(this.id, c);
  }

  /**
   * The page named by page_id, or the selected page when omitted. A crashed page is refused with the
   * reload guidance unless the caller is one of the tools that can recover it (`crashed: "allow"`).
   */
  page(pageId?: string, opts?: { crashed?: "allow" }): PageTarget {
    this.assertLive();
    const id = pageId ?? this.selectedPageId;
    if (!id) throw noPage(this.id);
    const page = this.pages.get(id);
    if (!page) throw this.#registry.hadPage(id) ? pageClosed(id) : pageNotFound(id);
    if (page.crash && opts?.crashed !== "allow") throw pageCrashed(page.id, page.crash);
    return page;
  }

  async createPage(url: string, background = false): Promise<PageTarget> {
    this.assertLive();
    const { targetId } = await this.#conn.send("Target.createTarget", {
      url: "about:blank",
      background: background || this.config.focus === "preserve",
    }).catch((err) => {
      // Electron answers "Not supported": only the app itself opens windows.
      if (err instanceof Error && /not supported/i.test(err.message)) throw pageCreationUnsupported();
      throw err;
    });
    const page = await this.#registry.waitForAdoption(targetId, ATTACH_TIMEOUT_MS);
    if (!page) throw pageAttachFailed();
    if (url !== "about:blank") await this.navigate(page, url, "load", 30_000);
    return page;
  }

  async closePage(page: PageTarget): Promise<void> {
    await this.#conn.send("Target.closeTarget", { targetId: page.targetId });
    this.#registry.removeTarget(page.targetId);
  }

  async activate(page: PageTarget): Promise<void> {
    if (this.config.focus === "preserve") return;
    await this.#conn.send("Target.activateTarget", { targetId: page.targetId }).catch(() => {});
  }

  /**
   * Makes sure a page is visible before work that needs painting or pointer input. Under the
   * foreground policy a hidden page is brought forward (bounded wait); under preserve it is
   * reported as target_hidden and nothing is dispatched.
   */
  async ensureVisible(page: PageTarget): Promise<void> {
    if (await page.visible()) return;
    if (this.config.focus === "preserve") throw targetHidden(page.id);
    await this.#conn.send("Target.activateTarget", { targetId: page.targetId }).catch(() => {});
    for (let i = 0; i < 50 && !(await page.visible()); i++) await new Promise((r) => setTimeout(r, 20));
  }

  async navigate(
    page: PageTarget,
    url: string,
    waitUntil: "load" | "none",
    timeoutMs: number,
  ): Promise<{ loaded: boolean }> {
    const result = await phase("page_navigate", () => page.send("Page.navigate", { url }, timeoutMs));
    if (result.errorText) throw navigationFailed(page.id, result.errorText);
    if (waitUntil === "none" || !result.loaderId) return { loaded: waitUntil === "none" ? false : true };
    return { loaded: await phase("wait_for_load", () => page.waitForLoad(result.loaderId, timeoutMs)) };
  }

  /** Stops a launched browser or detaches from an attached one; idempotent. */
  async stop(): Promise<{ closed_browser: boolean }> {
    const wasLive = !this.ended;
    this.#stopping = true;
    let closed = false;
    if (this.mode === "launched") {
      if (wasLive) await this.#conn.send("Browser.close", undefined, undefined, 5_000).catch(() => {});
      if (this.#process) {
        const exited = await Promise.race([
          this.#process.status.then(() => true),
          new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
        ]);
        if (!exited) {
          try {
            this.#process.kill("SIGKILL");
          } catch { /* already gone */ }
          await this.#process.status.catch(() => {});
        }
      }
      closed = true;
    }
    await this.#conn.close();
    this.#markEnded("stopped");
    await this.#cleanup?.().catch(() => {});
    return { closed_browser: closed && wasLive };
  }
}
