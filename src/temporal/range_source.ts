/**
 * Range resolution against the recording: natural anchors (interactions, navigations, markers,
 * frames, times) are looked up in the index, the target's retained coverage is measured, and the
 * pure resolver in range.ts decides the exact range and its warnings.
 */
import type { DatabaseSync } from "node:sqlite";
import { ToolError } from "../errors.ts";
import {
  type Coverage,
  type GapSpan,
  interactionRequest,
  MAX_CONTEXT_MS,
  pointRequest,
  type RangeAnchor,
  type ResolvedRange,
  resolveInstant,
  resolveWindow,
} from "./range.ts";

export interface RangeRequest {
  page_id?: string;
  start_ms?: number;
  end_ms?: number;
  start_time?: string;
  end_time?: string;
  interaction_id?: string;
  latest_interaction?: boolean;
  navigation_id?: number;
  marker_id?: string;
  first_frame_id?: number;
  last_frame_id?: number;
  /** An instant in session ms: the frame on screen then. */
  at_ms?: number;
  /** An instant this far from an interaction's dispatch, a navigation or a marker (negative: before it). */
  offset_ms?: number;
  before_ms?: number;
  after_ms?: number;
  allow_partial?: boolean;
  require_complete?: boolean;
}

/** What the live session can tell that the index cannot: the present instant and the open pages. */
export interface LiveView {
  nowNs(): number;
  selectedPageId?: string;
  isRecording(pageId: string): boolean;
}

const MS = 1e6;

function notFound(code: string, what: string, sessionId: string, recovery: string): ToolError {
  return new ToolError({
    code,
    message: `${what} is not in session ${sessionId}.`,
    retry: "never",
    recovery,
    affected: { session_id: sessionId },
  });
}

function badRequest(message: string, recovery: string): ToolError {
  return new ToolError({
    code: "invalid_range",
    message,
    retry: "never",
    recovery,
    affected: { argument: "range" },
  });
}

const ANCHOR_FIELDS = [
  ["start_ms", "end_ms"],
  ["start_time", "end_time"],
  ["interaction_id"],
  ["latest_interaction"],
  ["navigation_id"],
  ["marker_id"],
  ["first_frame_id", "last_frame_id"],
  ["at_ms"],
] as const;

function anchorKinds(req: RangeRequest): string[] {
  return ANCHOR_FIELDS.filter((fields) => fields.some((f) => req[f] !== undefined && req[f] !== false))
    .map((fields) => fields[0]);
}

interface InteractionRow {
  id: string;
  page_id: string;
  started_ns: number;
  dispatched_ns: number | null;
  completed_ns: number | null;
  observed_ns: number | null;
}

/**
 * The default window runs through the whole interaction lifecycle (spec: "pre-action context through
 * the interaction lifecycle"), so it starts no later than the action did. `dispatched_ns` is stamped
 * when the last input event is acknowledged; a loaded renderer runs the page's handlers (and Chrome
 * reports their console messages, requests, exceptions) hundreds of ms before that, more than the
 * pre-dispatch context: those events, attributed to this very interaction, would fall outside it.
 */
function interactionWindowOf(row: InteractionRow, req: RangeRequest) {
  const anchor = row.dispatched_ns ?? row.started_ns;
  const end = Math.max(anchor, row.observed_ns ?? row.completed_ns ?? anchor);
  const window = interactionRequest({ anchor_ns: anchor, end_ns: end }, req.before_ms, req.after_ms);
  if (req.before_ms === undefined) window.start_ns = Math.min(window.start_ns, row.started_ns);
  return window;
}

function parseTimestamp(value: string, field: string): number {
  const t = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(t)) {
    throw badRequest(
      `${field} ${JSON.stringify(value.slice(0, 40))} is not a timestamp.`,
      "Give an ISO 8601 time or epoch milliseconds.",
    );
  }
  return t;
}

