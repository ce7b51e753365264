/**
 * The time anchors every page-state tool shares: an instant as session ms (`at_ms`), an interaction plus
 * `offset_ms`, a marker (plus `offset_ms`) or a frame id; windows are the temporal tools' range forms.
 */
import { ms } from "../../temporal/range.ts";
import { z } from "zod";
import type { DatabaseSync } from "node:sqlite";
import { getFrames } from "../../capture/frames.ts";
import { ToolError } from "../../errors.ts";
import { inPaintOrder } from "../../temporal/frames.ts";
import { type DomExtent, domExtent } from "../../pagestate/states.ts";
import type { AppContext } from "../context.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { assertSessionPage, resolveSession, sessionId } from "./sessions.ts";

const MS = 1e6;

export const instantObject = z.strictObject({
  at_ms: z.number().min(0).max(1e9).optional(),
  interaction_id: z.string().max(64).optional(),
  marker_id: z.string().max(64).optional(),
  frame_id: z.number().int().min(1).optional(),
  offset_ms: z.number().min(-1e9).max(1e9).optional(),
});

export type InstantArgs = z.infer<typeof instantObject>;

/** Top-level instant fields of a point tool (read_dom_at, find_element, measure_layout, annotate). */
export const instantFields = {
  session_id: sessionId.optional(),
  page_id: z.string().max(16).optional(),
  ...instantObject.shape,
};

export interface ResolvedInstant {
  session_id: string;
  page_id: string;
  at_ns: number;
  anchor: { kind: "session_time" | "interaction" | "marker" | "frame"; id?: string; offset_ms?: number };
}

function notFound(code: string, what: string, session: string, recovery: string): ToolError {
  return new ToolError({
    code,
    message: `${what} is not in session ${session}.`,
    retry: "never",
    recovery,
    affected: { session_id: session },
  });
}

/** The page an instant without its own page is about: the live selected page, else the latest recorded. */
function defaultPage(app: AppContext, db: DatabaseSync, session: string): string {
  const live = app.browsers.current;
  if (live && live.id === session && !live.ended && live.selectedPageId) return live.selectedPageId;
  const row = db.prepare(
    `SELECT page_id FROM (SELECT page_id, last_ns AS at FROM dom_chunks WHERE session_id = ?
       UNION ALL SELECT page_id, recv_ns AS at FROM frames WHERE session_id = ?) ORDER BY at DESC LIMIT 1`,
  ).get(session, session) as { page_id: string } | undefined;
  if (!row) {
    throw new ToolError({
      code: "page_state_not_recorded",
      message: `Session ${session} recorded no page yet.`,
      retry: "after_recovery",
      recovery: "Navigate to a page (navigate_page) and ask again, or name a session that recorded one.",
      affected: { session_id: session },
    });
  }
  return row.page_id;
}

/** Paint time of one frame on the session clock, as the temporal tools order frames. */
function framePaintNs(
  db: DatabaseSync,
  session: string,
  frameId: number,
): { page_id: string; at_ns: number } {
  const [frame] = getFrames(db, session, [frameId]);
  if (!frame) {
    throw notFound(
      "frame_not_found",
      `Frame ${frameId}`,
      session,
      "Take frame ids from list_source_frames or read_dom_at of the same session.",
    );
  }
  const near = (db.prepare(
    "SELECT id FROM frames WHERE session_id = ? AND page_id = ? AND recv_ns BETWEEN ? AND ?",
  ).all(session, frame.page_id, frame.session_time_ns - 2e9, frame.session_time_ns + 2e9) as Array<
    { id: number }
  >)
    .map((r) => Number(r.id));
  const painted = inPaintOrder(getFrames(db, session, near)).find((f) => f.frame_id === frameId) ?? frame;
  return { page_id: frame.page_id, at_ns: painted.session_time_ns };
}

/**
 * Resolves one instant; `argument` names where it came from for errors (e.g. "from"). With `latest`, no
 * instant means the latest one: now on a live page, else the end of its recording.
 */
