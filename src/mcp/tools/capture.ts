import { z } from "zod";
import { frameBytes, getFrames, listFrames, listGaps } from "../../capture/frames.ts";
import { limitExceeded, ToolError } from "../../errors.ts";
import { encodeBase64 } from "../base64.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output, withoutShared } from "../response.ts";
import { inlineImages, pageId } from "../schemas.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { assertSessionPage, resolveSession, sessionId } from "./sessions.ts";
import { optionalRange, rangeFields } from "./temporal_args.ts";
import { onScreenAt, onScreenText } from "./temporal_region.ts";
import { removeFiles, sessionEvidenceFiles, treeBytes } from "../session_evidence.ts";
import { join } from "node:path";

export const FETCH_FRAME_LIMIT = 8;
const LIST_DEFAULT = 50;
const LIST_LIMIT = 200;

export const captureTools = [
  defineTool({
    name: "list_source_frames",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.list_source_frames,
    description: "Recorded frames of a range in time order, paginated (offset, next_offset).",
    input: z.strictObject({
      ...rangeFields,
      page_id: pageId.optional(),
      offset: z.number().int().min(0).max(1e9).optional(),
      max_frames: z.number().int().min(1).max(LIST_LIMIT).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const { range, session } = await optionalRange(app, args, { instant: "allow" });
      if (args.page_id !== undefined) {
        assertSessionPage(app, session, args.page_id, "page_id");
        // The range already names its page; a different page_id would list frames outside what it resolved.
        if (range && range.page_id !== args.page_id) {
          throw conflictingArguments(
            "page_id",
            "range",
            `page_id is ${args.page_id} but the range resolved on page ${range.page_id}.`,
            `Drop page_id to list the range's own page, or put page_id: "${args.page_id}" inside a time range ({start_ms, end_ms, page_id}).`,
          );
        }
      }
      const pageFilter = args.page_id ?? range?.page_id;
      const offset = args.offset ?? 0;
      const limit = args.max_frames ?? LIST_DEFAULT;
      const db = app.recorder.reader();
      const listed = listFrames(db, {
        sessionId: session,
        pageId: pageFilter,
        startNs: range?.start_ns,
        endNs: range?.end_ns,
        offset,
        limit,
      });
      // An instant, or a window no frame was received in, is shown by the frame on screen at its start.
      const shown = range && (range.instant || listed.total === 0) ? onScreenAt(db, range) : undefined;
      const { frames, total } = shown ? { frames: offset === 0 ? [shown.frame] : [], total: 1 } : listed;
      const startNs = shown ? shown.frame.session_time_ns : range?.start_ns;
      const endNs = range?.end_ns;
      const gaps = listGaps(db, session).filter((g) =>
        (!pageFilter || g.page_id === pageFilter) &&
        (startNs === undefined || (g.end_ns ?? Infinity) >= startNs) &&
        (endNs === undefined || g.start_ns <= endNs)
      );
      const omitted = Math.max(0, total - offset - frames.length);
      const next = omitted > 0 ? offset + frames.length : undefined;
      const lines = [
        shown && range
          ? onScreenText(shown, range)
          : `${frames.length} of ${total} frames in session ${session}${
            args.page_id ? ` page ${args.page_id}` : ""
          }` +
            (next !== undefined ? ` (next_offset ${next}, ${omitted} more)` : ""),
        ...frames.map((f) =>
          `#${f.frame_id} ${f.page_id} ord ${f.ordinal} t=${
            f.session_time_ms.toFixed(1)
          }ms ${f.width}x${f.height}` +
          (f.changed_proportion !== null ? ` changed ${(f.changed_proportion * 100).toFixed(1)}%` : "")
        ),
        ...(gaps.length > 0
          ? [`gaps: ${gaps.map((g) => `${g.kind}@${(g.start_ns / 1e6).toFixed(1)}ms`).join(", ")}`]
          : []),
      ];
      return output(lines.join("\n"), {
        session_id: session,
        frames: withoutShared(frames, { session_id: session }),
        total_frame_count: total,
        omitted_frame_count: omitted,
        ...(next !== undefined ? { next_offset: next } : {}),
        gaps,
        ...(shown ? { on_screen: shown.structured } : {}),
        ...(range ? { range } : {}),
      });
    },
  }),
  defineTool({
    name: "fetch_source_frames",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.fetch_source_frames,
    description: `Recorded frames by id, up to ${FETCH_FRAME_LIMIT}; the first inline (per inline_images).`,
    input: z.strictObject({
      frame_ids: z.array(z.number().int().min(1)).min(1).max(1_000),
      session_id: sessionId.optional(),
      inline_images: inlineImages.optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      if (args.frame_ids.length > FETCH_FRAME_LIMIT) {
        throw limitExceeded(
          "frame_ids count",
          args.frame_ids.length,
          FETCH_FRAME_LIMIT,
          `Fetch at most ${FETCH_FRAME_LIMIT} frames per call; use list_source_frames to choose them.`,
        );
      }
      const session = await resolveSession(app, args.session_id);
      const db = app.recorder.reader();
      const frames = getFrames(db, session, args.frame_ids);
      const missing = args.frame_ids.filter((id) => !frames.some((f) => f.frame_id === id));
      if (missing.length > 0) {
        throw new ToolError({
          code: "frame_not_found",
          message: `Frames ${missing.slice(0, 8).join(", ")} are not in session ${session}.`,
          retry: "never",
          recovery: "Take frame ids from list_source_frames of the same session.",
          affected: { session_id: session },
        });
      }
      const inline = args.inline_images ?? true;
      const first = inline ? frameBytes(db, session, frames[0].frame_id) : undefined;
      return output(
        frames.map((f) => `#${f.frame_id} ${f.page_id} t=${f.session_time_ms.toFixed(1)}ms ${f.uri}`).join(
          "\n",
        ),
        { session_id: session, frames: withoutShared(frames, { session_id: session }) },
        first ? [{ data: encodeBase64(first), mimeType: "image/jpeg" }] : undefined,
      );
    },
  }),
  defineTool({
    name: "delete_session",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.delete_session,
    description:
      "Delete a stopped session's recorded data (frames, events, screenshots, artifacts, videos, index); reports bytes freed.",
    input: z.strictObject({ session_id: z.string().max(64) }),
    annotations: { destructiveHint: true },
    handler: async (args, app) => {
      const session = await resolveSession(app, args.session_id);
      const live = app.browsers.current;
      if (live && live.id === session && !live.ended) {
        throw new ToolError({
          code: "session_active",
          message: `Session ${session} is still recording.`,
          retry: "after_recovery",
          recovery: "Call stop_browser first, then delete_session.",
          affected: { session_id: session },
        });
      }
      // Attributed before the index forgets the session: screenshots are matched by session start.
      const files = await sessionEvidenceFiles(app.recorder.reader(), app.store.root, session);
      const segmentBytes = await treeBytes(join(app.recorder.root, "segments", session));
      // Files go first, so the worker's accounting, updated when it drops the rows, finds them gone.
      const fileBytes = await removeFiles(files);
      const removed = await app.recorder.deleteSession(session);
      app.temporal.forgetSession(session);
      const freed = segmentBytes + fileBytes;
      return output(
        `Deleted session ${session}: ${removed.frames} frames, ${removed.segments} segments, ${removed.events} events, ${files.screenshots} screenshots, ${files.artifacts} artifacts, ${files.videos} videos; ${freed} bytes freed.`,
        {
          session_id: session,
          deleted: {
            frames: removed.frames,
            segments: removed.segments,
            events: removed.events,
            screenshots: files.screenshots,
            artifacts: files.artifacts,
            videos: files.videos,
          },
          freed_bytes: freed,
        },
      );
    },
  }),
];
