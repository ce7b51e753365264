import { z } from "zod";
import { advertiseAs } from "./schema_compact.ts";

/**
 * Argument shapes shared by every tool (names fixed in DESIGN.md). Bounds keep 1 MB inputs out. Their
 * meaning is told once, in the server instructions (CONVENTIONS), not in every tool's schema.
 */
/**
 * The advertised form of an argument whose meaning CONVENTIONS tells: its type and a pointer. The zod
 * schema's own description (the full forms) stays for docs/tools.md.
 */
export const SEE_INSTRUCTIONS = "see instructions";

export const pageId = z.string().max(16);
/** Advertised as a string: CONVENTIONS names its three values once, not in 29 schemas. */
export const detail = advertiseAs(z.enum(["concise", "expanded", "full"]), { type: "string" });
export const inlineImages = z.boolean();
export const ref = z.string().max(64);
export const selector = z.string().max(2_000);
export const coordinate = z.number().min(-100_000).max(100_000);

const LOCATOR_HELP = "{role, name?} | {label} | {text} | {test_id}; + exact, scope, frame";

/** Advertised as an object: CONVENTIONS ("Targets") tells its forms under the same name. */
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
  { type: "object" },
);

export const targetFields = {
  ref: ref.optional(),
  locator: locator.optional(),
  selector: selector.optional(),
  x: coordinate.optional(),
  y: coordinate.optional(),
};

export const everyNthFrame = z.number().int().min(1).max(60).describe("Screencast stride; default 1");

/** What every tool's arguments mean when they recur; sent once, in the server instructions. */
export const CONVENTIONS = [
  "Arguments: unknown ones are rejected; limits not shown in schemas are enforced and named in the " +
  "invalid_arguments error. page_id defaults to the selected page, session_id to the current or latest " +
  "session. detail: concise (default), expanded or full. inline_images: false keeps images as resources only.",
  "Targets: ref (from snapshot_page), locator, selector (CSS escape hatch) or x/y (CSS px). A locator is one " +
  "of {role, name?}, {label}, {text} or {test_id}, plus exact (whole-string match), scope (a ref to search " +
  "within) and frame (an iframe's name or ref).",
  "Windows: temporal tools take range, range_handle (from resolve_temporal_range) or interaction_id; default " +
  "the latest interaction. A range is one anchor: {start_ms, end_ms} (session ms) | {start_time, end_time} " +
  "(ISO) | {interaction_id} | {latest_interaction: true} | {navigation_id} | {marker_id} | " +
  "{first_frame_id, last_frame_id} | a resolved range echoed back; plus before_ms, after_ms, page_id, " +
  "allow_partial (default true) and require_complete.",
  "Instants: {at_ms} (session ms) or {interaction_id | navigation_id | marker_id, offset_ms} (from the " +
  "dispatch, navigation or marker; negative is before) stand for the frame on screen then; " +
  "list_source_frames and resolve_temporal_range take one as range. Tools with flat at_ms, interaction_id, " +
  "marker_id, frame_id and offset_ms arguments take one of at_ms, interaction_id (+ offset_ms), marker_id " +
  "(+ offset_ms) or frame_id (from list_source_frames).",
  "region: {x, y, width, height} (viewport CSS px; + frame_id: that frame's pixels) | {ref} (its current " +
  "box) | {mask: [{x, y, width, height}]} (only these are measured).",
  "Picture tools: max_tiles default 8; noise_floor: a per-channel difference up to it is noise (default 12); " +
  "epochs default all (temporal_debug_bundle: anchor). Navigation timeout_ms: the load timeout, default 30000.",
].join(" ");
