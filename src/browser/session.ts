import type { Protocol } from "devtools-protocol";
import { ActiveInteractions } from "./active_interaction.ts";
import type { CdpConnection, CommandParams, CommandResult, Commands, EventParams, Events } from "./cdp.ts";
import { type DialogState, pageClosed, type PageCrash, PageTarget, type TargetOverride } from "./targets.ts";
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
import { nextRetry } from "./reconnect_policy.ts";
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

/** Whether the session's CDP connection is up; an attached session retries a dropped one (see reconnect). */
export type ConnectionState =
  | { state: "connected" }
  | {
    state: "reconnecting";
    since: Date;
    /** Session-clock ms when the connection dropped. */
    since_ms: number;
    /** Attempts made so far (each: discovery, a new socket, re-adoption). */
    attempts: number;
    window_ms: number;
    last_error?: string;
  };

/** How an attached session finds its endpoint again: the same loopback endpoint it attached to. */
export interface ReconnectPlan {
  /** The browser websocket URL now (an http endpoint is asked again: a restarted browser has a new one). */
  resolve: () => Promise<string>;
  windowMs: number;
}

/** What a reconnection restored (the capture and the events record it). */
export interface Reconnected {
  lost_at_ms: number;
  resumed_at_ms: number;
  attempts: number;
  /** Pages that kept their id: the same target again, or a target at the same URL in a restarted browser. */
  readopted: string[];
  /** Pages that did not come back; they are closed. */
  closed: string[];
  /** Targets the endpoint has now that matched no earlier page. */
  added: string[];
}

/** How a page came to the session: found or created, or one of ours again after a reconnection. */
export type PageOrigin = "new" | "readopted";

/** A renderer signal on a page: it crashed, or it stopped answering (a deadline's probe got no reply). */
export type PageTrouble =
  | ({ kind: "crashed" } & PageCrash)
  | { kind: "unresponsive"; at_ms: number; tool: string };

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

