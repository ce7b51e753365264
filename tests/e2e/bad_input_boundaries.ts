/**
 * The exact-boundary rows of the bad-input table (issue 11 item 9): an own `__proto__` key, unknown and
 * closed page ids, argument conflicts and malformed resource URIs, each for every tool it applies to.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { refOf, structured, textOf, type ToolResult } from "./harness.ts";
import type { ServerHandle } from "./harness.ts";

export interface ListedTool {
  name: string;
  inputSchema: { properties?: Record<string, unknown>; required?: string[] };
}

/** One bad call and the error it must get. */
export interface BoundaryCase {
  tool: string;
  label: string;
  args: Record<string, unknown>;
  expectCode: string;
}

type Check = (c: BoundaryCase, result: ToolResult) => void;

/** Otherwise valid arguments, so a page id (or range page) is the only thing wrong with the call. */
const PAGE_SWEEP_ARGS: Record<string, Record<string, unknown>> = {
  click: { x: 5, y: 5 },
  hover: { x: 5, y: 5 },
  drag: { x: 5, y: 5, to: { x: 20, y: 20 } },
  scroll: { dy: 10 },
  fill: { selector: "#name", value: "v" },
  press_keys: { keys: "Shift" },
  select_option: { selector: "select", value: "a" },
  upload_files: { selector: "input", paths: ["/etc/hostname"] },
  evaluate_page: { expression: "1" },
  handle_dialog: { action: "accept" },
  navigate_page: { url: "about:blank" },
  query_page: { locator: { role: "button" } },
  set_viewport: { clear: true },
  wait: { time_ms: 0 },
  write_clipboard: { text: "x" },
  generate_region_filmstrip: { region: { x: 0, y: 0, width: 10, height: 10 } },
  annotate: { label: "x" },
  bisect: { selector: "#x", predicate: { kind: "exists" } },
  diff_dom: { from: { at_ms: 0 }, to: { at_ms: 1 } },
  find_element: { text: "x" },
  measure_layout: { selectors: ["#x"] },
  cookies: { action: "list" },
  web_storage: { action: "list" },
  // The page is checked before the file: the path need not exist.
  save_storage_state: { path: "/tmp/krometrail-bad-input-state.json" },
  load_storage_state: { path: "/tmp/krometrail-bad-input-state.json" },
  route_requests: { url: "**/x", action: "abort" },
  measure_performance: { mode: "start" },
  fill_form: { fields: [{ selector: "#name", value: "v" }] },
  get_network_request: { request_id: "x" },
  ask_human: { question: "Did it look broken?", choices: ["yes", "no"] },
  open_viewer: {},
};

const UNKNOWN_PAGE = "p999";

/** Every tool with a page_id argument, given a page id that never existed. */
export function unknownPageCases(tools: ListedTool[]): BoundaryCase[] {
  return tools.filter((t) => t.inputSchema.properties?.page_id !== undefined).map((t) => ({
    tool: t.name,
    label: `unknown page_id ${UNKNOWN_PAGE}`,
    args: { ...PAGE_SWEEP_ARGS[t.name], page_id: UNKNOWN_PAGE },
    expectCode: "page_not_found",
  }));
}

/** Every tool taking a range, with a time range on a page the session never had. */
export function unknownRangePageCases(tools: ListedTool[]): BoundaryCase[] {
  return tools.filter((t) => t.inputSchema.properties?.range !== undefined).map((t) => ({
    tool: t.name,
    label: `range.page_id ${UNKNOWN_PAGE}`,
    args: { ...PAGE_SWEEP_ARGS[t.name], range: { start_ms: 0, end_ms: 60_000, page_id: UNKNOWN_PAGE } },
    expectCode: "page_not_found",
  }));
}

/**
 * Every tool with an own `__proto__` key beside otherwise valid arguments. The arguments come from
 * JSON.parse, which makes `__proto__` an own property (an object literal would set the prototype).
 */
export function protoCases(tools: ListedTool[], required: (tool: ListedTool) => Record<string, unknown>) {
  return tools.map((t) => {
    const body = JSON.stringify(required(t));
    const raw = body === "{}" ? '{"__proto__":1}' : `${body.slice(0, -1)},"__proto__":1}`;
    const args = JSON.parse(raw) as Record<string, unknown>;
    assert(Object.hasOwn(args, "__proto__"), `${t.name}: __proto__ is an own key`);
    return { tool: t.name, label: "own __proto__ key", args, expectCode: "invalid_arguments" };
  });
}

/** Records every message the client writes, to prove a case reached the server as it was built. */
export function recordOutgoing(server: ServerHandle): string[] {
  const transport = server.client.transport;
  assert(transport, "client is connected");
  const sent: string[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    sent.push(JSON.stringify(message));
    return send(message, options);
  };
  return sent;
}

