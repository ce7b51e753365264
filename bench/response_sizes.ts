/**
 * Response sizes: one typical call of every tool through the real server over stdio, against the fixture
 * site in headless Chromium, and the characters of its text content and its structuredContent
 * (JSON.stringify). Images are not counted: they are the same bytes whatever the text says.
 *
 *   deno run --frozen -A bench/response_sizes.ts [--save FILE] [--compare FILE] [--dump FILE]
 *
 * --save writes the figures as JSON; --compare prints them beside an earlier --save (before/after);
 * --dump writes every counted response in full, to read what each one repeats.
 */
import {
  fixtures,
  refOf,
  startDebugChrome,
  startServer,
  structured,
  textOf,
  type ToolResult,
} from "../tests/e2e/harness.ts";
import { formatTable, int } from "./lib/table.ts";

interface Size {
  text: number;
  structured: number;
  error?: string;
}
type Sizes = Record<string, Size>;

/** `--name value` pairs. */
function flag(name: string): string | undefined {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
}
const flags = { save: flag("save"), compare: flag("compare"), dump: flag("dump") };
const sizes: Sizes = {};
const dump: Record<string, unknown> = {};

const site = fixtures();
const server = await startServer();
const url = (path: string) => `${site.origin}/${path}`;

/** Calls a tool; the first call of each tool is the one counted, later ones only set the scene. */
async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolResult> {
  let result: ToolResult;
  try {
    result = await server.call(name, args);
  } catch (err) {
    // The client throws when structuredContent does not match the advertised outputSchema.
    const message = err instanceof Error ? err.message : String(err);
    sizes[name] ??= { text: 0, structured: 0, error: message.slice(0, 200) };
    console.error(`${name}: ${message.slice(0, 300)}`);
    return { content: [], isError: true };
  }
  if (!(name in sizes)) {
    sizes[name] = {
      text: textOf(result).length,
      structured: result.structuredContent ? JSON.stringify(result.structuredContent).length : 0,
      ...(result.isError ? { error: textOf(result).split("\n")[0].slice(0, 200) } : {}),
    };
    dump[name] = {
      args,
      text: textOf(result),
      structured: result.structuredContent,
      images: result.content.filter((c) => c.type === "image").length,
    };
    if (result.isError) console.error(`${name} failed: ${textOf(result).slice(0, 300)}`);
  }
  return result;
}

const sc = (r: ToolResult): Record<string, unknown> => (r.isError ? {} : structured(r));
const refIn = (r: ToolResult, role: string, name: string | RegExp) => refOf(sc(r), role, name);

