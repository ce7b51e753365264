/**
 * What each tool's structuredContent holds, as tools/list advertises it (outputSchema). The MCP client
 * validates every non-error result against it and rejects the whole call on a mismatch, so these name
 * the key fields only, and every object stays open: a result may carry more than its schema says.
 * Error results ({error}, isError) are not validated. tools/list advertises only `{type: "object"}`
 * (schema_compact.ts); docs/tools.md shows the fields, and the server checks them after every call.
 */
import { z } from "zod";
import { DEVTOOLS_OUTPUT_SCHEMAS } from "./output_schemas_devtools.ts";
import { PEOPLE_OUTPUT_SCHEMAS } from "./output_schemas_people.ts";

const str = z.string();
const num = z.number();
const bool = z.boolean();
const obj = z.looseObject({});
const list = z.array(z.unknown());

/** A resolved range, as every temporal tool echoes it (copy it back as `range`). */
const range = z.looseObject({ session_id: str, page_id: str, start_ms: num, end_ms: num, anchor: obj });

/** The live observation every state-changing action returns (control/observation.ts). */
const observation = z.looseObject({
  status: str.describe("ok, degraded, …"),
  interaction_id: str,
  page: z.looseObject({ page_id: str, url: str, title: str }),
  screenshot: z.looseObject({ uri: str, mime_type: str, width: num, height: num }).optional(),
  snapshot: obj.optional().describe("Target index (targets with refs), or {unchanged: true, generation}"),
  settled: bool.optional().describe("false: the page was still changing after the observation"),
  warnings: z.array(str).optional(),
});

const sessionStatus = z.looseObject({
  running: bool,
  session_id: str,
  selected_page_id: str.optional(),
  record_dom: bool,
});

const pageRow = z.looseObject({ page_id: str, url: str, title: str, selected: bool });

const frameList = {
  session_id: str,
  frames: z.array(z.looseObject({ frame_id: num, page_id: str, session_time_ms: num, uri: str })),
};

const artifacts = z.looseObject({
  range,
  artifacts: z.array(z.looseObject({ kind: str, uri: str, manifest_uri: str })),
  measurements: list.optional(),
});

