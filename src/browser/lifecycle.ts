import type { Config } from "../config.ts";
import { noBrowser, ToolError } from "../errors.ts";
import { claimManagedProfile, DEFAULT_PROFILE, managedProfileDir } from "../store/profiles.ts";
import { removeProfileDir, TEMP_PROFILE_PREFIX } from "../store/browser_record.ts";
import { InstanceStore } from "../store/instance.ts";
import { CdpConnection } from "./cdp.ts";
import { discoverChrome } from "./discovery.ts";
import { browserWebSocketUrl } from "./endpoint_discovery.ts";
import { launchChrome, type LaunchedChrome, profileInUseError } from "./launch.ts";
import { BrowserSession, type FocusPolicy, nextSessionOrdinal, type ProfileIdentity } from "./session.ts";

export interface StartOptions {
  profile?: string;
  temporary?: boolean;
  headless?: boolean;
  executable?: string;
  url?: string;
  every_nth_frame: number;
  focus: FocusPolicy;
  /** DOM recording for the session (default true); immutable once the session exists. */
  record_dom?: boolean;
  /** Runs on the new session before it adopts any page (the DOM recorder's page setup). */
  prepare?: (session: BrowserSession) => void;
}

export interface AttachOptions {
  endpoint: string;
  /**
   * The endpoint the caller named (http://127.0.0.1:<port> or ws://…): a dropped connection is retried
   * there, asked again for its websocket, since a restarted browser has a new one. Default: `endpoint`.
   */
  reconnectEndpoint?: string;
  every_nth_frame: number;
  record_dom?: boolean;
  prepare?: (session: BrowserSession) => void;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);

/** Parses a CDP endpoint and refuses anything that is not on this machine's loopback. */
export function parseLoopbackEndpoint(endpoint: string): URL {
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`);
  } catch {
    throw new ToolError({
      code: "invalid_endpoint",
      message: `${JSON.stringify(endpoint.slice(0, 120))} is not a CDP endpoint URL.`,
      retry: "never",
      recovery:
        "Pass http://127.0.0.1:<port> (from chrome --remote-debugging-port) or its ws:// browser URL.",
      affected: { argument: "endpoint" },
    });
  }
  if (!["http:", "https:", "ws:", "wss:"].includes(url.protocol)) {
    throw new ToolError({
      code: "invalid_endpoint",
      message: `Endpoint scheme ${url.protocol} is not supported.`,
      retry: "never",
      recovery: "Use an http:// or ws:// endpoint on 127.0.0.1.",
      affected: { argument: "endpoint" },
    });
  }
  if (!LOOPBACK_HOSTS.has(url.hostname) && !/^127\.\d+\.\d+\.\d+$/.test(url.hostname)) {
    throw new ToolError({
      code: "endpoint_not_loopback",
      message:
        `Refusing to attach to ${url.hostname}: CDP endpoints must be on this machine's loopback interface.`,
      retry: "never",
      recovery:
        "Start Chrome with --remote-debugging-port and attach to http://127.0.0.1:<port>; CDP grants full control and must not cross a network.",
      affected: { argument: "endpoint" },
    });
  }
  return url;
}

async function browserWsUrl(url: URL): Promise<string> {
  if (url.protocol === "ws:" || url.protocol === "wss:") return url.href;
  let body: { webSocketDebuggerUrl?: string };
  try {
    const res = await fetch(new URL("/json/version", url), { signal: AbortSignal.timeout(5_000) });
    body = await res.json();
  } catch {
    throw new ToolError({
      code: "endpoint_unreachable",
      message: `No CDP endpoint answered at ${url.host}.`,
      retry: "safe",
      recovery: "Check that Chrome runs with --remote-debugging-port on that port, then attach again.",
      affected: { argument: "endpoint" },
    });
  }
  const ws = body.webSocketDebuggerUrl;
  if (!ws) {
    throw new ToolError({
      code: "endpoint_unreachable",
      message: "The endpoint did not report a browser websocket URL.",
      retry: "never",
      recovery: "Attach to the browser's own endpoint (http://127.0.0.1:<port>), not a page's.",
    });
  }
  parseLoopbackEndpoint(ws);
  return ws;
}

export interface StopResult {
  stopped: boolean;
  closed_browser: boolean;
  session_id?: string;
  mode?: string;
}

