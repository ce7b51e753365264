import { assertEquals } from "../../assert.ts";
import { hitNote, nothingChanged, type Postconditions } from "../../../src/control/postconditions.ts";

const quietClick: Postconditions = {
  url: { before: "http://a/", after: "http://a/" },
  navigated: false,
  new_document: false,
  new_pages: 0,
  downloads: { cursor_before: 0, started: 0 },
};

Deno.test("nothing changed only when a mutation watch saw none and no navigation, page or download happened", () => {
  assertEquals(nothingChanged(quietClick, 0), true);
  assertEquals(nothingChanged(quietClick, undefined), false, "no watch, no claim");
  assertEquals(nothingChanged(quietClick, 3), false);
  assertEquals(nothingChanged({ ...quietClick, navigated: true }, 0), false);
  assertEquals(nothingChanged({ ...quietClick, new_pages: 1 }, 0), false);
  assertEquals(nothingChanged({ ...quietClick, downloads: { cursor_before: 0, started: 1 } }, 0), false);
});

Deno.test("the hit note names a disabled target, a covering element and a non-control, conservatively", () => {
  const save = { role: "button", name: "Save", disabled: true as const };
  assertEquals(hitNote(save, "control", true), "The target was disabled; nothing changed.");
  assertEquals(hitNote(save, "control", false), "The target was disabled.");
  const veil = { role: "generic", name: "", element: "div#veil", covers: { role: "button", name: "Go" } };
  assertEquals(
    hitNote(veil, "covered", true),
    'The point hit generic (div#veil) covering button "Go"; nothing changed.',
  );
  assertEquals(hitNote(veil, "covered", false), 'The point hit generic (div#veil) covering button "Go".');
  const text = { role: "paragraph", name: "", element: 'p "Hello"' };
  assertEquals(
    hitNote(text, "plain", true),
    'The point hit paragraph (p "Hello"), which is not a control; nothing changed.',
  );
  assertEquals(hitNote(text, "plain", false), undefined, "a non-control that reacted gets no note");
  assertEquals(
    hitNote({ role: "Canvas", name: "" }, "graphic", true),
    undefined,
    "a canvas may change only pixels",
  );
  assertEquals(hitNote({ role: "button", name: "Apply" }, "control", true), undefined);
});
