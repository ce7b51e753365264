/**
 * The DOM recorder, server side: rrweb's `record` (RECORDER_BUNDLE) runs in an isolated world of every
 * recordable page from document start, and its batches arrive through a CDP binding exposed to that
 * world only. Page scripts share the DOM with it but not its globals, prototypes, timers or binding.
 *
 * `prepareDomRecording` installs the page setup and starts listening before the session adopts its first
 * page, so no document or isolated world is missed; batches received before a sink attaches wait in a
 * bounded buffer. `recordPageDom` attaches the sink (the session's capture) and installs everything
 * itself when the session was not prepared (documents already running are then recorded from now on).
 */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget, TargetOverride } from "../browser/targets.ts";
import type { DomBatchMessage } from "../capture/messages.ts";
import { logger } from "../log.ts";
import { RECORDER_BUNDLE } from "./bundles_generated.ts";
import type { RecorderStartOptions } from "./page/recorder_page.ts";

const log = logger("pagestate");

/** The isolated world the recorder runs in (Page.addScriptToEvaluateOnNewDocument's worldName). */
export const DOM_RECORDER_WORLD = "krometrail-dom";
/** The binding batches arrive through, exposed to DOM_RECORDER_WORLD contexts only. */
export const DOM_RECORDER_BINDING = "__krometrailDomBatch";
/** The key of the recorder's setup in PageTarget.overrides. */
export const DOM_RECORDER_SETUP = "dom_recorder";

/**
 * In-page batching and checkpoints. A batch leaves ~100 ms after its first event (a full snapshot at
 * once), so the server holds recent state within a tenth of a second without a CDP message per event. A
 * checkpoint every 5 s bounds a seek to 5 s of mutations after the nearest full snapshot; rrweb takes one
 * only when an event arrives past the interval, so a quiet page costs nothing.
 */
export const DOM_RECORDER_OPTIONS: RecorderStartOptions = {
  binding: DOM_RECORDER_BINDING,
  flush_ms: 100,
  checkout_ms: 5_000,
};

/** Clock-offset samples the median is taken over. */
const OFFSET_SAMPLES = 9;

/** Batches held while no sink is attached (the session's first navigation, before capture starts). */
const PENDING_BYTES = 16 * 1024 * 1024;

/** The script every document runs in the recorder's world: rrweb plus the call that starts it. */
export function domRecorderSource(options: RecorderStartOptions = DOM_RECORDER_OPTIONS): string {
  return `${RECORDER_BUNDLE};\n__krometrailRrweb.start(${JSON.stringify(options)});`;
}

/**
 * The per-page setup, sent in the page's initialization round before it runs: the binding first, so
 * the world the script creates already has it; `runImmediately` also records a document already
 * running (attach, a late install). Sending it twice is harmless: the page side starts once per document.
 */
export function domRecorderSetup(source: string = domRecorderSource()): TargetOverride {
  return {
    apply(page: PageTarget, timeoutMs?: number): Array<Promise<unknown>> {
      return [
        page.send(
          "Runtime.addBinding",
          { name: DOM_RECORDER_BINDING, executionContextName: DOM_RECORDER_WORLD },
          timeoutMs,
        ),
        page.send(
          "Page.addScriptToEvaluateOnNewDocument",
          { source, worldName: DOM_RECORDER_WORLD, runImmediately: true },
          timeoutMs,
        ),
      ];
    },
  };
}

/** What the recorder counted, for tests and status. */
export interface DomRecorderStats {
  batches: number;
  bytes: number;
  /** Binding calls refused: not from the recorder's world, or too late to be held. */
  refused: number;
}

class DomRecording {
  readonly stats: DomRecorderStats = { batches: 0, bytes: 0, refused: 0 };
  /** `${page_id}:${executionContextId}` of the recorder's isolated worlds that exist now. */
  #worlds = new Set<string>();
  #pending: DomBatchMessage[] = [];
  #pendingBytes = 0;
  #sink?: (m: DomBatchMessage) => void;
  #off: Array<() => void>;