/** The page's retained span: from its first frame to now (live) or the end of its stream. */
export function coverageOf(db: DatabaseSync, sessionId: string, pageId: string, live?: LiveView): Coverage {
  const frames = db.prepare(
    "SELECT min(recv_ns) AS first, max(recv_ns) AS last, count(*) AS n FROM frames WHERE session_id = ? AND page_id = ?",
  ).get(sessionId, pageId) as { first: number | null; last: number | null; n: number };
  if (frames.n === 0 || frames.first === null || frames.last === null) {
    throw new ToolError({
      code: "range_not_captured",
      message: `Page ${pageId} of session ${sessionId} has no captured frames.`,
      retry: "after_recovery",
      recovery:
        "Hidden or never-painted pages record no frames; select or activate the page and act on it first.",
      affected: { session_id: sessionId, page_id: pageId },
    });
  }
  const tail = db.prepare(
    `SELECT max(coalesce(s.end_ns, 0)) AS seal, max(coalesce(t.closed_ns, 0)) AS closed FROM targets t
     LEFT JOIN segments s ON s.session_id = t.session_id AND s.page_id = t.page_id
     WHERE t.session_id = ? AND t.page_id = ?`,
  ).get(sessionId, pageId) as { seal: number | null; closed: number | null };
  const gaps = db.prepare(
    "SELECT page_id, kind, start_ns, end_ns, cause FROM gaps WHERE session_id = ? AND page_id = ? ORDER BY start_ns",
  ).all(sessionId, pageId) as unknown as GapSpan[];
  const recording = live?.isRecording(pageId) ?? false;
  const now = live?.nowNs();
  const end = recording && now !== undefined ? now : Math.max(frames.last, tail.seal ?? 0, tail.closed ?? 0);
  return {
    page_id: pageId,
    start_ns: frames.first,
    end_ns: Math.max(end, frames.last),
    live: recording,
    ...(recording && now !== undefined ? { now_ns: now } : {}),
    gaps,
  };
}

function defaultPage(db: DatabaseSync, sessionId: string, live?: LiveView): string {
  if (live?.selectedPageId) return live.selectedPageId;
  const row = db.prepare("SELECT page_id FROM frames WHERE session_id = ? ORDER BY recv_ns DESC LIMIT 1")
    .get(sessionId) as { page_id: string } | undefined;
  if (!row) {
    throw new ToolError({
      code: "range_not_captured",
      message: `Session ${sessionId} has no captured frames.`,
      retry: "after_recovery",
      recovery: "Navigate a visible page so Chrome paints, then ask again.",
      affected: { session_id: sessionId },
    });
  }
  return row.page_id;
}

/**
 * An instant is {at_ms} alone, or offset_ms from a point anchor (an interaction's dispatch, the latest
 * interaction's by default, a navigation or a marker); it has no window to widen.
 */
function checkInstantRequest(req: RangeRequest, kind: string | undefined): void {
  if (req.at_ms !== undefined && req.offset_ms !== undefined) {
    throw badRequest(
      "at_ms is already an instant; offset_ms moves an anchor's instant.",
      "Give {at_ms} alone, or {interaction_id, offset_ms}.",
    );
  }
  if (req.offset_ms !== undefined && kind !== undefined && !POINT_ANCHORS.has(kind)) {
    throw badRequest(
      `offset_ms is measured from an interaction, navigation or marker, not from ${kind}.`,
      "Give {interaction_id, offset_ms}, {navigation_id, offset_ms}, {marker_id, offset_ms} or {at_ms}.",
    );
  }
  const context = (["before_ms", "after_ms"] as const).filter((f) => req[f] !== undefined);
  if (context.length > 0) {
    throw badRequest(
      `An instant has no window for ${context.join(" and ")} to widen.`,
      `Drop ${context.join(" and ")} for the frame on screen at the instant, or drop ${
        req.at_ms !== undefined ? "at_ms" : "offset_ms"
      } for a window.`,
    );
  }
}

const POINT_ANCHORS = new Set(["interaction_id", "latest_interaction", "navigation_id", "marker_id"]);