try {
  await call("list_managed_profiles");
  const started = sc(await call("start_browser", { temporary: true }));
  const sessionId = String(started.session_id);
  await call("browser_status");
  await call("navigate_page", { url: url("index.html") });
  const snap = await call("snapshot_page");
  const reveal = refIn(snap, "button", "Show details");
  const name = refIn(snap, "textbox", "Name");
  await call("query_page", { locator: { role: "button", name: "Show details" } });
  await call("inspect_page");
  await call("take_screenshot");
  await call("evaluate_page", { expression: "document.title" });
  const clicked = sc(await call("click", { ref: reveal }));
  const interaction = String(clicked.interaction_id);
  await call("fill", { ref: name, value: "Ada" });
  await call("press_keys", { keys: "Enter" });
  await call("wait", { text: "Hello, Ada!" });
  await call("hover", { ref: reveal });
  await call("scroll", { dy: 100 });
  await call("batch", {
    steps: [{ tool: "click", args: { ref: reveal } }, { tool: "click", args: { ref: reveal } }],
  });

  const frames = sc(await call("list_source_frames", { interaction_id: interaction }));
  const firstFrame = (frames.frames as Array<{ frame_id: number }> | undefined)?.[0]?.frame_id ?? 1;
  await call("fetch_source_frames", { frame_ids: [firstFrame] });
  await call("resolve_temporal_range", { interaction_id: interaction });
  await call("temporal_debug_bundle", { interaction_id: interaction });
  await call("generate_artifacts", { interaction_id: interaction });
  await call("generate_region_filmstrip", {
    interaction_id: interaction,
    region: { x: 0, y: 0, width: 400, height: 200 },
  });
  await call("generate_temporal_video", { interaction_id: interaction });
  await call("query_browser_events");

  // Page state on the checkout fixture: the empty province list disables the submit button.
  await call("navigate_page", { url: url("checkout.html") });
  const load = String(sc(await call("click", { selector: "#load-provinces" })).interaction_id);
  await new Promise((r) => setTimeout(r, 1_200));
  await call("read_dom_at", { interaction_id: load, offset_ms: 1_000, scope: "form#checkout" });
  const disabled = sc(
    await call("bisect", {
      interaction_id: load,
      selector: "#submit",
      predicate: { kind: "propertyEquals", property: "disabled", equals: true },
    }),
  );
  const flipAt = (disabled.transitions as Array<{ at_ms: number }> | undefined)?.[0]?.at_ms ?? 0;
  await call("diff_dom", { from: { at_ms: Math.max(0, flipAt - 1_000) }, to: { at_ms: flipAt + 10 } });
  await call("find_element", { text: "Province is required" });
  await call("measure_layout", { at_ms: flipAt + 10, selectors: ["#submit", "#errors"] });
  await call("annotate", { at_ms: flipAt, label: "submit disabled" });
  await call("read_markers");

  await call("navigate_page", { url: url("form.html") });
  const form = await call("snapshot_page");
  await call("select_option", { ref: refIn(form, "combobox", "Fruit"), label: "Banana" });
  await call("upload_files", {
    selector: "#avatar",
    paths: [new URL("../fixtures/site/files/report.csv", import.meta.url).pathname],
  });
  await call("drag", { selector: "#drag-item", to: { selector: "#drop-zone" } });
  await call("set_viewport", { width: 800, height: 600 });
  await call("write_clipboard", { text: "hello" });
  await call("read_clipboard");
  await call("activate_page");

  await call("navigate_page", { url: url("dialogs.html") });
  await call("click", { selector: "#alert" });
  await call("handle_dialog", { action: "accept" });

  // DevTools parity: a fetched JSON's detail, emulation, storage, a route, a trace, a form, a PDF.
  await server.call("navigate_page", { url: url("network/index.html") });
  await server.call("click", { selector: "#load" });
  await server.call("wait", { text: "loaded", timeout_ms: 5_000 });
  const requests = sc(await server.call("query_browser_events", { kinds: ["request"], max_events: 200 }));
  const api =
    (requests.events as Array<{ data: { request_id?: string; resource_type?: string } }> | undefined)
      ?.findLast((e) => e.data.resource_type === "Fetch");
  await call("get_network_request", { request_id: api?.data.request_id ?? "missing", body: "summary" });
  await call("emulate", { network: "slow_3g", cpu_slowdown: 4 });
  await server.call("emulate", { clear: true });
  await call("cookies", { action: "list" });
  await call("web_storage", { action: "list" });
  const statePath = await Deno.makeTempFile({ prefix: "krometrail-bench-state-", suffix: ".json" });
  await call("save_storage_state", { path: statePath });
  await call("load_storage_state", { path: statePath });
  await Deno.remove(statePath).catch(() => {});
  await call("route_requests", { url: "**/api.json", action: "fulfill", json: { items: [] } });
  await call("list_routes");
  await call("unroute", { all: true });
  await call("save_pdf");
  await call("measure_performance", {
    mode: "navigate",
    url: url("performance/shift.html"),
    settle_ms: 1_000,
  });
  await server.call("navigate_page", { url: url("forms/signup.html") });
  await call("fill_form", {
    fields: [
      { selector: "#name", value: "Ada Lovelace" },
      { selector: "#country", value: "fr" },
      { selector: "#news", value: true },
      { selector: "#plan-pro", value: true },
      { selector: "#birthday", value: "1815-12-10" },
    ],
  });

  await call("navigate_page", { url: url("download.html") });
  const cursor = Number(sc(await call("list_downloads")).cursor ?? 0);
  await call("click", { selector: "#report" });
  await call("wait_for_download", { after: cursor });

  await call("reload_page");
  await call("go_back");
  await call("go_forward");
  await call("list_pages");
  const first = String(sc(await call("browser_status")).selected_page_id);
  const created = sc(await call("create_page", { url: url("index.html") }));
  await call("select_page", { page_id: first });
  await call("close_page", { page_id: String(created.page_id) });
  await call("stop_browser");
  await call("delete_session", { session_id: sessionId });

  const profile = await Deno.makeTempDir({ prefix: "krometrail-bench-attach-" });
  const chrome = await startDebugChrome(profile);
  try {
    await call("attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` });
    await call("stop_browser");
  } finally {
    chrome.child.kill("SIGKILL");
    await chrome.child.status;
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
} finally {
  await server.close();
  await site.close();
}

const total = (s: Sizes) =>
  Object.values(s).reduce((a, v) => ({ text: a.text + v.text, structured: a.structured + v.structured }), {
    text: 0,
    structured: 0,
  });
const names = Object.keys(sizes).sort();
const before: Sizes | undefined = flags.compare
  ? JSON.parse(await Deno.readTextFile(flags.compare))
  : undefined;
const cells = (s: Size | undefined) =>
  s ? [int(s.text), int(s.structured), int(s.text + s.structured)] : ["—", "—", "—"];
const header = before
  ? ["tool", "text before", "structured before", "total before", "text", "structured", "total"]
  : ["tool", "text", "structured", "total"];
const rows = [header];
for (const n of names) {
  rows.push([
    `${n}${sizes[n].error ? " (error)" : ""}`,
    ...(before ? cells(before[n]) : []),
    ...cells(sizes[n]),
  ]);
}
const sum = total(sizes);
rows.push(["TOTAL", ...(before ? cells({ ...total(before) }) : []), ...cells(sum)]);
console.log(formatTable(rows));
const failed = names.filter((n) => sizes[n].error);
if (failed.length > 0) {
  console.log(`\nfailed calls: ${failed.map((n) => `${n} (${sizes[n].error})`).join("; ")}`);
}
if (flags.save) await Deno.writeTextFile(flags.save, JSON.stringify(sizes, null, 2) + "\n");
if (flags.dump) await Deno.writeTextFile(flags.dump, JSON.stringify(dump, null, 2) + "\n");