/** Output schema per tool, by name; each tool definition names its own (`output:`). */
export const OUTPUT_SCHEMAS = {
  // browser and pages
  start_browser: sessionStatus,
  attach_browser: sessionStatus,
  browser_status: z.looseObject({
    running: bool,
    session_id: str.optional(),
    record_dom: bool.optional(),
    server: obj,
  }),
  stop_browser: z.looseObject({ stopped: bool, session_id: str.optional(), flushed: obj.optional() }),
  list_managed_profiles: z.looseObject({ profiles: list }),
  list_pages: z.looseObject({ pages: z.array(pageRow), selected_page_id: str.optional() }),
  create_page: pageRow,
  select_page: pageRow,
  close_page: z.looseObject({ closed_page_id: str, selected_page_id: str.optional() }),
  // inspection
  snapshot_page: z.looseObject({
    page_id: str,
    snapshot_generation: num,
    targets: z.array(z.looseObject({ ref: str.optional(), role: str, name: str })).optional()
      .describe("concise"),
    nodes: list.optional().describe("expanded and full"),
  }),
  take_screenshot: z.looseObject({ uri: str, width: num, height: num }),
  observe_live: z.looseObject({
    page: z.looseObject({ page_id: str, url: str, title: str }),
    dialog: z.looseObject({ open: bool, type: str.optional(), message: str.optional() }),
    screenshot: z.looseObject({ uri: str, mime_type: str, width: num, height: num }).optional()
      .describe("absent while a dialog is open or when the page could not be pictured (see warnings)"),
    snapshot: obj.optional().describe("Target index at the requested detail"),
    warnings: z.array(str).optional(),
  }),
  evaluate_page: z.looseObject({ page_id: str, type: str, value: z.unknown() }),
  inspect_page: z.looseObject({ page_id: str, url: str, viewport: obj.optional() }),
  query_page: z.looseObject({ page_id: str, outcome: str, match_count: num, ref: str.optional() }),
  wait: z.looseObject({ status: str, elapsed_ms: num, observed: obj }),
  batch: z.looseObject({ status: str, batch_id: str, steps: list, observation: obj.optional() }),
  // actions: the live observation
  navigate_page: observation,
  reload_page: observation,
  go_back: observation,
  go_forward: observation,
  click: observation,
  fill: observation,
  press_keys: observation,
  handle_dialog: observation,
  hover: observation,
  drag: observation,
  scroll: observation,
  select_option: observation,
  upload_files: observation,
  set_viewport: observation,
  write_clipboard: observation,
  activate_page: observation,
  // downloads and clipboard
  list_downloads: z.looseObject({ downloads: list, cursor: num, total: num }),
  wait_for_download: z.looseObject({ download: obj, cursor: num }),
  read_clipboard: z.looseObject({ page_id: str, text: str, truncated: bool }),
  // capture, events and time
  list_source_frames: z.looseObject({
    ...frameList,
    total_frame_count: num,
    next_offset: num.optional(),
  }),
  fetch_source_frames: z.looseObject(frameList),
  delete_session: z.looseObject({ session_id: str, deleted: obj, freed_bytes: num }),
  pin_resolved_range: z.looseObject({
    pin: z.looseObject({
      pin_id: str,
      session_id: str,
      page_id: str,
      start_ms: num,
      end_ms: num,
      bytes: num,
    }),
    pinned_bytes: num,
    share_bytes: num.nullable(),
  }),
  unpin_resolved_range: z.looseObject({ unpinned: z.array(str), pins_left: num, pinned_bytes: num }),
  query_pin_state: z.looseObject({ pins: list, pinned_bytes: num, share_bytes: num.nullable() }),
  query_browser_events: z.looseObject({
    session_id: str,
    events: list,
    total_event_count: num,
    next_offset: num.optional(),
  }),
  resolve_temporal_range: z.looseObject({ range, range_handle: str, capture_quality: obj }),
  temporal_debug_bundle: z.looseObject({ range, range_handle: str, bundles: list }),
  generate_artifacts: artifacts,
  generate_region_filmstrip: artifacts,
  generate_temporal_video: z.looseObject({
    range,
    uri: str,
    manifest_uri: str,
    duration_ms: num,
  }),
  // page state
  read_dom_at: z.looseObject({
    session_id: str,
    page_id: str,
    at_ms: num,
    dom: str,
    counts: obj,
    frame: obj.nullable(),
  }),
  diff_dom: z.looseObject({
    session_id: str,
    page_id: str,
    from_ms: num,
    to_ms: num,
    changes: list,
    counts: obj,
  }),
  find_element: z.looseObject({ session_id: str, page_id: str, at_ms: num, matches: list, total: num }),
  bisect: z.looseObject({
    session_id: str,
    page_id: str,
    window: obj,
    initial: z.union([bool, str]),
    transitions: list,
    probes: num,
    elapsed_ms: num,
  }),
  measure_layout: z.looseObject({
    session_id: str,
    page_id: str,
    at_ms: num,
    elements: list,
    overlaps: list,
  }),
  annotate: z.looseObject({ marker: obj, created: bool }),
  read_markers: z.looseObject({ session_id: str, markers: list, total: num }),
  load_recording: z.looseObject({
    session_id: str,
    page_id: str,
    duration_ms: num,
    events: num,
    checkpoints: num,
    viewport: obj,
    href: str,
    render: obj.optional(),
  }),
  capture_browser_scenario: z.looseObject({
    capture_id: str,
    session_id: str,
    capture_uri: str.describe(
      "The whole capture (screenshots inline) as a resource: pass it to compare_web_captures",
    ),
    steps: list,
    events: obj,
    completeness: obj,
  }),
  compare_web_captures: z.looseObject({
    overall_status: z.enum(["changed", "unchanged", "unknown"]),
    normalization: z.looseObject({ sha256: str }),
    alignment: obj,
    steps: list,
  }),
  ...DEVTOOLS_OUTPUT_SCHEMAS,
  ...PEOPLE_OUTPUT_SCHEMAS,
} satisfies Record<string, z.ZodObject>;