/** Resolves a natural-anchor request into one exact range of one target. */
export function resolveRange(
  db: DatabaseSync,
  sessionId: string,
  req: RangeRequest,
  live?: LiveView,
): ResolvedRange {
  const kinds = anchorKinds(req);
  if (kinds.length > 1) {
    throw badRequest(
      `The range names ${kinds.length} anchors (${kinds.join(", ")}); it needs exactly one.`,
      "Keep one of: start_ms/end_ms, start_time/end_time, interaction_id, latest_interaction, navigation_id, marker_id, first_frame_id/last_frame_id, at_ms.",
    );
  }
  const instant = req.at_ms !== undefined || req.offset_ms !== undefined;
  if (instant) checkInstantRequest(req, kinds[0]);
  for (const f of ["before_ms", "after_ms"] as const) {
    const v = req[f];
    if (v !== undefined && v > MAX_CONTEXT_MS) {
      throw new ToolError({
        code: "resource_limit_exceeded",
        message: `${f} is ${v}, over the limit of ${MAX_CONTEXT_MS}.`,
        retry: "never",
        recovery: `Use ${f} ≤ ${MAX_CONTEXT_MS}.`,
        details: { subject: f, actual: v, limit: MAX_CONTEXT_MS },
      });
    }
  }
  const options = {
    allow_partial: req.allow_partial ?? true,
    require_complete: req.require_complete ?? false,
  };
  const kind = kinds[0] ?? "latest_interaction";
  let anchor: RangeAnchor;
  let requested: { start_ns: number; end_ns: number };
  let pageId: string;

  if (kind === "interaction_id" || kind === "latest_interaction") {
    const row = (kind === "interaction_id"
      ? db.prepare(
        "SELECT id, page_id, started_ns, dispatched_ns, completed_ns, observed_ns FROM interactions WHERE session_id = ? AND id = ?",
      ).get(sessionId, req.interaction_id ?? "")
      : db.prepare(
        `SELECT id, page_id, started_ns, dispatched_ns, completed_ns, observed_ns FROM interactions
         WHERE session_id = ? ${req.page_id ? "AND page_id = ?" : ""} ORDER BY started_ns DESC LIMIT 1`,
      ).get(...[sessionId, ...(req.page_id ? [req.page_id] : [])])) as InteractionRow | undefined;
    if (!row) {
      throw kind === "interaction_id"
        ? notFound(
          "interaction_not_found",
          `Interaction ${JSON.stringify((req.interaction_id ?? "").slice(0, 64))}`,
          sessionId,
          "Use an interaction_id returned by an action of this session.",
        )
        : notFound(
          "interaction_not_found",
          "An interaction",
          sessionId,
          "Act on the page first (click, fill, navigate_page…), or give an explicit start_ms/end_ms range.",
        );
    }
    pageId = row.page_id;
    anchor = {
      kind: kind === "interaction_id" ? "interaction" : "latest_interaction",
      id: row.id,
      at_ns: row.dispatched_ns ?? row.started_ns,
    };
    requested = interactionWindowOf(row, req);
  } else if (kind === "navigation_id" || kind === "marker_id") {
    const row = (kind === "navigation_id"
      ? db.prepare(
        "SELECT page_id, at_ns FROM events WHERE session_id = ? AND id = ? AND kind = 'navigation'",
      ).get(sessionId, req.navigation_id ?? -1)
      : db.prepare("SELECT page_id, at_ns FROM markers WHERE session_id = ? AND id = ?")
        .get(sessionId, req.marker_id ?? "")) as { page_id: string | null; at_ns: number } | undefined;
    if (!row) {
      throw kind === "navigation_id"
        ? notFound(
          "navigation_not_found",
          `Navigation ${req.navigation_id}`,
          sessionId,
          'Take a navigation id (event_id) from query_browser_events with kinds ["navigation"].',
        )
        : notFound(
          "marker_not_found",
          `Marker ${JSON.stringify((req.marker_id ?? "").slice(0, 64))}`,
          sessionId,
          "Use a marker id this session recorded.",
        );
    }
    pageId = row.page_id ?? defaultPage(db, sessionId, live);
    anchor = {
      kind: kind === "navigation_id" ? "navigation" : "marker",
      id: String(kind === "navigation_id" ? req.navigation_id : req.marker_id),
      at_ns: row.at_ns,
    };
    requested = pointRequest(row.at_ns, req.before_ms, req.after_ms);
  } else if (kind === "first_frame_id") {
    if (req.first_frame_id === undefined || req.last_frame_id === undefined) {
      throw badRequest("A frame range needs both first_frame_id and last_frame_id.", "Give both frame ids.");
    }
    const rows = db.prepare(
      "SELECT id, page_id, recv_ns FROM frames WHERE session_id = ? AND id IN (?, ?)",
    ).all(sessionId, req.first_frame_id, req.last_frame_id) as Array<
      { id: number; page_id: string; recv_ns: number }
    >;
    const first = rows.find((r) => r.id === req.first_frame_id);
    const last = rows.find((r) => r.id === req.last_frame_id);
    if (!first || !last) {
      throw notFound(
        "frame_not_found",
        `Frame ${first ? req.last_frame_id : req.first_frame_id}`,
        sessionId,
        "Take frame ids from list_source_frames of the same session.",
      );
    }
    if (first.page_id !== last.page_id) {
      throw badRequest(
        `Frames ${first.id} and ${last.id} belong to different pages (${first.page_id}, ${last.page_id}).`,
        "A range covers one target: choose both frames from the same page.",
      );
    }
    pageId = first.page_id;
    const [a, b] = first.recv_ns <= last.recv_ns ? [first, last] : [last, first];
    anchor = { kind: "frames", id: `${a.id}..${b.id}`, at_ns: a.recv_ns };
    // A frame range is inclusive of both frames; the 1 ns keeps a single-frame range non-empty.
    requested = { start_ns: a.recv_ns, end_ns: Math.max(b.recv_ns, a.recv_ns + 1) };
  } else if (kind === "at_ms") {
    pageId = req.page_id ?? defaultPage(db, sessionId, live);
    const atNs = (req.at_ms ?? 0) * MS;
    anchor = { kind: "session_time", at_ns: atNs };
    return resolveInstant(sessionId, anchor, atNs, coverageOf(db, sessionId, pageId, live), options);
  } else {
    pageId = req.page_id ?? defaultPage(db, sessionId, live);
    const coverage = coverageOf(db, sessionId, pageId, live);
    let start: number;
    let end: number;
    if (kind === "start_time") {
      const started = db.prepare("SELECT started_at FROM sessions WHERE id = ?").get(sessionId) as {
        started_at: string;
      };
      const origin = Date.parse(started.started_at);
      start = req.start_time === undefined
        ? coverage.start_ns
        : (parseTimestamp(req.start_time, "start_time") - origin) * MS;
      end = req.end_time === undefined
        ? coverage.end_ns
        : (parseTimestamp(req.end_time, "end_time") - origin) * MS;
    } else {
      start = req.start_ms === undefined ? coverage.start_ns : req.start_ms * MS;
      end = req.end_ms === undefined ? coverage.end_ns : req.end_ms * MS;
      if (req.start_ms !== undefined && req.start_ms === req.end_ms) {
        throw badRequest(
          `The range starts and ends at ${req.start_ms} ms: that is an instant, not a window.`,
          `For the frame on screen then, give {at_ms: ${req.start_ms}}; for a window, an end after the start.`,
        );
      }
    }
    anchor = { kind: kind === "start_time" ? "timestamps" : "session_time", at_ns: start };
    return resolveWindow(sessionId, anchor, { start_ns: start, end_ns: end }, coverage, options);
  }
  if (req.page_id && req.page_id !== pageId) {
    throw new ToolError({
      code: "range_target_mismatch",
      message: `The anchor belongs to page ${pageId}, not page ${req.page_id}.`,
      retry: "never",
      recovery: `Drop page_id or use ${pageId}.`,
      affected: { session_id: sessionId, page_id: req.page_id },
    });
  }
  const coverage = coverageOf(db, sessionId, pageId, live);
  if (req.offset_ms !== undefined) {
    return resolveInstant(sessionId, anchor, anchor.at_ns + req.offset_ms * MS, coverage, options);
  }
  return resolveWindow(sessionId, anchor, requested, coverage, options);
}

