/**
 * The replay target: one private headless Chromium per process, lazily launched, whose only page runs
 * rrweb's Replayer so questions that need real layout (`visible`, `measure_layout`) can be answered at any
 * recorded instant, during a session and after `stop_browser`.
 *
 * Isolation:
 * - rrweb rebuilds each recording inside an iframe sandboxed with `allow-same-origin` only (no
 *   `allow-scripts`), so recorded scripts and inline handlers never run; our own code runs in the outer
 *   page and reads the iframe's document.
 * - The replay makes no network requests: every request the page issues is intercepted with the Fetch
 *   domain and failed (counted in `blockedRequests`). Images, fonts and stylesheets the recorded page
 *   loaded by URL are therefore never fetched; a box comes from the recorded attributes and the inlined
 *   CSS only (an `<img>` without width/height in either lays out as a broken image).
 */
import type { eventWithTime } from "@rrweb/types";
import { CdpConnection } from "../browser/cdp.ts";
import { outsideCall } from "../browser/call_signal.ts";
import { discoverChrome } from "../browser/discovery.ts";
import { launchChrome, type LaunchedChrome, type LaunchOptions } from "../browser/launch.ts";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { removeProfileDir, TEMP_PROFILE_PREFIX } from "../store/browser_record.ts";
import { REPLAYER_BUNDLE } from "./bundles_generated.ts";
import {
  jsonChunks,
  largestViewport,
  type LayoutAt,
  type MeasuredElement,
  normalizeEvents,
  type Overlap,
  packChunk,
  selectorProblem,
} from "./replay_layout.ts";
import { REPLAY_PAGE_SOURCE } from "./replay_page_source.ts";

const log = logger("pagestate", "replay");

/** Recordings kept replayable at once; the least recently used beyond this is dropped. */
export const MAX_LOADED_KEYS = 4;
/** Events travel to the page in JSON chunks of about this many characters (CDP messages stay small). */
const CHUNK_CHARS = 4_000_000;
const PAGE_CALL_TIMEOUT_MS = 20_000;
/** The replay page starts at least this large; it grows to the largest recorded viewport. */
const MIN_VIEWPORT = { width: 1280, height: 720 };
/** Blocked URLs kept for diagnostics (origin and path only, never queries). */
const BLOCKED_KEPT = 50;

/**
 * Network lockdown below the Fetch domain, for what it never sees (a preconnect's connection, a DNS
 * prefetch): no host name resolves, and every connection, loopback included, goes to a proxy on the
 * discard port, which refuses it. The DevTools endpoint is inbound and unaffected.
 */
export const REPLAY_CHROME_FLAGS: readonly string[] = [
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
];

export interface SeekResult {
  applied_through_ms: number | null;
  next_event_ms: number | null;
  viewport: { width: number; height: number };
  elapsed_ms: number;
}

interface Live {
  chrome: LaunchedChrome;
  conn: CdpConnection;
  sessionId: string;
  /** The replay page's global object, the `this` of every page call. */
  globalId: string;
  profileDir: string;
  viewport: { width: number; height: number };
}

interface KeyState {
  events: number;
}

type PageReply =
  | { ok: true } & Record<string, unknown>
  | { ok: false; reason: string } & Record<string, unknown>;

function notLoaded(key: string): ToolError {
  return new ToolError({
    code: "replay_not_loaded",
    message: `No recording is loaded for "${key}" in the replay target.`,
    retry: "after_recovery",
    recovery: "Load the recording's events (load) before seeking or measuring.",
    details: { key },
  });
}

function replayFailed(message: string, details?: Record<string, unknown>): ToolError {
  return new ToolError({
    code: "replay_failed",
    message,
    retry: "safe",
    recovery: "Retry; if it persists the recording may be malformed.",
    ...(details ? { details } : {}),
  });
}

function invalidSelector(message: string, details: Record<string, unknown>): ToolError {
  return new ToolError({
    code: "invalid_selector",
    message,
    retry: "never",
    recovery: "Pass valid CSS selectors (as document.querySelectorAll accepts them).",
    affected: { argument: "selectors" },
    details,
  });
}

function strippedUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`.slice(0, 300);
  } catch {
    return url.slice(0, 80);
  }
}

export class ReplayTarget {
  #live?: Promise<Live>;
  #keys = new Map<string, KeyState>();
  #queue: Promise<unknown> = Promise.resolve();
  #blocked = 0;
  #blockedUrls: string[] = [];
  #executable?: string;

  /** `executable`: a browser path; otherwise the project's discovery (KROMETRAIL_CHROME, CHROME_BIN, ...). */
  constructor(opts: { executable?: string } = {}) {
    this.#executable = opts.executable;
  }

  /** Requests the replay page issued and the Fetch domain failed (none reach the network). */
  get blockedRequests(): number {
    return this.#blocked;
  }

  /** The most recent blocked URLs (scheme, host and path), oldest first. */
  get blockedUrls(): readonly string[] {
    return this.#blockedUrls;
  }

  /** Whether events are loaded for key, and how many (callers append only what is new). */
  loadedEvents(key: string): number | undefined {
    return this.#keys.get(key)?.events;
  }

  get loadedKeys(): string[] {
    return [...this.#keys.keys()];
  }

  /** Loads a recording (replacing any loaded under key); one Replayer per key, reused across seeks. */
  load(key: string, events: readonly eventWithTime[]): Promise<{ events: number; elapsed_ms: number }> {
    return this.#serial(async () => {
      const t0 = performance.now();
      const live = await this.#ensure();
      const normalized = normalizeEvents(events);
      await this.#grow(live, largestViewport(normalized));
      await this.#stage(live, key, normalized);
      const reply = await this.#call(live, "load", [key]);
      if (!reply.ok) {
        this.#keys.delete(key);
        throw replayFailed(`The replay target could not load the recording (${reply.reason}).`, {
          key,
          ...reply,
        });
      }
      const count = Number(reply.count);
      this.#touch(key, count);
      await this.#evict(live);
      return { events: count, elapsed_ms: Math.round(performance.now() - t0) };
    });
  }

  /** Adds events of a live recording that grew since load (events already loaded must not be repeated). */
  append(key: string, events: readonly eventWithTime[]): Promise<{ events: number }> {
    return this.#serial(async () => {
      const live = await this.#ensure();
      if (!this.#keys.has(key)) throw notLoaded(key);
      if (events.length === 0) return { events: this.#keys.get(key)?.events ?? 0 };
      const normalized = normalizeEvents(events);
      await this.#grow(live, largestViewport(normalized));
      await this.#stage(live, key, normalized);
      const reply = await this.#call(live, "append", [key]);
      if (!reply.ok) {
        this.#keys.delete(key);
        throw notLoaded(key);
      }
      const count = Number(reply.count);
      this.#touch(key, count);
      return { events: count };
    });
  }

  /** Forgets a recording (its Replayer and iframe). */
  drop(key: string): Promise<void> {
    return this.#serial(async () => {
      if (!this.#keys.has(key) || !this.#live) return;
      this.#keys.delete(key);
      await this.#call(await this.#live, "drop", [key]);
    });
  }

  /**
   * Positions the replayed document at the instant `timestampMs` (the events' own clock, rrweb
   * `timestamp`): every event at or before it applied, none after.
   */
  seek(key: string, timestampMs: number): Promise<SeekResult> {
    return this.#serial(async () => {
      const t0 = performance.now();
      const live = await this.#ready(key);
      const reply = await this.#call(live, "seek", [key, timestampMs]);
      this.#check(key, timestampMs, reply);
      return {
        applied_through_ms: reply.applied_through as number | null,
        next_event_ms: reply.next_at as number | null,
        viewport: { width: Number(reply.width), height: Number(reply.height) },
        elapsed_ms: round(performance.now() - t0),
      };
    });
  }

  /** The replay iframe of key: its sandbox attribute (rrweb's: `allow-same-origin`, no scripts) and size. */
  frameInfo(
    key: string,
  ): Promise<{ sandbox: string | null; scripts_allowed: boolean; width: number; height: number }> {
    return this.#serial(async () => {
      const live = await this.#ready(key);
      const reply = await this.#call(live, "frame", [key]);
      this.#check(key, 0, reply);
      return {
        sandbox: reply.sandbox as string | null,
        scripts_allowed: reply.scripts_allowed === true,
        width: Number(reply.width),
        height: Number(reply.height),
      };
    });
  }

  /** Boxes, computed visibility, stacking and pairwise overlaps of each selector's first match at an instant. */
  measureLayout(key: string, timestampMs: number, selectors: readonly string[]): Promise<LayoutAt> {
    const problem = selectorProblem(selectors);
    if (problem) return Promise.reject(invalidSelector(`Invalid selectors: ${problem}.`, { problem }));
    return this.#serial(async () => {
      const t0 = performance.now();
      const live = await this.#ready(key);
      const reply = await this.#call(live, "measure", [key, timestampMs, [...selectors]]);
      this.#check(key, timestampMs, reply);
      const seek = reply.seek as { applied_through: number | null; next_at: number | null };
      return {
        timestamp_ms: timestampMs,
        applied_through_ms: seek.applied_through,
        next_event_ms: seek.next_at,
        viewport: reply.viewport as { width: number; height: number },
        results: reply.results as MeasuredElement[],
        overlaps: reply.overlaps as Overlap[],
        elapsed_ms: round(performance.now() - t0),
      };
    });
  }

  /** bisect's `visible` predicate: the first match's visibility, or "elementMissing" when nothing matches. */
  async isVisible(key: string, timestampMs: number, selector: string): Promise<boolean | "elementMissing"> {
    const layout = await this.measureLayout(key, timestampMs, [selector]);
    const [result] = layout.results;
    if (!result?.found) return "elementMissing";
    return result.visible;
  }

  /** Kills the replay browser and deletes its temporary profile; a later call launches a new one. */
  async close(): Promise<void> {
    const live = this.#live;
    this.#live = undefined;
    this.#keys.clear();
    if (!live) return;
    const l = await live.catch(() => undefined);
    if (!l) return;
    await this.#shutdown(l);
  }

  async #shutdown(l: Live): Promise<void> {
    await l.conn.send("Browser.close", {}, undefined, 2_000).catch(() => {});
    await l.conn.close().catch(() => {});
    await l.chrome.terminate().catch(() => {});
    await removeProfileDir(l.profileDir);
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => {});
    return run;
  }

  #touch(key: string, events: number): void {
    this.#keys.delete(key);
    this.#keys.set(key, { events });
  }

  async #evict(live: Live): Promise<void> {
    while (this.#keys.size > MAX_LOADED_KEYS) {
      const oldest = this.#keys.keys().next().value;
      if (oldest === undefined) break;
      this.#keys.delete(oldest);
      await this.#call(live, "drop", [oldest]);
    }
  }

  async #ready(key: string): Promise<Live> {
    const state = this.#keys.get(key);
    if (!state || !this.#live) throw notLoaded(key);
    const live = await this.#live;
    this.#touch(key, state.events);
    return live;
  }

  #check(
    key: string,
    timestampMs: number,
    reply: PageReply,
  ): asserts reply is { ok: true } & Record<string, unknown> {
    if (reply.ok) return;
    if (reply.reason === "not_loaded") {
      this.#keys.delete(key);
      throw notLoaded(key);
    }
    if (reply.reason === "before_recording") {
      throw new ToolError({
        code: "instant_out_of_recording",
        message: `The instant ${timestampMs} is before the recording's first event (${reply.first_at}).`,
        retry: "never",
        recovery: "Ask for an instant inside the recording.",
        details: { timestamp_ms: timestampMs, first_event_ms: reply.first_at },
      });
    }
    if (reply.reason === "invalid_selector") {
      const invalid = reply.invalid as Array<{ selector: string; reason: string }>;
      throw invalidSelector(
        `Invalid CSS selector${invalid.length > 1 ? "s" : ""}: ${
          invalid.map((i) => JSON.stringify(i.selector)).join(", ")
        }.`,
        { invalid },
      );
    }
    throw replayFailed(`The replay target could not answer (${reply.reason}).`, { key });
  }

  async #stage(live: Live, key: string, events: readonly eventWithTime[]): Promise<void> {
    for (const chunk of jsonChunks(events, CHUNK_CHARS)) {
      await this.#call(live, "stage", [key, await packChunk(chunk)]);
    }
  }

  /** Calls `__krometrailReplay[method](...args)`; args go as JSON values, never into source text. */
  async #call(live: Live, method: string, args: unknown[]): Promise<PageReply> {
    const { result, exceptionDetails } = await live.conn.send(
      "Runtime.callFunctionOn",
      {
        objectId: live.globalId,
        functionDeclaration: "function(method, args) { return this.__krometrailReplay[method](...args); }",
        arguments: [{ value: method }, { value: args }],
        returnByValue: true,
        awaitPromise: true,
      },
      live.sessionId,
      PAGE_CALL_TIMEOUT_MS,
    );
    if (exceptionDetails) {
      const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
      throw replayFailed(`The replay page failed in ${method}: ${String(text).slice(0, 300)}`);
    }
    const value = result.value as PageReply | undefined;
    if (!value || typeof value !== "object") {
      throw replayFailed(`The replay page gave no answer to ${method}.`);
    }
    return value;
  }

  async #grow(live: Live, wanted: { width: number; height: number }): Promise<void> {
    const width = Math.max(live.viewport.width, wanted.width);
    const height = Math.max(live.viewport.height, wanted.height);
    if (width === live.viewport.width && height === live.viewport.height) return;
    await live.conn.send("Emulation.setDeviceMetricsOverride", {
      width,
      height,
      deviceScaleFactor: 1,
      mobile: false,
    }, live.sessionId);
    live.viewport = { width, height };
  }

  #ensure(): Promise<Live> {
    if (!this.#live) {
      // Outside the caller's tool-call scope: a cancelled call must not leave a half-started browser.
      const starting = outsideCall(() => this.#start());
      this.#live = starting;
      starting.catch(() => {
        if (this.#live === starting) this.#live = undefined;
      });
    }
    return this.#live;
  }

  async #start(): Promise<Live> {
    const executable = discoverChrome({ explicit: this.#executable }).path;
    const profileDir = await Deno.makeTempDir({ prefix: `${TEMP_PROFILE_PREFIX}replay-` });
    let chrome: LaunchedChrome | undefined;
    let conn: CdpConnection | undefined;
    try {
      // extraArgs takes effect with LaunchOptions.extraArgs (launch.ts); until then it is ignored.
      const options: LaunchOptions & { extraArgs?: readonly string[] } = {
        executable,
        userDataDir: profileDir,
        profileLabel: "replay",
        headless: true,
        temporary: true,
        windowSize: MIN_VIEWPORT,
        extraArgs: REPLAY_CHROME_FLAGS,
      };
      chrome = await launchChrome(options);
      conn = await CdpConnection.connect(chrome.browserWsUrl);
      const { targetInfos } = await conn.send("Target.getTargets");
      const page = targetInfos.find((t) => t.type === "page");
      const targetId = page?.targetId ??
        (await conn.send("Target.createTarget", { url: "about:blank" })).targetId;
      const { sessionId } = await conn.send("Target.attachToTarget", { targetId, flatten: true });
      this.#watchRequests(conn, sessionId);
      // Every request pauses here and is failed by #watchRequests: nothing leaves the replay page.
      await conn.send(
        "Fetch.enable",
        { patterns: [{ urlPattern: "*", requestStage: "Request" }] },
        sessionId,
      );
      await conn.send("Emulation.setDeviceMetricsOverride", {
        ...MIN_VIEWPORT,
        deviceScaleFactor: 1,
        mobile: false,
      }, sessionId);
      for (const expression of [REPLAYER_BUNDLE, REPLAY_PAGE_SOURCE]) {
        const { exceptionDetails } = await conn.send("Runtime.evaluate", { expression }, sessionId);
        if (exceptionDetails) throw new Error(`replay page setup failed: ${exceptionDetails.text}`);
      }
      const { result } = await conn.send("Runtime.evaluate", { expression: "globalThis" }, sessionId);
      if (!result.objectId) throw new Error("replay page has no global object");
      const live: Live = {
        chrome,
        conn,
        sessionId,
        globalId: result.objectId,
        profileDir,
        viewport: { ...MIN_VIEWPORT },
      };
      conn.onDisconnect(() => {
        // The browser died (or was closed): recordings must be loaded again into a new one.
        this.#keys.clear();
        if (this.#live) {
          const current = this.#live;
          current.then((l) => {
            if (l === live && this.#live === current) this.#live = undefined;
          }, () => {});
        }
        void chrome?.terminate().catch(() => {}).then(() => removeProfileDir(profileDir));
      });
      log.debug("replay target ready");
      return live;
    } catch (err) {
      await conn?.close().catch(() => {});
      await chrome?.terminate().catch(() => {});
      await removeProfileDir(profileDir);
      if (err instanceof ToolError) throw err;
      throw replayFailed(`The replay browser could not start: ${err instanceof Error ? err.message : err}`);
    }
  }

  #watchRequests(conn: CdpConnection, sessionId: string): void {
    conn.on("Fetch.requestPaused", (params, sid) => {
      if (sid !== sessionId) return;
      this.#blocked++;
      this.#blockedUrls.push(strippedUrl(params.request.url));
      if (this.#blockedUrls.length > BLOCKED_KEPT) this.#blockedUrls.shift();
      conn.send(
        "Fetch.failRequest",
        { requestId: params.requestId, errorReason: "BlockedByClient" },
        sessionId,
      )
        .catch(() => {});
    });
  }
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}

/** The process's one replay target (the browser is launched on first use). */
let shared: ReplayTarget | undefined;
export function replayTarget(): ReplayTarget {
  shared ??= new ReplayTarget();
  return shared;
}

/** Closes the process's replay target, if one was made (server shutdown). */
export async function closeReplayTarget(): Promise<void> {
  const t = shared;
  shared = undefined;
  await t?.close();
}
