/**
 * The range arguments every temporal tool shares (`range` as a natural-anchor request or a resolved
 * range passed back, or `range_handle`), and the environment artifact generation runs in.
 */
import type { PageSpan } from "../../store/protection.ts";
import { z } from "zod";
import { frameOnScreen } from "../../capture/frames.ts";
import { ToolError } from "../../errors.ts";
import type { ArtifactEnv } from "../../temporal/artifacts.ts";
import { pixelOps } from "../../temporal/pixel_ops.ts";
import { ms, type ResolvedRange } from "../../temporal/range.ts";
import { type LiveView, resolveRange, revalidateRange } from "../../temporal/range_source.ts";
import { encodePng } from "../../vision/png.ts";
import { sleepInCall } from "../../browser/call_signal.ts";
import { wallMs } from "../../capture/screencast.ts";
import { tailStep } from "../../temporal/tail_wait.ts";
import type { AppContext } from "../context.ts";
import { advertiseAs } from "../schema_compact.ts";
import { SEE_INSTRUCTIONS } from "../schemas.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { assertSessionPage, resolveSession, sessionId } from "./sessions.ts";

const msValue = z.number().min(0).max(1e9);
const contextMs = z.number().min(0).max(600_000);
const id = z.number().int().min(1);
const offsetMs = z.number().min(-1e9).max(1e9);

export const rangeRequest = z.strictObject({
  start_ms: msValue.optional(),
  end_ms: msValue.optional(),
  start_time: z.string().max(40).optional(),
  end_time: z.string().max(40).optional(),
  interaction_id: z.string().max(64).optional(),
  latest_interaction: z.boolean().optional(),
  navigation_id: id.optional(),
  marker_id: z.string().max(64).optional(),
  first_frame_id: id.optional(),
  last_frame_id: id.optional(),
  at_ms: msValue.optional(),
  offset_ms: offsetMs.optional(),
  before_ms: contextMs.optional(),
  after_ms: contextMs.optional(),
  page_id: z.string().max(16).optional(),
  allow_partial: z.boolean().optional(),
  require_complete: z.boolean().optional(),
});

/** A resolved range echoed back by the caller: bounds are kept and re-checked, other fields ignored. */
const resolvedRange = z.looseObject({
  resolved: z.literal(true),
  session_id: z.string().max(64),
  page_id: z.string().max(16),
  start_ns: z.number().min(0),
  end_ns: z.number().min(0),
});

const echoedAnchor = z.object({
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
  at_ns: z.number(),
});
const echoedRequest = z.object({ start_ns: z.number(), end_ns: z.number() });

const RANGE_HELP =
  "{start_ms, end_ms} (session ms) | {start_time, end_time} (ISO) | {interaction_id} | {latest_interaction: true} | {navigation_id} | {marker_id} | {first_frame_id, last_frame_id}; + before_ms, after_ms, page_id, allow_partial, require_complete. Instant: {at_ms} | {interaction_id|navigation_id|marker_id, offset_ms}. Or a resolved range. Default: latest interaction";

