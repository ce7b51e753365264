/**
 * Trace time (Chrome's monotonic TimeTicks, µs) onto the session clock (ms since the session began).
 * Right after tracing starts, a `console.timeStamp(<token>)` is sent to the page; the trace records it
 * at its own ts, and the session clock read around the round trip brackets it. The midpoint is the
 * best estimate of that moment, and half the round trip bounds the error.
 */

/** The trace event a `console.timeStamp(token)` leaves (devtools.timeline). */
export interface TraceStampEvent {
  name: string;
  ts: number;
  args?: unknown;
}

export interface TraceClock {
  /** Session milliseconds of a trace timestamp (µs). */
  toSessionMs(tsUs: number): number;
  /** Session nanoseconds of a trace timestamp (µs), as event rows store at_ns. */
  toSessionNs(tsUs: number): number;
  /** Half the round trip around the stamp: how far off a mapped time can be, ms. */
  uncertaintyMs: number;
}

export function syncStampToken(sessionId: string, ordinal: number): string {
  return `krometrail-sync-${sessionId}-${ordinal}`;
}

/** The ts (µs) of the stamp named `token`, or undefined when the trace did not record it. */
export function findSyncStamp(events: readonly TraceStampEvent[], token: string): number | undefined {
  for (const e of events) {
    if (e.name !== "TimeStamp") continue;
    const data = (e.args as { data?: { message?: unknown; name?: unknown } } | undefined)?.data;
    if (data?.message === token || data?.name === token) return e.ts;
  }
  return undefined;
}

/**
 * The mapping from one stamp: `stampTsUs` in trace time happened between session times `beforeMs` and
 * `afterMs` (the evaluate that made it was sent and answered).
 */
export function traceClock(stampTsUs: number, beforeMs: number, afterMs: number): TraceClock {
  const lo = Math.min(beforeMs, afterMs);
  const hi = Math.max(beforeMs, afterMs);
  const offsetMs = (lo + hi) / 2 - stampTsUs / 1000;
  const toSessionMs = (tsUs: number) => Math.round((tsUs / 1000 + offsetMs) * 1000) / 1000;
  return {
    toSessionMs,
    toSessionNs: (tsUs) => Math.round((tsUs / 1000 + offsetMs) * 1e6),
    uncertaintyMs: Math.round((hi - lo) / 2 * 1000) / 1000,
  };
}

/** One sync stamp sent to the page: its token and the session ms around its round trip. */
export interface SyncStamp {
  token: string;
  beforeMs: number;
  afterMs: number;
}

/**
 * The mapping from the tightest stamp the trace recorded (the shortest round trip bounds the error
 * best; the first evaluate after Tracing.start can wait on the profiler starting), or undefined.
 */
export function bestClock(
  events: readonly TraceStampEvent[],
  stamps: readonly SyncStamp[],
): TraceClock | undefined {
  let best: TraceClock | undefined;
  for (const s of stamps) {
    const ts = findSyncStamp(events, s.token);
    if (ts === undefined) continue;
    const clock = traceClock(ts, s.beforeMs, s.afterMs);
    if (!best || clock.uncertaintyMs < best.uncertaintyMs) best = clock;
  }
  return best;
}

/**
 * The trace time of the first stamp recorded: the end of tracing's own start-up, whose work (the
 * profiler starting) runs as a main-thread task of its own that is no finding about the page.
 */
export function firstStampTs(
  events: readonly TraceStampEvent[],
  stamps: readonly SyncStamp[],
): number | undefined {
  let first: number | undefined;
  for (const s of stamps) {
    const ts = findSyncStamp(events, s.token);
    if (ts !== undefined && (first === undefined || ts < first)) first = ts;
  }
  return first;
}
