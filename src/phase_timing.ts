/**
 * Where a tool call's time goes, for the control benchmark's breakdown (`deno task bench --breakdown`).
 * Off unless KROMETRAIL_PHASE_TIMINGS names a file: then every tool call appends one JSON line with its
 * total and its named phases (start offset and duration, so overlapping phases show as overlapping).
 * When off, `phase` is one flag check: nothing on the hot path allocates.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface PhaseSpan {
  name: string;
  /** Milliseconds from the call's start. */
  start: number;
  ms: number;
}

interface CallTiming {
  tool: string;
  t0: number;
  phases: PhaseSpan[];
}

let sinkPath: string | undefined;
const current = new AsyncLocalStorage<CallTiming>();

/** Turns the timings on (a JSONL path) or off (undefined). */
export function configurePhaseTimings(path: string | undefined): void {
  sinkPath = path || undefined;
}

/** Runs a whole tool call, writing its line when timings are on. */
export async function timedCall<T>(tool: string, run: () => Promise<T>): Promise<T> {
  if (!sinkPath) return await run();
  const timing: CallTiming = { tool, t0: performance.now(), phases: [] };
  try {
    return await current.run(timing, run);
  } finally {
    const line = JSON.stringify({
      tool,
      total_ms: round(performance.now() - timing.t0),
      phases: timing.phases,
    });
    // Synchronous and appended: lines of concurrent calls never interleave, and a crash keeps what was written.
    try {
      Deno.writeTextFileSync(sinkPath, line + "\n", { append: true });
    } catch { /* diagnostics must never fail a call */ }
  }
}

/** Times one named phase of the call in progress (no-op outside a timed call). */
export async function phase<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!sinkPath) return await work();
  const timing = current.getStore();
  if (!timing) return await work();
  const start = performance.now();
  try {
    return await work();
  } finally {
    timing.phases.push({ name, start: round(start - timing.t0), ms: round(performance.now() - start) });
  }
}

/** Records a phase measured elsewhere (e.g. a synchronous step). */
export function markPhase(name: string, startedAt: number): void {
  if (!sinkPath) return;
  const timing = current.getStore();
  if (!timing) return;
  timing.phases.push({
    name,
    start: round(startedAt - timing.t0),
    ms: round(performance.now() - startedAt),
  });
}

const round = (ms: number) => Math.round(ms * 100) / 100;
