/**
 * The viewer's evidence panels, made through the same tool layer an MCP client calls, so a person sees
 * exactly what an agent gets: storyboard and difference map (generate_artifacts), the range's video
 * (generate_temporal_video), its events (query_browser_events) and the DOM at the playhead (read_dom_at).
 */
import type { AppContext } from "../mcp/context.ts";
import type { ToolOutput } from "../mcp/response.ts";
import { toolsOf } from "../mcp/tool_runner.ts";
import { EVIDENCE_SCHEME } from "../store/instance.ts";

/** Events of a range listed in the panel; the total is always said. */
export const EVENT_LIST_LIMIT = 200;

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

async function run(app: AppContext, name: string, args: Record<string, unknown>): Promise<ToolOutput> {
  const tool = toolsOf(app).get(name);
  if (!tool) throw new ApiError(501, "tool_unavailable", `${name} is not available in this process.`);
  const out = await tool.run(args, app);
  if (out.isError) {
    const err = out.structured.error as { code?: string; message?: string } | undefined;
    throw new ApiError(422, err?.code ?? "tool_failed", err?.message ?? out.text.slice(0, 300));
  }
  return out;
}

/** A krometrail://evidence/<kind>/<file> URI as this viewer's URL for its bytes. */
export function evidenceUrl(token: string, uri: string): string {
  return `/${token}/api/evidence/${uri.slice(EVIDENCE_SCHEME.length)}`;
}

export interface RangeQuery {
  session_id: string;
  page_id: string;
  start_ms: number;
  end_ms: number;
}

function rangeArgs(q: RangeQuery): Record<string, unknown> {
  return {
    session_id: q.session_id,
    range: { start_ms: q.start_ms, end_ms: q.end_ms, page_id: q.page_id, allow_partial: true },
  };
}

export async function artifacts(app: AppContext, token: string, q: RangeQuery, video: boolean) {
  const out = await run(app, "generate_artifacts", {
    ...rangeArgs(q),
    generators: ["storyboard", "difference_map"],
  });
  const made = (out.structured.artifacts ?? []) as Array<{ kind: string; uri: string }>;
  const find = (kind: string) => {
    const a = made.find((m) => m.kind === kind);
    return a ? evidenceUrl(token, a.uri) : null;
  };
  let videoUrl: string | null = null;
  let videoError: string | undefined;
  if (video) {
    try {
      const clip = await run(app, "generate_temporal_video", { ...rangeArgs(q), policy: "real_time" });
      videoUrl = evidenceUrl(token, String(clip.structured.uri));
    } catch (err) {
      videoError = err instanceof ApiError ? `${err.code}: ${err.message}` : String(err);
    }
  }
  return {
    storyboard: find("storyboard"),
    difference_map: find("difference_map"),
    video: videoUrl,
    ...(videoError ? { video_error: videoError } : {}),
    text: out.text,
  };
}

export async function events(app: AppContext, q: RangeQuery) {
  const out = await run(app, "query_browser_events", {
    ...rangeArgs(q),
    page_id: q.page_id,
    max_events: EVENT_LIST_LIMIT,
  });
  const s = out.structured;
  return {
    events: s.events,
    total_event_count: s.total_event_count,
    omitted_event_count: s.omitted_event_count,
    counts_by_kind: s.counts_by_kind,
    text: out.text,
  };
}

/** An instant the DOM recording does not cover is an answer to show, not a failure. */
const NO_DOM_THERE = new Set(["instant_outside_recording", "page_state_not_recorded", "dom_not_recorded"]);

export async function dom(app: AppContext, session: string, page: string, atMs: number) {
  try {
    const out = await run(app, "read_dom_at", { session_id: session, page_id: page, at_ms: atMs });
    return { available: true, text: out.text, at_ms: out.structured.at_ms, url: out.structured.url ?? null };
  } catch (err) {
    if (!(err instanceof ApiError) || !NO_DOM_THERE.has(err.code)) throw err;
    return { available: false, text: err.message, at_ms: atMs, url: null };
  }
}

/** Evidence the viewer itself links to: artifacts and clips, never screenshots, traces or anything else. */
const SERVED = /^(artifacts|videos)\/[A-Za-z0-9._-]{1,120}\.(png|jpg|jpeg|mp4)$/;

export async function evidence(
  app: AppContext,
  path: string,
): Promise<{ bytes: Uint8Array; mimeType: string }> {
  if (!SERVED.test(path) || path.includes("..")) {
    throw new ApiError(404, "evidence_not_found", "No such evidence in this process.");
  }
  try {
    return await app.store.readEvidence(path);
  } catch {
    throw new ApiError(404, "evidence_not_found", "No such evidence in this process.");
  }
}
