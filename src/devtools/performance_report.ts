import { gzipSync } from "fflate";
import type * as Trace from "@paulirish/trace_engine";
import type { BrowserSession } from "../browser/session.ts";
import { emitSessionEvent } from "../browser/events.ts";
import { describeNodes, type NodeView, type StoppedTrace, type TraceRun } from "./performance.ts";
import { bestClock, firstStampTs, type TraceClock, traceClock, type TraceStampEvent } from "./trace_clock.ts";
import {
  type LayoutShift,
  parseTrace,
  type Rect,
  summarizeTrace,
  type TraceSummary,
} from "./trace_summary.ts";
import { sanitizeTrace, TRACE_PRIVACY } from "./trace_sanitize.ts";

/**
 * A stopped trace made into the tool's answer: analyzed by Chrome's trace engine, its nodes described
 * from the live page, its layout shifts and long tasks put on the session timeline as events, the raw
 * trace kept as an evidence resource.
 */

/** Shifts and long tasks listed in the response; the timeline gets up to EVENT_LIMIT of each. */
export const LIST_LIMIT = 10;
export const EVENT_LIMIT = 200;

export interface WrittenTrace {
  uri: string;
  bytes: number;
}

interface ShiftView {
  at_ms: number;
  score: number;
  sources: Array<{ node: string; previous_rect: Rect; current_rect: Rect }>;
}

function parseEvents(bytes: Uint8Array): { json: unknown; events: Trace.Types.Events.Event[] } {
  const json = JSON.parse(new TextDecoder().decode(bytes)) as
    | { traceEvents?: Trace.Types.Events.Event[] }
    | Trace.Types.Events.Event[];
  const events = Array.isArray(json) ? json : json.traceEvents;
  if (!Array.isArray(events)) throw new Error("the trace holds no traceEvents");
  return { json, events };
}

/**
 * The stored form of the trace, made before the engine sees the events (the sanitized tree shares
 * untouched subtrees with them): analysis reads the full trace in memory, the disk gets this one.
 */
function storedTrace(json: unknown): { gz: Uint8Array; raw_bytes: number } {
  const bytes = new TextEncoder().encode(JSON.stringify(sanitizeTrace(json).trace));
  return { gz: gzipSync(bytes, { level: 6 }), raw_bytes: bytes.byteLength };
}

/** The sync stamp's mapping; without it, the trace's first event stands for the start (less exact). */
function clockOf(
  events: readonly Trace.Types.Events.Event[],
  run: TraceRun,
): { clock: TraceClock; exact: boolean } {
  const clock = bestClock(events as readonly TraceStampEvent[], run.stamps);
  if (clock) return { clock, exact: true };
  let first = Infinity;
  for (const e of events) if (e.ts > 0 && e.ts < first) first = e.ts;
  return {
    clock: traceClock(Number.isFinite(first) ? first : 0, run.startedAtMs, run.startedAtMs),
    exact: false,
  };
}

const nodeName = (views: Map<number, NodeView>, id: number, fallback?: string) =>
  views.get(id)?.node ?? fallback ?? `node ${id}`;

/** Session time in the response: 0.1 ms is finer than the stamp's own uncertainty. */
const atMs = (clock: TraceClock, tsUs: number) => Math.round(clock.toSessionMs(tsUs) * 10) / 10;

function rectText(r: Rect): string {
  return `${r.x},${r.y} ${r.width}×${r.height}`;
}

export function shiftText(score: number, nodes: readonly string[]): string {
  const names = nodes.length > 0 ? `${nodes.join(", ")} moved` : "no source node reported";
  return `layout shift ${score.toFixed(3)}: ${names}`;
}

function shiftView(s: LayoutShift, views: Map<number, NodeView>, clock: TraceClock): ShiftView {
  return {
    at_ms: atMs(clock, s.ts_us),
    score: s.score,
    sources: s.sources.map((src) => ({
      node: nodeName(views, src.node_id),
      previous_rect: src.previous_rect,
      current_rect: src.current_rect,
    })),
  };
}

/** The interaction in flight at a session time, by the wall clock the spans are kept on. */
function interactionAt(session: BrowserSession, sessionMs: number): string | null {
  return session.interactions.at(session.startedAt.getTime() + sessionMs) ?? null;
}

