import { assertEquals, assertThrows } from "../../assert.ts";
import { modifierMask, parseChord } from "../../../src/browser/input.ts";

Deno.test("chords parse modifiers and keys, with aliases", () => {
  assertEquals(parseChord("Enter").key.key, "Enter");
  const c = parseChord("Ctrl+Shift+k");
  assertEquals(c.modifiers, ["Control", "Shift"]);
  assertEquals(c.key.code, "KeyK");
  assertEquals(parseChord("+").key.key, "+");
  assertEquals(parseChord("Control++").key.key, "+");
  assertEquals(parseChord("Esc").key.key, "Escape");
  assertEquals(parseChord("Space").key.text, " ");
  assertEquals(parseChord("F5").key.keyCode, 116);
});

Deno.test("unknown keys and non-modifiers fail with the bad part named", () => {
  assertThrows(() => parseChord("Hyper+Q"), '"Hyper" is not a modifier');
  assertThrows(() => parseChord("NotAKey"), '"NotAKey" is not a known key');
});

Deno.test("modifier masks follow CDP bits", () => {
  assertEquals(modifierMask(["Alt", "Control", "Meta", "Shift"]), 15);
  assertEquals(modifierMask([]), 0);
});
