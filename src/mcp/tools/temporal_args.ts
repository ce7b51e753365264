/**
 * The range arguments every temporal tool shares (`range` as a natural-anchor request or a resolved
 * range passed back, or `range_handle`), and the environment artifact generation runs in.
 */
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import type { ArtifactEnv } from "../../temporal/artifacts.ts";
import { pixelOps } from "../../temporal/pixel_ops.ts";
import type { ResolvedRange } from "../../temporal/range.ts";
import { type LiveView, resolveRange, revalidateRange } from "../../temporal/range_source.ts";
import { encodePng } from "../../vision/png.ts";
import type { AppContext } from "../context.ts";
import { pageId } from "../schemas.ts";
import { resolveSession, sessionId } from "./sessions.ts";

const msValue = z.number().min(0).max(1e9);
const contextMs = z.number().min(0).max(600_000);

export const rangeRequest = z.strictObject({
  start_ms: msValue.optional().describe("Session time (ms since session start)"),
  end_ms: msValue.optional(),
  start_time: z.string().max(40).optional().describe("ISO 8601 or epoch ms"),
  end_time: z.string().max(40).optional(),
  interaction_id: z.string().max(64).optional(),
  latest_interaction: z.boolean().optional(),
  navigation_id: z.number().int().min(1).max(1e12).optional().describe("event_id of a navigation event"),
  marker_id: z.string().max(64).optional(),
  first_frame_id: z.number().int().min(1).max(1e12).optional(),
  last_frame_id: z.number().int().min(1).max(1e12).optional(),
  before_ms: contextMs.optional().describe("Context before the anchor; default 150"),
  after_ms: contextMs.optional().describe("Window after the anchor; default: observation + 1000"),
  page_id: pageId.optional(),
  allow_partial: z.boolean().optional().describe("Default true: resolve to the captured intersection"),
  require_complete: z.boolean().optional().describe("Fail unless fully captured without gaps"),
});

/** A resolved range echoed back by the caller; its bounds are kept and re-checked. */
const resolvedRange = z.object({
  resolved: z.literal(true),
  session_id: z.string().max(64),
  page_id: z.string().max(16),
  start_ns: z.number().min(0).max(1e15),
  end_ns: z.number().min(0).max(1e15),
  anchor: z.object({
    kind: z.enum([
      "session_time",
      "timestamps",
      "interaction",
      "latest_interaction",
      "navigation",
      "marker",
      "frames",
    ]),
    id: z.string().max(64).optional(),
    at_ns: z.number().min(-1e15).max(1e15),
  }).optional(),
  requested: z.object({ start_ns: z.number(), end_ns: z.number() }).optional(),
});

export const rangeFields = {
  session_id: sessionId.optional(),
  range: z.union([rangeRequest, resolvedRange]).optional().describe(
    "One anchor: start_ms/end_ms | start_time/end_time | interaction_id | latest_interaction | navigation_id | marker_id | first_frame_id+last_frame_id; or a resolved range. Default: latest interaction",
  ),
  range_handle: z.string().max(40).optional().describe("From resolve_temporal_range"),
  interaction_id: z.string().max(64).optional().describe("Shorthand for range {interaction_id}"),
};

export interface RangeArgs {
  session_id?: string;
  range?: z.infer<typeof rangeRequest> | z.infer<typeof resolvedRange>;
  range_handle?: string;
  interaction_id?: string;
}

function liveView(app: AppContext, session: string): LiveView | undefined {
  const live = app.browsers.current;
  const capture = app.recorder.captures.get(session);
  if (!live || live.id !== session || live.ended || !capture || capture.stopped) return undefined;
  return {
    nowNs: () => capture.nowNs(),
    selectedPageId: live.selectedPageId,
    isRecording: (page) => {
      const stream = capture.streams.get(page);
      return stream !== undefined && !stream.stats.terminal;
    },
  };
}

/** The one range a temporal request is about, from whichever form the caller used. */
export async function rangeOf(app: AppContext, args: RangeArgs): Promise<ResolvedRange> {
  const forms = [args.range, args.range_handle, args.interaction_id].filter((v) => v !== undefined).length;
  if (forms > 1) {
    throw new ToolError({
      code: "invalid_range",
      message: "Give one of range, range_handle or interaction_id, not several.",
      retry: "never",
      recovery: "Keep the one that names the interval you mean.",
      affected: { argument: "range" },
    });
  }
  if (args.range_handle) {
    await app.recorder.flush();
    return app.temporal.handles.get(args.range_handle);
  }
  const range = args.range;
  if (range && "resolved" in range) {
    const session = await resolveSession(app, range.session_id);
    return revalidateRange(app.recorder.reader(), range, liveView(app, session));
  }
  const session = await resolveSession(app, args.session_id);
  const request = range ?? (args.interaction_id ? { interaction_id: args.interaction_id } : {});
  return resolveRange(app.recorder.reader(), session, request, liveView(app, session));
}

/** True when the range ends in a live session's future by at most `withinMs`. */
export function pendingTailMs(app: AppContext, range: ResolvedRange, withinMs: number): number {
  const capture = app.recorder.captures.get(range.session_id);
  if (!capture || capture.stopped) return 0;
  const wait = (range.requested.end_ns - capture.nowNs()) / 1e6;
  return wait > 0 && wait <= withinMs ? Math.ceil(wait) : 0;
}

export function artifactEnv(app: AppContext): ArtifactEnv {
  const db = app.recorder.reader();
  return {
    db,
    ops: pixelOps(db),
    cache: app.temporal.cache,
    encodePng,
    write: (ext, bytes) => app.store.writeEvidence("artifacts", ext, bytes),
    captureConfig: (session) => {
      const row = db.prepare("SELECT every_nth_frame, focus FROM sessions WHERE id = ?").get(session) as
        | { every_nth_frame: number; focus: string }
        | undefined;
      return { every_nth_frame: row?.every_nth_frame ?? 1, focus: row?.focus ?? "foreground" };
    },
  };
}