function emitTimeline(
  session: BrowserSession,
  run: TraceRun,
  summary: TraceSummary,
  shifts: ShiftView[],
  clock: TraceClock,
): { layout_shift: number; long_task: number } {
  let shiftCount = 0;
  let taskCount = 0;
  shifts.slice(0, EVENT_LIMIT).forEach((s, i) => {
    const raw = summary.layout_shifts[i];
    const ok = emitSessionEvent(session, run.page, "layout_shift", {
      at_ns: clock.toSessionNs(raw.ts_us),
      text: shiftText(s.score, s.sources.map((src) => src.node)),
      data: { score: s.score, sources: s.sources },
      interaction_id: interactionAt(session, s.at_ms),
    });
    if (ok) shiftCount++;
  });
  for (const t of summary.long_tasks.slice(0, EVENT_LIMIT)) {
    const atMs = clock.toSessionMs(t.ts_us);
    const ok = emitSessionEvent(session, run.page, "long_task", {
      at_ns: clock.toSessionNs(t.ts_us),
      text: `long task ${Math.round(t.duration_ms)} ms`,
      data: { duration_ms: t.duration_ms },
      interaction_id: interactionAt(session, atMs),
    });
    if (ok) taskCount++;
  }
  return { layout_shift: shiftCount, long_task: taskCount };
}

export interface PerformanceReport {
  text: string;
  structured: Record<string, unknown>;
}

