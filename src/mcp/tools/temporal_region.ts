/**
 * Regions of interest for region-focused artifacts, resolved to source-frame pixels, plus the
 * range text and capture-quality summary the temporal tools share.
 */
import { z } from "zod";
import type { DatabaseSync } from "node:sqlite";
import { frameOnScreen, getFrames, listFrames, type OnScreenFrame } from "../../capture/frames.ts";
import { resolveTarget } from "../../control/targeting.ts";
import { ToolError } from "../../errors.ts";
import type { RegionSpec } from "../../temporal/artifacts.ts";
import { ms, type ResolvedRange } from "../../temporal/range.ts";
import { anchorName } from "../../temporal/artifact_text.ts";
import { signedMs } from "../../temporal/render/layout.ts";
import type { Rect } from "../../vision/image.ts";
import type { AppContext } from "../context.ts";
import { advertiseAs } from "../schema_compact.ts";
import { ref, SEE_INSTRUCTIONS } from "../schemas.ts";

const extent = z.number().min(-100_000).max(100_000);
const size = z.number().min(1).max(100_000);
const rect = z.strictObject({ x: extent, y: extent, width: size, height: size });

const REGION_HELP =
  "{x, y, width, height} viewport CSS px (+ frame_id: that frame's pixels) | {ref} (its current box) | {mask: [{x, y, width, height}]} (only these are measured)";

/** Advertised as an object and a pointer: CONVENTIONS (the server instructions) tells the three forms. */
export const regionArg = advertiseAs(
  z.strictObject({
    x: extent.optional(),
    y: extent.optional(),
    width: size.optional(),
    height: size.optional(),
    frame_id: z.number().int().min(1).max(1e12).optional(),
    ref: ref.optional(),
    mask: z.array(rect).min(1).max(32).optional(),
  }).describe(REGION_HELP),
  { type: "object", description: SEE_INSTRUCTIONS },
);

function invalidRegion(message: string, recovery: string): ToolError {
  return new ToolError({
    code: "invalid_region",
    message,
    retry: "never",
    recovery,
    affected: { argument: "region" },
  });
}

function union(rects: Rect[]): Rect {
  const x = Math.min(...rects.map((r) => r.x));
  const y = Math.min(...rects.map((r) => r.y));
  return {
    x,
    y,
    width: Math.max(...rects.map((r) => r.x + r.width)) - x,
    height: Math.max(...rects.map((r) => r.y + r.height)) - y,
  };
}

/** Viewport CSS px → source-frame px, from a representative frame of the range. */
function viewportToSource(app: AppContext, range: ResolvedRange): (r: Rect) => Rect {
  const db = app.recorder.reader();
  const frame = listFrames(db, {
    sessionId: range.session_id,
    pageId: range.page_id,
    startNs: range.start_ns,
    endNs: range.end_ns,
    offset: 0,
    limit: 1,
  }).frames[0];
  const k = frame && frame.viewport.width > 0 ? frame.width / frame.viewport.width : 1;
  return (r) => ({ x: r.x * k, y: r.y * k, width: r.width * k, height: r.height * k });
}

export async function resolveRegion(
  app: AppContext,
  range: ResolvedRange,
  region: z.infer<typeof regionArg>,
): Promise<RegionSpec> {
  const box = [region.x, region.y, region.width, region.height];
  const hasBox = box.every((v) => v !== undefined);
  const forms = [hasBox, region.ref !== undefined, region.mask !== undefined].filter(Boolean).length;
  if (forms !== 1 || (!hasBox && box.some((v) => v !== undefined))) {
    throw invalidRegion(
      "A region is exactly one of: x, y, width and height (optionally with frame_id); ref; or mask.",
      "Give all four of x, y, width, height; or a ref; or a mask.",
    );
  }
  const toSource = viewportToSource(app, range);
  const roundRect = (r: Rect): Rect => ({
    x: Math.round(r.x),
    y: Math.round(r.y),
    width: Math.max(1, Math.round(r.width)),
    height: Math.max(1, Math.round(r.height)),
  });
  if (region.mask) {
    const mask = region.mask.map((r) => roundRect(toSource(r)));
    return {
      rect: union(mask),
      space: "viewport",
      source: "mask",
      mask,
      description: `mask of ${mask.length} rectangle(s)`,
    };
  }
  if (region.ref !== undefined) {
    const session = app.browsers.require();
    if (session.id !== range.session_id) {
      throw invalidRegion(
        "A ref region needs the range to belong to the live session.",
        "Use viewport coordinates for regions of earlier sessions.",
      );
    }
    const target = await resolveTarget(session, { ref: region.ref }, range.page_id);
    if (target.kind !== "element") {
      throw invalidRegion("The ref did not resolve to an element.", "Take a new snapshot.");
    }
    const res = await target.page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration:
        "function() { const r = this.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }",
      returnByValue: true,
    }) as { result: { value?: number[] } };
    const [x, y, w, h] = res.result.value ?? [0, 0, 0, 0];
    if (!(w > 0 && h > 0)) {
      throw invalidRegion(
        `The element of ref ${region.ref} has no area now.`,
        "Choose a visible element or coordinates.",
      );
    }
    return {
      rect: roundRect(toSource({ x, y, width: w, height: h })),
      space: "viewport",
      source: "ref",
      description: `ref ${region.ref} at its current geometry x ${Math.round(x)}, y ${Math.round(y)}, ${
        Math.round(w)
      }x${Math.round(h)} CSS px (fixed; not tracked)`,
    };
  }
  const r = { x: region.x ?? 0, y: region.y ?? 0, width: region.width ?? 1, height: region.height ?? 1 };
  if (region.frame_id !== undefined) {
    const frame = getFrames(app.recorder.reader(), range.session_id, [region.frame_id])[0];
    if (!frame) {
      throw invalidRegion(
        `Frame ${region.frame_id} is not in session ${range.session_id}.`,
        "Use a frame id from list_source_frames.",
      );
    }
    return {
      rect: roundRect(r),
      space: "source",
      source: "frame_region",
      description: `x ${r.x}, y ${r.y}, ${r.width}x${r.height} px of frame #${frame.frame_id}`,
    };
  }
  return {
    rect: roundRect(toSource(r)),
    space: "viewport",
    source: "coordinates",
    description: `x ${r.x}, y ${r.y}, ${r.width}x${r.height} viewport CSS px`,
  };
}

