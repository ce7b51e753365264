import { z } from "zod";
import { advertiseAs } from "./schema_compact.ts";

/**
 * Argument shapes shared by every tool (names fixed in DESIGN.md). Bounds keep 1 MB inputs out. Their
 * meaning is told once, in the server instructions (CONVENTIONS), not in every tool's schema.
 */
export const pageId = z.string().max(16);
export const detail = z.enum(["concise", "expanded", "full"]);
export const inlineImages = z.boolean();
export const ref = z.string().max(64);
export const selector = z.string().max(2_000);
export const coordinate = z.number().min(-100_000).max(100_000);

const LOCATOR_HELP = "{role, name?} | {label} | {text} | {test_id}; + exact, scope, frame";

/** Advertised as its description: the field names say their types, and the pairing rule is the point. */
export const locator = advertiseAs(
  z.strictObject({
    role: z.string().max(64).optional(),
    name: z.string().max(1_000).optional(),
    label: z.string().max(1_000).optional(),
    text: z.string().max(1_000).optional(),
    test_id: z.string().max(256).optional(),
    exact: z.boolean().optional(),
    scope: z.string().max(64).optional(),
    frame: z.string().max(256).optional(),
  }).describe(LOCATOR_HELP),
  { type: "object", description: LOCATOR_HELP },
);

export const targetFields = {
  ref: ref.optional(),
  locator: locator.optional(),
  selector: selector.optional(),
  x: coordinate.optional(),
  y: coordinate.optional(),
};

export const everyNthFrame = z.number().int().min(1).max(60).describe("Screencast stride 1-60; default 1");

/** What every tool's arguments mean when they recur; sent once, in the server instructions. */
export const CONVENTIONS =
  "Arguments: page_id defaults to the selected page, session_id to the current or latest session. " +
  "Target elements by ref (from snapshot_page), locator, selector (CSS escape hatch) or x/y (CSS px). " +
  "A locator is one of {role, name?}, {label}, {text} or {test_id}, plus exact (whole-string match), " +
  "scope (a ref to search within) and frame (an iframe's name or ref). " +
  "detail: concise (default), expanded or full. inline_images: false keeps images as resources only. " +
  "Temporal tools take range, range_handle or interaction_id; a range is one anchor, widened by " +
  "before_ms/after_ms, with allow_partial (default true) and require_complete. " +
  "An instant ({at_ms}, or offset_ms from an interaction's dispatch, a navigation or a marker; negative is " +
  "before) stands for the frame on screen then: list_source_frames and resolve_temporal_range take it. " +
  "Limits not shown in schemas are enforced " +
  "and named in the invalid_arguments error.";