/**
 * Re-checks a resolved range passed back by a caller against the recording: its bounds are kept
 * exactly, but its warnings and gaps are recomputed from what is retained now.
 */
export function revalidateRange(
  db: DatabaseSync,
  range: Pick<ResolvedRange, "session_id" | "page_id" | "start_ns" | "end_ns" | "instant"> & {
    anchor?: Partial<RangeAnchor>;
    requested?: { start_ns: number; end_ns: number };
  },
  live?: LiveView,
): ResolvedRange {
  const coverage = coverageOf(db, range.session_id, range.page_id, live);
  const anchor: RangeAnchor = {
    kind: range.anchor?.kind ?? "session_time",
    ...(range.anchor?.id !== undefined ? { id: range.anchor.id } : {}),
    at_ns: range.anchor?.at_ns ?? range.start_ns,
  };
  if (range.instant === true || range.start_ns === range.end_ns) {
    return resolveInstant(range.session_id, anchor, range.start_ns, coverage, {
      allow_partial: true,
      require_complete: false,
    });
  }
  const resolved = resolveWindow(
    range.session_id,
    anchor,
    { start_ns: range.start_ns, end_ns: range.end_ns },
    coverage,
    { allow_partial: true, require_complete: false },
  );
  return range.requested ? { ...resolved, requested: range.requested } : resolved;
}
