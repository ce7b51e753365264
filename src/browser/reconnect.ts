import type { Protocol } from "devtools-protocol";
import type { CdpConnection } from "./cdp.ts";
import type { PageTarget } from "./targets.ts";
import { nextRetry } from "./reconnect_policy.ts";
import { logger } from "../log.ts";

const log = logger("browser");

/** An attempt is not started with less of the window left than this (it could not finish). */
const MIN_ATTEMPT_MS = 250;

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

/**
 * What the reconnector needs of its session: the socket, the pages and the steps it shares with start().
 * Functions rather than fields, so the session's own state stays private to it.
 */
export interface ReconnectHost {
  readonly conn: CdpConnection;
  readonly pages: ReadonlyMap<string, PageTarget>;
  ended(): boolean;
  /** stop() was called: the connection closing is ours, not a drop. */
  stopping(): boolean;
  now(): number;
  /** The page sessions died with the socket: their routing and pending adoptions are forgotten. */
  forgetAttachments(): void;
  /** Browser.getVersion again (a restarted browser may be another build). */
  readVersion(): Promise<void>;
  resumeDownloads(): Promise<void>;
  /** Target discovery and auto-attach on the new socket; adoptions claim orphans via claimOrphan(). */
  discoverPages(): Promise<void>;
  /** A page leaves the session (onPageRemoved). */
  dropPage(page: PageTarget): void;
  /** Selects the last page when the selected one is gone. */
  reselect(): void;
  markEnded(reason: string): void;
  /** No reconnection (none planned, or stopping): the session ends, naming a browser exit when it is one. */
  endDisconnected(): void;
}

/**
 * The reconnecting state machine of an attached session: on a dropped socket the pages become orphans,
 * the endpoint is retried within the window, and the targets of the new socket are matched to the
 * orphans so pages keep their ids. Without a plan (launched sessions) a drop ends the session.
 */
export class SessionReconnector {
  #state: ConnectionState = { state: "connected" };
  readonly #host: ReconnectHost;
  readonly #plan?: ReconnectPlan;
  /** Pages of a dropped connection waiting to be matched to the targets of the new one. */
  #orphans: PageTarget[] = [];
  /** Target id → the orphan it continues, decided from the target list before auto-attach. */
  #planned = new Map<string, PageTarget>();
  #lostListeners = new Set<(atMs: number) => void>();
  #reconnectedListeners = new Set<(info: Reconnected) => void>();

  constructor(host: ReconnectHost, plan?: ReconnectPlan) {
    this.#host = host;
    this.#plan = plan;
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get reconnecting(): boolean {
    return this.#state.state === "reconnecting";
  }

  onConnectionLost(listener: (atMs: number) => void): () => void {
    this.#lostListeners.add(listener);
    return () => this.#lostListeners.delete(listener);
  }

  onReconnected(listener: (info: Reconnected) => void): () => void {
    this.#reconnectedListeners.add(listener);
    return () => this.#reconnectedListeners.delete(listener);
  }

  /** The session's socket closed. */
  disconnected(): void {
    const host = this.#host;
    if (host.ended()) return;
    // A socket reopened during a reconnection that drops again is the running loop's to retry.
    if (this.reconnecting) return;
    if (!this.#plan || host.stopping()) {
      host.endDisconnected();
      return;
    }
    const plan = this.#plan;
    const lostAt = host.now();
    this.#state = {
      state: "reconnecting",
      since: new Date(),
      since_ms: lostAt,
      attempts: 0,
      window_ms: plan.windowMs,
    };
    // The page sessions died with the socket; the pages stay listed (closed to commands) until the new
    // connection's targets are matched to them.
    this.#orphans = [...host.pages.values()];
    host.forgetAttachments();
    for (const page of this.#orphans) page.markClosed();
    log.warning("browser connection lost; reconnecting for up to {ms} ms", { ms: plan.windowMs });
    for (const listener of this.#lostListeners) {
      try {
        listener(lostAt);
      } catch (err) {
        log.debug("connection-lost listener failed: {err}", { err: String(err) });
      }
    }
    this.#loop(plan, lostAt).catch((err) =>
      log.warning("reconnect loop failed: {err}", { err: String(err) })
    );
  }

