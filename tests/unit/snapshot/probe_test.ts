import { assertEquals } from "../../assert.ts";
import { compareProbes, PATCH_LIMIT, type Probe, type ProbeEntry } from "../../../src/snapshot/probe.ts";

function probe(targets: ProbeEntry[], extra: Partial<Probe> = {}): Probe {
  return { generation: 1, title: "T", targets, outcomes: [], ...extra };
}

Deno.test("equal readings reuse the snapshot", () => {
  const a = probe([[1, 1, "x"], [2, 1, "y"]]);
  assertEquals(compareProbes(a, probe([[1, 1, "x"], [2, 1, "y"]])), { kind: "same" });
});

Deno.test("changed hashes on the same elements name the ids to patch", () => {
  const a = probe([[1, 1, "x"], [2, 1, "y"], [3, 1, "z"]]);
  assertEquals(compareProbes(a, probe([[1, 1, "x"], [2, 1, "Y"], [3, 1, "Z"]])), {
    kind: "changed",
    ids: [2, 3],
  });
});

Deno.test("new, removed, replaced, reordered or re-shown elements need a full read", () => {
  const a = probe([[1, 1, "x"], [2, 1, "y"]]);
  for (
    const b of [
      probe([[1, 1, "x"]]),
      probe([[1, 1, "x"], [2, 1, "y"], [3, 1, "z"]]),
      probe([[1, 1, "x"], [9, 1, "y"]]),
      probe([[2, 1, "y"], [1, 1, "x"]]),
      probe([[1, 1, "x"], [2, 0, "y"]]),
      probe([[1, 1, "x"], [2, 1, "y"]], { title: "Other" }),
      probe([[1, 1, "x"], [2, 1, "y"]], { generation: 2 }),
    ]
  ) {
    assertEquals(compareProbes(a, b).kind, "restructured", JSON.stringify(b));
  }
});

Deno.test("too many changed targets fall back to a full read", () => {
  const many: ProbeEntry[] = Array.from({ length: PATCH_LIMIT + 1 }, (_, i) => [i + 1, 1, "a"]);
  const changed: ProbeEntry[] = many.map(([id, v]) => [id, v, "b"]);
  assertEquals(compareProbes(probe(many), probe(changed)).kind, "restructured");
  assertEquals(compareProbes(probe(many.slice(1)), probe(changed.slice(1))).kind, "changed");
});