export async function instantOf(
  app: AppContext,
  args: InstantArgs & { session_id?: string; page_id?: string },
  argument = "instant",
  latest = false,
): Promise<ResolvedInstant> {
  const forms = (["at_ms", "interaction_id", "marker_id", "frame_id"] as const).filter((k) =>
    args[k] !== undefined
  );
  if (forms.length > 1) {
    throw conflictingArguments(
      forms[0],
      forms[1],
      `An instant is one of at_ms, interaction_id (+ offset_ms), marker_id (+ offset_ms) or frame_id; ${argument} gives ${forms.length}.`,
      `Keep ${forms[0]} or ${forms[1]}.`,
    );
  }
  if (forms.length === 0 && latest) {
    const session = await resolveSession(app, args.session_id);
    if (args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
    const page = args.page_id ?? defaultPage(app, app.recorder.reader(), session);
    return {
      session_id: session,
      page_id: page,
      at_ns: recordedPage(app, session, page).end_ns,
      anchor: { kind: "session_time", id: "latest" },
    };
  }
  if (forms.length === 0) {
    throw new ToolError({
      code: "invalid_instant",
      message: `${argument} names no instant.`,
      retry: "never",
      recovery:
        "Give at_ms (session ms), interaction_id with an optional offset_ms, marker_id, or frame_id (from list_source_frames).",
      affected: { argument },
    });
  }
  if (args.offset_ms !== undefined && (args.at_ms !== undefined || args.frame_id !== undefined)) {
    throw new ToolError({
      code: "invalid_instant",
      message: `offset_ms is measured from an interaction or a marker, not from ${forms[0]}.`,
      retry: "never",
      recovery:
        "Give {interaction_id, offset_ms}, {marker_id, offset_ms}, or add the offset to at_ms yourself.",
      affected: { argument: `${argument}.offset_ms` },
    });
  }
  const session = await resolveSession(app, args.session_id, { interaction_id: args.interaction_id });
  const db = app.recorder.reader();
  if (args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
  const offsetNs = (args.offset_ms ?? 0) * MS;
  let resolved: ResolvedInstant;
  if (args.interaction_id !== undefined) {
    const row = db.prepare(
      "SELECT page_id, started_ns, dispatched_ns FROM interactions WHERE session_id = ? AND id = ?",
    ).get(session, args.interaction_id) as
      | { page_id: string; started_ns: number; dispatched_ns: number | null }
      | undefined;
    if (!row) {
      throw notFound(
        "interaction_not_found",
        `Interaction ${JSON.stringify(args.interaction_id.slice(0, 64))}`,
        session,
        "Use an interaction_id returned by an action of this session.",
      );
    }
    resolved = {
      session_id: session,
      page_id: row.page_id,
      at_ns: Number(row.dispatched_ns ?? row.started_ns) + offsetNs,
      anchor: { kind: "interaction", id: args.interaction_id, offset_ms: args.offset_ms ?? 0 },
    };
  } else if (args.marker_id !== undefined) {
    const row = db.prepare("SELECT page_id, at_ns FROM markers WHERE session_id = ? AND id = ?")
      .get(session, args.marker_id) as { page_id: string | null; at_ns: number } | undefined;
    if (!row) {
      throw notFound(
        "marker_not_found",
        `Marker ${JSON.stringify(args.marker_id.slice(0, 64))}`,
        session,
        "Use a marker id from annotate or read_markers of this session.",
      );
    }
    resolved = {
      session_id: session,
      page_id: row.page_id ?? args.page_id ?? defaultPage(app, db, session),
      at_ns: Number(row.at_ns) + offsetNs,
      anchor: { kind: "marker", id: args.marker_id, offset_ms: args.offset_ms ?? 0 },
    };
  } else if (args.frame_id !== undefined) {
    const f = framePaintNs(db, session, args.frame_id);
    resolved = {
      session_id: session,
      page_id: f.page_id,
      at_ns: f.at_ns,
      anchor: { kind: "frame", id: String(args.frame_id) },
    };
  } else {
    resolved = {
      session_id: session,
      page_id: args.page_id ?? defaultPage(app, db, session),
      at_ns: (args.at_ms ?? 0) * MS,
      anchor: { kind: "session_time" },
    };
  }
  if (args.page_id !== undefined && args.page_id !== resolved.page_id) {
    throw conflictingArguments(
      "page_id",
      forms[0],
      `page_id is ${args.page_id} but ${forms[0]} belongs to page ${resolved.page_id}.`,
      `Drop page_id: ${forms[0]} already names its page.`,
    );
  }
  if (resolved.at_ns < 0) resolved.at_ns = 0;
  return resolved;
}

/** A page whose DOM was recorded, and the stretch of it that can be rebuilt. */
export interface RecordedPage {
  session_id: string;
  page_id: string;
  extent: DomExtent;
  /** Where the recording ends: now for a live page, else its last recorded moment. */
  end_ns: number;
  live: boolean;
}

/** The page's DOM recording, or the error that says why there is none. */
export function recordedPage(app: AppContext, sessionId: string, pageId: string): RecordedPage {
  const db = app.recorder.reader();
  const row = db.prepare("SELECT record_dom FROM sessions WHERE id = ?").get(sessionId) as
    | { record_dom: number }
    | undefined;
  if (row && row.record_dom === 0) {
    throw new ToolError({
      code: "page_state_not_recorded",
      message: `Session ${sessionId} was started with record_dom: false; its DOM was not recorded.`,
      retry: "never",
      recovery:
        "Page-state tools need a session started with record_dom: true (the default). Frames and events of this session are still there for the temporal tools.",
      affected: { session_id: sessionId, argument: "session_id" },
    });
  }
  const extent = domExtent(db, sessionId, pageId);
  if (!extent) {
    throw new ToolError({
      code: "page_state_not_recorded",
      message: `No DOM is recorded for page ${pageId} of session ${sessionId} yet.`,
      retry: "after_recovery",
      recovery:
        "A page's DOM is recorded from its first document after DOMContentLoaded (about:blank and cross-origin frames are not recorded). Navigate to the page and ask again, or name another page_id.",
      affected: { session_id: sessionId, page_id: pageId },
    });
  }
  const live = app.browsers.current;
  const capture = app.recorder.captures.get(sessionId);
  const isLive = !!live && live.id === sessionId && !live.ended && live.pages.has(pageId) && !!capture &&
    !capture.stopped;
  const lastFrame = db.prepare("SELECT max(recv_ns) AS at FROM frames WHERE session_id = ? AND page_id = ?")
    .get(sessionId, pageId) as { at: number | null } | undefined;
  // A stopped page's recording ends when its target closed or its session ended: the DOM held still until then.
  const ended = db.prepare(
    `SELECT t.closed_ns AS closed, s.started_at AS started, s.ended_at AS ended FROM sessions s
       LEFT JOIN targets t ON t.session_id = s.id AND t.page_id = ? WHERE s.id = ?`,
  ).get(pageId, sessionId) as { closed: number | null; started: string; ended: string | null } | undefined;
  const sessionEndNs = ended?.ended ? (Date.parse(ended.ended) - Date.parse(ended.started)) * MS : 0;
  const stoppedAt = Number(ended?.closed ?? 0) || sessionEndNs;
  const end = isLive && capture
    ? capture.nowNs()
    : Math.max(extent.last_event_ns, Number(lastFrame?.at ?? 0), Number.isFinite(stoppedAt) ? stoppedAt : 0);
  return { session_id: sessionId, page_id: pageId, extent, end_ns: end, live: isLive };
}

/** A point read outside the recording is an error that names the recorded extent. */
export function assertRecordedInstant(rec: RecordedPage, atNs: number, argument = "instant"): void {
  const gap = rec.extent.gaps.find((g) => atNs >= g.start_ns && (g.end_ns === null || atNs < g.end_ns));
  if (atNs >= rec.extent.first_ns && atNs <= rec.end_ns && !gap) return;
  throw new ToolError({
    code: "instant_outside_recording",
    message: gap
      ? `The DOM of page ${rec.page_id} was not recorded at ${ms(atNs)} ms: ${gap.cause}.`
      : `${ms(atNs)} ms is outside the DOM recording of page ${rec.page_id} (${ms(rec.extent.first_ns)}–${
        ms(rec.end_ns)
      } ms${rec.live ? ", still recording" : ""}).`,
    retry: "never",
    recovery: `Ask for an instant between ${ms(rec.extent.first_ns)} and ${ms(rec.end_ns)} ms${
      gap ? ` outside ${ms(gap.start_ns)}–${gap.end_ns === null ? "now" : `${ms(gap.end_ns)} ms`}` : ""
    }.`,
    affected: { session_id: rec.session_id, page_id: rec.page_id, argument },
    details: { recorded_from_ms: ms(rec.extent.first_ns), recorded_to_ms: ms(rec.end_ns) },
  });
}

export interface ClampedWindow {
  from_ns: number;
  to_ns: number;
  /** What was asked for, when the recording did not cover it all (windows are clamped, and say so). */
  clamped?: { asked_from_ms: number; asked_to_ms: number; from_ms: number; to_ms: number };
}

/** A window clamped to the recording; one that misses it entirely is an error. */
export function clampWindow(rec: RecordedPage, fromNs: number, toNs: number): ClampedWindow {
  const from = Math.max(fromNs, rec.extent.first_ns);
  const to = Math.min(toNs, rec.end_ns);
  if (to < from) assertRecordedInstant(rec, fromNs < rec.extent.first_ns ? fromNs : toNs, "range");
  if (from === fromNs && to === toNs) return { from_ns: from, to_ns: to };
  return {
    from_ns: from,
    to_ns: to,
    clamped: { asked_from_ms: ms(fromNs), asked_to_ms: ms(toNs), from_ms: ms(from), to_ms: ms(to) },
  };
}

/** A predicate's value in words. */
export function valueText(v: boolean | string): string {
  return v === "elementMissing" ? "element missing" : String(v);
}

/** The line a clamped window adds to an answer (none when the recording covered it all). */
export function clampedLines(window: ClampedWindow): string[] {
  const c = window.clamped;
  return c ? [`window clamped to the recording: asked ${c.asked_from_ms}–${c.asked_to_ms} ms`] : [];
}

/** The fields every bisect answer starts with, DOM or visual. */
export function bisectFields(
  rec: { session_id: string; page_id: string },
  window: ClampedWindow,
  scan: { initial: boolean | string; final: boolean | string },
  transitions: Array<{ at_ms: number; to: boolean | string }>,
): Record<string, unknown> {
  return {
    session_id: rec.session_id,
    page_id: rec.page_id,
    window: { from_ms: ms(window.from_ns), to_ms: ms(window.to_ns) },
    ...(window.clamped ? { clamped: window.clamped } : {}),
    initial: scan.initial,
    final: scan.final,
    transitions,
    ...(transitions.length > 0
      ? { first_true_ms: transitions.find((t) => t.to === true)?.at_ms ?? null }
      : {}),
  };
}
