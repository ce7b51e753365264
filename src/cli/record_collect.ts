/**
 * What `krometrail record` gathers from a finished recording, through the same tool layer an MCP
 * client uses: the range the page was recorded over, its storyboard, difference map and video, the
 * browser events and the interactions, in the shapes the report and events.md take.
 */
import type { AppContext } from "../mcp/context.ts";
import type { ToolOutput } from "../mcp/response.ts";
import type { RunTool } from "../mcp/tool_runner.ts";
import { EVIDENCE_SCHEME } from "../store/instance.ts";
import type { EventRecord, InteractionRecord } from "./events_md.ts";
import type { ReportImages } from "./report_html.ts";

/** Browser events the report lists; a busy page beyond this is counted, not listed. */
export const MAX_REPORT_EVENTS = 1_000;
const EVENTS_PAGE = 200;

export function errorOf(out: ToolOutput): { code: string; message: string; recovery?: string } {
  const e = out.structured.error as { code?: string; message?: string; recovery?: string } | undefined;
  return { code: e?.code ?? "error", message: e?.message ?? out.text.split("\n")[0], recovery: e?.recovery };
}

export function firstLine(out: ToolOutput): string {
  return out.isError ? `${errorOf(out).code}: ${errorOf(out).message}` : out.text.split("\n")[0];
}

function describeTarget(params: Record<string, unknown>): string | undefined {
  const loc = params.locator as Record<string, unknown> | undefined;
  if (loc) {
    const parts = Object.entries(loc).filter(([, v]) => typeof v === "string" || typeof v === "boolean")
      .map(([k, v]) => `${k} ${JSON.stringify(v)}`);
    if (parts.length) return parts.join(", ");
  }
  if (typeof params.url === "string") return params.url;
  if (typeof params.selector === "string") return params.selector;
  return undefined;
}

export function readInteractions(
  app: AppContext,
  sessionId: string,
  described: Map<string, string>,
): InteractionRecord[] {
  const rows = app.recorder.reader().prepare(
    `SELECT id, page_id, operation, params, coalesce(dispatched_ns, started_ns) AS at_ns, outcome, error_code
       FROM interactions WHERE session_id = ? ORDER BY at_ns, id`,
  ).all(sessionId) as Array<Record<string, string | number | null>>;
  return rows.map((r) => {
    let params: Record<string, unknown> = {};
    try {
      params = JSON.parse(String(r.params ?? "{}"));
    } catch { /* an unreadable params column only loses the target's words */ }
    const id = String(r.id);
    const target = described.get(id) ?? describeTarget(params);
    return {
      interaction_id: id,
      operation: String(r.operation),
      page_id: String(r.page_id),
      at_ms: Number(r.at_ns) / 1e6,
      outcome: String(r.outcome),
      ...(target ? { target } : {}),
      ...(r.error_code ? { error_code: String(r.error_code) } : {}),
    };
  });
}

export async function readEvents(
  run: RunTool,
  sessionId: string,
  endMs: number,
): Promise<[EventRecord[], number]> {
  const events: EventRecord[] = [];
  let total = 0;
  for (let offset = 0; offset < MAX_REPORT_EVENTS; offset += EVENTS_PAGE) {
    const out = await run("query_browser_events", {
      session_id: sessionId,
      range: { start_ms: 0, end_ms: Math.ceil(endMs) + 1 },
      offset,
      max_events: Math.min(EVENTS_PAGE, MAX_REPORT_EVENTS - offset),
    });
    if (out.isError) break;
    total = Number(out.structured.total_event_count ?? 0);
    const page = (out.structured.events ?? []) as Array<Record<string, unknown>>;
    for (const e of page) {
      events.push({
        at_ms: Number(e.session_time_ms ?? e.at_ms ?? 0),
        kind: String(e.kind ?? "event"),
        ...(typeof e.level === "string" ? { level: e.level } : {}),
        ...(typeof e.page_id === "string" ? { page_id: e.page_id } : {}),
        text: typeof e.text === "string" ? e.text : "",
      });
    }
    if (out.structured.next_offset === undefined || page.length === 0) break;
  }
  return [events, Math.max(total, events.length)];
}

async function evidenceBytes(app: AppContext, uri: unknown): Promise<Uint8Array | undefined> {
  if (typeof uri !== "string" || !uri.startsWith(EVIDENCE_SCHEME)) return undefined;
  return (await app.store.readEvidence(uri.slice(EVIDENCE_SCHEME.length))).bytes;
}

/**
 * The page's recording from its first frame (the screencast starts a moment after the navigation
 * does; starting there keeps the artifacts from warning about an uncaptured start) to the end.
 */
export async function recordedRange(
  run: RunTool,
  sessionId: string,
  pageId: string,
  startMs: number,
  endMs: number,
): Promise<{ start_ms: number; end_ms: number; page_id: string }> {
  const out = await run("list_source_frames", {
    session_id: sessionId,
    range: { start_ms: startMs, end_ms: endMs, page_id: pageId },
    max_frames: 1,
  });
  const first = ((out.structured.frames ?? []) as Array<{ session_time_ms?: number }>)[0]?.session_time_ms;
  const start = typeof first === "number" && first > startMs && first < endMs ? first : startMs;
  return { start_ms: start, end_ms: endMs, page_id: pageId };
}

/** Storyboard, difference map and video over the recorded range; what could not be made becomes a note. */
export async function renderArtifacts(
  app: AppContext,
  run: RunTool,
  sessionId: string,
  range: { start_ms: number; end_ms: number; page_id: string } | undefined,
  notes: string[],
  show: (activity: string) => void,
): Promise<{ images: ReportImages; video?: Uint8Array }> {
  const images: ReportImages = {};
  if (!range) {
    notes.push("no page was recorded, so there is no storyboard, difference map or video");
    return { images };
  }
  show("drawing the storyboard and difference map");
  const art = await run("generate_artifacts", {
    session_id: sessionId,
    range,
    generators: ["storyboard", "difference_map"],
    inline_images: false,
  });
  if (art.isError) notes.push(`storyboard and difference map not drawn: ${firstLine(art)}`);
  for (const a of (art.structured.artifacts ?? []) as Array<{ kind?: string; uri?: string }>) {
    const bytes = await evidenceBytes(app, a.uri);
    if (a.kind === "storyboard" && bytes) images.storyboard = bytes;
    if (a.kind === "difference_map" && bytes) images.difference_map = bytes;
  }
  if (!app.temporal.video.available) {
    notes.push(`video.mp4 skipped: ffmpeg not qualified (${app.temporal.video.reason})`);
    return { images };
  }
  show("encoding the video");
  // Real time, as it happened; 15 fps keeps encoding quick and still reads as motion to a person.
  const clip = await run("generate_temporal_video", {
    session_id: sessionId,
    range,
    policy: "real_time",
    fps: 15,
  });
  if (clip.isError) {
    notes.push(`video.mp4 not written: ${firstLine(clip)}`);
    return { images };
  }
  const video = await evidenceBytes(app, clip.structured.uri);
  return video ? { images, video } : { images };
}