export async function runCases(server: ServerHandle, cases: BoundaryCase[], check: Check): Promise<number> {
  for (const c of cases) check(c, await server.call(c.tool, c.args));
  return cases.length;
}

/**
 * A page that existed and closed keeps its closed error; listings of it still answer (it has a
 * history); conflicts are refused naming both arguments; a region is checked even when unused.
 */
export async function closedPagesAndConflicts(server: ServerHandle, check: Check, origin: string) {
  const snap = structured(await server.call("snapshot_page"));
  const clicked = structured(await server.call("click", { ref: refOf(snap, "button", "Show details") }));
  const interaction = String(clicked.interaction_id);
  const created = structured(await server.call("create_page", { url: `${origin}/stable.html` }));
  const closedId = String(created.page_id);
  assertEquals(structured(await server.call("close_page", { page_id: closedId })).closed_page_id, closedId);
  for (const tool of ["click", "snapshot_page", "select_page", "take_screenshot"]) {
    check(
      { tool, label: "closed page", args: {}, expectCode: "page_closed" },
      await server.call(tool, { ...PAGE_SWEEP_ARGS[tool], page_id: closedId }),
    );
  }
  for (const tool of ["query_browser_events", "list_source_frames"]) {
    const listed = await server.call(tool, { page_id: closedId });
    assert(!listed.isError, `${tool} of closed ${closedId}: ${textOf(listed).slice(0, 300)}`);
  }

  const conflicts: Array<[string, Record<string, unknown>, string]> = [
    ["start_browser", { profile: "work", temporary: true }, "profile.*temporary"],
    ["wait", { time_ms: 10, timeout_ms: 5_000 }, "time_ms.*timeout_ms"],
    ["list_source_frames", { interaction_id: interaction, page_id: closedId }, "page_id.*range"],
    [
      "resolve_temporal_range",
      { range: { start_ms: 0, end_ms: 900, before_ms: 100 } },
      "before_ms.*start_ms",
    ],
    [
      "query_browser_events",
      { range: { first_frame_id: 1, last_frame_id: 2, after_ms: 50 } },
      "after_ms.*first_frame_id",
    ],
    [
      "generate_artifacts",
      { interaction_id: interaction, region: { x: 0, y: 0, width: 10, height: 10 } },
      "region",
    ],
  ];
  const handle = String(
    structured(await server.call("resolve_temporal_range", { interaction_id: interaction })).range_handle,
  );
  conflicts.push([
    "resolve_temporal_range",
    { range_handle: handle, session_id: "another-session" },
    "session_id",
  ]);
  for (const [tool, args, names] of conflicts) {
    const result = await server.call(tool, args);
    check({ tool, label: "conflicting arguments", args, expectCode: "conflicting_arguments" }, result);
    assertMatch(textOf(result), new RegExp(names), `${tool}: the error names both arguments`);
  }
  // An anchor on another page than range.page_id already had its own code before this table.
  const mismatch = { range: { interaction_id: interaction, page_id: closedId } };
  check(
    {
      tool: "resolve_temporal_range",
      label: "anchor on another page",
      args: mismatch,
      expectCode: "range_target_mismatch",
    },
    await server.call("resolve_temporal_range", mismatch),
  );
  // Validated although no region generator asked for it.
  const regions: Array<[Record<string, unknown>, string]> = [
    [{ frame_id: 999_999_999, x: 0, y: 0, width: 10, height: 10 }, "invalid_region"],
    [{ ref: "s1p1g1n42" }, "stale_ref"],
  ];
  for (const [region, code] of regions) {
    const args = { interaction_id: interaction, generators: ["storyboard"], region };
    check(
      { tool: "generate_artifacts", label: "unused bad region", args, expectCode: code },
      await server.call("generate_artifacts", args),
    );
  }
}

/** resources/read of URIs whose percent-encoding is broken: invalid_uri with a recovery about the URI. */
export async function malformedUris(server: ServerHandle): Promise<number> {
  const uris = [
    "krometrail://evidence/%E0%A4%A",
    "krometrail://evidence/%",
    "krometrail://evidence/artifacts/%ZZ.png",
    "krometrail://evidence/frames/%C0%AF.jpg",
    "krometrail://evidence/%FF%FE",
  ];
  for (const uri of uris) {
    const failure = await server.client.readResource({ uri }).then(
      () => undefined,
      (err: { data?: { code?: string; recovery?: string } }) => err,
    );
    assert(failure, `${uri} must fail`);
    assertEquals(failure.data?.code, "invalid_uri", uri);
    assertMatch(String(failure.data?.recovery), /URI/, `${uri}: recovery is about the URI`);
  }
  return uris.length;
}
