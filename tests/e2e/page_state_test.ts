/**
 * Page state across time over stdio in real Chromium, on the checkout fixture: a click starts a fetch
 * that returns an empty list, the select loses its options, an error appears and the submit button is
 * disabled ~700 ms later. The page records when each mutation really happened (window.__truth).
 */
import { assert, assertEquals } from "../assert.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import { e2e, type ServerHandle, structured, withServer } from "./harness.ts";

interface Truth {
  what: string;
  at_epoch_ms: number;
}

const isGreen = ([r, g, b]: number[]) => g > 110 && r < 90 && b < 90;
const isGrey = ([r, g, b]: number[]) => Math.abs(r - g) < 25 && Math.abs(g - b) < 25 && r > 120 && r < 190;

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function submitBox(server: ServerHandle, atMs: number): Promise<{ box: Box; viewportWidth: number }> {
  const m = structured(await server.call("measure_layout", { at_ms: atMs, selectors: ["#submit"] }));
  const [e] = m.elements as Array<{ box: Box }>;
  return { box: e.box, viewportWidth: (m.viewport as { width: number }).width };
}

/** The colour at the centre of a box in a frame (frames are device pixels of the viewport). */
async function framePixel(
  server: ServerHandle,
  frame: unknown,
  at: { box: Box; viewportWidth: number },
): Promise<[number, number, number]> {
  const id = (frame as { frame_id: number } | null)?.frame_id;
  assert(id, "a frame shows the state");
  const fetched = await server.call("fetch_source_frames", { frame_ids: [id] });
  const image = fetched.content.find((c) => c.type === "image");
  assert(image?.data, `frame ${id} is inlined`);
  const img = decodeJpeg(Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0)));
  const scale = img.width / at.viewportWidth;
  const x = Math.round((at.box.x + at.box.width / 2) * scale);
  const y = Math.round((at.box.y + at.box.height / 2) * scale);
  const i = (y * img.width + x) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

/** The page's own clock onto the session clock, through the server's wall-clock range form. */
async function sessionMsOf(server: ServerHandle, epochMs: number): Promise<number> {
  const r = structured(
    await server.call("resolve_temporal_range", {
      range: { start_time: new Date(epochMs).toISOString(), end_time: new Date(epochMs + 100).toISOString() },
    }),
  );
  return Number((r.range as { start_ms: number }).start_ms) + (epochMs % 1);
}

