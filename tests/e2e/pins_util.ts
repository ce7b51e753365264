/** Helpers for the pin and artifact-grace tests: frame listings, pin answers and retention status. */
import { type ServerHandle, structured, textOf, type ToolResult } from "./harness.ts";
import type { Retention } from "./budget_util.ts";
import type { PinView } from "../../src/store/protection.ts";

export interface Frame {
  frame_id: number;
  page_id: string;
  session_time_ms: number;
}

export type { PinView } from "../../src/store/protection.ts";

export interface PinAnswer {
  pin: PinView;
  pinned_bytes: number;
  used_bytes: number;
  share_bytes: number | null;
  range_warnings?: string[];
  warning?: string;
  recording_blocked?: boolean;
  blocked_reason?: string;
}

export interface GraceOverride {
  at: string;
  count: number;
  newest_retained_at?: string;
  session_id?: string;
  session_time_ms?: number;
}

/** The whole RetentionStatus (browser_status detail "expanded"). */
export interface FullRetention extends Retention {
  pinned_bytes: number;
  pins: number;
  grace_window_ms: number;
  grace_protected_bytes: number;
  grace_overridden_through?: GraceOverride;
  eviction_blocked: boolean;
  blocked_reason?: string;
}

export interface CaptureState {
  frames_stored: number;
  frames_over_budget: number;
  budget?: { reason: string; paused: boolean; pinned_bytes: number; recovery: string };
  retention?: FullRetention;
}

export interface Gap {
  page_id: string;
  kind: string;
  start_ns: number;
  end_ns: number | null;
  cause: string;
}

export interface RetentionWarning {
  code: string;
  message: string;
  through?: GraceOverride;
}

export async function captureState(server: ServerHandle): Promise<CaptureState> {
  return structured(await server.call("browser_status", { detail: "expanded" })).capture as CaptureState;
}

/** A call that must succeed; its failure text is the assertion message. */
export async function ok(
  server: ServerHandle,
  tool: string,
  args: Record<string, unknown>,
): Promise<ToolResult> {
  const result = await server.call(tool, args);
  if (result.isError) throw new Error(`${tool} ${JSON.stringify(args)} failed: ${textOf(result)}`);
  return result;
}

/**
 * Every frame of the session now retained, by paging list_source_frames; with a range, the frames in
 * it. Reclaim may take the oldest frames between two pages, so a page that comes back shorter than
 * asked ends the walk rather than skipping frames.
 */
export async function allFrames(server: ServerHandle, range?: Record<string, unknown>): Promise<Frame[]> {
  const frames: Frame[] = [];
  let offset = 0;
  for (let page = 0; page < 50; page++) {
    const listed = structured(
      await ok(server, "list_source_frames", { ...(range ? { range } : {}), offset, max_frames: 200 }),
    );
    frames.push(...listed.frames as Frame[]);
    if (listed.next_offset === undefined) break;
    offset = listed.next_offset as number;
  }
  return frames;
}

/** The session's newest retained frames (up to 200), for collecting what was recorded along the way. */
export async function newestFrames(server: ServerHandle): Promise<Frame[]> {
  const total = structured(await ok(server, "list_source_frames", { max_frames: 1 }))
    .total_frame_count as number;
  const listed = structured(
    await ok(server, "list_source_frames", { offset: Math.max(0, total - 200), max_frames: 200 }),
  );
  return listed.frames as Frame[];
}

export async function gapsOf(server: ServerHandle): Promise<Gap[]> {
  return structured(await ok(server, "list_source_frames", { max_frames: 1 })).gaps as Gap[];
}

/** The retention warning a call carries, if reclaim dropped artifact grace while it ran. */
export function retentionWarning(result: ToolResult): RetentionWarning | undefined {
  return result.structuredContent?.retention_warning as RetentionWarning | undefined;
}

/** Characters an agent reads from a response: its text and its structured content. */
export function responseChars(result: ToolResult): { text: number; structured: number } {
  return {
    text: textOf(result).length,
    structured: JSON.stringify(result.structuredContent ?? {}).length,
  };
}
