import { assert, assertEquals } from "../assert.ts";
import { e2e, refOf, structured, withServer } from "./harness.ts";

interface Post {
  navigated: boolean;
  new_pages: number;
  subject?: {
    role?: string;
    before: Record<string, unknown>;
    after?: Record<string, unknown>;
    changed: string[];
    present_after: boolean;
  };
  note?: string;
}

Deno.test({
  name:
    "postconditions: checked and expanded deltas, a replaced node, a link that did not navigate; fill reports a value the field did not keep",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/toggles.html` });
      let snap = structured(await server.call("snapshot_page", {}));
      const click = async (role: string, name: string) => {
        const out = structured(await server.call("click", { ref: refOf(snap, role, name) }));
        assertEquals(out.status, "ok");
        snap = structured(await server.call("snapshot_page", {}));
        return out.postconditions as Post;
      };

      const agree = await click("checkbox", "I agree");
      assertEquals(agree.subject?.changed, ["checked"]);
      assertEquals(String(agree.subject?.after?.checked), "true");
      assertEquals(agree.note, undefined);

      const more = await click("button", "More");
      assertEquals(more.subject?.changed, ["expanded"]);
      assertEquals(more.subject?.after?.expanded, true);

      const swap = await click("button", "Swap me");
      assertEquals(swap.subject?.present_after, false, "the clicked node was replaced");

      const filled = structured(await server.call("fill", { locator: { label: "Code" }, value: "abcdef" }));
      assert(
        (filled.warnings as string[] | undefined)?.some((w) => w.startsWith("value_differs")),
        "a field that keeps less than was typed says so",
      );

      const dead = await click("link", "Dead link");
      assertEquals(dead.navigated, false);
      assert(dead.note?.includes("no navigation"), `a conservative note: ${dead.note}`);
    }, { browser: { headless: true } }),
});