/** The instant an offset was given from, e.g. "interaction i3 +120 ms"; empty for a session-ms instant. */
function fromAnchor(range: ResolvedRange): string {
  const a = range.anchor;
  if (a.kind === "session_time" || a.kind === "timestamps" || a.id === undefined) return "";
  return `${anchorName(range)} ${signedMs(ms(range.start_ns - a.at_ns))}`;
}

export interface OnScreen extends OnScreenFrame {
  structured: {
    at_ms: number;
    frame_id: number;
    received_ms: number;
    received_before_ms: number;
    replaced_by: { frame_id: number; at_ms: number } | null;
  };
}

/** The frame on screen at a range's start (an instant's only frame), when one was received by then. */
export function onScreenAt(db: DatabaseSync, range: ResolvedRange): OnScreen | undefined {
  const shown = frameOnScreen(db, range.session_id, range.page_id, range.start_ns);
  if (!shown) return undefined;
  const next = shown.next;
  return {
    ...shown,
    structured: {
      at_ms: range.start_ms,
      frame_id: shown.frame.frame_id,
      received_ms: shown.frame.session_time_ms,
      received_before_ms: ms(range.start_ns - shown.frame.session_time_ns),
      replaced_by: next ? { frame_id: next.frame_id, at_ms: ms(next.session_time_ns) } : null,
    },
  };
}

/** Says which frame was on screen and since when: for an instant, or a window no frame arrived in. */
export function onScreenText(shown: OnScreen, range: ResolvedRange): string {
  const s = shown.structured;
  const anchor = fromAnchor(range);
  const since = range.instant
    ? `Frame #${s.frame_id} was on screen at ${s.at_ms} ms${
      anchor ? ` (${anchor})` : ""
    } on page ${range.page_id}: ` +
      `received at ${s.received_ms} ms, ${s.received_before_ms} ms before`
    : `0 frames received in ${range.start_ms}–${range.end_ms} ms on page ${range.page_id}; frame #${s.frame_id} ` +
      `was on screen: received at ${s.received_ms} ms, ${s.received_before_ms} ms before the window`;
  const until = s.replaced_by
    ? `; replaced by #${s.replaced_by.frame_id} at ${s.replaced_by.at_ms} ms.`
    : "; no later frame received (Chrome sends one only when it paints).";
  return since + until;
}

export function rangeText(range: ResolvedRange): string {
  const a = range.anchor;
  const instantFrom = fromAnchor(range);
  const span = range.instant
    ? `Instant ${range.start_ms} ms${instantFrom ? ` (${instantFrom})` : ""}`
    : `Range ${range.start_ms}–${range.end_ms} ms (${range.duration_ms} ms)`;
  return `${span} of page ${range.page_id}, session ${range.session_id}; anchor ${a.kind}${
    a.id ? ` ${a.id}` : ""
  } at ${a.at_ms} ms${range.complete ? "" : " (partial)"}${
    range.warnings.length
      ? `\n${range.warnings.map((w) => `warning ${w.code}: ${w.message}`).join("\n")}`
      : ""
  }`;
}

export function captureQuality(app: AppContext, range: ResolvedRange) {
  const db = app.recorder.reader();
  if (range.instant) {
    // An instant's evidence is one frame: which, and how long before the instant it arrived.
    const shown = onScreenAt(db, range);
    return {
      text: shown
        ? onScreenText(shown, range)
        : `No frame of page ${range.page_id} precedes ${range.start_ms} ms.`,
      structured: {
        on_screen: shown?.structured ?? null,
        gap_count: range.gaps.length,
        gaps: range.gaps,
        complete: range.complete,
      },
    };
  }
  const stats = db.prepare(
    `SELECT count(*) AS n, min(recv_ns) AS first, max(recv_ns) AS last FROM frames
     WHERE session_id = ? AND page_id = ? AND recv_ns BETWEEN ? AND ?`,
  ).get(range.session_id, range.page_id, Math.round(range.start_ns), Math.round(range.end_ns)) as {
    n: number;
    first: number | null;
    last: number | null;
  };
  const session = db.prepare("SELECT every_nth_frame FROM sessions WHERE id = ?").get(range.session_id) as
    | { every_nth_frame: number }
    | undefined;
  const span = stats.first !== null && stats.last !== null ? stats.last - stats.first : 0;
  const mean = stats.n > 1 ? ms(span / (stats.n - 1)) : null;
  const structured = {
    frame_count: stats.n,
    first_frame_ms: stats.first === null ? null : ms(stats.first),
    last_frame_ms: stats.last === null ? null : ms(stats.last),
    mean_interval_ms: mean,
    requested_every_nth_frame: session?.every_nth_frame ?? 1,
    gap_count: range.gaps.length,
    gaps: range.gaps,
    complete: range.complete,
  };
  const text =
    `Capture: ${stats.n} frames${
      mean === null ? "" : `, mean interval ${mean} ms`
    }, ${range.gaps.length} gap(s), every_nth_frame ${structured.requested_every_nth_frame}.` +
    " Chrome sends frames only when it paints: no frames over a still page is not a gap.";
  return { text, structured };
}
