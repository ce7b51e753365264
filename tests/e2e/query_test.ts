import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

type Row = { ref?: string; role: string; name: string };

async function query(server: ServerHandle, locator: Record<string, unknown>, detail?: string) {
  const result = await server.call("query_page", { locator, ...(detail ? { detail } : {}) });
  assert(!result.isError, textOf(result));
  return structured(result);
}

async function evaluate(server: ServerHandle, expression: string): Promise<unknown> {
  return structured(await server.call("evaluate_page", { expression })).value;
}

/** A ref of any node (actionable or not) from the full snapshot. */
async function fullRef(server: ServerHandle, role: string, name: string, nth = 0): Promise<string> {
  const nodes = structured(await server.call("snapshot_page", { detail: "full" })).nodes as Row[];
  const ref = nodes.filter((n) => n.role === role && n.name === name)[nth]?.ref;
  assert(ref, `no ${role} ${JSON.stringify(name)} #${nth} in the full snapshot`);
  return ref;
}

Deno.test({
  name: "query_page: unique refs act; ambiguous and truncated carry none; follow-up counts explain misses",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/query.html` });

      // An unnamed icon button is qualified by its list item's text; its ref is the one to click.
      const row = await query(server, { role: "button", name: "notes.txt" });
      assertEquals(row.outcome, "unique", JSON.stringify(row));
      assertEquals(row.matched_by, "container");
      assertEquals(row.source, "accessibility_tree+dom");
      assertMatch(String(row.ref), /^s\d+p\d+g\d+n\d+$/);
      assertEquals(structured(await server.call("click", { ref: row.ref })).status, "ok");
      assertEquals(
        await evaluate(server, "document.getElementById('deleted').textContent"),
        "deleted notes.txt",
      );
      // Click by the same locator agrees with the query.
      assertEquals(
        structured(await server.call("click", { locator: { role: "button", name: "photo.png" } })).status,
        "ok",
      );
      assertEquals(
        await evaluate(server, "document.getElementById('deleted').textContent"),
        "deleted photo.png",
      );

      // A short generic card qualifies its unnamed pin; page-scale text never qualifies.
      assertEquals((await query(server, { role: "button", name: "Beta card" })).outcome, "unique");
      const zebra = await query(server, { role: "button", name: "Zebra" });
      assertEquals(zebra.outcome, "no_match");
      assertEquals(zebra.ref, undefined);
      assertEquals(zebra.container_dropped_count, 20, "every button, capped");
      assertEquals(zebra.container_dropped_saturated, true);

      // Scope: only descendants of the list count, so dropping the container leaves its 3 buttons.
      const files = await fullRef(server, "list", "Files");
      const missing = await query(server, { role: "button", name: "nothing.zip", scope: files });
      assertEquals(missing.outcome, "no_match");
      assertEquals(missing.container_dropped_count, 3);
      assertEquals(missing.container_dropped_saturated, false);
      const second = await fullRef(server, "listitem", "", 1);
      const scoped = await query(server, { role: "button", scope: second });
      assertEquals(scoped.outcome, "unique");
      assertEquals(scoped.source, "accessibility_tree", "plain role queries read only the AX tree");

      // A decorated name: exact misses, and says how many contains would match.
      const cargo = await query(server, { role: "button", name: "Cargo.toml", exact: true });
      assertEquals(cargo.outcome, "no_match");
      assertEquals(cargo.relaxed_exact_count, 1);
      assertEquals(cargo.relaxed_exact_saturated, false);
      const loose = await query(server, { role: "button", name: "Cargo.toml" });
      assertEquals(loose.name, "Cargo.toml, (File)");

      // Non-actionable matches are counted, never returned; no match anywhere omits the count.
      const heading = await query(server, { role: "heading", name: "Release notes" });
      assertEquals([heading.outcome, heading.non_actionable_match_count], ["no_match", 1]);
      assertEquals((await query(server, { text: "Release notes" })).non_actionable_match_count, 1);
      const none = await query(server, { role: "button", name: "Release notes" });
      assertEquals([none.outcome, none.non_actionable_match_count, none.ref], [
        "no_match",
        undefined,
        undefined,
      ]);

      // Each card's text includes its "Edit" button, so the unnamed pins qualify too: four, no ref.
      const edit = await query(server, { role: "button", name: "Edit" });
      assertEquals([edit.outcome, edit.match_count, edit.ref], ["ambiguous", 4, undefined]);
      const by = (edit.candidates as Array<Row & { matched_by: string }>).map((c) => [
        c.name.replace(/[\uE000-\uF8FF]/g, ""), // icon glyphs are not names
        c.matched_by,
        c.ref,
      ]);
      assertEquals(by, [
        ["", "container", undefined],
        ["Edit", "name", undefined],
        ["", "container", undefined],
        ["Edit", "name", undefined],
      ]);
      const items = await query(server, { role: "button", name: "Item" });
      assertEquals([items.outcome, items.match_count, items.saturated, items.ref], [
        "truncated",
        20,
        true,
        undefined,
      ]);
      assertEquals((items.candidates as Row[]).length, 5, "concise shows a bounded sample");
      assertEquals(items.candidates_omitted, 15);
      const ambiguousClick = await server.call("click", { locator: { role: "button", name: "Edit" } });
      assertEquals(errorCode(ambiguousClick), "locator_ambiguous");

      // Open shadow DOM: role, label and text queries all see it, and the ref acts.
      const go = await query(server, { text: "Shadow go" });
      assertEquals([go.outcome, go.role, go.name], ["unique", "button", "Shadow go"]);
      assertEquals((await query(server, { label: "Shadow email" })).role, "textbox");
      assertEquals((await query(server, { text: "Shadow greeting" })).non_actionable_match_count, 1);
      await server.call("click", { ref: go.ref });
      assertEquals((await query(server, { role: "button", name: "Shadow gone" })).outcome, "unique");
    }, { browser: { headless: true } }),
});

Deno.test({
  name: "query_page frames: a srcdoc frame qualifies by name or iframe ref; a data: frame is refused",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/query.html` });
      const framed = await query(server, { role: "button", frame: "inline-panel" });
      assertEquals([framed.outcome, framed.name], ["unique", "Framed action"]);
      assertEquals(framed.document, { main: false, frame_name: "inline-panel" });
      assertMatch(String(framed.ref), /^s\d+p\d+g\d+n\d+$/);

      // The same frame by a ref of its <iframe>, and a DOM (text) query in it, name the same node.
      const iframe = await fullRef(server, "Iframe", "", 0);
      const byRef = await query(server, { role: "button", name: "Framed action", frame: iframe });
      assertEquals(byRef.ref, framed.ref);
      const byText = await query(server, { text: "Framed action", frame: "inline-panel" });
      assertEquals([byText.ref, byText.source], [framed.ref, "accessibility_tree+dom"]);
      // The ref acts inside its frame: the click's hit test measures in the frame's own viewport.
      const clicked = await server.call("click", { ref: framed.ref });
      assertEquals(structured(clicked).status, "ok", textOf(clicked));
      const done = await query(server, { text: "Framed done", frame: "inline-panel" });
      assertEquals(done.outcome, "unique");
      // Frame content is not part of the main document's query.
      assertEquals((await query(server, { role: "button", name: "Framed action" })).outcome, "no_match");

      const refused = await server.call("query_page", { locator: { role: "button", frame: "opaque-data" } });
      assertEquals(errorCode(refused), "frame_not_qualified");
      assertMatch(textOf(refused), /data: frames get a fresh opaque origin/);
      const unknown = await server.call("query_page", { locator: { role: "button", frame: "nope" } });
      assertEquals(errorCode(unknown), "frame_not_found");
      const names = (structured(unknown).error as { details: { frame_names: string[] } }).details.frame_names;
      assertEquals(names, ["inline-panel", "opaque-data"]);
    }, { browser: { headless: true } }),
});
