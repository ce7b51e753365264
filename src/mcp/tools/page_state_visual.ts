/**
 * bisect over the recorded frames (the visual predicates regionChanged and regionColor): the window's frames
 * in paint order, each evaluated on its pixels, every flip reported with the frame that shows it.
 */
import { ms } from "../../temporal/range.ts";
import { ToolError } from "../../errors.ts";
import type { VisualPredicateInput } from "../../pagestate/predicates.ts";
import { scanVisual } from "../../temporal/visual_scan.ts";
import type { AppContext } from "../context.ts";
import { output } from "../response.ts";
import { bisectFields, clampedLines, type ClampedWindow, valueText } from "./page_state_args.ts";
import { assertSessionPage, resolveSession } from "./sessions.ts";
import { rangeOf } from "./temporal_args.ts";

/** The window arguments bisect shares with its DOM scan. */
export interface WindowArgs {
  session_id?: string;
  page_id?: string;
  range?: unknown;
  range_handle?: string;
  interaction_id?: string;
}

/** bisect over the window's frames for a visual predicate (regionChanged, regionColor): no selector, no DOM. */
/**
 * The window a visual predicate scans: frames, not the DOM, so a session recorded with record_dom: false
 * qualifies. A range form resolves against frame coverage; without one, the page's whole capture.
 */
async function frameWindowOf(
  app: AppContext,
  args: WindowArgs,
): Promise<{ rec: { session_id: string; page_id: string }; window: ClampedWindow }> {
  const ranged = args.range !== undefined || args.range_handle !== undefined ||
    args.interaction_id !== undefined;
  if (ranged) {
    const range = await rangeOf(app, args as Parameters<typeof rangeOf>[1], { instant: "reject" });
    return {
      rec: { session_id: range.session_id, page_id: args.page_id ?? range.page_id },
      window: { from_ns: range.start_ns, to_ns: range.end_ns },
    };
  }
  const session = await resolveSession(app, args.session_id);
  if (args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
  const db = app.recorder.reader();
  const live = app.browsers.current;
  const page = args.page_id ??
    (live && live.id === session ? live.selectedPageId : undefined) ??
    (db.prepare("SELECT page_id FROM frames WHERE session_id = ? ORDER BY recv_ns DESC LIMIT 1").get(
      session,
    ) as
      | { page_id: string }
      | undefined)?.page_id;
  const extent = page === undefined ? undefined : db.prepare(
    "SELECT min(recv_ns) AS first, max(recv_ns) AS last FROM frames WHERE session_id = ? AND page_id = ?",
  ).get(session, page) as { first: number | null; last: number | null } | undefined;
  if (page === undefined || !extent || extent.first === null || extent.last === null) {
    throw new ToolError({
      code: "no_source_frames",
      message: `Session ${session} has no captured frames${page ? ` of page ${page}` : ""}.`,
      retry: "after_recovery",
      recovery: "Navigate a visible page so Chrome paints, then ask again.",
      affected: { session_id: session },
    });
  }
  return {
    rec: { session_id: session, page_id: page },
    window: { from_ns: Number(extent.first), to_ns: Number(extent.last) },
  };
}

export async function visualBisect(
  app: AppContext,
  args: WindowArgs,
  predicate: VisualPredicateInput,
  started: number,
) {
  const { rec, window } = await frameWindowOf(app, args);
  const scan = await scanVisual(
    app.recorder.reader(),
    rec.session_id,
    rec.page_id,
    window.from_ns,
    window.to_ns,
    predicate,
  );
  const transitions = scan.transitions.map((t) => ({
    at_ms: ms(t.at_ns),
    // The flip happened after this frame's paint (the last one evaluated without it).
    after_ms: ms(t.previous_at_ns),
    from: t.from,
    to: t.to,
    exact: t.exact,
    measure: t.measure,
    frame: {
      frame_id: t.frame_id,
      session_time_ms: ms(t.at_ns),
      uri: t.uri,
      relation: "evaluated",
      offset_ms: 0,
    },
  }));
  const elapsed = Math.round(performance.now() - started);
  const lines = [
    `${JSON.stringify(predicate)} on page ${rec.page_id}, ${ms(window.from_ns)}–${ms(window.to_ns)} ms: ${
      valueText(scan.initial)
    } at the start, ${transitions.length} transition(s) (${scan.probes} frames evaluated of ${scan.frames_in_window} painted in the window${
      scan.baseline.on_screen_at_start ? " and the one on screen at its start" : ""
    }${scan.sampled ? ", sampled evenly and narrowed by bisection" : ""}, ${elapsed} ms)`,
    ...clampedLines(window),
    ...transitions.map((t) =>
      `${t.at_ms} ms: ${valueText(t.from)} → ${
        valueText(t.to)
      } (frame #${t.frame.frame_id}; after ${t.after_ms} ms${
        t.exact ? "" : ", not every frame between evaluated"
      })`
    ),
    `a pixel counts as changed when a channel moved by more than ${scan.pixel_delta} of 255; baseline frame #${scan.baseline.frame_id}`,
  ];
  return output(lines.join("\n"), {
    ...bisectFields(rec, window, scan, transitions),
    probes: scan.probes,
    frames_in_window: scan.frames_in_window,
    ...(scan.sampled ? { sampled: true } : {}),
    baseline: { frame_id: scan.baseline.frame_id, at_ms: ms(scan.baseline.at_ns) },
    region: scan.region,
    final_measure: scan.final_measure,
    elapsed_ms: elapsed,
    basis: "frames",
  });
}
