import type { Protocol } from "devtools-protocol";
import type { CdpConnection } from "./cdp.ts";
import type { PageTarget } from "./targets.ts";
import { nextRetry } from "./reconnect_policy.ts";
import { logger } from "../log.ts";

const log = logger("browser");

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
  /** A restarted browser's only tab, which continues the session's only page whatever its URL. */
  #soleTarget?: string;
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
    for (let attempt = 1;; attempt++) {
      const delay = nextRetry(attempt, performance.now() - began, plan.windowMs);
      if (delay === undefined) break;
      await new Promise((r) => setTimeout(r, delay));
      const state = this.#state;
      if (gone() || state.state !== "reconnecting") return;
      state.attempts = attempt;
      try {
        await host.conn.reopen(await plan.resolve());
        // Stopped while the socket opened: the new socket is ours to close, nothing to resume.
        if (gone()) {
          await host.conn.close().catch(() => {});
          return;
        }
        await this.#resume(lostAt, attempt);
        return;
      } catch (err) {
        state.last_error = (err instanceof Error ? err.message : String(err)).slice(0, 200);
        // A half-resumed connection is dropped, so the next attempt starts from a clean socket.
        if (!host.conn.closed) await host.conn.close().catch(() => {});
        for (const page of host.pages.values()) {
          page.markClosed();
          if (!this.#orphans.includes(page)) this.#orphans.push(page);
        }
        host.forgetAttachments();
      }
    }
    if (gone()) return;
    log.warning("browser did not come back within {ms} ms; ending the session", { ms: plan.windowMs });
    host.markEnded("reconnect_window_exhausted");
  }

  /** The new socket is open: the same domains again, the pages matched to their earlier ids. */
  async #resume(lostAt: number, attempts: number): Promise<void> {
    const host = this.#host;
    await host.readVersion();
    await host.resumeDownloads();
    const before = new Set([...host.pages.keys()]);
    const readopted: string[] = [];
    const added: string[] = [];
    const unclaimed = new Set(this.#orphans);
    this.#soleTarget = await this.#soleUnmatchedTarget();
    await host.discoverPages();
    this.#soleTarget = undefined;
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
   * The earlier page a target of a new connection continues: the same target (the socket dropped, the
   * browser stayed), else the first earlier page at the same URL (a restarted browser reopened it).
   */
  claimOrphan(info: Protocol.Target.TargetInfo): PageTarget | undefined {
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
    const { targetInfos } = await this.#host.conn.send("Target.getTargets");
    const tabs = targetInfos.filter((t) => t.type === "page" && !t.url.startsWith("devtools://"));
    const [orphan] = this.#orphans;
    const [tab] = tabs;
    if (tabs.length !== 1 || tab.targetId === orphan.targetId || tab.url === orphan.url) return undefined;
    return tab.targetId;
  }
}
