import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, structured, textOf, withServer } from "./harness.ts";

interface FrameRow {
  frame_id: string;
  parent_frame_id?: string;
  name: string;
  main: boolean;
  same_origin: boolean | null;
  same_process: boolean;
  path?: string;
  url?: string;
}

interface Assets {
  counts: Record<string, number>;
  total: number;
  sample: Array<{ kind: string; url: string; frame_id: string }>;
  omitted: { source: number; presentation: number };
}

Deno.test({
  name: "inspect_page: frames tell apart by name and path where same-origin; assets are counted and hashed",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/frames.html` });
      // The cross-site frame is added by script; poll (bounded) until all five frames are listed.
      let frames: FrameRow[] = [];
      for (let i = 0; i < 40 && frames.length < 5; i++) {
        const inspected = structured(await server.call("inspect_page", { include: ["frames"] }));
        frames = (inspected.frames as { frames: FrameRow[] }).frames;
        if (frames.length < 5) await new Promise((r) => setTimeout(r, 200));
      }
      assertEquals(frames.length, 5, JSON.stringify(frames));
      const byName = (name: string) => {
        const f = frames.find((x) => x.name === name);
        assert(f, `frame ${name} listed: ${JSON.stringify(frames)}`);
        return f;
      };
      const main = frames[0];
      assertEquals(main.main, true);
      assertEquals(main.path, "/frames.html");
      assertEquals(main.parent_frame_id, undefined);
      assertMatch(main.frame_id, /^[0-9A-F]{8,}$/);

      const panel = byName("same-origin-panel");
      assertEquals([panel.same_origin, panel.same_process], [true, true]);
      assertEquals(panel.path, "/index.html", "real path, no query or fragment");
      assertEquals(panel.parent_frame_id, main.frame_id);

      const srcdoc = byName("inline doc"); // the tab in the author's name is gone
      assertEquals([srcdoc.same_origin, srcdoc.same_process], [true, true]);
      assertEquals(srcdoc.path, "about:srcdoc");

      const opaque = byName("opaque-data");
      assertEquals([opaque.same_origin, opaque.same_process], [false, true]);
      assertEquals(opaque.path, undefined);
      assertEquals(opaque.url, "data:<redacted>");

      const cross = byName("cross-site");
      assertEquals([cross.same_origin, cross.same_process], [false, false]);
      assertEquals(cross.path, undefined);
      assertMatch(String(cross.url), /^http:\/\/localhost:\d+\/~[0-9a-f]{8}$/);
      assertEquals(new Set(frames.map((f) => f.frame_id)).size, 5, "frame ids are distinct");

      const concise = structured(await server.call("inspect_page", { include: ["assets"] }));
      const assets = concise.assets as Assets;
      assert(assets.counts.image >= 1 && assets.counts.script >= 1 && assets.counts.stylesheet >= 1, "kinds");
      assertEquals(assets.counts.document, 4, "main and the three same-process frame documents");
      assertEquals(Object.keys(assets.counts), [
        "document",
        "script",
        "stylesheet",
        "image",
        "font",
        "other",
      ]);
      assertEquals(Object.values(assets.counts).reduce((a, b) => a + b, 0), assets.total);
      assert(assets.sample.length <= 8, "concise sample is small");
      assertEquals(assets.omitted.source, 0);
      assertEquals(assets.omitted.presentation, assets.total - assets.sample.length);
      const text = JSON.stringify(concise.assets);
      for (const leak of ["compact", "dot.svg", "frames.js", "Opaque data frame"]) {
        assert(!text.includes(leak), `asset rows leak ${leak}`);
      }
      const full = structured(
        await server.call("inspect_page", { include: ["assets", "frames"], detail: "full" }),
      );
      const all = full.assets as Assets;
      assertEquals(all.sample.length, all.total, "full returns every acquired row");
      assertEquals(all.omitted, { source: 0, presentation: 0 });
      assertEquals((full.frames as { frames: FrameRow[] }).frames.length, 5);
      assertMatch(textOf(await server.call("inspect_page", { include: ["frames"] })), /"same-origin-panel"/);
    }, { browser: { headless: true } }),
});

Deno.test({
  name: "clipboard writes are confirmed interactions; activate_page is the one-shot exception to preserve",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/index.html` });
      const text = "krometrail ✓ clip\nsecond line";
      const written = structured(await server.call("write_clipboard", { text, detail: "expanded" }));
      assertEquals(written.status, "ok");
      assertEquals(written.clipboard_write, {
        confirmed: true,
        chars: text.length,
        read_back_chars: text.length,
      });
      const record = written.interaction as { operation: string; params: Record<string, unknown> };
      assertEquals(record.operation, "write_clipboard");
      assertEquals(record.params.text_chars, text.length);
      assertEquals((record.params.clipboard_write as { confirmed: boolean }).confirmed, true);
      assert(!JSON.stringify(record).includes("second line"), "the record keeps no clipboard text");
      const read = structured(await server.call("read_clipboard"));
      assertEquals([read.text, read.length, read.truncated], [text, text.length, false]);
      assertEquals(
        errorCode(await server.call("write_clipboard", { text: "x".repeat(100_001) })),
        "invalid_arguments",
      );

      // Preserve: the new page opens in the background; selecting p1 again switches no tab.
      const created = structured(await server.call("create_page", { url: `${site.origin}/index.html` }));
      const p2 = String(created.page_id);
      await server.call("select_page", { page_id: "p1" });
      assertEquals(
        errorCode(await server.call("click", { selector: "#reveal", page_id: p2 })),
        "target_hidden",
      );

      const activated = await server.call("activate_page", { page_id: p2 });
      const obs = structured(activated);
      assertEquals(obs.status, "ok");
      assertEquals(obs.operation, "activate_page");
      assert(obs.screenshot, "activation returns live evidence");
      assertEquals(
        activated.content.filter((c) => c.type === "image").length,
        1,
        "one viewport image by default",
      );
      const quiet = await server.call("activate_page", { page_id: p2, inline_images: false });
      assertEquals(quiet.content.filter((c) => c.type === "image").length, 0);

      const pages = structured(await server.call("list_pages"));
      assertEquals(pages.selected_page_id, "p1", "activation does not move the logical selection");
      assertEquals(structured(await server.call("click", { selector: "#reveal", page_id: p2 })).status, "ok");
      // One-shot: the policy still holds, so the now-hidden p1 refuses pointer work.
      assertEquals(
        errorCode(await server.call("click", { selector: "#reveal", page_id: "p1" })),
        "target_hidden",
      );
      const status = structured(await server.call("browser_status"));
      assertEquals((status.capture as { configured: { focus: string } }).configured.focus, "preserve");

      // An opaque document cannot hold clipboard permission: a structured refusal with a next step.
      const blank = structured(await server.call("create_page", {}));
      const refused = await server.call("read_clipboard", { page_id: String(blank.page_id) });
      assertEquals(errorCode(refused), "clipboard_unavailable");
      assertMatch(textOf(refused), /navigate_page/);
    }, { browser: { headless: true, focus: "preserve" } }),
});
