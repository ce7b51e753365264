import { assertEquals } from "../../assert.ts";
import {
  compareProbes,
  PATCH_LIMIT,
  type Probe,
  type ProbeEntry,
  provesUnchanged,
} from "../../../src/snapshot/probe.ts";

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

Deno.test("a snapshot is provably current only with no DOM change since its read and every target the same", () => {
  const counted = (count: number, extra: Partial<Probe> = {}) =>
    probe([[1, 1, "x"], [2, 1, "y"]], { mutations: { world: "w", count }, ...extra });
  const readAt = { world: "w", count: 4, generation: 1 };
  assertEquals(provesUnchanged(readAt, counted(4), counted(4)), true);
  // A DOM change anywhere (a status text, a non-target subtree) since the read.
  assertEquals(provesUnchanged(readAt, counted(4), counted(5)), false);
  // A target's value or focus changed without any DOM mutation.
  assertEquals(
    provesUnchanged(
      readAt,
      counted(4),
      probe([[1, 1, "x"], [2, 1, "Y"]], { mutations: { world: "w", count: 4 } }),
    ),
    false,
  );
  // Another world (the probe's context was made again) counts from zero: nothing can be proved.
  assertEquals(
    provesUnchanged(readAt, counted(4), counted(4, { mutations: { world: "v", count: 4 } })),
    false,
  );
  // Another document.
  assertEquals(provesUnchanged(readAt, counted(4), counted(4, { generation: 2 })), false);
  // No count (an older probe), no read mark, or no probe agreeing with the snapshot.
  assertEquals(provesUnchanged(readAt, counted(4), probe([[1, 1, "x"], [2, 1, "y"]])), false);
  assertEquals(provesUnchanged(undefined, counted(4), counted(4)), false);
  assertEquals(provesUnchanged(readAt, undefined, counted(4)), false);
});
