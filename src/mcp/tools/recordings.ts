/**
 * load_recording: a local rrweb JSON file becomes a read-only session of its own (mode "recording",
 * one page p1, the session clock starting at the first event), stored exactly as a live page's DOM
 * recording is, so every page-state tool answers on it. With `render: true` it is also played in a
 * private headless replay under a screencast, so its frames enter the frame store and the temporal tools
 * (storyboards, difference maps, video, bundles) work on a recording krometrail never captured. The file
 * is validated completely before anything is written: a bad file leaves the index untouched.
 */
import { z } from "zod";
import { nextSessionOrdinal } from "../../browser/session.ts";
import { domCheckpoints } from "../../capture/dom_query.ts";
import { asToolError, ToolError } from "../../errors.ts";
import { readRecordingFile, type RecordingFile } from "../../pagestate/recording_file.ts";
import { renderRecording, type RenderResult } from "../../pagestate/render_recording.ts";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";

const PAGE_ID = "p1";
/** Events per DomBatchMessage, and the JSON a batch may hold before it is cut earlier. */
const BATCH_EVENTS = 2_000;
const BATCH_MAX_CHARS = 4 * 1024 * 1024;

/** The highest recording number handed out in this process: a deleted r2 is never handed out again. */
let highest = 0;

/** `r1`, `r2`, …: past every id in the index and every one given before. Live session ids are UUIDs. */
function nextRecordingId(app: AppContext): string {
  const rows = app.recorder.reader().prepare("SELECT id FROM sessions WHERE id GLOB 'r[0-9]*'")
    .all() as Array<
      { id: string }
    >;
  for (const { id } of rows) {
    const m = /^r(\d+)$/.exec(id);
    if (m) highest = Math.max(highest, Number(m[1]));
  }
  highest++;
  return `r${highest}`;
}

/** Sends the session, its page and every event; returns when the worker has stored them. */
async function ingest(app: AppContext, id: string, rec: RecordingFile, label: string): Promise<void> {
  const first = rec.first_timestamp;
  const durationNs = Math.round(rec.duration_ms * 1e6);
  app.recorder.send({
    type: "session",
    row: {
      id,
      ordinal: nextSessionOrdinal(),
      mode: "recording",
      profile: JSON.stringify({ recording: rec.name, label, bytes: rec.bytes, events: rec.events.length }),
      browser: "rrweb recording",
      protocol: "rrweb",
      started_at: new Date(first).toISOString(),
      every_nth_frame: 1,
      focus: "preserve",
      capabilities: JSON.stringify(app.recorder.capabilities),
      record_dom: 1,
    },
  });
  app.recorder.send({
    type: "target",
    row: {
      session_id: id,
      page_id: PAGE_ID,
      target_id: `recording:${rec.name}`.slice(0, 200),
      opener_page_id: null,
      created_ns: 0,
    },
  });
  let batch: string[] = [];
  let chars = 0;
  let lastTs = first;
  const flushBatch = () => {
    if (batch.length === 0) return;
    app.recorder.send({
      type: "dom",
      session_id: id,
      page_id: PAGE_ID,
      recv_ns: Math.round((lastTs - first) * 1e6),
      clock_offset_ms: first,
      payload: `[${batch.join(",")}]`,
    });
    batch = [];
    chars = 0;
  };
  for (const e of rec.events) {
    const json = JSON.stringify(e);
    if (batch.length >= BATCH_EVENTS || (batch.length > 0 && chars + json.length > BATCH_MAX_CHARS)) {
      flushBatch();
    }
    batch.push(json);
    chars += json.length;
    lastTs = e.timestamp;
  }
  flushBatch();
  // The page is closed and the session over at the last event: a recording does not go on.
  app.recorder.send({ type: "target_closed", session_id: id, page_id: PAGE_ID, closed_ns: durationNs });
  app.recorder.send({
    type: "session_end",
    id,
    ended_at: new Date(rec.last_timestamp).toISOString(),
    end_reason: "recording_loaded",
    stats: JSON.stringify({ recording: rec.name, events: rec.events.length, bytes: rec.bytes }),
  });
  await app.recorder.flush(id, durationNs);
}

