import { outsideCall } from "../browser/call_signal.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { type SyncStamp, syncStampToken } from "./trace_clock.ts";

/**
 * Tracing control on one page: Tracing.start streamed back (ReturnAsStream, read with IO.read), with a
 * sync stamp right after the start so trace time maps onto the session clock. One trace per browser
 * session at a time (Chrome traces the whole renderer; a second one would refuse anyway).
 */

/**
 * DevTools' own performance-panel categories (the set chrome-devtools-mcp and Lighthouse record), less
 * the screenshot stream: the filmstrip is what the recorder already keeps, and it was most of the bytes.
 */
export const TRACE_CATEGORIES = [
  "blink.console",
  "blink.user_timing",
  "devtools.timeline",
  "disabled-by-default-devtools.timeline",
  "disabled-by-default-devtools.timeline.invalidationTracking",
  "disabled-by-default-devtools.timeline.frame",
  "disabled-by-default-devtools.timeline.stack",
  "disabled-by-default-v8.cpu_profiler",
  "latencyInfo",
  "loading",
  "disabled-by-default-lighthouse",
  "v8.execute",
  "v8",
];

/** A trace larger than this is not read back (a start left running for a long time). */
export const MAX_TRACE_BYTES = 256 * 1024 * 1024;
const READ_CHUNK = 4 * 1024 * 1024;
const END_TIMEOUT_MS = 30_000;

export interface TraceRun {
  page: PageTarget;
  mode: "reload" | "navigate" | "start";
  /** The sync stamps sent right after the start (trace_clock.ts picks the tightest). */
  stamps: SyncStamp[];
  startedAtMs: number;
}

/** Stamps sent until one round trip is this tight (or STAMP_TRIES were sent). */
const STAMP_TIGHT_MS = 4;
const STAMP_TRIES = 3;

const runs = new WeakMap<BrowserSession, TraceRun>();
let stampOrdinal = 0;

/** The session's recording trace; one whose page has closed since is dropped (Chrome ended it). */
export function activeTrace(session: BrowserSession): TraceRun | undefined {
  const run = runs.get(session);
  if (run?.page.closed) {
    runs.delete(session);
    return undefined;
  }
  return run;
}

/** The run to stop: refuses when none records, or when its page closed under it. */
export function traceToStop(session: BrowserSession): TraceRun {
  const run = runs.get(session);
  if (!run) throw noTraceRunning();
  if (run.page.closed) {
    runs.delete(session);
    throw new ToolError({
      code: "trace_page_closed",
      message: `Page ${run.page.id} closed while its trace was recording; Chrome ended the trace with it.`,
      retry: "after_recovery",
      recovery:
        'Start a new trace on an open page (measure_performance mode "start" with page_id), then stop it.',
      affected: { page_id: run.page.id },
    });
  }
  return run;
}

export function traceAlreadyRunning(run: TraceRun): ToolError {
  return new ToolError({
    code: "trace_already_running",
    message:
      `A performance trace is already recording on page ${run.page.id} (started by mode "${run.mode}").`,
    retry: "after_recovery",
    recovery: 'Call measure_performance with mode "stop" to end and analyze it, then start another.',
    affected: { page_id: run.page.id },
  });
}

export function noTraceRunning(): ToolError {
  return new ToolError({
    code: "no_trace_running",
    message: "No performance trace is recording in this session, so there is nothing to stop.",
    retry: "after_recovery",
    recovery:
      'Call measure_performance with mode "start", act on the page (click, type), then mode "stop"; or use mode "reload" / "navigate" to measure a page load in one call.',
  });
}

