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
import { outsideCall } from "../browser/call_signal.ts";
import { ToolError } from "../errors.ts";
import {
  growViewport,
  launchReplayBrowser,
  pageCall,
  type PageReply,
  type ReplayBrowser,
  replayFailed,
  shutdownReplayBrowser,
} from "./replay_browser.ts";
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

/** Recordings kept replayable at once; the least recently used beyond this is dropped. */
export const MAX_LOADED_KEYS = 4;
/** Events travel to the page in JSON chunks of about this many characters (CDP messages stay small). */
const CHUNK_CHARS = 4_000_000;
/** Blocked URLs kept for diagnostics (origin and path only, never queries). */
const BLOCKED_KEPT = 50;

export interface SeekResult {
  applied_through_ms: number | null;
  next_event_ms: number | null;
  viewport: { width: number; height: number };
  elapsed_ms: number;
}

interface KeyState {
  events: number;
}

function notLoaded(key: string): ToolError {
  return new ToolError({
    code: "replay_not_loaded",
    message: `No recording is loaded for "${key}" in the replay target.`,
    retry: "after_recovery",
    recovery: "Load the recording's events (load) before seeking or measuring.",
    details: { key },
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
  #live?: Promise<ReplayBrowser>;
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
      await growViewport(live, largestViewport(normalized));
      await this.#stage(live, key, normalized);
      const reply = await pageCall(live, "load", [key]);
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
      await growViewport(live, largestViewport(normalized));
      await this.#stage(live, key, normalized);
      const reply = await pageCall(live, "append", [key]);
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
      await pageCall(await this.#live, "drop", [key]);
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
      const reply = await pageCall(live, "seek", [key, timestampMs]);
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
      const reply = await pageCall(live, "frame", [key]);
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
      const reply = await pageCall(live, "measure", [key, timestampMs, [...selectors]]);
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
    await shutdownReplayBrowser(l);
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

  async #evict(live: ReplayBrowser): Promise<void> {
    while (this.#keys.size > MAX_LOADED_KEYS) {
      const oldest = this.#keys.keys().next().value;
      if (oldest === undefined) break;
      this.#keys.delete(oldest);
      await pageCall(live, "drop", [oldest]);
    }
  }

  async #ready(key: string): Promise<ReplayBrowser> {
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
        message:
          `The instant ${timestampMs} is before the recording's first full snapshot (${reply.first_at}).`,
        retry: "never",
        recovery: "Ask for an instant inside the recording.",
        details: { timestamp_ms: timestampMs, first_snapshot_ms: reply.first_at },
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

  async #stage(live: ReplayBrowser, key: string, events: readonly eventWithTime[]): Promise<void> {
    for (const chunk of jsonChunks(events, CHUNK_CHARS)) {
      await pageCall(live, "stage", [key, await packChunk(chunk)]);
    }
  }

  #ensure(): Promise<ReplayBrowser> {
    if (!this.#live) {
      // Outside the caller's tool-call scope: a cancelled call must not leave a half-started browser.
      const starting: Promise<ReplayBrowser> = outsideCall(() =>
        launchReplayBrowser({
          executable: this.#executable,
          onBlocked: (url) => {
            this.#blocked++;
            this.#blockedUrls.push(strippedUrl(url));
            if (this.#blockedUrls.length > BLOCKED_KEPT) this.#blockedUrls.shift();
          },
          onGone: () => {
            // The browser died (or was closed): recordings must be loaded again into a new one.
            if (this.#live === starting) {
              this.#live = undefined;
              this.#keys.clear();
            }
          },
        })
      );
      this.#live = starting;
      starting.catch(() => {
        if (this.#live === starting) this.#live = undefined;
      });
    }
    return this.#live;
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
