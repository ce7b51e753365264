/**
 * observe_live over stdio in real Chromium: the page as it is now (screenshot resource plus one inline
 * image by default, target index, URL, title, dialog state) with no action and no interaction record;
 * a page with an open dialog is described, not pictured; a stuck page answers within its deadline.
 */
import { assert, assertEquals } from "../assert.ts";
import { OUTPUT_SCHEMAS } from "../../src/mcp/output_schemas.ts";
import {
  e2e,
  errorCode,
  type ServerHandle,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";

/** Long enough for a healthy observation on a loaded 2-core box, short enough to keep the stuck call quick. */
const DEADLINE_MS = 5_000;
const SLACK_MS = 2_000;

function size(result: ToolResult): { text: number; structured: number } {
  return {
    text: textOf(result).length,
    structured: result.structuredContent ? JSON.stringify(result.structuredContent).length : 0,
  };
}

async function clickId(server: ServerHandle, selector: string): Promise<string> {
  const clicked = structured(await server.call("click", { selector }));
  return String(clicked.interaction_id);
}

Deno.test({
  name: "observe_live: the live page on request, without an interaction; dialogs and stuck pages",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/dialogs.html` });
      const before = await clickId(server, "#confirm");
      await server.call("handle_dialog", { action: "dismiss" });

      const live = await server.call("observe_live", {});
      assert(!live.isError, textOf(live));
      const checked = OUTPUT_SCHEMAS.observe_live.safeParse(structured(live));
      assert(checked.success, checked.error?.message);
      const s = structured(live) as {
        page: { page_id: string; url: string; title: string };
        dialog: { open: boolean };
        screenshot: { uri: string; mime_type: string; width: number; height: number };
        snapshot: { targets: Array<{ role: string; name: string }> };
      };
      assertEquals(s.page.title, "Dialogs");
      assertEquals(s.page.url, `${site.origin}/dialogs.html`);
      assertEquals(s.dialog.open, false);
      assert(s.snapshot.targets.some((t) => t.role === "button" && t.name === "Show alert"), textOf(live));
      assert(s.screenshot.width > 0 && s.screenshot.height > 0);
      const shown = s.snapshot as unknown as Record<string, unknown>;
      assertEquals([shown.page_id, shown.url], [undefined, undefined], "the page is said once, in page");
      assertEquals(textOf(live).split(s.page.url).length, 2, "the text names the URL once");
      const inline = live.content.filter((c) => c.type === "image");
      assertEquals(inline.length, 1, "one inline image by default (an explicit visual operation)");
      assertEquals(inline[0].mimeType, s.screenshot.mime_type);
      const resource = await server.client.readResource({ uri: s.screenshot.uri });
      assert((resource.contents[0] as { blob?: string }).blob, "the screenshot is a readable resource");
      const measured = size(live);
      console.error(
        `observe_live concise response: ${measured.text} text + ${measured.structured} structured chars`,
      );
      assert(measured.text + measured.structured < 6_000, JSON.stringify(measured));

      // No interaction was recorded: the next action's id follows the previous action's.
      const after = await clickId(server, "#confirm");
      await server.call("handle_dialog", { action: "dismiss" });
      const ordinal = (id: string) => Number(id.split("-i")[1]);
      assertEquals(ordinal(after), ordinal(before) + 2, `${before} then ${after} (handle_dialog between)`);

      const lean = await server.call("observe_live", { inline_images: false });
      assert(!lean.isError, textOf(lean));
      assertEquals(lean.content.filter((c) => c.type === "image").length, 0);
      assert(structured(lean).screenshot, "the resource is still written");

      // An open dialog: its state is the observation; nothing is pictured behind it.
      await server.call("click", { selector: "#alert" });
      const blocked = await server.call("observe_live", {});
      assert(!blocked.isError, textOf(blocked));
      const b = structured(blocked) as {
        dialog: { open: boolean; type: string; message: string };
        screenshot?: unknown;
        warnings: string[];
      };
      assertEquals(b.dialog, { open: true, type: "alert", message: "Saved!" });
      assertEquals(b.screenshot, undefined);
      assert(b.warnings.some((w) => w.startsWith("dialog_open_blocks_observation")), b.warnings.join("; "));
      await server.call("handle_dialog", { action: "accept" });

      // A stuck main thread: a bounded answer, and a structured error when it is one.
      await server.call("navigate_page", { url: `${site.origin}/stuck.html` });
      await server.call("click", { selector: "#freeze-soon" });
      const started = performance.now();
      const stuck = await server.call("observe_live", {});
      const elapsed = performance.now() - started;
      assert(
        elapsed <= DEADLINE_MS + SLACK_MS,
        `observe_live took ${Math.round(elapsed)} ms on a stuck page`,
      );
      if (stuck.isError) assertEquals(errorCode(stuck), "page_unresponsive", textOf(stuck));
      else assert((structured(stuck).warnings as string[] | undefined)?.length, textOf(stuck));
    }, { browser: {}, env: { KROMETRAIL_TOOL_DEADLINE_MS: String(DEADLINE_MS) } }),
});
