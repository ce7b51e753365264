/**
 * Temporal range resolution, the pure part: a natural anchor's requested window is intersected with
 * what the target actually retained, and every difference between the two is said out loud
 * (spec "Temporal Ranges"). No I/O here; range_source.ts gathers the facts from the index.
 */
import { ToolError } from "../errors.ts";

const MS = 1e6;

/** Default context around an interaction: a little before dispatch, a settle window after observation. */
export const INTERACTION_PRE_MS = 150;
export const INTERACTION_POST_MS = 1_000;
/** Around a navigation or marker, transitions take longer than a click. */
export const POINT_PRE_MS = 150;
export const POINT_POST_MS = 2_000;
export const MAX_CONTEXT_MS = 60_000;
export const MAX_RANGE_MS = 30 * 60_000;

export type AnchorKind =
  | "session_time"
  | "timestamps"
  | "interaction"
  | "latest_interaction"
  | "navigation"
  | "marker"
  | "frames";

export interface RangeAnchor {
  kind: AnchorKind;
  /** Interaction id, navigation event id, marker id or "first..last" frame ids. */
  id?: string;
  /** The instant offsets are measured from (dispatch, navigation, marker, or the range start). */
  at_ns: number;
}

export interface GapSpan {
  page_id: string;
  kind: string;
  start_ns: number;
  /** Null while the gap is still open (the stream has not resumed). */
  end_ns: number | null;
  cause: string | null;
}

/** What the target retained: the span its stream vouches for, and the holes in it. */
export interface Coverage {
  page_id: string;
  /** First stored frame; nothing before it is known. */
  start_ns: number;
  /** Now for a live stream, else the stream's end (last frame, seal or close). */
  end_ns: number;
  live: boolean;
  /** The guarded current session time when the session is live in this process. */
  now_ns?: number;
  gaps: GapSpan[];
}

export interface RangeWarning {
  code: "partially_captured" | "requested_end_not_yet_elapsed" | "capture_gaps" | "open_gap";
  message: string;
  edge?: "start" | "end";
}

export interface ResolvedRange {
  /** Marks the payload so it can be passed back to any temporal tool instead of a handle. */
  resolved: true;
  session_id: string;
  page_id: string;
  start_ns: number;
  end_ns: number;
  start_ms: number;
  end_ms: number;
  duration_ms: number;
  anchor: RangeAnchor & { at_ms: number };
  requested: { start_ns: number; end_ns: number };
  complete: boolean;
  warnings: RangeWarning[];
  gaps: GapSpan[];
  /** Set for an instant (start = end): it stands for the frame on screen then, the last at or before it. */
  instant?: true;
}

export interface ResolveOptions {
  allow_partial: boolean;
  require_complete: boolean;
}

export function ms(ns: number): number {
  return Math.round(ns / 1e3) / 1e3;
}

function overlaps(g: GapSpan, start: number, end: number, coverageEnd: number): boolean {
  return g.start_ns <= end && (g.end_ns ?? coverageEnd) >= start;
}

function rangeError(
  code: string,
  message: string,
  recovery: string,
  sessionId: string,
  pageId: string,
  retry: "never" | "after_recovery" = "never",
) {
  return new ToolError({
    code,
    message,
    retry,
    recovery,
    affected: { session_id: sessionId, page_id: pageId },
  });
}

/**
 * Nothing of the request was captured. When it lies ahead of a live session, says the current session
 * time, so the caller knows how far ahead it asked.
 */
function notCaptured(
  sessionId: string,
  what: string,
  reqStart: number,
  coverage: Coverage,
  recovery: string,
): ToolError {
  const page = coverage.page_id;
  const span = `its retained capture spans ${ms(coverage.start_ns)}–${ms(coverage.end_ns)} ms`;
  const now = coverage.live ? coverage.now_ns : undefined;
  if (now !== undefined && reqStart > now) {
    return rangeError(
      "range_not_captured",
      `Nothing of ${what} was captured for page ${page}: it has not happened yet. The current session time is ${
        ms(now)
      } ms; the request starts ${Math.ceil(ms(reqStart - now))} ms after it, and ${span}.`,
      `Ask for times up to ${ms(now)} ms (now), or wait ${Math.ceil(ms(reqStart - now))} ms and ask again.`,
      sessionId,
      page,
      "after_recovery",
    );
  }
  return rangeError(
    "range_not_captured",
    `Nothing of ${what} was captured for page ${page}: ${span}${
      now !== undefined ? `; the current session time is ${ms(now)} ms` : ""
    }.`,
    recovery,
    sessionId,
    page,
  );
}