const ms = (n: number) => Math.round(n * 1000) / 1000;

export const recordingTools = [
  defineTool({
    name: "load_recording",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.load_recording,
    description:
      "Load a local rrweb JSON recording (events array or {events}) as a read-only session for the page-state tools (use its session_id); render: true also replays it on screen for the temporal tools.",
    input: z.strictObject({
      path: z.string().min(1).max(4096),
      render: z.boolean().optional(),
      label: z.string().min(1).max(80).optional(),
    }),
    handler: async (args, app) => {
      const rec = await readRecordingFile(args.path);
      const label = args.label ?? rec.name;
      const id = nextRecordingId(app);
      await ingest(app, id, rec, label);
      const db = app.recorder.reader();
      const stored = db.prepare(
        "SELECT count(*) AS chunks, coalesce(sum(events), 0) AS events, coalesce(sum(length), 0) AS bytes FROM dom_chunks WHERE session_id = ?",
      ).get(id) as { chunks: number; events: number; bytes: number };
      const checkpoints = domCheckpoints(db, id, PAGE_ID).map((ns) => ms(ns / 1e6));
      let render: RenderResult | undefined;
      if (args.render === true) {
        try {
          render = await renderRecording({
            session_id: id,
            page_id: PAGE_ID,
            events: rec.events,
            first_timestamp: rec.first_timestamp,
            duration_ms: rec.duration_ms,
            viewport: { width: rec.meta.width, height: rec.meta.height },
            executable: app.config.chromePath,
            handoff: (frame) => app.recorder.handoff(frame),
          });
          await app.recorder.flush();
        } catch (err) {
          const cause = asToolError(err);
          throw new ToolError({
            code: "recording_render_failed",
            message:
              `Recording ${rec.name} is loaded as session ${id}, but rendering it failed: ${cause.message}`,
            retry: "safe",
            recovery:
              `The page-state tools already answer on session_id "${id}"; call load_recording again with render: true for its frames (a new session).`,
            affected: { session_id: id, page_id: PAGE_ID },
            details: { session_id: id, page_id: PAGE_ID, cause: cause.code },
          });
        }
      }
      const structuredContent = {
        session_id: id,
        page_id: PAGE_ID,
        label,
        file: { name: rec.name, bytes: rec.bytes, wrapped: rec.wrapped },
        started_at: new Date(rec.first_timestamp).toISOString(),
        duration_ms: ms(rec.duration_ms),
        events: rec.events.length,
        checkpoints: checkpoints.length,
        checkpoint_ms: checkpoints.slice(0, 20),
        viewport: { width: rec.meta.width, height: rec.meta.height },
        href: rec.meta.href,
        stored: { chunks: Number(stored.chunks), events: Number(stored.events), bytes: Number(stored.bytes) },
        ...(render ? { render } : {}),
        read_only: true,
      };
      const renderLine = render
        ? `Rendered ${render.frames} frame(s) at ${render.speed}× (${render.speed_rule}) in ${render.render_wall_ms} ms${
          render.dropped ? `, ${render.dropped} dropped by a full ingestion queue` : ""
        }: list_source_frames, generate_artifacts, temporal_debug_bundle and generate_temporal_video take session_id "${id}" with a range in its ms (0–${
          ms(rec.duration_ms)
        }).`
        : `No frames: pass render: true to replay it under a screencast for the temporal tools.`;
      const text = [
        `Loaded ${rec.name} (${label}) as read-only session ${id}, page ${PAGE_ID}: ${rec.events.length} events over ${
          ms(rec.duration_ms)
        } ms, ${checkpoints.length} checkpoint(s), viewport ${rec.meta.width}×${rec.meta.height}, ${rec.meta.href}.`,
        `Pass session_id "${id}" to read_dom_at, diff_dom, find_element, bisect, measure_layout, annotate and read_markers; instants are ms from the first event (0–${
          ms(rec.duration_ms)
        }).`,
        renderLine,
      ].join("\n");
      return output(text, structuredContent);
    },
  }),
];
