import { assertEquals } from "../../assert.ts";
import { decodeRef, encodeRef } from "../../../src/snapshot/refs.ts";

Deno.test("refs round-trip and stay short", () => {
  const parts = { session: 731, page: 2, generation: 14, node: 98231 };
  const ref = encodeRef(parts);
  assertEquals(ref, "s731p2g14n98231");
  assertEquals(decodeRef(ref), parts);
});

Deno.test("malformed refs decode to undefined", () => {
  for (
    const bad of [
      "",
      "s1p1g1",
      "p1g1n1",
      "s1p1g1n1x",
      "s-1p1g1n1",
      "S1P1G1N1",
      "s1p1g1n1 ",
      "s1234567890p1g1n1",
    ]
  ) {
    assertEquals(decodeRef(bad), undefined, bad);
  }
});