export const rangeFields = {
  session_id: sessionId.optional(),
  // Advertised as an object and a pointer: CONVENTIONS (the server instructions) tells the anchor forms.
  range: advertiseAs(z.union([rangeRequest, resolvedRange]).describe(RANGE_HELP), {
    type: "object",
    description: SEE_INSTRUCTIONS,
  }).optional(),
  range_handle: z.string().max(40).optional(),
  interaction_id: z.string().max(64).optional(),
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

/** Whether the tool reads an instant (the frame on screen then) or needs a window. */
export interface RangeUse {
  instant?: "allow" | "reject";
}

/** The one range a temporal request is about, from whichever form the caller used. */
export async function rangeOf(app: AppContext, args: RangeArgs, use: RangeUse = {}): Promise<ResolvedRange> {
  const range = await anyRangeOf(app, args);
  if (range.instant && use.instant !== "allow") throw instantRejected(app, range);
  return range;
}

/**
 * An instant given to a tool that needs a window: names the frame on screen then and a window to
 * ask for instead, so the next call can succeed.
 */
function instantRejected(app: AppContext, range: ResolvedRange): ToolError {
  const shown = frameOnScreen(app.recorder.reader(), range.session_id, range.page_id, range.start_ns);
  const t = range.start_ms;
  const a = range.anchor;
  const around = `{start_ms: ${Math.max(0, ms(range.start_ns - 250e6))}, end_ms: ${
    ms(range.start_ns + 250e6)
  }}`;
  const widen = a.kind === "interaction" || a.kind === "latest_interaction"
    ? `range {interaction_id: "${a.id}"} (its whole window), {interaction_id: "${a.id}", before_ms, after_ms} or ${around}`
    : `range ${around}`;
  return new ToolError({
    code: "range_is_instant",
    message: `This tool needs a window of time; the range is the instant ${t} ms${
      shown ? `, when frame #${shown.frame.frame_id} was on screen` : ""
    }.`,
    retry: "never",
    recovery: `Widen it to a window: ${widen}. For the instant itself, list_source_frames takes it${
      shown ? ` and fetch_source_frames {frame_ids: [${shown.frame.frame_id}]} shows the frame` : ""
    }.`,
    affected: { session_id: range.session_id, page_id: range.page_id, argument: "range" },
  });
}

async function anyRangeOf(app: AppContext, args: RangeArgs): Promise<ResolvedRange> {
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
    return sameSession(args, app.temporal.handles.get(args.range_handle), "range_handle");
  }
  const range = args.range;
  if (range && "resolved" in range) {
    sameSession(args, range, "range");
    const session = await resolveSession(app, range.session_id);
    assertSessionPage(app, session, range.page_id, "range.page_id");
    const anchor = echoedAnchor.safeParse(range.anchor);
    const requested = echoedRequest.safeParse(range.requested);
    return revalidateRange(app.recorder.reader(), {
      session_id: range.session_id,
      page_id: range.page_id,
      start_ns: range.start_ns,
      end_ns: range.end_ns,
      ...(range.instant === true ? { instant: true as const } : {}),
      ...(anchor.success ? { anchor: anchor.data } : {}),
      ...(requested.success ? { requested: requested.data } : {}),
    }, liveView(app, session));
  }
  const session = await resolveSession(app, args.session_id, {
    interaction_id: range?.interaction_id ?? args.interaction_id,
  });
  if (range?.page_id !== undefined) assertSessionPage(app, session, range.page_id, "range.page_id");
  if (range) assertContextWidens(range);
  const request = range ?? (args.interaction_id ? { interaction_id: args.interaction_id } : {});
  return resolveRange(app.recorder.reader(), session, request, liveView(app, session));
}

const BOUNDED_FIELDS = [
  "start_ms",
  "end_ms",
  "start_time",
  "end_time",
  "first_frame_id",
  "last_frame_id",
] as const;

/** before_ms/after_ms widen a point anchor; beside explicit bounds they used to be dropped without a word. */
function assertContextWidens(range: z.infer<typeof rangeRequest>): void {
  const bound = BOUNDED_FIELDS.find((f) => range[f] !== undefined);
  const context = (["before_ms", "after_ms"] as const).find((f) => range[f] !== undefined);
  if (bound === undefined || context === undefined) return;
  throw conflictingArguments(
    `range.${context}`,
    `range.${bound}`,
    `${context} widens an interaction, navigation or marker anchor, and a ${bound} range states its own bounds.`,
    `Drop ${context} and move the bounds instead, or anchor on an interaction_id with ${context}.`,
  );
}

/** A range handle or echoed range names its session; a different session_id beside it cannot both hold. */
function sameSession<T extends { session_id: string }>(args: RangeArgs, range: T, form: string): T {
  if (args.session_id !== undefined && args.session_id !== range.session_id) {
    throw conflictingArguments(
      "session_id",
      form,
      `session_id is ${args.session_id.slice(0, 64)} but the ${form} belongs to session ${range.session_id}.`,
      `Drop session_id: the ${form} already names its session.`,
    );
  }
  return range;
}

/** A range when the caller gave one (else the whole session), and the session either way. */
export async function optionalRange(
  app: AppContext,
  args: RangeArgs,
  use: RangeUse = {},
): Promise<{ range?: ResolvedRange; session: string }> {
  const ranged = args.range !== undefined || args.range_handle !== undefined ||
    args.interaction_id !== undefined;
  if (!ranged) return { session: await resolveSession(app, args.session_id) };
  const range = await rangeOf(app, args, use);
  return { range, session: range.session_id };
}

/** How far (ms) the range ends in a live session's future, when that is at most `withinMs`; else 0. */
export function pendingTailMs(app: AppContext, range: ResolvedRange, withinMs: number): number {
  const capture = app.recorder.captures.get(range.session_id);
  if (!capture || capture.stopped) return 0;
  const wait = (range.requested.end_ns - capture.nowNs()) / 1e6;
  return wait > 0 && wait <= withinMs ? Math.ceil(wait) : 0;
}

/**
 * Waits, when the range ends in the live future by at most `withinMs`, until its tail is recorded
 * (temporal/tail_wait.ts says when); true when it waited (the range is then resolved again). A
 * cancelled call stops waiting at once with the call's reason.
 */
export async function waitForTail(app: AppContext, range: ResolvedRange, withinMs: number): Promise<boolean> {
  const capture = app.recorder.captures.get(range.session_id);
  if (!capture || pendingTailMs(app, range, withinMs) === 0) return false;
  // The window's end on the clock Chrome stamps frames with (both clocks run on performance.now()).
  const endMs = wallMs() + (range.requested.end_ns - capture.nowNs()) / 1e6;
  for (;;) {
    const stream = capture.streams.get(range.page_id)?.tail();
    const step = tailStep({
      nowMs: wallMs(),
      endMs,
      ...(stream?.latestStampMs !== undefined ? { latestStampMs: stream.latestStampMs } : {}),
      streaming: (stream?.streaming ?? false) && !capture.stopped,
    });
    if (step.done) return true;
    const frame = step.onFrame ? stream?.nextFrame() : undefined;
    try {
      await sleepInCall(step.sleepMs, frame?.next);
    } finally {
      frame?.cancel();
    }
  }
}

/** The part of a range the budget protects (pins, grace): one page's stretch of one session. */
export function spanOf(range: ResolvedRange): PageSpan {
  return {
    session_id: range.session_id,
    page_id: range.page_id,
    start_ns: range.start_ns,
    end_ns: range.end_ns,
  };
}

/** `range`: what the artifacts are made from, under artifact grace from now (before its frames are read). */
export function artifactEnv(app: AppContext, range?: ResolvedRange): ArtifactEnv {
  const db = app.recorder.reader();
  const span = range && spanOf(range);
  if (span) app.recorder.grace(span);
  return {
    db,
    ops: pixelOps(db),
    cache: app.temporal.cache,
    encodePng,
    write: (ext, bytes) => app.store.writeEvidence("artifacts", ext, bytes, span),
    captureConfig: (session) => {
      const row = db.prepare("SELECT every_nth_frame, focus FROM sessions WHERE id = ?").get(session) as
        | { every_nth_frame: number; focus: string }
        | undefined;
      return { every_nth_frame: row?.every_nth_frame ?? 1, focus: row?.focus ?? "foreground" };
    },
  };
}
