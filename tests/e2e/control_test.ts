import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, fixtures, refOf, startServer, structured, textOf, withServer } from "./harness.ts";

function processesMentioning(fragment: string): number {
  const out = new Deno.Command("pgrep", { args: ["-f", fragment], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).trim().split("\n").filter(Boolean).length;
}

Deno.test({
  name:
    "start, navigate, snapshot, click by ref, fill by label, press Enter: observation shows the new state",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const server = await startServer();
    try {
      const started = structured(await server.call("start_browser", { headless: true }));
      assertEquals(started.running, true);
      assertEquals((started.profile as { kind: string; name: string }).name, "default");
      assertEquals(
        (started.capture as { configured: { every_nth_frame: number } }).configured.every_nth_frame,
        1,
      );

      const nav = structured(await server.call("navigate_page", { url: `${site.origin}/index.html` }));
      assertEquals(nav.status, "ok");
      assertMatch(String(nav.interaction_id), /^s\d+-i\d+$/);
      assertEquals((nav.navigation as { navigated: boolean }).navigated, true);
      assertEquals((nav.page as { url: string }).url, `${site.origin}/index.html`);
      const shot = nav.screenshot as {
        uri: string;
        width: number;
        height: number;
        mime_type: string;
        source: { kind: string; ordinal?: number };
      };
      assertMatch(shot.uri, /^krometrail:\/\/evidence\/screenshots\/.+\.(png|jpg)$/);
      assert(shot.width > 0 && shot.height > 0);
      // A screenshot taken after the rendezvous (a recorded frame cannot prove it shows the new state);
      // JPEG while capture runs, comparable with the recorded frames.
      const jpeg = shot.mime_type === "image/jpeg";
      assertEquals([shot.source.kind, shot.mime_type], ["screenshot", "image/jpeg"]);

      const raw = await server.client.request({ method: "resources/read", params: { uri: shot.uri } }) as {
        ttlMs?: number;
      };
      assertEquals(raw.ttlMs, 0, "resource reads are not cached");
      const resource = await server.client.readResource({ uri: shot.uri });
      const blob = resource.contents[0] as { blob?: string; mimeType?: string };
      assertEquals(blob.mimeType, shot.mime_type);
      assert(
        atob(blob.blob ?? "").startsWith(jpeg ? "\xff\xd8" : "\x89PNG"),
        "resource bytes match their type",
      );

      const snapResult = await server.call("snapshot_page");
      const snap = structured(snapResult);
      const showRef = refOf(snap, "button", "Show details");
      assertMatch(textOf(snapResult), /button "Show details"/);
      // Concise ranking: editable fields come before other targets, links last.
      const roles = (snap.targets as Array<{ role: string }>).map((t) => t.role);
      assertEquals(roles[0], "textbox");
      assertEquals(roles[roles.length - 1], "link");

      const clicked = structured(await server.call("click", { ref: showRef }));
      assertEquals(clicked.status, "ok");
      assertEquals((clicked.target as { ref: string }).ref, showRef);
      const clickShot = clicked.screenshot as { source: { kind: string } };
      const afterClick = clicked.snapshot as { targets?: Array<{ role: string; name: string }> };
      assert(
        afterClick.targets?.some((t) => t.role === "button" && t.name === "Hide details"),
        "button text flipped",
      );

      const filled = structured(
        await server.call("fill", { locator: { label: "Name" }, value: "Ada Lovelace" }),
      );
      assertEquals(filled.status, "ok");
      const value = await server.call("evaluate_page", {
        expression: "document.getElementById('name').value",
      });
      assertEquals(structured(value).value, "Ada Lovelace");

      const pressed = structured(await server.call("press_keys", { keys: "Enter" }));
      const kinds = [clickShot, filled.screenshot, pressed.screenshot].map((x) =>
        (x as { source: { kind: string } }).source.kind
      );
      assertEquals(kinds, ["screenshot", "screenshot", "screenshot"], "post-action images are screenshots");
      assertEquals(pressed.status, "ok");
      const outcomes = pressed.semantic_outcomes as Array<{ role: string; text: string }>;
      assert(
        outcomes.some((o) => o.role === "status" && o.text === "Hello, Ada Lovelace!"),
        JSON.stringify(outcomes),
      );

      // A second observation of an unchanged page reuses the snapshot generation.
      const again = structured(await server.call("press_keys", { keys: "Shift" }));
      const marker = again.snapshot as { unchanged?: boolean; generation?: number; target_count?: number };
      assertEquals(marker.unchanged, true);
      assert((marker.target_count ?? 0) > 0);

      const expanded = structured(await server.call("click", { ref: showRef, detail: "expanded" }));
      assert(expanded.interaction, "expanded echoes the interaction record");
      const status = structured(await server.call("browser_status"));
      assertEquals(status.running, true);
      assertEquals(status.pages_with_open_dialog, []);
    } finally {
      await server.close();
      await site.close();
    }
    // Closing the client shuts the server down and closes the Chrome it launched.
    for (let i = 0; i < 50 && processesMentioning(server.dataDir) > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(processesMentioning(server.dataDir), 0, "no Chrome left running with the test profile");
  },
});

Deno.test({
  name: "a ref whose element was replaced fails with stale_ref; a new snapshot gives a working ref",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/replace.html` });
      const snap = structured(await server.call("snapshot_page"));
      const oldRef = refOf(snap, "button", "Replace me");
      const replaceRef = refOf(snap, "button", "Replace the button");
      // A later snapshot of the same document keeps refs while the node lives.
      assertEquals(refOf(structured(await server.call("snapshot_page")), "button", "Replace me"), oldRef);

      const replaced = structured(await server.call("click", { ref: replaceRef }));
      const after = replaced.snapshot as {
        unchanged?: boolean;
        targets?: Array<{ ref: string; name: string }>;
      };
      assertEquals(after.unchanged, undefined, "a replaced target invalidates the reused snapshot");
      const newRef = after.targets?.find((t) => t.name === "Replace me")?.ref;
      assert(newRef && newRef !== oldRef, "the observation carries the replacement's new ref");
      const stale = await server.call("click", { ref: oldRef });
      assertEquals(stale.isError, true);
      assertEquals(errorCode(stale), "stale_ref");
      assertMatch(textOf(stale), /snapshot_page/);

      const fresh = refOf(structured(await server.call("snapshot_page")), "button", "Replace me");
      assert(fresh !== oldRef);
      assertEquals(structured(await server.call("click", { ref: fresh })).status, "ok");

      // Navigation replaces the document: every old ref is stale.
      await server.call("navigate_page", { url: `${site.origin}/replace.html` });
      assertEquals(errorCode(await server.call("click", { ref: fresh })), "stale_ref");
    }, { browser: {} }),
});

Deno.test({
  name: "pages: create, select, popups adopted with their opener, history, close, screenshots",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/popup.html` });
      const opened = structured(
        await server.call("click", { locator: { role: "button", name: "Open popup" } }),
      );
      const newPages = opened.new_pages as Array<{ page_id: string; opener_page_id?: string }> | undefined;
      assert(newPages && newPages.length === 1, `popup reported: ${JSON.stringify(opened)}`);
      assertEquals(newPages[0].opener_page_id, "p1");

      const created = structured(await server.call("create_page", { url: `${site.origin}/heavy.html` }));
      assertEquals(created.selected, true);
      const listed = structured(await server.call("list_pages"));
      assertEquals((listed.pages as unknown[]).length, 3);
      assertEquals(listed.selected_page_id, created.page_id);

      await server.call("select_page", { page_id: "p1" });
      await server.call("navigate_page", { url: `${site.origin}/index.html` });
      const back = structured(await server.call("go_back"));
      assertEquals((back.page as { url: string }).url, `${site.origin}/popup.html`);
      const forward = structured(await server.call("go_forward"));
      assertEquals((forward.page as { url: string }).url, `${site.origin}/index.html`);
      const reloaded = structured(await server.call("reload_page"));
      assertEquals((reloaded.navigation as { new_document: boolean }).new_document, true);
      // Pages restored from the back/forward cache fire no load again; history moves still finish at once.
      await server.call("navigate_page", { url: `${site.origin}/form.html` });
      for (
        const [tool, path] of [
          ["go_back", "index.html"],
          ["go_forward", "form.html"],
          ["go_back", "index.html"],
        ]
      ) {
        const moved = await server.call(tool, { timeout_ms: 5_000 });
        assert(!moved.isError, `${tool} from the back/forward cache: ${textOf(moved)}`);
        assertEquals((structured(moved).page as { url: string }).url, `${site.origin}/${path}`);
      }

      const full = await server.call("take_screenshot", {
        full_page: true,
        page_id: String(created.page_id),
      });
      const fullShot = structured(full);
      assertEquals(fullShot.mode, "full_page");
      assert((fullShot.height as number) > 2000, `full page height ${fullShot.height}`);
      assertEquals(
        full.content.filter((c) => c.type === "image").length,
        1,
        "explicit screenshots inline one image",
      );
      const element = structured(
        await server.call("take_screenshot", {
          locator: { role: "button", name: "Show details" },
          inline_images: false,
        }),
      );
      assertEquals(element.mode, "element");
      assert((element.width as number) < 300);
      const region = structured(
        await server.call("take_screenshot", { region: { x: 0, y: 0, width: 200, height: 100 } }),
      );
      assertEquals([region.width, region.height], [200, 100]);

      const inspected = structured(await server.call("inspect_page"));
      assertEquals((inspected.history as { can_go_back: boolean }).can_go_back, true);

      assertEquals(
        structured(await server.call("close_page", { page_id: String(created.page_id) })).closed_page_id,
        created.page_id,
      );
      assertEquals(
        errorCode(await server.call("select_page", { page_id: String(created.page_id) })),
        "page_closed",
      );
      const stopped = structured(await server.call("stop_browser"));
      assertEquals(stopped.closed_browser, true);
      assertEquals(errorCode(await server.call("list_pages")), "no_browser_session");
      assertEquals(structured(await server.call("stop_browser")).stopped, false, "stop is idempotent");
    }, { browser: {} }),
});