/** Starts the trace and stamps the sync point. */
export async function startTrace(
  session: BrowserSession,
  page: PageTarget,
  mode: TraceRun["mode"],
): Promise<TraceRun> {
  const running = activeTrace(session);
  if (running) throw traceAlreadyRunning(running);
  try {
    await page.send("Tracing.start", {
      transferMode: "ReturnAsStream",
      streamFormat: "json",
      streamCompression: "none",
      traceConfig: { includedCategories: TRACE_CATEGORIES, excludedCategories: ["*"] },
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (!/already/i.test(why)) throw err;
    throw new ToolError({
      code: "trace_already_running",
      message: `Chrome refused to start a trace on page ${page.id}: ${why.slice(0, 200)}.`,
      retry: "after_recovery",
      recovery:
        "Another client (DevTools' Performance panel, another tool) is tracing this browser; stop that recording first.",
      affected: { page_id: page.id },
    });
  }
  const startedAtMs = session.now();
  const stamps: SyncStamp[] = [];
  try {
    for (let i = 0; i < STAMP_TRIES; i++) {
      const token = syncStampToken(session.id, ++stampOrdinal);
      const beforeMs = session.now();
      await page.send("Runtime.evaluate", { expression: `console.timeStamp(${JSON.stringify(token)})` });
      const afterMs = session.now();
      stamps.push({ token, beforeMs, afterMs });
      if (afterMs - beforeMs <= STAMP_TIGHT_MS) break;
    }
  } catch (err) {
    // A trace nobody owns would make every later start fail as "already tracing": end it, outside the
    // call whose deadline may already have cancelled its own commands.
    outsideCall(() => page.send("Tracing.end")).catch(() => {});
    throw err;
  }
  const run: TraceRun = { page, mode, stamps, startedAtMs };
  runs.set(session, run);
  return run;
}

export interface StoppedTrace {
  /** The raw trace file (JSON), as Chrome wrote it. */
  bytes: Uint8Array;
  dataLoss: boolean;
}

function decodeChunk(data: string, base64: boolean | undefined): Uint8Array {
  if (!base64) return new TextEncoder().encode(data);
  const bin = atob(data);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

async function readStream(page: PageTarget, handle: string): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const r = await page.send("IO.read", { handle, size: READ_CHUNK });
      const chunk = decodeChunk(r.data, r.base64Encoded);
      total += chunk.byteLength;
      if (total > MAX_TRACE_BYTES) {
        throw new ToolError({
          code: "trace_too_large",
          message: `The trace is over ${
            MAX_TRACE_BYTES / 1024 / 1024
          } MiB (the read limit); it was not analyzed.`,
          retry: "after_recovery",
          recovery:
            'Trace a shorter span: mode "start" right before the interaction and "stop" right after it.',
          details: { limit_bytes: MAX_TRACE_BYTES },
        });
      }
      chunks.push(chunk);
      if (r.eof) break;
    }
  } finally {
    await page.send("IO.close", { handle }).catch(() => {});
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/** Ends the session's trace and reads it back whole. The run is forgotten whatever happens. */
export async function stopTrace(session: BrowserSession, run: TraceRun): Promise<StoppedTrace> {
  runs.delete(session);
  const page = run.page;
  let off = () => {};
  const complete = new Promise<{ stream?: string; dataLossOccurred: boolean }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error("Chrome did not finish the trace in time")),
      END_TIMEOUT_MS,
    );
    off = session.onPageEvent("Tracing.tracingComplete", (from, params) => {
      if (from !== page) return;
      clearTimeout(timer);
      resolve(params);
    });
  });
  try {
    try {
      await page.send("Tracing.end");
    } catch (err) {
      // Cancelled by the call's deadline before Chrome heard it: end it anyway, or the browser keeps
      // tracing and every later start is refused.
      outsideCall(() => page.send("Tracing.end")).catch(() => {});
      throw err;
    }
    const done = await complete;
    if (!done.stream) throw new Error("Chrome returned the trace without a stream");
    return { bytes: await readStream(page, done.stream), dataLoss: done.dataLossOccurred };
  } finally {
    off();
    complete.catch(() => {});
  }
}

export interface NodeView {
  /** Selector-like description: `main > button#buy`. */
  node: string;
  /** Its border box now, CSS px relative to the viewport. */
  rect?: { x: number; y: number; width: number; height: number };
}

/** Runs in the page on the resolved node: a short selector-like path and the current box. */
const DESCRIBE_NODE = `function () {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return { node: String(this.nodeName || "node").toLowerCase() };
  const part = (e) => {
    if (e.id) return e.localName + "#" + CSS.escape(e.id);
    const cls = Array.from(e.classList).slice(0, 2).map((c) => "." + CSS.escape(c)).join("");
    return e.localName + cls;
  };
  const parts = [];
  for (let e = el; e && parts.length < 3; e = e.parentElement) {
    if (e.localName === "html" || (e.localName === "body" && parts.length > 0)) break;
    parts.unshift(part(e));
    if (e.id) break;
  }
  const r = el.getBoundingClientRect();
  const q = (v) => Math.round(v * 10) / 10;
  return { node: parts.join(" > "), rect: { x: q(r.x), y: q(r.y), width: q(r.width), height: q(r.height) } };
}`;

export const DESCRIBE_LIMIT = 40;
const OBJECT_GROUP = "krometrail-performance";

/**
 * Describes backend node ids of the page's current document (trace node ids are backend ids); one that
 * is gone (removed, or the page navigated since) is simply missing from the map.
 */
export async function describeNodes(
  page: PageTarget,
  ids: readonly number[],
): Promise<Map<number, NodeView>> {
  const out = new Map<number, NodeView>();
  if (page.closed || page.dialog) return out;
  const unique = [...new Set(ids)].slice(0, DESCRIBE_LIMIT);
  await Promise.all(unique.map(async (backendNodeId) => {
    try {
      const { object } = await page.send(
        "DOM.resolveNode",
        { backendNodeId, objectGroup: OBJECT_GROUP },
        3_000,
      );
      if (!object.objectId) return;
      const { result } = await page.send("Runtime.callFunctionOn", {
        objectId: object.objectId,
        functionDeclaration: DESCRIBE_NODE,
        returnByValue: true,
      }, 3_000);
      const view = result.value as NodeView | undefined;
      if (view && typeof view.node === "string" && view.node !== "") out.set(backendNodeId, view);
    } catch { /* gone: the trace's own name stands in */ }
  }));
  await page.send("Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP }).catch(() => {});
  return out;
}