function gapWarning(gaps: GapSpan[], where: string): RangeWarning {
  return {
    code: "capture_gaps",
    message: `${gaps.length} known capture gap${gaps.length === 1 ? "" : "s"} (${
      [...new Set(gaps.map((g) => g.kind))].join(", ")
    }) ${where}: what happened there was not seen.`,
  };
}

/**
 * Intersects a requested window with retained coverage. Under allow_partial (the default) any
 * intersecting request resolves to the exact intersection with edge warnings; require_complete and
 * disjoint requests fail exactly.
 */
export function resolveWindow(
  sessionId: string,
  anchor: RangeAnchor,
  requested: { start_ns: number; end_ns: number },
  coverage: Coverage,
  options: ResolveOptions,
): ResolvedRange {
  const { start_ns: reqStart, end_ns: reqEnd } = requested;
  const page = coverage.page_id;
  if (!(reqEnd > reqStart)) {
    throw rangeError(
      "invalid_range",
      `The requested range ends (${ms(reqEnd)} ms) at or before it starts (${ms(reqStart)} ms).`,
      "Give an end after the start.",
      sessionId,
      page,
    );
  }
  if (reqEnd - reqStart > MAX_RANGE_MS * MS) {
    throw new ToolError({
      code: "resource_limit_exceeded",
      message: `range duration is ${ms(reqEnd - reqStart)} ms, over the limit of ${MAX_RANGE_MS} ms.`,
      retry: "never",
      recovery: `Request at most ${MAX_RANGE_MS} ms; narrow the range around the moment of interest.`,
      details: { subject: "range duration ms", actual: ms(reqEnd - reqStart), limit: MAX_RANGE_MS },
      affected: { session_id: sessionId, page_id: page },
    });
  }
  const start = Math.max(reqStart, coverage.start_ns);
  const end = Math.min(reqEnd, coverage.end_ns);
  // An empty intersection is no capture, unless the whole coverage is one instant (a single frame) inside the request.
  const pointCoverage = coverage.start_ns === coverage.end_ns && reqStart <= start && reqEnd >= end;
  if (!(end > start) && !pointCoverage) {
    throw notCaptured(
      sessionId,
      `${ms(reqStart)}–${ms(reqEnd)} ms`,
      reqStart,
      coverage,
      "Choose a range inside the retained span (list_source_frames shows it), or an interaction of this page.",
    );
  }
  const warnings: RangeWarning[] = [];
  const missingStart = reqStart < coverage.start_ns;
  const missingEnd = reqEnd > coverage.end_ns;
  if (missingStart) {
    warnings.push({
      code: "partially_captured",
      edge: "start",
      message: `Capture of page ${page} begins at ${ms(coverage.start_ns)} ms; the requested start ${
        ms(reqStart)
      } ms was not captured.`,
    });
  }
  if (missingEnd) {
    warnings.push({
      code: "partially_captured",
      edge: "end",
      message: coverage.live
        ? `The requested end ${ms(reqEnd)} ms is after the latest retained instant ${ms(coverage.end_ns)} ms.`
        : `Capture of page ${page} ended at ${ms(coverage.end_ns)} ms; the requested end ${
          ms(reqEnd)
        } ms was not captured.`,
    });
    if (coverage.live && coverage.now_ns !== undefined && reqEnd > coverage.now_ns) {
      warnings.push({
        code: "requested_end_not_yet_elapsed",
        edge: "end",
        message: `The requested end is ${
          Math.ceil(ms(reqEnd - coverage.now_ns))
        } ms in the future of the live session: this tail has not happened yet; it is not lost evidence.`,
      });
    }
  }
  const gaps = coverage.gaps.filter((g) => overlaps(g, start, end, coverage.end_ns));
  if (gaps.length > 0) warnings.push(gapWarning(gaps, "inside the range"));
  const complete = !missingStart && !missingEnd && gaps.length === 0;
  if (!complete && (options.require_complete || !options.allow_partial)) {
    const why = [
      missingStart ? "its start precedes capture" : "",
      missingEnd ? "its end is past retained capture" : "",
      gaps.length > 0 ? `it contains ${gaps.length} capture gap(s)` : "",
    ].filter(Boolean).join(", ");
    throw rangeError(
      "range_incomplete",
      `The requested range ${ms(reqStart)}–${ms(reqEnd)} ms is not completely captured: ${why}.`,
      options.require_complete
        ? "Drop require_complete to receive the exact captured intersection with warnings, or choose a fully captured range."
        : "Set allow_partial: true to receive the exact captured intersection with warnings.",
      sessionId,
      page,
    );
  }
  return resolved(
    sessionId,
    page,
    anchor,
    start,
    end,
    { start_ns: reqStart, end_ns: reqEnd },
    complete,
    warnings,
    gaps,
  );
}

