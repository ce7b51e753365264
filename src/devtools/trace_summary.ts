import * as Trace from "@paulirish/trace_engine";
import { type InsightLine, summarizeInsights } from "./trace_insights.ts";

/**
 * Chrome's trace engine result reduced to a bounded summary: Core Web Vitals, every layout shift
 * with its sources, long main-thread tasks, the engine's insights. Times stay in trace µs (`ts_us`)
 * for the caller to put on the session clock; nodes stay backend node ids for it to describe while
 * the page lives.
 */

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface ShiftSource {
  node_id: number;
  previous_rect: Rect;
  current_rect: Rect;
}

export interface LayoutShift {
  ts_us: number;
  score: number;
  sources: ShiftSource[];
}

export interface LongTask {
  ts_us: number;
  duration_ms: number;
}

export interface TraceSummary {
  /** The main frame's URL the trace ends on. */
  url: string;
  /** Trace time of the measured navigation's start; undefined when the trace saw none. */
  navigation_ts_us?: number;
  lcp?: {
    ms: number;
    ts_us: number;
    node_id?: number;
    /** Chrome's own name for the node ("H1 id='hero'"), for when it can no longer be resolved. */
    node_name?: string;
    type?: string;
    subparts_ms?: Record<string, number>;
  };
  fcp_ms?: number;
  ttfb_ms?: number;
  /** CLS: the worst session window's score (the metric); every shift below. */
  cls: { score: number; shift_count: number };
  layout_shifts: LayoutShift[];
  inp?: {
    ms: number;
    ts_us: number;
    type: string;
    node_id?: number;
    phases: { input_delay_ms: number; processing_ms: number; presentation_delay_ms: number };
  };
  long_tasks: LongTask[];
  insights: InsightLine[];
  insights_omitted: number;
  insights_passed: string[];
  device_pixel_ratio: number;
}

export const LONG_TASK_MS = 50;
/** Sources per shift kept (Chrome itself reports at most 5). */
export const SOURCE_LIMIT = 5;

type ParsedTrace = Trace.TraceModel.ParsedTrace;
type RawEvent = Trace.Types.Events.Event;

const round1 = (v: number) => Math.round(v * 10) / 10;
const usToMs = (us: number) => round1(us / 1000);

/** Parses raw trace events with all of the engine's handlers (DevTools' own analysis). */
export async function parseTrace(events: readonly RawEvent[]): Promise<ParsedTrace> {
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const parsed = model.parsedTrace();
  if (!parsed) throw new Error("the trace engine produced no result");
  return parsed;
}

function toRect(r: readonly number[] | undefined, dpr: number): Rect {
  const [x = 0, y = 0, width = 0, height = 0] = r ?? [];
  const s = (v: number) => round1(v / dpr);
  return { x: s(x), y: s(y), width: s(width), height: s(height) };
}

/** The insight sets of the measured span: the last navigation's (a reload or navigate), or all of them. */
function measuredSets(parsed: ParsedTrace): Trace.Insights.Types.InsightSet[] {
  const sets = [...(parsed.insights?.values() ?? [])];
  const navigated = sets.filter((s) => s.navigation);
  return navigated.length > 0 ? [navigated[navigated.length - 1]] : sets;
}

/** Tasks over LONG_TASK_MS on the renderer main threads of the main frame's processes. */
function longTasks(parsed: ParsedTrace): LongTask[] {
  const renderers = parsed.data.Meta.topLevelRendererIds;
  const mainThreads = new Set<string>();
  for (const e of parsed.traceEvents) {
    if (e.ph !== "M" || e.name !== "thread_name" || !renderers.has(e.pid)) continue;
    const name = (e.args as { name?: unknown } | undefined)?.name;
    if (name === "CrRendererMain") mainThreads.add(`${e.pid}:${e.tid}`);
  }
  const tasks: LongTask[] = [];
  for (const e of parsed.traceEvents) {
    if (e.name !== "RunTask" || e.ph !== "X" || !mainThreads.has(`${e.pid}:${e.tid}`)) continue;
    const dur = e.dur ?? 0;
    if (dur > LONG_TASK_MS * 1000) tasks.push({ ts_us: e.ts, duration_ms: usToMs(dur) });
  }
  return tasks.sort((a, b) => a.ts_us - b.ts_us);
}