/** `work`, or the signal's reason once it is aborted first (the work itself runs on, its result dropped). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

/** Owns the one browser session a process drives at a time. */
export class BrowserManager {
  #session?: BrowserSession;
  #ended?: BrowserSession;
  #transition?: Promise<unknown>;
  #stopping?: Promise<StopResult>;

  /**
   * `downloadsRoot`: where launched sessions keep downloads (the instance root's downloads folder).
   * `shutdown`: aborted when the process shuts down; from then on nothing is launched or attached, and a
   * start in flight tears down what it made at its next step instead of leaving a browser behind.
   */
  constructor(readonly config: Config, readonly downloadsRoot?: string, readonly shutdown?: AbortSignal) {}

  /** Throws the shutdown's reason (shutting_down) once the process began shutting down. */
  #assertOpen(): void {
    this.shutdown?.throwIfAborted();
  }

  get current(): BrowserSession | undefined {
    return this.#session;
  }

  require(): BrowserSession {
    const s = this.#session;
    if (!s) throw noBrowser();
    s.assertLive();
    return s;
  }

  #assertFree(): void {
    if (this.#transition) {
      throw new ToolError({
        code: "browser_transition_in_progress",
        message: "Another start, attach or stop is still running.",
        retry: "safe",
        recovery: "Wait for it to finish, then retry.",
      });
    }
    const s = this.#session;
    if (s && !s.ended) {
      throw new ToolError({
        code: "browser_already_running",
        message: `A browser session (${s.mode}) is already active.`,
        retry: "after_recovery",
        recovery: "Call stop_browser first, or keep using the current session.",
        affected: { session_id: s.id },
      });
    }
    // An ended session's slot is reaped (stopped, releasing its profile) before a new one starts.
    if (s) this.#ended = s;
    this.#session = undefined;
  }

  async #exclusive<T>(work: () => Promise<T>): Promise<T> {
    const p = work();
    this.#transition = p;
    try {
      return await p;
    } finally {
      this.#transition = undefined;
    }
  }

  /**
   * A session that ended on its own (browser crashed or closed) still holds its profile claim and
   * maybe a temporary profile until it is stopped; stop it before its slot is reused.
   */
  async #reapEnded(): Promise<void> {
    const stale = this.#ended;
    this.#ended = undefined;
    await stale?.stop().catch(() => {});
  }

  start(opts: StartOptions): Promise<BrowserSession> {
    this.#assertOpen();
    this.#assertFree();
    return this.#exclusive(async () => {
      await this.#reapEnded();
      const found = discoverChrome({ explicit: opts.executable });
      const headless = opts.headless ?? this.config.headless;
      let userDataDir: string;
      let profile: ProfileIdentity;
      let releaseClaim = () => {};
      if (opts.temporary) {
        userDataDir = await Deno.makeTempDir({ prefix: TEMP_PROFILE_PREFIX });
        profile = { kind: "temporary" };
      } else {
        const name = opts.profile ?? DEFAULT_PROFILE;
        userDataDir = managedProfileDir(this.config.dataDir, name);
        profile = { kind: "managed", name };
        // Claimed before Chrome starts: of two servers starting this profile at once, the loser
        // learns it here, not after reporting "Started." for a browser that then exits.
        const claim = claimManagedProfile(this.config.dataDir, name);
        if (!claim.ok) throw profileInUseError(name, claim.holderPid, "krometrail");
        releaseClaim = claim.release;
      }
      const temporary = profile.kind === "temporary";
      const ledger = InstanceStore.current;
      const record = (pid: number, group: boolean) =>
        ledger?.recordBrowser({
          pid,
          group,
          profile_dir: userDataDir,
          temporary,
          started_at: new Date().toISOString(),
        }) ?? Promise.resolve();
      let launched: LaunchedChrome | undefined;
      let tornDown = false;
      // Every way a launched (or half-launched) browser ends comes through here exactly once.
      const teardown = async () => {
        if (tornDown) return;
        tornDown = true;
        await launched?.terminate().catch(() => {});
        if (temporary) await removeProfileDir(userDataDir);
        await ledger?.forgetBrowser().catch(() => {});
        releaseClaim();
      };
      try {
        // Recorded before the spawn too, so a crash mid-launch still names the temporary profile.
        await record(0, false).catch(() => {});
        this.#assertOpen();
        launched = await launchChrome({
          executable: found.path,
          userDataDir,
          profileLabel: profile.kind === "managed" ? profile.name : "temporary",
          headless,
          temporary,
          onSpawn: record,
        });
        this.#assertOpen();
      } catch (err) {
        await teardown();
        throw err;
      }
      let conn: CdpConnection;
      try {
        conn = await CdpConnection.connect(launched.browserWsUrl);
      } catch (err) {
        await teardown();
        throw err;
      }
      const session = new BrowserSession({
        conn,
        ordinal: nextSessionOrdinal(),
        mode: "launched",
        profile,
        ...(this.downloadsRoot ? { downloadsRoot: this.downloadsRoot } : {}),
        config: {
          every_nth_frame: opts.every_nth_frame,
          focus: opts.focus,
          headless,
          record_dom: opts.record_dom ?? true,
        },
        process: launched.process,
        cleanup: teardown,
        profileDir: userDataDir,
      });
      try {
        this.#assertOpen();
        opts.prepare?.(session);
        await session.start();
        this.#assertOpen();
        // The load (up to 30 s) is cut short by shutdown: the browser goes, and the load's wait with it.
        if (opts.url) {
          await untilAborted(session.navigate(session.page(), opts.url, "load", 30_000), this.shutdown);
        }
      } catch (err) {
        await session.stop().catch(() => {});
        await teardown();
        throw err;
      }
      this.#session = session;
      return session;
    });
  }

  attach(opts: AttachOptions): Promise<BrowserSession> {
    const url = parseLoopbackEndpoint(opts.endpoint);
    const reconnectUrl = opts.reconnectEndpoint ? parseLoopbackEndpoint(opts.reconnectEndpoint) : url;
    this.#assertOpen();
    this.#assertFree();
    return this.#exclusive(async () => {
      await this.#reapEnded();
      const ws = await browserWsUrl(url);
      const conn = await CdpConnection.connect(ws).catch(() => {
        throw new ToolError({
          code: "endpoint_unreachable",
          message: "The CDP websocket refused the connection.",
          retry: "safe",
          recovery: "Check the endpoint and that no other client holds it exclusively, then attach again.",
        });
      });
      const session = new BrowserSession({
        conn,
        ordinal: nextSessionOrdinal(),
        mode: "attached",
        // The endpoint as the caller named it (http://…), not the websocket discovery turned it into.
        profile: { kind: "attached", endpoint: `${reconnectUrl.protocol}//${reconnectUrl.host}` },
        reconnect: {
          resolve: () => browserWebSocketUrl(reconnectUrl),
          windowMs: this.config.reconnectWindowMs,
        },
        // Attachment keeps foreground behaviour: the browser stays externally owned.
        config: {
          every_nth_frame: opts.every_nth_frame,
          focus: "foreground",
          headless: false,
          record_dom: opts.record_dom ?? true,
        },
      });
      try {
        this.#assertOpen();
        opts.prepare?.(session);
        await session.start();
        this.#assertOpen();
      } catch (err) {
        // A started session has capture and listeners to end; one that never started only its socket.
        await session.stop().catch(() => {});
        await conn.close();
        throw err;
      }
      this.#session = session;
      return session;
    });
  }

  /**
   * Idempotent: stopping with nothing running (or an ended session) reports success; a stop while one
   * runs answers with that one's result. A start or attach in flight has no session yet: stop waits for
   * it and stops what it produced (the caller bounds the wait: stop_browser's deadline, the shutdown
   * drain's), so a browser launched during shutdown does not outlive the process.
   */
  async stop(): Promise<StopResult> {
    while (this.#transition && !this.#stopping) await this.#transition.then(() => {}, () => {});
    if (this.#stopping) return await this.#stopping;
    const s = this.#session;
    if (!s) return { stopped: false, closed_browser: false };
    const stopping = this.#exclusive(() => s.stop()).then((result): StopResult => {
      this.#session = undefined;
      return { stopped: true, closed_browser: result.closed_browser, session_id: s.id, mode: s.mode };
    });
    this.#stopping = stopping;
    try {
      return await stopping;
    } finally {
      this.#stopping = undefined;
    }
  }
}
