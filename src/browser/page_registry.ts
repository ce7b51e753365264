import type { Protocol } from "devtools-protocol";
import type { CdpConnection } from "./cdp.ts";
import { type DialogState, PageTarget, type TargetOverride } from "./targets.ts";
import type { PageTroubleSignals } from "./page_trouble.ts";
import { logger } from "../log.ts";

const log = logger("browser");

/** How a page came to the session: found or created, or one of ours again after a reconnection. */
export type PageOrigin = "new" | "readopted";

/** Bound on targets whose overrides wait for a same-target reattachment. */
const CARRIED_OVERRIDES = 32;
/** Releasing a page whose initialization failed (it may be paused at creation). */
const RELEASE_TIMEOUT_MS = 2_000;

/** What adoption asks of its session: orphans of a dropped connection, and the selected page. */
export interface PageRegistryHost {
  readonly conn: CdpConnection;
  readonly trouble: PageTroubleSignals;
  now(): number;
  /** The earlier page a target of a new connection continues (reconnect.ts), if any. */
  claimOrphan(info: Protocol.Target.TargetInfo): PageTarget | undefined;
  /** A page finished its initialization round, before its pageAdded listeners run. */
  initialized(page: PageTarget): void;
  /** A page left `pages`, after its pageRemoved listeners ran. */
  removed(page: PageTarget): void;
}

/**
 * The session's page targets: auto-attached pages adopted (overrides and setups applied before they
 * run), their CDP events routed by flat session id, and their removal when Chrome detaches them.
 */
export class PageRegistry {
  readonly pages = new Map<string, PageTarget>();
  readonly #host: PageRegistryHost;
  #bySession = new Map<string, PageTarget>();
  #byTarget = new Map<string, PageTarget>();
  #pendingAttach = new Map<string, Promise<PageTarget | undefined>>();
  /** Crashed pages whose domains could not be enabled yet (see #enableRevived). */
  #unenabled = new Set<PageTarget>();
  #attachWaiters = new Map<string, Array<(page: PageTarget) => void>>();
  /** Overrides of detached (not destroyed) targets, re-applied if the same target attaches again. */
  #carriedOverrides = new Map<string, Map<string, TargetOverride>>();
  /** Setups every page of the session gets in its initialization round (see addSetup). */
  #pageSetups = new Map<string, TargetOverride>();
  #pageOrdinal = 0;
  #addedListeners = new Set<(page: PageTarget, origin: PageOrigin) => void>();
  #removedListeners = new Set<(page: PageTarget) => void>();

  constructor(host: PageRegistryHost) {
    this.#host = host;
  }

  onAdded(listener: (page: PageTarget, origin: PageOrigin) => void): () => void {
    this.#addedListeners.add(listener);
    return () => this.#addedListeners.delete(listener);
  }

  onRemoved(listener: (page: PageTarget) => void): () => void {
    this.#removedListeners.add(listener);
    return () => this.#removedListeners.delete(listener);
  }

  bySession(sessionId: string): PageTarget | undefined {
    return this.#bySession.get(sessionId);
  }

