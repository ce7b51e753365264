import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

async function evaluate(server: ServerHandle, expression: string): Promise<unknown> {
  const result = await server.call("evaluate_page", { expression });
  if (result.isError) throw new Error(`evaluate failed: ${textOf(result)}`);
  return structured(result).value;
}

function imageCount(result: { content: Array<{ type: string }> }): number {
  return result.content.filter((c) => c.type === "image").length;
}

type Pos = { x: number; y: number };

Deno.test({
  name:
    "select_option by value, label and index; multi-select; unknown option and non-select fail with guidance",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/form.html` });

      const byValue = structured(await server.call("select_option", { selector: "#fruit", value: "b" }));
      assertEquals(byValue.status, "ok");
      assertEquals(byValue.selected, [{ index: 2, value: "b", label: "Banana" }]);
      assertEquals(await evaluate(server, "document.getElementById('fruit').value"), "b");
      assertEquals(await evaluate(server, "window.__events.join(' ')"), "input:fruit change:fruit");
      assertEquals(await evaluate(server, "document.getElementById('fruit-chosen').textContent"), "fruit: b");

      await server.call("select_option", { locator: { label: "Fruit" }, label: "Cherry" });
      assertEquals(await evaluate(server, "document.getElementById('fruit').value"), "c");
      await server.call("select_option", { selector: "#fruit", index: 1 });
      assertEquals(await evaluate(server, "document.getElementById('fruit').value"), "a");

      const multi = structured(
        await server.call("select_option", { selector: "#colors", value: ["green", "black"] }),
      );
      assertEquals((multi.selected as Array<{ value: string }>).map((o) => o.value), ["green", "black"]);
      assertEquals(
        await evaluate(server, "[...document.getElementById('colors').selectedOptions].map((o) => o.value)"),
        ["green", "black"],
      );

      const unknown = await server.call("select_option", { selector: "#fruit", label: "Mango" });
      assertEquals(unknown.isError, true);
      assertEquals(errorCode(unknown), "option_not_found");
      const details = (structured(unknown).error as { details: Record<string, unknown> }).details;
      assertEquals(details.total_options, 5);
      const available = details.available_options as Array<{ label: string; value: string }>;
      assertEquals(available.map((o) => o.label), ["Choose one", "Apple", "Banana", "Cherry", "Durian"]);
      assertMatch(textOf(unknown), /Mango/);
      assertEquals(
        await evaluate(server, "document.getElementById('fruit').value"),
        "a",
        "a failed choice changes nothing",
      );

      assertEquals(
        errorCode(await server.call("select_option", { selector: "#fruit", value: "d" })),
        "option_disabled",
      );
      assertEquals(
        errorCode(await server.call("select_option", { selector: "#fruit", value: ["a", "b"] })),
        "invalid_arguments",
      );
      const notSelect = await server.call("select_option", { selector: "#agree", value: "on" });
      assertEquals(errorCode(notSelect), "not_a_select");
      assertMatch(textOf(notSelect), /click/);
      assertEquals(
        errorCode(await server.call("select_option", { selector: "#fruit", value: "a", label: "Apple" })),
        "invalid_arguments",
      );

      // fill on native date/time inputs fires bubbled input and change (checked here as well).
      await evaluate(server, "window.__events = []");
      assertEquals(
        structured(await server.call("fill", { locator: { label: "Meeting date" }, value: "2026-03-14" }))
          .status,
        "ok",
      );
      await server.call("fill", { selector: "#at", value: "09:30" });
      assertEquals(await evaluate(server, "document.getElementById('when').value"), "2026-03-14");
      assertEquals(await evaluate(server, "document.getElementById('at').value"), "09:30");
      assertEquals(
        await evaluate(server, "window.__events.join(' ')"),
        "input:when change:when input:at change:at",
      );
    }, { browser: {} }),
});

Deno.test({
  name: "upload_files through a styled label and a button's field; path, ambiguity and privacy rules hold",
  ...e2e,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "krometrail-upload-" });
    const file = `${dir}/portrait.txt`;
    await Deno.writeTextFile(file, "hello upload");
    await Deno.writeTextFile(`${dir}/notes.txt`, "second file");
    const link = `${dir}/alias.txt`;
    await Deno.symlink(file, link);
    try {
      await withServer(async (server, site) => {
        await server.call("navigate_page", { url: `${site.origin}/form.html` });
        await evaluate(server, "window.__events = []");

        // The visible affordance is the styled label; the native input is visually hidden.
        const uploaded = await server.call("upload_files", {
          locator: { text: "Choose avatar" },
          paths: [link],
          detail: "expanded",
        });
        const up = structured(uploaded);
        assertEquals(up.status, "ok", textOf(uploaded));
        const upload = up.upload as { file_input: string; file_count: number; file_names: string[] };
        assertEquals(upload.file_input, "label");
        // The symlink is canonicalized: the browser gets the real file.
        assertEquals(upload.file_names, ["portrait.txt"]);
        assertEquals(
          await evaluate(server, "document.getElementById('avatar-name').textContent"),
          "portrait.txt",
        );
        assertEquals(
          await evaluate(server, "document.getElementById('avatar').files[0].text()"),
          "hello upload",
        );
        assertEquals(await evaluate(server, "window.__events.join(' ')"), "input:avatar change:avatar");
        // The interaction record keeps basenames and a count, never the full path.
        const record = up.interaction as { params: Record<string, unknown> };
        assertEquals(record.params.file_count, 1);
        assertEquals(record.params.file_names, ["portrait.txt"]);
        assert(!JSON.stringify(up).includes(dir), "no full path in the result");

        // A button next to a hidden input: resolved through its field container; multiple files.
        const docs = structured(
          await server.call("upload_files", { selector: "#attach", paths: [file, `${dir}/notes.txt`] }),
        );
        assertEquals((docs.upload as { file_input: string }).file_input, "container");
        assertEquals(
          await evaluate(server, "document.getElementById('docs-names').textContent"),
          "portrait.txt, notes.txt",
        );

        const missing = await server.call("upload_files", {
          selector: "#avatar",
          paths: [`${dir}/missing.txt`],
        });
        assertEquals(errorCode(missing), "upload_path_invalid");
        const missingErr = structured(missing).error as {
          affected: { argument: string };
          details: { index: number; problem: string };
        };
        assertEquals(missingErr.details, { index: 0, problem: "not_found" });
        assertEquals(missingErr.affected.argument, "paths.0");

        const directory = await server.call("upload_files", { selector: "#avatar", paths: [file, dir] });
        assertEquals(errorCode(directory), "upload_path_invalid");
        assertEquals(
          (structured(directory).error as { details: { index: number; problem: string } }).details,
          { index: 1, problem: "directory" },
        );
        assertMatch(textOf(directory), /paths\[1\].*is a directory/);

        const ambiguous = await server.call("upload_files", { selector: "#attach-either", paths: [file] });
        assertEquals(errorCode(ambiguous), "file_input_ambiguous");
        assertMatch(textOf(ambiguous), /input\[type=file\]/);
        const none = await server.call("upload_files", { selector: "#far-button", paths: [file] });
        assertEquals(errorCode(none), "file_input_not_found");
        assertEquals(
          errorCode(await server.call("upload_files", { selector: "#avatar", paths: [file, file] })),
          "invalid_arguments",
          "a single-file input refuses two paths",
        );
        assertEquals(await evaluate(server, "document.getElementById('avatar').files.length"), 1);
      }, { browser: {} });
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "scroll by offset reports positions and carries a viewport image; scroll to a target centres it",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/form.html` });

      const down = await server.call("scroll", { dy: 400 });
      const downS = structured(down);
      assertEquals(downS.status, "ok", textOf(down));
      const s1 = downS.scroll as { mode: string; page: { before: Pos; after: Pos }; moved: boolean };
      assertEquals(s1.mode, "by_offset");
      assertEquals(s1.page.before, { x: 0, y: 0 });
      assertEquals(s1.page.after, { x: 0, y: 400 });
      assertEquals(await evaluate(server, "window.scrollY"), 400);
      assertEquals(imageCount(down), 1, "scroll observations inline one viewport image by default");
      assertEquals(imageCount(await server.call("scroll", { dy: -100, inline_images: false })), 0);
      assertEquals(await evaluate(server, "window.scrollY"), 300);

      const far = structured(await server.call("scroll", { selector: "#far-button" }));
      const s2 = far.scroll as {
        mode: string;
        page: { before: Pos; after: Pos };
        target_in_viewport: boolean;
      };
      assertEquals(s2.mode, "to_target");
      assertEquals(s2.page.before.y, 300);
      assert(s2.page.after.y > 2000, `page scrolled far down: ${JSON.stringify(s2.page)}`);
      assertEquals(s2.target_in_viewport, true);
      const centre = await evaluate(
        server,
        "(() => { const r = document.getElementById('far-button').getBoundingClientRect(); return Math.round(r.top + r.height / 2 - innerHeight / 2); })()",
      ) as number;
      assert(Math.abs(centre) <= 2, `target is centred (offset ${centre})`);

      // Already in view: nothing moves, and the result says so.
      const again = structured(await server.call("scroll", { selector: "#far-button" }));
      assertEquals((again.scroll as { moved: boolean }).moved, false);
      assert((again.warnings as string[]).some((w) => w.startsWith("scroll_no_effect")));

      // The wheel at an element scrolls its scroll container, not the page.
      await server.call("scroll", { selector: "#scroll-box" });
      const pageY = await evaluate(server, "window.scrollY");
      const inner = structured(await server.call("scroll", { selector: "#scroll-box", dy: 250 }));
      const s3 = inner.scroll as {
        container: { element: string; before: Pos; after: Pos };
        page: { after: Pos };
      };
      assertMatch(s3.container.element, /div#scroll-box/);
      assertEquals(s3.container.before.y, 0);
      assertEquals(s3.container.after.y, 250);
      assertEquals(await evaluate(server, "document.getElementById('scroll-box').scrollTop"), 250);
      assertEquals(s3.page.after.y, pageY);

      assertEquals(errorCode(await server.call("scroll", {})), "invalid_arguments");
      assertEquals(errorCode(await server.call("scroll", { x: 10, y: 10 })), "invalid_arguments");
    }, { browser: {} }),
});