/** Bound on targets whose overrides wait for a same-target reattachment. */
const CARRIED_OVERRIDES = 32;

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
  readonly pages = new Map<string, PageTarget>();
  /** Download observation, active from start() on (before any page runs). */
  readonly downloads: DownloadTracker = new DownloadTracker(this);
  #bySession = new Map<string, PageTarget>();
  #byTarget = new Map<string, PageTarget>();
  #pendingAttach = new Map<string, Promise<PageTarget | undefined>>();
  #attachWaiters = new Map<string, Array<(page: PageTarget) => void>>();
  /** Overrides of detached (not destroyed) targets, re-applied if the same target attaches again. */
  #carriedOverrides = new Map<string, Map<string, TargetOverride>>();
  /** Setups every page of the session gets in its initialization round (see addPageSetup). */
  #pageSetups = new Map<string, TargetOverride>();
  #pageOrdinal = 0;
  #interactionOrdinal = 0;
  #conn: CdpConnection;
  #process?: Deno.ChildProcess;
  #cleanup?: () => Promise<void>;
  #pageListeners = new Set<(page: PageTarget, origin: PageOrigin) => void>();
  #connection: ConnectionState = { state: "connected" };
  readonly #reconnect?: ReconnectPlan;
  /** Pages of a dropped connection waiting to be matched to the targets of the new one. */
  #orphans: PageTarget[] = [];
  /** A restarted browser's only tab, which continues the session's only page whatever its URL. */
  #soleTarget?: string;
  #lostListeners = new Set<(atMs: number) => void>();
  #reconnectedListeners = new Set<(info: Reconnected) => void>();
  #troubleListeners = new Set<(page: PageTarget, trouble: PageTrouble) => void>();
  #recoveredListeners = new Set<(page: PageTarget) => void>();
  #stopping = false;
  #removedListeners = new Set<(page: PageTarget) => void>();
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
    this.#reconnect = init.mode === "attached" ? init.reconnect : undefined;
  }

  /** Connected, or reconnecting since when and after how many tries. */
  get connection(): ConnectionState {
    return this.#connection;
  }

  get reconnecting(): boolean {
    return this.#connection.state === "reconnecting";
  }

  /** The connection dropped: capture opens its outage gap here. */
  onConnectionLost(listener: (atMs: number) => void): () => void {
    this.#lostListeners.add(listener);
    return () => this.#lostListeners.delete(listener);
  }

  /** The connection is back and the pages re-adopted (their pageAdded listeners ran with "readopted"). */
  onReconnected(listener: (info: Reconnected) => void): () => void {
    this.#reconnectedListeners.add(listener);
    return () => this.#reconnectedListeners.delete(listener);
  }

  /** A page's renderer crashed or stopped answering. */
  onPageTrouble(listener: (page: PageTarget, trouble: PageTrouble) => void): () => void {
    this.#troubleListeners.add(listener);
    return () => this.#troubleListeners.delete(listener);
  }

  /** A crashed page committed a new document (reloaded or navigated): it renders again. */
  onPageRecovered(listener: (page: PageTarget) => void): () => void {
    this.#recoveredListeners.add(listener);
    return () => this.#recoveredListeners.delete(listener);
  }

  /** A deadline's probe found the page's main thread stuck (mcp/deadlines.ts): recorded as an event. */
  noteUnresponsive(page: PageTarget, tool: string): void {
    if (page.closed || this.ended) return;
    this.#emitTrouble(page, { kind: "unresponsive", at_ms: this.now(), tool });
  }

  #emitTrouble(page: PageTarget, trouble: PageTrouble): void {
    for (const listener of this.#troubleListeners) {
      try {
        listener(page, trouble);
      } catch (err) {
        log.debug("page trouble listener failed: {err}", { err: String(err) });
      }
    }
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
    this.#pageListeners.add(listener);
    return () => this.#pageListeners.delete(listener);
  }

  onPageRemoved(listener: (page: PageTarget) => void): () => void {
    this.#removedListeners.add(listener);
    return () => this.#removedListeners.delete(listener);
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
      const page = sid ? this.#bySession.get(sid) : undefined;
      if (page) handler(page, params);
    });
  }

  /**
   * Gives every page, adopted now or later (popups and same-target reattachments included), `setup` in
   * its initialization round, before it runs; a page already running gets it at once. Idempotent by key.
   */
  addPageSetup(key: string, setup: TargetOverride): void {
    if (this.#pageSetups.has(key)) return;
    this.#pageSetups.set(key, setup);
    for (const page of this.pages.values()) {
      if (page.closed || page.overrides.has(key)) continue;
      page.overrides.set(key, setup);
      Promise.all(setup.apply(page)).catch((err) =>
        log.debug("page setup {key} failed: {err}", { key, err: String(err) })
      );
    }
  }

  async start(): Promise<void> {
    const version = await this.#conn.send("Browser.getVersion");
    this.browserVersion = version.product;
    this.protocolVersion = version.protocolVersion;
    this.#wireEvents();
    await this.downloads.activate(this.#conn, this.mode === "launched", this.#downloadsRoot);
    this.#conn.onDisconnect(() => this.#disconnected());
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
    await Promise.allSettled([...this.#pendingAttach.values()]);
  }

  #disconnected(): void {
    if (this.ended) return;
    // A socket reopened during a reconnection that drops again is the running loop's to retry.
    if (this.reconnecting) return;
    if (!this.#reconnect || this.#stopping) {
      const process = this.#process;
      if (!process || this.#stopping) {
        this.#markEnded("browser_disconnected");
        return;
      }
      // A launched browser's socket closes a moment before its exit is seen: name the exit when it is one.
      const exited = process.status.then(() => "browser_exited");
      const stillRunning = new Promise<string>((r) => setTimeout(() => r("browser_disconnected"), 1_000));
      Promise.race([exited, stillRunning]).then((reason) => this.#markEnded(reason));
      return;
    }
    const lostAt = this.now();
    this.#connection = {
      state: "reconnecting",
      since: new Date(),
      since_ms: lostAt,
      attempts: 0,
      window_ms: this.#reconnect.windowMs,
    };
    // The page sessions died with the socket; the pages stay listed (closed to commands) until the new
    // connection's targets are matched to them.
    this.#orphans = [...this.pages.values()];
    this.#bySession.clear();
    this.#byTarget.clear();
    this.#pendingAttach.clear();
    for (const page of this.#orphans) page.markClosed();
    log.warning("browser connection lost; reconnecting for up to {ms} ms", { ms: this.#reconnect.windowMs });
    for (const listener of this.#lostListeners) {
      try {
        listener(lostAt);
      } catch (err) {
        log.debug("connection-lost listener failed: {err}", { err: String(err) });
      }
    }
    this.#reconnectLoop(this.#reconnect, lostAt).catch((err) =>
      log.warning("reconnect loop failed: {err}", { err: String(err) })
    );
  }

  async #reconnectLoop(plan: ReconnectPlan, lostAt: number): Promise<void> {
    const began = performance.now();
    for (let attempt = 1;; attempt++) {
      const delay = nextRetry(attempt, performance.now() - began, plan.windowMs);
      if (delay === undefined) break;
      await new Promise((r) => setTimeout(r, delay));
      const state = this.#connection;
      if (this.ended || this.#stopping || state.state !== "reconnecting") return;
      state.attempts = attempt;
      try {
        await this.#conn.reopen(await plan.resolve());
        // Stopped while the socket opened: the new socket is ours to close, nothing to resume.
        if (this.ended || this.#stopping) {
          await this.#conn.close().catch(() => {});
          return;
        }
        await this.#resume(lostAt, attempt);
        return;
      } catch (err) {
        state.last_error = (err instanceof Error ? err.message : String(err)).slice(0, 200);
        // A half-resumed connection is dropped, so the next attempt starts from a clean socket.
        if (!this.#conn.closed) await this.#conn.close().catch(() => {});
        for (const page of this.pages.values()) {
          page.markClosed();
          if (!this.#orphans.includes(page)) this.#orphans.push(page);
        }
        this.#bySession.clear();
        this.#byTarget.clear();
        this.#pendingAttach.clear();
      }
    }
    if (this.ended || this.#stopping) return;
    log.warning("browser did not come back within {ms} ms; ending the session", { ms: plan.windowMs });
    this.#markEnded("reconnect_window_exhausted");
  }

  /** The new socket is open: the same domains again, the pages matched to their earlier ids. */
  async #resume(lostAt: number, attempts: number): Promise<void> {
    const version = await this.#conn.send("Browser.getVersion");
    this.browserVersion = version.product;
    this.protocolVersion = version.protocolVersion;
    await this.downloads.resume(this.#conn, this.mode === "launched");
    const before = new Set([...this.pages.keys()]);
    const readopted: string[] = [];
    const added: string[] = [];
    const unclaimed = new Set(this.#orphans);
    this.#soleTarget = await this.#soleUnmatchedTarget();
    await this.#discoverPages();
    this.#soleTarget = undefined;
    for (const page of this.pages.values()) {
      if (page.closed) continue;
      if (before.has(page.id)) readopted.push(page.id);
      else added.push(page.id);
    }
    for (const orphan of unclaimed) {
      if (readopted.includes(orphan.id)) unclaimed.delete(orphan);
    }
    this.#orphans = [];
    const closed: string[] = [];
    for (const orphan of unclaimed) {
      closed.push(orphan.id);
      this.#dropPage(orphan);
    }
    if (!this.selectedPageId || !this.pages.has(this.selectedPageId)) {
      const remaining = [...this.pages.values()];
      this.selectedPageId = remaining.length > 0 ? remaining[remaining.length - 1].id : undefined;
    }
    this.#connection = { state: "connected" };
    const info: Reconnected = {
      lost_at_ms: lostAt,
      resumed_at_ms: this.now(),
      attempts,
      readopted,
      closed,
      added,
    };
    log.info("browser connection restored after {n} attempts: {pages} pages re-adopted", {
      n: attempts,
      pages: readopted.length,
    });
    for (const listener of this.#reconnectedListeners) {
      try {
        listener(info);
      } catch (err) {
        log.debug("reconnected listener failed: {err}", { err: String(err) });
      }
    }
  }

  /**
   * The earlier page a target of a new connection continues: the same target (the socket dropped, the
   * browser stayed), else the first earlier page at the same URL (a restarted browser reopened it).
   */
  #claimOrphan(info: Protocol.Target.TargetInfo): PageTarget | undefined {
    const index = [
      this.#orphans.findIndex((p) => p.targetId === info.targetId),
      this.#orphans.findIndex((p) => p.url === info.url),
      info.targetId === this.#soleTarget ? 0 : -1,
    ].find((i) => i >= 0);
    if (index === undefined) return undefined;
    const [orphan] = this.#orphans.splice(index, 1);
    return orphan;
  }

  /**
   * One page before the drop, one tab after it and neither the target nor the URL matching: a single-tab
   * browser restarted at another URL (its start page) continues that page rather than replacing it.
   */
  async #soleUnmatchedTarget(): Promise<string | undefined> {
    if (this.#orphans.length !== 1) return undefined;
    const { targetInfos } = await this.#conn.send("Target.getTargets");
    const tabs = targetInfos.filter((t) => t.type === "page" && !t.url.startsWith("devtools://"));
    const [orphan] = this.#orphans;
    const [tab] = tabs;
    if (tabs.length !== 1 || tab.targetId === orphan.targetId || tab.url === orphan.url) return undefined;
    return tab.targetId;
  }

  #wireEvents(): void {
    const c = this.#conn;
    c.on("Target.attachedToTarget", ({ sessionId, targetInfo, waitingForDebugger }, parent) => {
      if (parent) return;
      if (targetInfo.type !== "page" || targetInfo.url.startsWith("devtools://")) {
        if (waitingForDebugger) {
          c.send("Runtime.runIfWaitingForDebugger", undefined, sessionId).catch(() => {});
        }
        return;
      }
      this.#adopt(sessionId, targetInfo).catch((err) =>
        log.debug("adopt failed: {err}", { err: String(err) })
      );
    });
    c.on("Target.targetInfoChanged", ({ targetInfo }) => {
      const page = this.#byTarget.get(targetInfo.targetId);
      if (page) page.title = targetInfo.title;
    });
    c.on("Target.targetCrashed", ({ targetId, status, errorCode }) => {
      const page = this.#byTarget.get(targetId);
      if (!page || page.closed) return;
      page.crash = { at_ms: this.now(), status, error_code: errorCode };
      log.warning("page {page} renderer crashed ({status})", { page: page.id, status });
      this.#emitTrouble(page, { kind: "crashed", ...page.crash });
    });
    c.on("Target.targetDestroyed", ({ targetId }) => {
      this.#carriedOverrides.delete(targetId);
      this.#removeTarget(targetId);
    });
    c.on("Target.detachedFromTarget", ({ targetId }) => {
      if (targetId) this.#removeTarget(targetId, true);
    });
    const route = (sessionId: string | undefined) => (sessionId ? this.#bySession.get(sessionId) : undefined);
    c.on("Page.frameNavigated", ({ frame, type }, sid) => {
      const page = route(sid);
      if (!page) return;
      page.onFrameNavigated(frame, type);
      // A crashed page renders again once a new main-frame document commits (reload or navigation).
      if (page.crash && !frame.parentId) {
        page.crash = undefined;
        for (const listener of this.#recoveredListeners) listener(page);
      }
    });
    c.on(
      "Page.navigatedWithinDocument",
      ({ frameId, url }, sid) => route(sid)?.onSameDocumentNavigation(frameId, url),
    );
    c.on(
      "Page.lifecycleEvent",
      ({ frameId, loaderId, name }, sid) => route(sid)?.onLifecycle(frameId, loaderId, name),
    );
    c.on("Page.frameStartedLoading", ({ frameId }, sid) => route(sid)?.onLoading(frameId, true));
    c.on("Page.frameStoppedLoading", ({ frameId }, sid) => route(sid)?.onLoading(frameId, false));
    c.on("Page.javascriptDialogOpening", (params, sid) => {
      const page = route(sid);
      if (!page) return;
      page.setDialog({
        type: params.type as DialogState["type"],
        message: params.message.slice(0, 500),
        ...(params.type === "prompt" ? { default_prompt: (params.defaultPrompt ?? "").slice(0, 200) } : {}),
        opened_at: new Date().toISOString(),
      });
    });
    c.on("Page.javascriptDialogClosed", (_params, sid) => {
      route(sid)?.setDialog(undefined);
    });
  }

  /** Registers an auto-attached page, enables its domains, then lets it run. */
  #adopt(sessionId: string, info: Protocol.Target.TargetInfo): Promise<PageTarget | undefined> {
    const pending = this.#pendingAttach.get(info.targetId);
    if (pending) return pending;
    const existing = this.#byTarget.get(info.targetId);
    if (existing) return Promise.resolve(existing);
    const opener = info.openerId ? this.#byTarget.get(info.openerId) : undefined;
    const orphan = this.#claimOrphan(info);
    const page = new PageTarget({
      conn: this.#conn,
      ordinal: orphan?.ordinal ?? ++this.#pageOrdinal,
      targetId: info.targetId,
      sessionId,
      url: info.url,
      title: info.title,
      openerPageId: orphan ? orphan.openerPageId : opener?.id,
    });
    if (orphan) {
      // Refs of the earlier attachment must not resolve on the new one: a new document generation.
      page.generation = orphan.generation + 1;
      for (const [key, override] of orphan.overrides) page.overrides.set(key, override);
    }
    const origin: PageOrigin = orphan ? "readopted" : "new";
    // A same-target reattachment gets its overrides back before it runs (see initialize()).
    for (const [key, override] of this.#carriedOverrides.get(info.targetId) ?? []) {
      page.overrides.set(key, override);
    }
    this.#carriedOverrides.delete(info.targetId);
    for (const [key, setup] of this.#pageSetups) page.overrides.set(key, setup);
    // Mapped before initialization so its events already route here.
    this.#bySession.set(sessionId, page);
    this.#byTarget.set(info.targetId, page);
    this.pages.set(page.id, page);
    const work = (async () => {
      try {
        await page.initialize();
      } catch (err) {
        log.warning("page init failed: {err}", { err: String(err) });
        await page.send("Runtime.runIfWaitingForDebugger").catch(() => {});
      }
      // Once started, a page arriving while none is selected (an app that had no window open) is selected.
      if (this.#started && !this.selectedPageId && !page.closed) this.selectedPageId = page.id;
      for (const listener of this.#pageListeners) listener(page, origin);
      for (const waiter of this.#attachWaiters.get(info.targetId) ?? []) waiter(page);
      this.#attachWaiters.delete(info.targetId);
      return page;
    })();
    this.#pendingAttach.set(info.targetId, work);
    work.finally(() => this.#pendingAttach.delete(info.targetId));
    return work;
  }

  /** Resolves once the target has been adopted and initialized (bounded). */
  #waitForAdoption(targetId: string, timeoutMs: number): Promise<PageTarget | undefined> {
    const pending = this.#pendingAttach.get(targetId);
    if (pending) return pending;
    const existing = this.#byTarget.get(targetId);
    if (existing) return Promise.resolve(existing);
    return new Promise((resolve) => {
      const list = this.#attachWaiters.get(targetId) ?? [];
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      list.push((p) => {
        clearTimeout(timer);
        resolve(p);
      });
      this.#attachWaiters.set(targetId, list);
    });
  }

  #removeTarget(targetId: string, detachedOnly = false): void {
    const page = this.#byTarget.get(targetId);
    if (!page) return;
    this.#byTarget.delete(targetId);
    this.#bySession.delete(page.sessionId);
    if (detachedOnly && page.overrides.size > 0) {
      this.#carriedOverrides.delete(targetId);
      this.#carriedOverrides.set(targetId, new Map(page.overrides));
      for (const oldest of this.#carriedOverrides.keys()) {
        if (this.#carriedOverrides.size <= CARRIED_OVERRIDES) break;
        this.#carriedOverrides.delete(oldest);
      }
    }
    this.#dropPage(page);
  }

  /** A page leaves the session: closed, listeners told, another page selected if it was selected. */
  #dropPage(page: PageTarget): void {
    page.markClosed();
    for (const listener of this.#removedListeners) listener(page);
    if (this.pages.get(page.id) === page) this.pages.delete(page.id);
    if (this.selectedPageId === page.id) {
      const remaining = [...this.pages.values()];
      this.selectedPageId = remaining.length > 0 ? remaining[remaining.length - 1].id : undefined;
    }
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
    const c = this.#connection;
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
    if (!page) throw this.#hadPage(id) ? pageClosed(id) : pageNotFound(id);
    if (page.crash && opts?.crashed !== "allow") throw pageCrashed(page.id, page.crash);
    return page;
  }

  /** Page ids are p1, p2, … in adoption order: an id up to the last one handed out named a page once. */
  #hadPage(id: string): boolean {
    const m = /^p([1-9]\d*)$/.exec(id);
    return m !== null && Number(m[1]) <= this.#pageOrdinal;
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
    const page = await this.#waitForAdoption(targetId, ATTACH_TIMEOUT_MS);
    if (!page) throw pageAttachFailed();
    if (url !== "about:blank") await this.navigate(page, url, "load", 30_000);
    return page;
  }

  async closePage(page: PageTarget): Promise<void> {
    await this.#conn.send("Target.closeTarget", { targetId: page.targetId });
    this.#removeTarget(page.targetId);
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
    const result = await page.send("Page.navigate", { url }, timeoutMs);
    if (result.errorText) throw navigationFailed(page.id, result.errorText);
    if (waitUntil === "none" || !result.loaderId) return { loaded: waitUntil === "none" ? false : true };
    return { loaded: await page.waitForLoad(result.loaderId, timeoutMs) };
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