/** The resolved range payload: the exact span with its ms forms, the anchor and what was asked. */
function resolved(
  sessionId: string,
  page: string,
  anchor: RangeAnchor,
  start: number,
  end: number,
  requested: { start_ns: number; end_ns: number },
  complete: boolean,
  warnings: RangeWarning[],
  gaps: GapSpan[],
): ResolvedRange {
  return {
    resolved: true,
    session_id: sessionId,
    page_id: page,
    start_ns: start,
    end_ns: end,
    start_ms: ms(start),
    end_ms: ms(end),
    duration_ms: ms(end - start),
    anchor: { ...anchor, at_ms: ms(anchor.at_ns) },
    requested,
    complete,
    warnings,
    gaps,
  };
}

/**
 * Resolves an instant: the range [at, at], which stands for the frame on screen then. It must lie in
 * the retained span (from the first frame to now or the stream's end); a gap around it is warned about
 * (the screen may have changed unseen) and fails require_complete.
 */
export function resolveInstant(
  sessionId: string,
  anchor: RangeAnchor,
  atNs: number,
  coverage: Coverage,
  options: ResolveOptions,
): ResolvedRange {
  const page = coverage.page_id;
  if (atNs < coverage.start_ns || atNs > coverage.end_ns) {
    throw notCaptured(
      sessionId,
      `the instant ${ms(atNs)} ms`,
      atNs,
      coverage,
      `Choose an instant from ${ms(coverage.start_ns)} to ${
        ms(coverage.end_ns)
      } ms (list_source_frames shows the frames).`,
    );
  }
  const gaps = coverage.gaps.filter((g) => overlaps(g, atNs, atNs, coverage.end_ns));
  const warnings = gaps.length > 0 ? [gapWarning(gaps, "at the instant")] : [];
  if (gaps.length > 0 && (options.require_complete || !options.allow_partial)) {
    throw rangeError(
      "range_incomplete",
      `The instant ${
        ms(atNs)
      } ms falls in ${gaps.length} capture gap(s): the frame on screen then was not seen.`,
      "Choose an instant outside the gap, or drop require_complete to get the last frame before it with a warning.",
      sessionId,
      page,
    );
  }
  return {
    ...resolved(
      sessionId,
      page,
      anchor,
      atNs,
      atNs,
      { start_ns: atNs, end_ns: atNs },
      gaps.length === 0,
      warnings,
      gaps,
    ),
    instant: true,
  };
}

/** The window an interaction query means when no explicit context is given. */
export function interactionRequest(
  at: { anchor_ns: number; end_ns: number },
  beforeMs: number | undefined,
  afterMs: number | undefined,
): { start_ns: number; end_ns: number } {
  return {
    start_ns: at.anchor_ns - (beforeMs ?? INTERACTION_PRE_MS) * MS,
    end_ns: afterMs === undefined ? at.end_ns + INTERACTION_POST_MS * MS : at.anchor_ns + afterMs * MS,
  };
}

/** The window around a point anchor (navigation, marker). */
export function pointRequest(
  atNs: number,
  beforeMs: number | undefined,
  afterMs: number | undefined,
): { start_ns: number; end_ns: number } {
  return {
    start_ns: atNs - (beforeMs ?? POINT_PRE_MS) * MS,
    end_ns: atNs + (afterMs ?? POINT_POST_MS) * MS,
  };
}