Deno.test({
  name: "drag moves an HTML5 draggable into its drop zone and a range slider's thumb; hover applies :hover",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/form.html` });

      const dragged = await server.call("drag", { selector: "#drag-item", to: { selector: "#drop-zone" } });
      const d = structured(dragged);
      assertEquals(d.status, "ok", textOf(dragged));
      assertEquals((d.drag as { mode: string }).mode, "html5");
      assertEquals(
        await evaluate(server, "document.getElementById('drag-item').parentElement.id"),
        "drop-zone",
      );
      assertEquals(
        await evaluate(server, "document.getElementById('drop-status').textContent"),
        "dropped drag-item",
      );

      // A pointer drag: press on the slider, move to a point past its right end.
      const right = await evaluate(
        server,
        "(() => { const r = document.getElementById('volume').getBoundingClientRect(); return { x: r.right + 20, y: r.top + r.height / 2 }; })()",
      ) as Pos;
      const slid = structured(await server.call("drag", { selector: "#volume", to: right }));
      assertEquals((slid.drag as { mode: string }).mode, "pointer");
      assertEquals(await evaluate(server, "document.getElementById('volume').value"), "100");
      assertEquals(await evaluate(server, "document.getElementById('volume-out').textContent"), "100");

      assertEquals(
        await evaluate(server, "getComputedStyle(document.getElementById('hover-card')).backgroundColor"),
        "rgb(221, 221, 221)",
      );
      const hovered = structured(await server.call("hover", { selector: "#hover-card" }));
      assertEquals(hovered.status, "ok");
      assertEquals(
        await evaluate(server, "getComputedStyle(document.getElementById('hover-card')).backgroundColor"),
        "rgb(0, 128, 0)",
      );
      assertEquals(await evaluate(server, "document.getElementById('hover-status').textContent"), "hovered");
      assertEquals(
        errorCode(await server.call("drag", { selector: "#drag-item", to: { x: 1, y: 1 }, x: 5 })),
        "invalid_target",
      );
    }, { browser: {} }),
});

Deno.test({
  name:
    "a covered button reports the interception for click and hover; a canvas click lands at its coordinates",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/overlay.html` });

      const clicked = await server.call("click", { selector: "#covered" });
      assertEquals(clicked.isError, true, "not a silent success");
      assertEquals(errorCode(clicked), "click_intercepted");
      assertMatch(textOf(clicked), /div#overlay/);
      assertEquals(await evaluate(server, "[window.__coveredClicks, window.__overlayClicks]"), [0, 0]);

      const hovered = await server.call("hover", { locator: { role: "button", name: "Covered button" } });
      assertEquals(errorCode(hovered), "hover_intercepted");
      assertEquals(
        errorCode(await server.call("drag", { selector: "#covered", to: { x: 400, y: 400 } })),
        "drag_intercepted",
      );

      const pad = await evaluate(
        server,
        "(() => { const p = document.getElementById('pad'); const r = p.getBoundingClientRect(); return { x: r.left + p.clientLeft, y: r.top + p.clientTop }; })()",
      ) as Pos;
      const at = { x: Math.round(pad.x) + 57, y: Math.round(pad.y) + 43 };
      const canvas = structured(await server.call("click", at));
      assertEquals(canvas.status, "ok");
      const clicks = await evaluate(server, "window.__padClicks") as Array<Record<string, number>>;
      assertEquals(clicks.length, 1);
      assertEquals([clicks[0].client_x, clicks[0].client_y], [at.x, at.y]);
      assertEquals(
        await evaluate(server, "document.getElementById('pad-status').textContent"),
        `clicked at ${at.x - pad.x},${at.y - pad.y}`,
      );

      // hover by coordinates dispatches without a hit test.
      assertEquals(structured(await server.call("hover", at)).status, "ok");
    }, { browser: {} }),
});