Deno.test({
  name: "focus preserve: new pages open in the background and pointer work on them fails as target_hidden",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      const status = structured(await server.call("browser_status"));
      assertEquals((status.capture as { configured: { focus: string } }).configured.focus, "preserve");
      await server.call("navigate_page", { url: `${site.origin}/index.html` });
      const created = structured(await server.call("create_page", { url: `${site.origin}/index.html` }));
      const hidden = await server.call("click", { selector: "#reveal", page_id: String(created.page_id) });
      assertEquals(errorCode(hidden), "target_hidden");
      // The visible page still works.
      assertEquals(
        structured(await server.call("click", { selector: "#reveal", page_id: "p1" })).status,
        "ok",
      );
    }, { browser: { focus: "preserve" } }),
});

Deno.test({
  name: "dialogs are state: a click that opens one returns, status names it, handle_dialog resolves it",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/dialogs.html` });
      assertEquals(errorCode(await server.call("handle_dialog", { action: "accept" })), "dialog_not_found");

      const clicked = structured(await server.call("click", { selector: "#alert" }));
      assertEquals((clicked.dialog as { open: boolean; type: string }).type, "alert");
      const status = structured(await server.call("browser_status"));
      assertEquals(status.pages_with_open_dialog, [{ page_id: "p1", dialog: "alert" }]);
      assertEquals(errorCode(await server.call("snapshot_page")), "dialog_open");
      const handled = structured(await server.call("handle_dialog", { action: "accept" }));
      assertEquals((handled.dialog as { open: boolean }).open, false);
      const outcomes = handled.semantic_outcomes as Array<{ text: string }>;
      assertEquals(outcomes[0].text, "alert closed");

      await server.call("click", { selector: "#confirm" });
      const dismissed = structured(await server.call("handle_dialog", { action: "dismiss" }));
      assertEquals((dismissed.semantic_outcomes as Array<{ text: string }>)[0].text, "cancelled");

      await server.call("click", { selector: "#prompt" });
      const answered = structured(
        await server.call("handle_dialog", { action: "accept", prompt_text: "Ada" }),
      );
      assertEquals((answered.semantic_outcomes as Array<{ text: string }>)[0].text, "name: Ada");
    }, { browser: {} }),
});
