import type { Protocol } from "devtools-protocol";
import { assert, assertEquals } from "../../assert.ts";
import {
  boundUtf8,
  domText,
  type Redactor,
  renderAxTree,
  sha256Hex,
  storedValue,
  textArtifact,
} from "../../../src/scenario/step_capture_text.ts";

const redactor: Redactor = {
  text: (s) => s.split("s3cret").join("${secret:pw}"),
  isSecret: (v) => (v === "s3cret" ? "pw" : undefined),
};

Deno.test("textArtifact digests the UTF-8 bytes of its text", () => {
  const a = textArtifact("héllo\n");
  assertEquals(a.bytes, 7);
  assertEquals(a.sha256, sha256Hex(new TextEncoder().encode("héllo\n")));
  assertEquals(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
});

Deno.test("storedValue hashes plain values and keeps nothing of a value that is or holds a secret", () => {
  assertEquals(storedValue("dark", redactor), { value_state: "hashed", value_sha256: sha256Hex("dark") });
  assertEquals(storedValue("s3cret", redactor), { value_state: "redacted-secret", value_sha256: null });
  assertEquals(storedValue("token=s3cret;", redactor), {
    value_state: "redacted-secret",
    value_sha256: null,
  });
});

Deno.test("domText digests script bodies and redacts the whole text", () => {
  const text = domText(
    ["<html>", ['  <script src="a.js"', "var k = 's3cret';"], '  "typed s3cret"'],
    redactor,
  );
  assertEquals(
    text,
    `<html>\n  <script src="a.js" sha256=${sha256Hex("var k = 's3cret';")}>\n  "typed \${secret:pw}"\n`,
  );
});

const v = (
  value: unknown,
  type: Protocol.Accessibility.AXValueType = "string",
): Protocol.Accessibility.AXValue => ({
  type,
  value,
});

Deno.test("renderAxTree has no ids, hoists ignored and unnamed generic nodes, and inlines frames", () => {
  const nodes: Protocol.Accessibility.AXNode[] = [
    {
      nodeId: "1",
      ignored: false,
      role: v("RootWebArea", "role"),
      name: v("Title"),
      childIds: ["2", "5"],
      properties: [{ name: "url", value: v("http://127.0.0.1:4567/?flag=1") }, {
        name: "focusable",
        value: v(true, "booleanOrUndefined"),
      }],
    },
    {
      nodeId: "2",
      ignored: false,
      role: v("generic", "role"),
      name: v(""),
      childIds: ["3", "4"],
      parentId: "1",
    },
    {
      nodeId: "3",
      ignored: false,
      role: v("textbox", "role"),
      name: v("  Email   address "),
      value: v("a@b.c"),
      parentId: "2",
      backendDOMNodeId: 77,
      properties: [
        { name: "required", value: v(true, "boolean") },
        { name: "labelledby", value: { type: "nodeList", relatedNodes: [{ backendDOMNodeId: 9 }] } },
        { name: "invalid", value: v("false", "token") },
        { name: "editable", value: v("plaintext", "token") },
      ],
    },
    { nodeId: "4", ignored: true, role: v("none", "role"), childIds: ["6"], parentId: "2" },
    {
      nodeId: "6",
      ignored: false,
      role: v("StaticText", "role"),
      name: v("kept"),
      parentId: "4",
      childIds: ["7"],
    },
    { nodeId: "7", ignored: false, role: v("InlineTextBox", "role"), name: v("kept"), parentId: "6" },
    {
      nodeId: "5",
      ignored: false,
      role: v("Iframe", "role"),
      name: v("inner"),
      parentId: "1",
      backendDOMNodeId: 12,
    },
  ];
  const frame: Protocol.Accessibility.AXNode[] = [
    { nodeId: "1", ignored: false, role: v("RootWebArea", "role"), name: v("Inner"), childIds: ["2"] },
    { nodeId: "2", ignored: false, role: v("button", "role"), name: v("Go"), parentId: "1" },
  ];
  const text = renderAxTree(nodes, [{ ownerBackendId: 12, nodes: frame }, {
    ownerBackendId: 99,
    nodes: null,
  }]);
  assertEquals(
    text,
    [
      'RootWebArea "Title" [focusable]',
      '  textbox "Email address" value="a@b.c" [editable=plaintext, required]',
      '  StaticText "kept"',
      '  Iframe "inner"',
      '    RootWebArea "Inner"',
      '      button "Go"',
      "",
    ].join("\n"),
  );
  assert(!text.includes("4567"), "the document url property is left out");
  const oop = renderAxTree(nodes, [{ ownerBackendId: 12, nodes: null }]);
  assert(oop.includes('  Iframe "inner"\n    #frame (not readable: out of process)'), oop);
});

Deno.test("boundUtf8 cuts on a code point boundary and says so", () => {
  assertEquals(boundUtf8("abc", 10), { text: "abc", truncated: false });
  assertEquals(boundUtf8("ééé", 3), { text: "é", truncated: true });
  assertEquals(boundUtf8("a".repeat(70_000), 65_536).text.length, 65_536);
});
