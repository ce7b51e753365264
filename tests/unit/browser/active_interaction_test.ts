import { assertEquals } from "../../assert.ts";
import { ActiveInteractions } from "../../../src/browser/active_interaction.ts";

Deno.test("active interactions: an instant belongs to the span it falls in, not to whichever is active now", async () => {
  const spans = new ActiveInteractions();
  const beforeAll = Date.now() - 1;
  spans.current = "i1";
  const during1 = Date.now();
  await new Promise((r) => setTimeout(r, 5));
  spans.current = undefined;
  await new Promise((r) => setTimeout(r, 5));
  const between = Date.now();
  await new Promise((r) => setTimeout(r, 5));
  spans.current = "i2";
  assertEquals(spans.current, "i2");
  assertEquals(spans.at(during1), "i1", "a late event from i1's span stays i1's");
  assertEquals(spans.at(between), undefined, "between actions: no interaction");
  assertEquals(spans.at(beforeAll), undefined);
  assertEquals(spans.at(Date.now()), "i2");
  spans.current = "i2";
  assertEquals(spans.at(during1), "i1", "setting the same id again starts no new span");
  spans.current = undefined;
  assertEquals(spans.current, undefined);
  assertEquals(spans.latest, "i2", "the interaction begun last stays known after its span closes");
});