  /** Adoptions under way (target discovery waits for them). */
  pending(): Promise<PageTarget | undefined>[] {
    return [...this.#pendingAttach.values()];
  }

  /** The page sessions died with the socket: their routing and pending adoptions are forgotten. */
  forgetAttachments(): void {
    this.#unenabled.clear();
    this.#bySession.clear();
    this.#byTarget.clear();
    this.#pendingAttach.clear();
  }

  /** Page ids are p1, p2, … in adoption order: an id up to the last one handed out named a page once. */
  hadPage(id: string): boolean {
    const m = /^p([1-9]\d*)$/.exec(id);
    return m !== null && Number(m[1]) <= this.#pageOrdinal;
  }

  /** See BrowserSession.addPageSetup. */
  addSetup(key: string, setup: TargetOverride): void {
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

  wire(): void {
    const c = this.#host.conn;
    const trouble = this.#host.trouble;
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
      if (page && !page.closed) trouble.crashed(page, this.#host.now(), status, errorCode);
    });
    c.on("Target.targetDestroyed", ({ targetId }) => {
      this.#carriedOverrides.delete(targetId);
      this.removeTarget(targetId);
    });
    c.on("Target.detachedFromTarget", ({ targetId }) => {
      if (targetId) this.removeTarget(targetId, true);
    });
    const route = (sessionId: string | undefined) => (sessionId ? this.#bySession.get(sessionId) : undefined);
    c.on("Page.frameNavigated", ({ frame, type }, sid) => {
      const page = route(sid);
      if (!page) return;
      page.onFrameNavigated(frame, type);
      trouble.committed(page, frame);
    });
    c.on(
      "Page.navigatedWithinDocument",
      ({ frameId, url }, sid) => route(sid)?.onSameDocumentNavigation(frameId, url),
    );
    c.on(
      "Page.lifecycleEvent",
      ({ frameId, loaderId, name }, sid) => route(sid)?.onLifecycle(frameId, loaderId, name),
    );
    // The browser reports loading even to a session whose domains the crashed renderer never enabled.
    c.on("Page.frameStartedLoading", ({ frameId }, sid) => this.#loading(route(sid), frameId, true));
    c.on("Page.frameStoppedLoading", ({ frameId }, sid) => this.#loading(route(sid), frameId, false));
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

  #loading(page: PageTarget | undefined, frameId: string, started: boolean): void {
    if (!page) return;
    page.onLoading(frameId, started);
    if (this.#unenabled.delete(page)) {
      this.#enableRevived(page).catch((err) => log.debug("revive failed: {err}", { err: String(err) }));
    }
  }

  /**
   * A page re-adopted crashed enabled nothing (its renderer answered no command); a reload or navigation
   * gives it a renderer: its domains are enabled now, its new document ends the crash, and the load
   * it fired while lifecycle events were still off releases those waiting for it.
   */
  async #enableRevived(page: PageTarget): Promise<void> {
    if (page.closed) return;
    try {
      await page.initialize();
    } catch {
      if (!page.closed && page.crash) this.#unenabled.add(page);
      return;
    }
    const { frameTree } = await page.send("Page.getFrameTree");
    this.#host.trouble.committed(page, frameTree.frame);
    const ready = await page.send("Runtime.evaluate", {
      expression: "document.readyState",
      returnByValue: true,
    });
    if (ready.result.value === "complete") {
      page.onLifecycle(frameTree.frame.id, frameTree.frame.loaderId, "load");
    }
  }

  /** Registers an auto-attached page, enables its domains, then lets it run. */
  #adopt(sessionId: string, info: Protocol.Target.TargetInfo): Promise<PageTarget | undefined> {
    const pending = this.#pendingAttach.get(info.targetId);
    if (pending) return pending;
    const existing = this.#byTarget.get(info.targetId);
    if (existing) return Promise.resolve(existing);
    const opener = info.openerId ? this.#byTarget.get(info.openerId) : undefined;
    const orphan = this.#host.claimOrphan(info);
    const page = new PageTarget({
      conn: this.#host.conn,
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
    // The same target is the same renderer: still crashed unless it answers below with a new document.
    const carriedCrash = orphan?.targetId === info.targetId ? orphan.crash : undefined;
    if (carriedCrash) page.crash = { ...carriedCrash };
    const crashedWith = page.crash;
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
      let answered = false;
      try {
        await page.initialize();
        answered = true;
      } catch (err) {
        log.warning("page init failed: {err}", { err: String(err) });
        // Bounded: a crashed renderer never answers, and a reconnection waits for this adoption.
        await page.send("Runtime.runIfWaitingForDebugger", undefined, RELEASE_TIMEOUT_MS).catch(() => {});
      }
      // A crashed renderer answers nothing; one that answered with another document was replaced.
      if (crashedWith && page.crash === crashedWith && answered && page.loaderId !== orphan?.loaderId) {
        page.crash = undefined;
      }
      if (page.crash && !answered) this.#unenabled.add(page);
      // Adopted on a socket that has dropped since (its page is an orphan now): nobody is told of it.
      if (page.closed) return page;
      this.#host.initialized(page);
      for (const listener of this.#addedListeners) listener(page, origin);
      for (const waiter of this.#attachWaiters.get(info.targetId) ?? []) waiter(page);
      this.#attachWaiters.delete(info.targetId);
      return page;
    })();
    this.#pendingAttach.set(info.targetId, work);
    // A stale adoption of a dropped socket must not forget the same target's adoption on the new one.
    work.finally(() => {
      if (this.#pendingAttach.get(info.targetId) === work) this.#pendingAttach.delete(info.targetId);
    });
    return work;
  }

  /** Resolves once the target has been adopted and initialized (bounded). */
  waitForAdoption(targetId: string, timeoutMs: number): Promise<PageTarget | undefined> {
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

  removeTarget(targetId: string, detachedOnly = false): void {
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
    this.drop(page);
  }

  /** A page leaves the session: closed, listeners told, then the session reselects if it was selected. */
  drop(page: PageTarget): void {
    page.markClosed();
    this.#unenabled.delete(page);
    for (const listener of this.#removedListeners) listener(page);
    if (this.pages.get(page.id) === page) this.pages.delete(page.id);
    this.#host.removed(page);
  }
}