  constructor(private readonly session: BrowserSession, options: RecorderStartOptions) {
    const s = session;
    const key = (page: PageTarget, id: number) => `${page.id}:${id}`;
    this.#off = [
      s.onPageEvent("Runtime.executionContextCreated", (page, { context }) => {
        const aux = context.auxData as { type?: string } | undefined;
        if (context.name === DOM_RECORDER_WORLD && aux?.type === "isolated") {
          this.#worlds.add(key(page, context.id));
        }
      }),
      s.onPageEvent("Runtime.executionContextDestroyed", (page, { executionContextId }) => {
        this.#worlds.delete(key(page, executionContextId));
      }),
      s.onPageEvent("Runtime.executionContextsCleared", (page) => {
        for (const k of this.#worlds) if (k.startsWith(`${page.id}:`)) this.#worlds.delete(k);
      }),
      // A popup's first document can commit into the Window of its initial about:blank (same origin), where
      // the script already ran and declined; no new document script runs then, so the recorder is started
      // in its existing world (a no-op where it already records).
      s.onPageEvent("Page.frameNavigated", (page, { frame }) => {
        if (frame.parentId || frame.url.startsWith("about:")) return;
        for (const k of this.#worlds) {
          if (!k.startsWith(`${page.id}:`)) continue;
          page.send("Runtime.evaluate", {
            contextId: Number(k.slice(page.id.length + 1)),
            expression: `globalThis.__krometrailRrweb?.start(${JSON.stringify(options)})`,
          }).catch(() => {});
        }
      }),
      s.onPageEvent("Runtime.bindingCalled", (page, { name, payload, executionContextId }) => {
        if (name !== DOM_RECORDER_BINDING) return;
        if (!this.#worlds.has(key(page, executionContextId))) {
          this.stats.refused++;
          return;
        }
        this.#receive(page, payload);
      }),
    ];
    session.addPageSetup(DOM_RECORDER_SETUP, domRecorderSetup(domRecorderSource(options)));
  }

  /** Recent samples of the wall clock minus the session clock, oldest first. */
  #offsets: number[] = [];

  /**
   * The page stamps events with its Date.now(), the same wall clock as ours: the offset between the two
   * clocks is sampled at each receipt, and the median of the recent samples is used, so one sample taken
   * across a stall (seen beside a busy benchmark: 13 ms off) cannot move a batch, while a real clock
   * adjustment is followed within a few batches.
   */
  #clockOffset(sessionMs: number): number {
    this.#offsets.push(Date.now() - sessionMs);
    if (this.#offsets.length > OFFSET_SAMPLES) this.#offsets.shift();
    const sorted = [...this.#offsets].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
  }

  #receive(page: PageTarget, payload: string): void {
    const sessionMs = this.session.now();
    const m: DomBatchMessage = {
      type: "dom",
      session_id: this.session.id,
      page_id: page.id,
      recv_ns: Math.round(sessionMs * 1e6),
      clock_offset_ms: this.#clockOffset(sessionMs),
      payload,
    };
    this.stats.batches++;
    this.stats.bytes += payload.length;
    if (this.#sink) {
      this.#sink(m);
      return;
    }
    if (this.#pendingBytes + payload.length > PENDING_BYTES) {
      this.stats.refused++;
      log.warning("DOM batch dropped: no sink attached and {bytes} bytes already held", {
        bytes: this.#pendingBytes,
      });
      return;
    }
    this.#pending.push(m);
    this.#pendingBytes += payload.length;
  }

  attach(sink: (m: DomBatchMessage) => void): () => void {
    for (const m of this.#pending) sink(m);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#sink = sink;
    return () => {
      if (this.#sink === sink) this.#sink = undefined;
    };
  }

  stop(): void {
    for (const off of this.#off) off();
    this.#off = [];
    this.#sink = undefined;
  }
}

const recordings = new WeakMap<BrowserSession, DomRecording>();

function recordingOf(
  session: BrowserSession,
  options: RecorderStartOptions = DOM_RECORDER_OPTIONS,
): DomRecording | undefined {
  if (!session.config.record_dom) return undefined;
  let r = recordings.get(session);
  if (!r) {
    r = new DomRecording(session, options);
    recordings.set(session, r);
    session.onEnded(() => r?.stop());
  }
  return r;
}

/**
 * Installs DOM recording on a session before it starts (a no-op when `record_dom` is off). `options`
 * (tests: a shorter checkpoint interval) apply when this is the session's first install.
 */
export function prepareDomRecording(session: BrowserSession, options?: Partial<RecorderStartOptions>): void {
  recordingOf(session, { ...DOM_RECORDER_OPTIONS, ...options });
}

/**
 * Sends the session's DOM batches to `sink` (and those held since it started); returns the detach.
 * With `record_dom: false` nothing is recorded and nothing is sent.
 */
export function recordPageDom(session: BrowserSession, sink: (m: DomBatchMessage) => void): () => void {
  const r = recordingOf(session);
  if (!r) return () => {};
  const detach = r.attach(sink);
  return () => {
    detach();
    r.stop();
  };
}

/** Counters of a session's DOM recording, undefined when it records none. */
export function domRecorderStats(session: BrowserSession): DomRecorderStats | undefined {
  return recordings.get(session)?.stats;
}
