import { assert, assertEquals } from "../../assert.ts";
import { buildCatalogue, describeTool } from "../../../src/mcp/registry.ts";
import { PAGE_BYTE_LIMIT, PAGE_TOOL_LIMIT, paginate } from "../../../src/mcp/server.ts";
import { renderToolsDoc } from "../../../src/mcp/docs.ts";

const FIXED_NAMES = [
  "start_browser",
  "attach_browser",
  "browser_status",
  "stop_browser",
  "list_managed_profiles",
  "list_pages",
  "create_page",
  "select_page",
  "close_page",
  "navigate_page",
  "reload_page",
  "go_back",
  "go_forward",
  "inspect_page",
  "snapshot_page",
  "take_screenshot",
  "evaluate_page",
  "click",
  "fill",
  "press_keys",
];

Deno.test("the catalogue is name-sorted and has the control tools of the fixed surface", () => {
  const names = buildCatalogue().tools.map((t) => t.name);
  assertEquals(names, [...names].sort());
  for (const name of FIXED_NAMES) assert(names.includes(name), name);
});

Deno.test("pages hold at most 8 tools and 192 KiB, covering the catalogue once", () => {
  const paged = paginate(buildCatalogue(), "n");
  assertEquals(paged.pageStarts[0], 0);
  const ends = [...paged.pageStarts.slice(1), paged.descriptors.length];
  paged.pageStarts.forEach((start, i) => {
    const slice = paged.descriptors.slice(start, ends[i]);
    assert(slice.length >= 1 && slice.length <= PAGE_TOOL_LIMIT);
    assert(JSON.stringify(slice).length < PAGE_BYTE_LIMIT);
  });
});

Deno.test("every input schema is strict: unknown arguments are rejected", () => {
  for (const tool of buildCatalogue().tools) {
    const d = describeTool(tool);
    assertEquals(d.inputSchema.additionalProperties, false, tool.name);
    assertEquals(tool.input.safeParse({ definitely_unknown: 1 }).success, false, tool.name);
  }
});

Deno.test("docs/tools.md is generated from the registry and is current", async () => {
  const committed = await Deno.readTextFile(new URL("../../../docs/tools.md", import.meta.url));
  assertEquals(
    committed === renderToolsDoc(),
    true,
    "docs/tools.md is stale: run `deno task build --docs-only`",
  );
});