Deno.test({
  name:
    "page state: read_dom_at shows the checkout before and after the empty province list, with the frame of each",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/checkout.html` });
      // The DOM is recorded from the document's first full snapshot (after DOMContentLoaded); let it begin
      // well before the click, so an instant shortly before the click lies inside the recording.
      for (let i = 0; i < 100 && (await server.call("read_dom_at", {})).isError; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 300));
      const clicked = structured(await server.call("click", { selector: "#load-provinces" }));
      const interaction = String(clicked.interaction_id);
      await new Promise((r) => setTimeout(r, 1_500));

      const before = await server.call("read_dom_at", {
        interaction_id: interaction,
        offset_ms: -50,
        scope: "form#checkout",
      });
      assert(!before.isError, before.content[0]?.text);
      const b = structured(before);
      const bText = String(b.dom);
      assert(bText.includes("[name=province]") && bText.includes("[options: 4]"), bText);
      assert(!bText.includes("[DISABLED]"), bText);
      assert((b.frame as { frame_id: number } | null)?.frame_id, "a frame shows the state");

      const after = await server.call("read_dom_at", {
        interaction_id: interaction,
        offset_ms: 1_200,
        scope: "form#checkout",
      });
      assert(!after.isError, after.content[0]?.text);
      const aText = String(structured(after).dom);
      assert(aText.includes("[DISABLED]"), aText);
      assert(aText.includes("Province is required"), aText);
      assert(aText.includes("empty options: 0"), aText);
      const recorded = structured(await server.call("evaluate_page", { expression: "window.__truth" }));
      const list = recorded.value as Truth[];
      assert(list.some((t) => t.what === "submit_disabled"), JSON.stringify(list));
      assertEquals(typeof b.at_ms, "number");

      // bisect for disabled: the transition at the recorded mutation, on the session clock.
      const bis = await server.call("bisect", {
        interaction_id: interaction,
        selector: "#submit",
        predicate: { kind: "propertyEquals", property: "disabled", equals: true },
      });
      assert(!bis.isError, bis.content[0]?.text);
      const bs = structured(bis);
      const transitions = bs.transitions as Array<
        { at_ms: number; from: unknown; to: unknown; frame: unknown }
      >;
      assertEquals(transitions.length, 1, bis.content[0]?.text);
      assertEquals(transitions[0].to, true);
      // The page's own clock onto the session clock, through the server's wall-clock range form.
      const truthMs = await sessionMsOf(
        server,
        list.find((t) => t.what === "submit_disabled")?.at_epoch_ms ?? 0,
      );
      assert(
        Math.abs(transitions[0].at_ms - truthMs) <= 5,
        `bisect found ${transitions[0].at_ms} ms, the page disabled the button at ${truthMs} ms`,
      );

      // Just before and just after: the two states, each with the frame whose pixels show it.
      const t = transitions[0].at_ms;
      const justBefore = structured(
        await server.call("read_dom_at", { at_ms: t - 2, scope: "form#checkout" }),
      );
      const justAfter = structured(
        await server.call("read_dom_at", { at_ms: t + 1, scope: "form#checkout" }),
      );
      assert(!String(justBefore.dom).includes("[DISABLED]"), String(justBefore.dom));
      assert(String(justAfter.dom).includes("[DISABLED]"), String(justAfter.dom));
      const box = await submitBox(server, t + 1);
      const beforePixel = await framePixel(server, justBefore.frame, box);
      const afterPixel = await framePixel(server, justAfter.frame, box);
      assert(isGreen(beforePixel), `the frame before shows the enabled (green) button: ${beforePixel}`);
      assert(isGrey(afterPixel), `the frame after shows the disabled (grey) button: ${afterPixel}`);

      const diff = await server.call("diff_dom", {
        from: { at_ms: transitions[0].at_ms - 1_000 },
        to: { at_ms: transitions[0].at_ms + 50 },
        scope: "form#checkout",
      });
      assert(!diff.isError, diff.content[0]?.text);
      const dtext = diff.content[0]?.text ?? "";
      console.error(dtext);
      assert(/removed .*option/.test(dtext), dtext);
      assert(/added .*error/i.test(dtext), dtext);
      assert(/disabled/.test(dtext), dtext);

      const marked = structured(
        await server.call("annotate", { at_ms: transitions[0].at_ms, label: "submit disabled" }),
      );
      const again = structured(
        await server.call("annotate", { at_ms: transitions[0].at_ms, label: "submit disabled" }),
      );
      assertEquals(
        (again.marker as { marker_id: string }).marker_id,
        (marked.marker as { marker_id: string }).marker_id,
      );
      assertEquals(again.created, false);
      const markers = structured(await server.call("read_markers", {}));
      assertEquals(markers.total, 1);
      const markerId = (marked.marker as { marker_id: string }).marker_id;
      // The marker is an anchor for the temporal tools, and a storyboard whose range holds it draws it.
      const artifacts = await server.call("generate_artifacts", {
        range: { marker_id: markerId, before_ms: 800, after_ms: 400 },
        generators: ["storyboard"],
      });
      assert(!artifacts.isError, artifacts.content[0]?.text);
      const board = (structured(artifacts).artifacts as Array<{ manifest_uri: string }>)[0];
      const manifest = await server.client.readResource({ uri: board.manifest_uri });
      const first = manifest.contents[0] as { text?: string; blob?: string };
      const manifestText = first.text ??
        new TextDecoder().decode(Uint8Array.from(atob(first.blob ?? ""), (c) => c.charCodeAt(0)));
      assert(
        manifestText.includes("submit disabled"),
        `the storyboard's manifest lists the marker: ${manifestText.slice(0, 400)}`,
      );
      // A frame id is an instant too: the frame's own paint time.
      const byFrame = await server.call("read_dom_at", {
        frame_id: (justAfter.frame as { frame_id: number }).frame_id,
        scope: "form#checkout",
      });
      assert(!byFrame.isError, byFrame.content[0]?.text);
      assert(String(structured(byFrame).dom).includes("[DISABLED]"), String(structured(byFrame).dom));

      // The message's lifetime, exact from the mutation stream.
      const found = await server.call("find_element", { text: "Province is required" });
      assert(!found.isError, found.content[0]?.text);
      const match = (structured(found).matches as Array<
        { first_seen_ms: number; last_seen_ms: number | null; selector: string }
      >)[0];
      const errorAt = await sessionMsOf(server, list.find((t) => t.what === "error_shown")?.at_epoch_ms ?? 0);
      assert(Math.abs(match.first_seen_ms - errorAt) <= 5, `${found.content[0]?.text} vs ${errorAt}`);
      assertEquals(match.last_seen_ms, null, "still present");
      assert(match.selector.includes("error"), match.selector);

      // A predicate that flips three times yields three transitions.
      const flip = String(structured(await server.call("click", { selector: "#flip" })).interaction_id);
      await server.call("click", { selector: "#show-promo" });
      await new Promise((r) => setTimeout(r, 900));
      const flips = await server.call("bisect", {
        range: { interaction_id: flip, after_ms: 800 },
        selector: "#flipper",
        predicate: { kind: "attributeEquals", name: "data-state", equals: "off" },
      });
      assert(!flips.isError, flips.content[0]?.text);
      assertEquals((structured(flips).transitions as unknown[]).length, 3, flips.content[0]?.text);

      // An overlay covering a button, found without pixels (around the page's own time of showing it:
      // an interaction's anchor is the end of its dispatch, after the click's handler already ran).
      const truthNow = structured(await server.call("evaluate_page", { expression: "window.__truth" }))
        .value as Truth[];
      const shownAt = await sessionMsOf(
        server,
        truthNow.find((t) => t.what === "overlay_shown")?.at_epoch_ms ?? 0,
      );
      const layout = await server.call("measure_layout", {
        at_ms: shownAt + 50,
        selectors: ["#covered-pay", "#promo-overlay"],
      });
      assert(!layout.isError, layout.content[0]?.text);
      const elements = structured(layout).elements as Array<
        { selector: string; covered_by?: { selector_hint: string } }
      >;
      const pay = elements.find((e) => e.selector === "#covered-pay");
      assert(pay?.covered_by?.selector_hint.includes("promo-overlay"), layout.content[0]?.text);
      const earlier = await server.call("measure_layout", {
        at_ms: shownAt - 50,
        selectors: ["#covered-pay"],
      });
      const uncovered = structured(earlier).elements as Array<{ covered_by?: unknown }>;
      assertEquals(uncovered[0].covered_by, undefined, earlier.content[0]?.text);

      // visible is measured with real layout in the replay target, at each instant that could change it.
      const shows = await server.call("bisect", {
        range: { start_ms: shownAt - 400, end_ms: shownAt + 400 },
        selector: "#promo-overlay",
        predicate: { kind: "visible", equals: true },
      });
      assert(!shows.isError, shows.content[0]?.text);
      const shown = structured(shows);
      const flipsToVisible = shown.transitions as Array<{ at_ms: number; to: unknown }>;
      assertEquals(flipsToVisible.length, 1, shows.content[0]?.text);
      assert(Math.abs(flipsToVisible[0].at_ms - shownAt) <= 5, shows.content[0]?.text);
      assertEquals(shown.basis, "layout");

      await server.call("stop_browser", {});
      const later = await server.call("read_dom_at", {
        marker_id: (marked.marker as { marker_id: string }).marker_id,
        offset_ms: 10,
        scope: "form#checkout",
      });
      assert(!later.isError, later.content[0]?.text);
      assert(String(structured(later).dom).includes("[DISABLED]"), "answers after stop_browser");
      const bisectLater = await server.call("bisect", {
        interaction_id: interaction,
        selector: "#submit",
        predicate: { kind: "propertyEquals", property: "disabled", equals: true },
      });
      assertEquals(
        (structured(bisectLater).transitions as unknown[]).length,
        1,
        bisectLater.content[0]?.text,
      );
      const layoutLater = await server.call("measure_layout", {
        at_ms: shownAt + 50,
        selectors: ["#covered-pay"],
      });
      assert(!layoutLater.isError, layoutLater.content[0]?.text);
      assert(
        (structured(layoutLater).elements as Array<{ covered_by?: unknown }>)[0].covered_by,
        "measure_layout answers after stop_browser",
      );
    }, { browser: {} }),
});

