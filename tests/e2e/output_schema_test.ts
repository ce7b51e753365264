import type { z } from "zod";
import { assert, assertEquals } from "../assert.ts";
import { OUTPUT_SCHEMAS } from "../../src/mcp/output_schemas.ts";
import {
  e2e,
  errorCode,
  refOf,
  type ServerHandle,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";

type Listed = { name: string; outputSchema?: Record<string, unknown> };

/** Every listed tool declares an outputSchema: an open object (its fields are in docs/tools.md). */
async function checkListing(server: ServerHandle): Promise<void> {
  const tools = (await server.client.listTools()).tools as Listed[];
  assert(tools.length >= 40, `${tools.length} tools listed`);
  for (const tool of tools) {
    assert(tool.outputSchema, `${tool.name} declares an outputSchema`);
    assertEquals(tool.outputSchema, { type: "object" }, `${tool.name}: an open object root`);
  }
}

/**
 * A call the client accepted (it validates structuredContent against the advertised schema and throws
 * on a mismatch), checked again against the full schema behind it, required fields included.
 */
async function call(server: ServerHandle, name: string, args: Record<string, unknown> = {}) {
  const result: ToolResult = await server.call(name, args);
  assert(!result.isError, `${name} failed: ${textOf(result).slice(0, 300)}`);
  const schema: z.ZodObject | undefined = (OUTPUT_SCHEMAS as Record<string, z.ZodObject>)[name];
  assert(schema, `${name} has an output schema`);
  const checked = schema.safeParse(structured(result));
  assert(checked.success, `${name}: ${checked.error?.issues[0]?.path.join(".")} ${checked.error?.message}`);
  return structured(result);
}

Deno.test({
  name: "outputSchema: every tool declares one; results match it in full; error results are not validated",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await checkListing(server);
      await call(server, "navigate_page", { url: `${site.origin}/index.html`, inline_images: false });
      const snap = await call(server, "snapshot_page");
      const reveal = refOf(snap, "button", "Show details");
      const clicked = await call(server, "click", { ref: reveal, inline_images: false });
      const interaction = String(clicked.interaction_id);
      await call(server, "fill", { ref: refOf(snap, "textbox", "Name"), value: "Ada", inline_images: false });
      await call(server, "query_page", { locator: { role: "button", name: "Greet" } });
      await call(server, "inspect_page");
      await call(server, "take_screenshot", { inline_images: false });
      await call(server, "evaluate_page", { expression: "document.title" });
      await call(server, "wait", { text: "Details are visible" });
      await call(server, "batch", { steps: [{ tool: "press_keys", args: { keys: "Tab" } }] });
      await call(server, "list_pages");
      await call(server, "browser_status");
      const frames = await call(server, "list_source_frames", { interaction_id: interaction });
      const first = (frames.frames as Array<{ frame_id: number }>)[0];
      assert(first, "the click's range has frames");
      await call(server, "fetch_source_frames", { frame_ids: [first.frame_id], inline_images: false });
      await call(server, "resolve_temporal_range", { interaction_id: interaction });
      await call(server, "query_browser_events");
      await call(server, "generate_artifacts", { interaction_id: interaction, inline_images: false });
      await call(server, "temporal_debug_bundle", { interaction_id: interaction, inline_images: false });

      // An error result carries {error}, not the tool's fields; the client passes it through.
      const failed = await server.call("click", { ref: "s9999p9g9n9" });
      assert(failed.isError, "a ref of another session fails");
      assert(errorCode(failed), `the error result carries {error}: ${textOf(failed).slice(0, 200)}`);
      await call(server, "stop_browser");
    }, { browser: {} }),
});

Deno.test({
  name: "outputSchema: a 2025-06-18 client gets the same schemas and its calls validate",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await checkListing(server);
      await call(server, "navigate_page", { url: `${site.origin}/index.html`, inline_images: false });
      const snap = await call(server, "snapshot_page");
      await call(server, "click", { ref: refOf(snap, "button", "Show details"), inline_images: false });
    }, { browser: {}, protocol: "2025-06-18" }),
});

Deno.test({
  name: "structured content: an observation does not repeat its page, frame rows not their session",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const url = `${site.origin}/index.html`;
      const nav = await call(server, "navigate_page", { url, inline_images: false });
      assertEquals((nav.page as { url: string }).url, url, "the page says where the observation is");
      const navigation = nav.navigation as Record<string, unknown>;
      assertEquals(navigation.navigated, true);
      assertEquals(navigation.url, undefined, "navigation.url, which is page.url, is not repeated");
      const snapshot = nav.snapshot as Record<string, unknown>;
      assert(Array.isArray(snapshot.targets), "the snapshot keeps its target index (refs)");
      assertEquals(
        [snapshot.page_id, snapshot.url],
        [undefined, undefined],
        "nor the snapshot's page and url",
      );
      const clicked = await call(server, "click", {
        ref: refOf(snapshot, "button", "Show details"),
        inline_images: false,
      });
      const listed = await call(server, "list_source_frames", { interaction_id: clicked.interaction_id });
      const rows = listed.frames as Array<Record<string, unknown>>;
      assert(rows.length > 0, "frames listed");
      assert(typeof listed.session_id === "string", "the session is said once");
      for (const row of rows) {
        assertEquals(row.session_id, undefined, `frame #${row.frame_id} does not repeat the session`);
        assert(String(row.uri).includes(String(listed.session_id)), "its resource uri still names it");
      }
    }, { browser: {} }),
});
