/**
 * Page state across time over stdio in real Chromium, on the checkout fixture: a click starts a fetch
 * that returns an empty list, the select loses its options, an error appears and the submit button is
 * disabled ~700 ms later. The page records when each mutation really happened (window.__truth).
 */
import { assert, assertEquals } from "../assert.ts";
import { e2e, structured, withServer } from "./harness.ts";

interface Truth {
  what: string;
  at_epoch_ms: number;
}

Deno.test({
  name:
    "page state: read_dom_at shows the checkout before and after the empty province list, with the frame of each",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/checkout.html` });
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
      const truth = structured(await server.call("evaluate_page", { expression: "window.__truth" }));
      const list = truth.value as Truth[];
      assert(list.some((t) => t.what === "submit_disabled"), JSON.stringify(list));
      assertEquals(typeof b.at_ms, "number");
    }, { browser: {} }),
});
