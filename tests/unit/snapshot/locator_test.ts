import { assert, assertEquals } from "../../assert.ts";
import { describeLocator, normalizeText, textMatches } from "../../../src/snapshot/locator.ts";

Deno.test("normalizeText collapses whitespace, drops format characters, treats icon glyphs as spaces", () => {
  assertEquals(normalizeText("  Save\n\t changes  "), "Save changes");
  assertEquals(normalizeText("Sa\u200Bve"), "Save");
  assertEquals(normalizeText("\uE001Settings"), "Settings");
  assertEquals(normalizeText("Open\uE002menu"), "Open menu");
  assertEquals(normalizeText("\uE003"), "");
});

Deno.test("textMatches: exact is whole-string, contains is case-insensitive", () => {
  assert(textMatches("Cargo.toml, (File)", "Cargo.toml", false));
  assert(!textMatches("Cargo.toml, (File)", "Cargo.toml", true));
  assert(textMatches("  Sign   in ", "Sign in", true));
  assert(textMatches("SIGN IN", "sign", false));
  assert(!textMatches("SIGN IN", "sign in", true));
  assert(!textMatches("", "x", false));
});

Deno.test("an all-icon name never becomes a text match key", () => {
  assert(!textMatches("\uE001\uE002", "x", false));
  assert(!textMatches("\uE001", "\uE001x", false));
});

Deno.test("describeLocator names every part", () => {
  assertEquals(describeLocator({ role: "button", name: "Go", exact: true }), 'role=button name="Go" exact');
  assertEquals(describeLocator({ label: "Email" }), 'label="Email"');
});