  async #loop(plan: ReconnectPlan, lostAt: number): Promise<void> {
    const host = this.#host;
    const gone = () => host.ended() || host.stopping();
    const began = performance.now();
    const closes = began + plan.windowMs;
    for (let attempt = 1;; attempt++) {
      // The last wait is cut so that its attempt still has MIN_ATTEMPT_MS of the window.
      const delay = nextRetry(attempt, performance.now() - began, plan.windowMs - MIN_ATTEMPT_MS);
      if (delay === undefined) {
        // No room for another attempt: the session still ends with the window, not before it.
        await new Promise((r) => setTimeout(r, Math.max(0, closes - performance.now())));
        break;
      }
      await new Promise((r) => setTimeout(r, delay));
      const state = this.#state;
      if (gone() || state.state !== "reconnecting") return;
      state.attempts = attempt;
      // An attempt past the window is abandoned: its later steps see the signal and touch nothing.
      const abandon = new AbortController();
      const run = this.#attempt(plan, lostAt, attempt, abandon.signal);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<"expired">((r) => {
        timer = setTimeout(() => r("expired"), Math.max(0, closes - performance.now()));
      });
      try {
        if (await Promise.race([run, expired]) !== "expired") return;
        abandon.abort();
        run.catch(() => {});
        state.last_error = `attempt ${attempt} was still under way when the window closed`;
        break;
      } catch (err) {
        if (gone()) return;
        state.last_error = (err instanceof Error ? err.message : String(err)).slice(0, 200);
        // A half-resumed connection is dropped, so the next attempt starts from a clean socket.
        if (!host.conn.closed) await host.conn.close().catch(() => {});
        this.#reorphan();
      } finally {
        clearTimeout(timer);
      }
    }
    if (gone()) return;
    log.warning("browser did not come back within {ms} ms; ending the session", { ms: plan.windowMs });
    // Ended first, so the pages of an abandoned attempt are closed before its socket goes.
    host.markEnded("reconnect_window_exhausted");
    if (!host.conn.closed) await host.conn.close().catch(() => {});
  }

  /** Every page is an orphan again (an attempt failed after re-adopting some): matched anew next time. */
  #reorphan(): void {
    const host = this.#host;
    for (const page of host.pages.values()) {
      page.markClosed();
      if (!this.#orphans.includes(page)) this.#orphans.push(page);
    }
    this.#planned.clear();
    host.forgetAttachments();
  }

  /** One attempt: the endpoint resolved, a new socket, the pages resumed. Throws when it failed. */
  async #attempt(
    plan: ReconnectPlan,
    lostAt: number,
    attempt: number,
    abandoned: AbortSignal,
  ): Promise<void> {
    const host = this.#host;
    const stale = () => abandoned.aborted || host.ended() || host.stopping();
    const url = await plan.resolve();
    if (stale()) return;
    await host.conn.reopen(url, abandoned);
    // Stopped or abandoned while the socket opened: the new socket is ours to close, nothing to resume.
    if (stale()) {
      await host.conn.close().catch(() => {});
      return;
    }
    await this.#resume(lostAt, attempt, stale);
  }

  /** The new socket is open: the same domains again, the pages matched to their earlier ids. */
  async #resume(lostAt: number, attempts: number, stale: () => boolean): Promise<void> {
    const host = this.#host;
    await host.readVersion();
    await host.resumeDownloads();
    const before = new Set([...host.pages.keys()]);
    const readopted: string[] = [];
    const added: string[] = [];
    const unclaimed = new Set(this.#orphans);
    // One look at the targets before any attaches: each target's orphan is decided up front.
    const { targetInfos } = await host.conn.send("Target.getTargets");
    this.#planned = matchOrphans(this.#orphans, targetInfos.filter(isTab));
    await host.discoverPages();
    this.#planned.clear();
    // The session stopped, or the window closed on this attempt: nothing is committed or announced.
    if (stale()) return;
    // The new socket dropped while pages were adopted: the catch path re-orphans them and retries.
    if (host.conn.closed) throw new Error("the connection dropped again while pages were re-adopted");
    for (const page of host.pages.values()) {
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
      host.dropPage(orphan);
    }
    host.reselect();
    this.#state = { state: "connected" };
    const info: Reconnected = {
      lost_at_ms: lostAt,
      resumed_at_ms: host.now(),
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
   * The earlier page a target of a new connection continues, as decided from the target list before
   * auto-attach (matchOrphans). A target that list missed (opened since) may still take an orphan no
   * listed target reserved: the same target, else the first at the same URL.
   */
  claimOrphan(info: Protocol.Target.TargetInfo): PageTarget | undefined {
    let orphan = this.#planned.get(info.targetId);
    if (orphan) this.#planned.delete(info.targetId);
    else {
      const reserved = new Set(this.#planned.values());
      const free = this.#orphans.filter((p) => !reserved.has(p));
      orphan = free.find((p) => p.targetId === info.targetId) ?? free.find((p) => p.url === info.url);
    }
    const index = orphan ? this.#orphans.indexOf(orphan) : -1;
    if (index < 0) return undefined;
    return this.#orphans.splice(index, 1)[0];
  }
}

/** The targets adoption takes (page_registry.ts): pages, not DevTools' own. */
function isTab(t: Protocol.Target.TargetInfo): boolean {
  return t.type === "page" && !t.url.startsWith("devtools://");
}

/**
 * Which orphan each target of a new connection continues, by target id. The same target first, for
 * every target, so a tab at another page's URL cannot take that page's id while its own target is
 * still there; then URLs among the targets and orphans left. One page before the drop, one tab after it
 * and neither matching: a single-tab browser restarted at another URL (its start page) continues that
 * page rather than replacing it.
 */
export function matchOrphans<T extends { targetId: string; url: string }>(
  orphans: readonly T[],
  tabs: readonly { targetId: string; url: string }[],
): Map<string, T> {
  const plan = new Map<string, T>();
  const free = [...orphans];
  const take = (targetId: string, orphan: T | undefined) => {
    if (!orphan || plan.has(targetId)) return;
    plan.set(targetId, orphan);
    free.splice(free.indexOf(orphan), 1);
  };
  for (const tab of tabs) take(tab.targetId, free.find((p) => p.targetId === tab.targetId));
  for (const tab of tabs) {
    if (!plan.has(tab.targetId)) take(tab.targetId, free.find((p) => p.url === tab.url));
  }
  if (orphans.length === 1 && tabs.length === 1 && plan.size === 0) take(tabs[0].targetId, orphans[0]);
  return plan;
}
