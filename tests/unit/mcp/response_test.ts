import { assertEquals } from "../../assert.ts";
import { leanObservation, withoutShared } from "../../../src/mcp/response.ts";

const page = { page_id: "p1", url: "http://a/", title: "A" };

Deno.test("an observation drops the snapshot's and navigation's copies of its page", () => {
  const lean = leanObservation({
    interaction_id: "s1-i1",
    page,
    navigation: { navigated: true, url: "http://a/", new_document: true },
    snapshot: { ...page, snapshot_generation: 2, targets: [] },
  });
  assertEquals(lean, {
    interaction_id: "s1-i1",
    page,
    navigation: { navigated: true, new_document: true },
    snapshot: { snapshot_generation: 2, targets: [] },
  });
});

Deno.test("a copy that differs from the page stays", () => {
  const lean = leanObservation({
    page,
    navigation: { navigated: true, url: "http://b/" },
    snapshot: { page_id: "p1", url: "http://b/", title: "B" },
  });
  assertEquals(lean.navigation, { navigated: true, url: "http://b/" });
  assertEquals(lean.snapshot, { url: "http://b/", title: "B" });
});

Deno.test("rows drop the fields they share with their envelope, and only those", () => {
  assertEquals(
    withoutShared([{ id: 1, session_id: "s" }, { id: 2, session_id: "t" }], { session_id: "s" }),
    [{ id: 1 }, { id: 2, session_id: "t" }],
  );
});