export async function reportTrace(
  session: BrowserSession,
  run: TraceRun,
  stopped: StoppedTrace,
  writeTrace: (gzipped: Uint8Array) => Promise<WrittenTrace>,
  extra: { settle_ms?: number } = {},
): Promise<PerformanceReport> {
  const warnings: string[] = [];
  const { json, events } = parseEvents(stopped.bytes);
  let stored: { gz: Uint8Array; raw_bytes: number } | undefined;
  try {
    stored = storedTrace(json);
  } catch (err) {
    // Fails closed: an unsanitized trace is never written.
    warnings.push(`trace_not_stored: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}`);
  }
  const { clock, exact } = clockOf(events, run);
  if (!exact) {
    warnings.push(
      "clock_approximate: the sync stamp is missing from the trace; times may be off by tens of ms",
    );
  }
  if (stopped.dataLoss) {
    warnings.push("trace_data_lost: Chrome's trace buffer filled; the end of the span is missing");
  }
  const sinceUs = firstStampTs(events as readonly TraceStampEvent[], run.stamps);
  const summary = summarizeTrace(await parseTrace(events), { sinceUs });

  const ids = [
    ...(summary.lcp?.node_id !== undefined ? [summary.lcp.node_id] : []),
    ...(summary.inp?.node_id !== undefined ? [summary.inp.node_id] : []),
    ...summary.layout_shifts.flatMap((s) => s.sources.map((src) => src.node_id)),
  ];
  const views = await describeNodes(run.page, ids);
  const shifts = summary.layout_shifts.map((s) => shiftView(s, views, clock));
  const timeline = emitTimeline(session, run, summary, shifts, clock);

  let trace: Record<string, unknown> | undefined;
  if (stored) {
    try {
      const written = await writeTrace(stored.gz);
      trace = {
        uri: written.uri,
        mime_type: "application/gzip",
        bytes: written.bytes,
        raw_bytes: stored.raw_bytes,
        privacy: TRACE_PRIVACY,
      };
    } catch (err) {
      warnings.push(`trace_not_stored: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}`);
    }
  }

  const lcp = summary.lcp
    ? {
      ms: summary.lcp.ms,
      at_ms: atMs(clock, summary.lcp.ts_us),
      ...(summary.lcp.type ? { type: summary.lcp.type } : {}),
      element: summary.lcp.node_id !== undefined
        ? {
          node: nodeName(views, summary.lcp.node_id, summary.lcp.node_name),
          ...(views.get(summary.lcp.node_id)?.rect ? { rect: views.get(summary.lcp.node_id)?.rect } : {}),
        }
        : undefined,
      ...(summary.lcp.subparts_ms ? { subparts_ms: summary.lcp.subparts_ms } : {}),
    }
    : undefined;
  const inp = summary.inp
    ? {
      ms: summary.inp.ms,
      at_ms: atMs(clock, summary.inp.ts_us),
      type: summary.inp.type,
      ...(summary.inp.node_id !== undefined && views.has(summary.inp.node_id)
        ? { target: nodeName(views, summary.inp.node_id) }
        : {}),
      phases: summary.inp.phases,
    }
    : undefined;
  const longTasks = summary.long_tasks.map((t) => ({
    at_ms: atMs(clock, t.ts_us),
    duration_ms: t.duration_ms,
  }));
  const startMs = run.startedAtMs;
  const structured: Record<string, unknown> = {
    status: "measured",
    mode: run.mode,
    page_id: run.page.id,
    span_ms: { start: startMs, end: session.now() },
    ...(extra.settle_ms !== undefined ? { settle_ms: extra.settle_ms } : {}),
    ...(lcp ? { lcp } : {}),
    ...(summary.fcp_ms !== undefined ? { fcp_ms: summary.fcp_ms } : {}),
    ...(summary.ttfb_ms !== undefined ? { ttfb_ms: summary.ttfb_ms } : {}),
    cls: {
      score: summary.cls.score,
      shifts: shifts.slice(0, LIST_LIMIT),
      ...(shifts.length > LIST_LIMIT ? { shifts_omitted: shifts.length - LIST_LIMIT } : {}),
    },
    ...(inp ? { inp } : {}),
    long_tasks: longTasks.slice(0, LIST_LIMIT),
    ...(longTasks.length > LIST_LIMIT ? { long_tasks_omitted: longTasks.length - LIST_LIMIT } : {}),
    insights: summary.insights,
    ...(summary.insights_omitted > 0 ? { insights_omitted: summary.insights_omitted } : {}),
    insights_passed: summary.insights_passed,
    timeline_events: timeline,
    clock_uncertainty_ms: clock.uncertaintyMs,
    ...(trace ? { trace } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  return { text: reportText(run, structured, shifts, longTasks, summary, trace), structured };
}

function reportText(
  run: TraceRun,
  s: Record<string, unknown>,
  shifts: ShiftView[],
  longTasks: Array<{ at_ms: number; duration_ms: number }>,
  summary: TraceSummary,
  trace: Record<string, unknown> | undefined,
): string {
  const lcp = s.lcp as { ms: number; element?: { node: string } } | undefined;
  const inp = s.inp as { ms: number; type: string; target?: string } | undefined;
  const span = s.span_ms as { start: number; end: number };
  const head = [
    lcp ? `LCP ${Math.round(lcp.ms)} ms${lcp.element ? ` ${lcp.element.node}` : ""}` : "LCP —",
    ...(summary.fcp_ms !== undefined ? [`FCP ${Math.round(summary.fcp_ms)} ms`] : []),
    ...(summary.ttfb_ms !== undefined ? [`TTFB ${Math.round(summary.ttfb_ms)} ms`] : []),
    `CLS ${summary.cls.score.toFixed(3)} (${shifts.length} shift${shifts.length === 1 ? "" : "s"})`,
    inp ? `INP ${Math.round(inp.ms)} ms ${inp.type}${inp.target ? ` on ${inp.target}` : ""}` : "INP —",
    `${longTasks.length} long task${longTasks.length === 1 ? "" : "s"}`,
  ];
  const lines = [
    `measured ${run.mode} of ${run.page.id} (${((span.end - span.start) / 1000).toFixed(1)} s): ${
      head.join(" · ")
    }`,
  ];
  for (const sh of shifts.slice(0, LIST_LIMIT)) {
    const moved = sh.sources.map((src) =>
      `${src.node} ${rectText(src.previous_rect)} → ${rectText(src.current_rect)}`
    );
    lines.push(
      `layout shift ${sh.score.toFixed(3)} at ${sh.at_ms} ms: ${moved.join("; ") || "no source node"}`,
    );
  }
  for (const t of longTasks.slice(0, LIST_LIMIT)) {
    lines.push(`long task ${Math.round(t.duration_ms)} ms at ${t.at_ms} ms`);
  }
  for (const i of summary.insights) lines.push(`insight ${i.name} (${i.state}): ${i.summary}`);
  if (summary.insights_passed.length > 0) lines.push(`${summary.insights_passed.length} insights passed`);
  if (trace) lines.push(`trace: ${trace.uri} (${trace.privacy})`);
  for (const w of (s.warnings as string[] | undefined) ?? []) lines.push(`warning ${w}`);
  return lines.join("\n");
}