/** Every file under a directory, decompressing DOM chunks the way the store writes them. */
async function storedText(dir: string): Promise<string> {
  const { inflateSync } = await import("fflate");
  const { scanSegment } = await import("../../src/store/segments.ts");
  const parts: string[] = [];
  const walk = async (d: string) => {
    for await (const entry of Deno.readDir(d)) {
      const path = `${d}/${entry.name}`;
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile) {
        const bytes = await Deno.readFile(path);
        parts.push(new TextDecoder().decode(bytes));
        if (path.includes("/dom/")) {
          for (const r of scanSegment(bytes).records) {
            parts.push(new TextDecoder().decode(inflateSync(bytes.subarray(r.offset, r.offset + r.length))));
          }
        }
      }
    }
  };
  await walk(dir);
  return parts.join("\n");
}

Deno.test({
  name:
    "page state: the legible DOM keeps its 60-line / 1,200-character budget on a 300-row table and utility-class soup; typed secrets are never stored",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      for (const page of ["table300.html", "utility_soup.html"]) {
        await server.call("navigate_page", { url: `${site.origin}/${page}` });
        await new Promise((r) => setTimeout(r, 400));
        const r = await server.call("read_dom_at", {});
        const text = r.isError ? "" : String(structured(r).dom);
        assert(!r.isError, r.content[0]?.text);
        const lines = text.split("\n");
        assert(lines.length <= 60, `${page}: ${lines.length} lines`);
        assert(text.length <= 1_200, `${page}: ${text.length} characters`);
        assert(
          lines.slice(-2).some((l) => /source [\d,]+ chars/.test(l)),
          `${page}: footer with counts: ${text}`,
        );
      }

      await server.call("navigate_page", { url: `${site.origin}/checkout.html` });
      await server.call("fill", { selector: "#password", value: "hunter2-Pa55word" });
      await server.call("fill", { selector: "#email", value: "ana.secret@example.org" });
      await new Promise((r) => setTimeout(r, 500));
      const masked = String(structured(await server.call("read_dom_at", { scope: "form" })).dom);
      assert(!masked.includes("hunter2") && !masked.includes("ana.secret"), masked);
      await server.call("stop_browser", {});
      const stored = await storedText(server.dataDir);
      assert(stored.includes("Province"), "the checkout's DOM was stored (and read back decompressed)");
      assert(!stored.includes("hunter2-Pa55word"), "the typed password is in the data dir");
      assert(!stored.includes("ana.secret@example.org"), "the typed email is in the data dir");
    }, { browser: {} }),
});