function layoutShifts(parsed: ParsedTrace, dpr: number): LayoutShift[] {
  const shifts: LayoutShift[] = [];
  for (const cluster of parsed.data.LayoutShifts.clusters) {
    for (const e of cluster.events) {
      const data = e.args.data;
      const nodes = data?.impacted_nodes ?? [];
      shifts.push({
        ts_us: e.ts,
        score: Math.round((data?.weighted_score_delta ?? 0) * 10_000) / 10_000,
        sources: nodes.slice(0, SOURCE_LIMIT).map((n) => ({
          node_id: n.node_id,
          previous_rect: toRect(n.old_rect, dpr),
          current_rect: toRect(n.new_rect, dpr),
        })),
      });
    }
  }
  return shifts.sort((a, b) => a.ts_us - b.ts_us);
}

function metricMs(parsed: ParsedTrace, name: Trace.Handlers.ModelHandlers.PageLoadMetrics.MetricName) {
  const byNav = parsed.data.PageLoadMetrics.metricScoresByFrameId.get(parsed.data.Meta.mainFrameId);
  if (!byNav) return undefined;
  const last = [...byNav.values()].at(-1);
  const score = last?.get(name);
  return score ? usToMs(score.timing) : undefined;
}

function lcpOf(sets: Trace.Insights.Types.InsightSet[]): TraceSummary["lcp"] {
  for (const set of sets) {
    const m = set.model.LCPBreakdown;
    if (!m || m.lcpMs === undefined || !m.lcpEvent) continue;
    const data = m.lcpEvent.args.data as { nodeId?: number; nodeName?: string; type?: string } | undefined;
    const subparts: Record<string, number> = {};
    for (const [key, part] of Object.entries(m.subparts ?? {})) {
      if (part && typeof part === "object" && "range" in part) subparts[key] = usToMs(part.range);
    }
    return {
      ms: round1(m.lcpMs),
      ts_us: m.lcpEvent.ts,
      ...(data?.nodeId !== undefined ? { node_id: data.nodeId } : {}),
      ...(data?.nodeName ? { node_name: data.nodeName } : {}),
      ...(data?.type ? { type: data.type } : {}),
      ...(Object.keys(subparts).length > 0 ? { subparts_ms: subparts } : {}),
    };
  }
  return undefined;
}

function inpOf(parsed: ParsedTrace): TraceSummary["inp"] {
  const e = parsed.data.UserInteractions.longestInteractionEvent;
  if (!e) return undefined;
  const begin = e.args.data.beginEvent.args.data as { nodeId?: number };
  return {
    ms: usToMs(e.dur),
    ts_us: e.ts,
    type: e.type,
    ...(begin.nodeId !== undefined ? { node_id: begin.nodeId } : {}),
    phases: {
      input_delay_ms: usToMs(e.inputDelay),
      processing_ms: usToMs(e.mainThreadHandling),
      presentation_delay_ms: usToMs(e.presentationDelay),
    },
  };
}

/** `sinceUs`: long tasks that began before it (tracing's own start-up) are not the page's. */
export function summarizeTrace(parsed: ParsedTrace, opts: { sinceUs?: number } = {}): TraceSummary {
  const dpr = parsed.data.Meta.devicePixelRatio ?? 1;
  const sets = measuredSets(parsed);
  const navigation = sets.find((s) => s.navigation)?.navigation;
  const lcp = lcpOf(sets);
  const shifts = layoutShifts(parsed, dpr);
  const since = opts.sinceUs ?? -Infinity;
  const inp = inpOf(parsed);
  const fcp = navigation
    ? metricMs(parsed, Trace.Handlers.ModelHandlers.PageLoadMetrics.MetricName.FCP)
    : undefined;
  const ttfb = lcp?.subparts_ms?.ttfb;
  return {
    url: parsed.data.Meta.mainFrameURL,
    ...(navigation ? { navigation_ts_us: navigation.ts } : {}),
    ...(lcp ? { lcp } : {}),
    ...(fcp !== undefined ? { fcp_ms: fcp } : {}),
    ...(ttfb !== undefined ? { ttfb_ms: ttfb } : {}),
    cls: {
      score: Math.round(parsed.data.LayoutShifts.sessionMaxScore * 10_000) / 10_000,
      shift_count: shifts.length,
    },
    layout_shifts: shifts,
    ...(inp ? { inp } : {}),
    long_tasks: longTasks(parsed).filter((t) => t.ts_us >= since),
    ...summarizeInsights(sets),
    device_pixel_ratio: dpr,
  };
}
