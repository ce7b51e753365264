import type { Protocol } from "devtools-protocol";
import { assert, assertEquals } from "../../assert.ts";
import { flattenAxTree, rankTargets } from "../../../src/snapshot/ax_tree.ts";
import { nodeLine, presentSnapshot, type Snapshot } from "../../../src/snapshot/present.ts";

type AX = Protocol.Accessibility.AXNode;
const v = (value: unknown) => ({ type: "string", value }) as Protocol.Accessibility.AXValue;
const prop = (name: string, value: unknown) =>
  ({ name, value: { type: "boolean", value } }) as unknown as Protocol.Accessibility.AXProperty;

function node(id: string, role: string, name: string, children: string[] = [], extra: Partial<AX> = {}): AX {
  return {
    nodeId: id,
    ignored: false,
    role: v(role),
    name: v(name),
    childIds: children,
    backendDOMNodeId: Number(id) + 100,
    ...extra,
  } as AX;
}

function fixtureTree(): AX[] {
  return [
    node("1", "RootWebArea", "Page", ["2", "3", "9"], { properties: [prop("focusable", true)] }),
    node("2", "generic", "", ["4", "5", "6"]),
    node("3", "heading", "Title", ["10"], { properties: [prop("level", 1)] }),
    node("4", "link", "Home"),
    node("5", "button", "Save", [], { properties: [prop("disabled", false), prop("focusable", true)] }),
    node("6", "textbox", "Email", [], {
      value: v("a@b.c"),
      properties: [prop("focused", true), prop("required", true)],
    }),
    node("9", "status", "", ["11"]),
    node("10", "InlineTextBox", "Title"),
    node("11", "StaticText", "Saved!"),
    node("12", "button", "Hidden", [], { ignored: true }),
  ];
}

Deno.test("flatten drops ignored and structural nodes, keeps children, preorder", () => {
  const nodes = flattenAxTree(fixtureTree());
  assertEquals(nodes.map((n) => n.role), [
    "RootWebArea",
    "link",
    "button",
    "textbox",
    "heading",
    "status",
    "StaticText",
  ]);
  assertEquals(nodes[1].depth, 1, "generic wrapper does not add depth");
  assert(!nodes[0].target, "the web-area root is never a target even when focusable");
  assertEquals(nodes.filter((n) => n.target).map((n) => n.name), ["Home", "Save", "Email"]);
});

Deno.test("states keep only salient non-default values", () => {
  const nodes = flattenAxTree(fixtureTree());
  const save = nodes.find((n) => n.name === "Save");
  assertEquals(save?.states, {}, "disabled=false is not repeated");
  const email = nodes.find((n) => n.name === "Email");
  assertEquals(email?.states, { focused: true, required: true });
  assertEquals(nodeLine(email ?? nodes[0], "r1"), 'r1 textbox "Email" = "a@b.c" [focused, required]');
});

Deno.test("ranking: focused, editable, other non-link, links; preorder breaks ties", () => {
  const nodes = flattenAxTree([
    node("1", "RootWebArea", "", ["2", "3", "4", "5", "6"]),
    node("2", "link", "A"),
    node("3", "button", "B"),
    node("4", "textbox", "C"),
    node("5", "button", "D", [], { properties: [prop("focused", true)] }),
    node("6", "searchbox", "E"),
  ]);
  assertEquals(rankTargets(nodes).map((n) => n.name), ["D", "C", "E", "B", "A"]);
});

function snapshotOf(nodes = flattenAxTree(fixtureTree())): Snapshot {
  return {
    page_id: "p1",
    url: "http://127.0.0.1/",
    title: "Page",
    document_generation: 1,
    snapshot_generation: 1,
    nodes,
    refOf: (n) => (n.backendNodeId ? `s1p1g1n${n.backendNodeId}` : undefined),
    digest: "x",
  };
}

Deno.test("concise presentation reports exact omission counts", () => {
  const presented = presentSnapshot(snapshotOf(), "concise");
  const s = presented.structured as {
    target_count: number;
    omitted: { targets: number; non_target_nodes: number };
  };
  assertEquals(s.target_count, 3);
  assertEquals(s.omitted, { targets: 0, non_target_nodes: 4 });
  assert(presented.text.split("\n")[1].includes('textbox "Email"'), "focused field first");
});

Deno.test("concise caps a large target index and counts the rest", () => {
  const raw: AX[] = [node("1", "RootWebArea", "", [])];
  for (let i = 0; i < 400; i++) {
    raw[0].childIds?.push(String(i + 2));
    raw.push(node(String(i + 2), "link", `Link ${i}`));
  }
  const s = presentSnapshot(snapshotOf(flattenAxTree(raw)), "concise").structured as {
    targets: unknown[];
    omitted: { targets: number };
  };
  assertEquals(s.targets.length, 150);
  assertEquals(s.omitted.targets, 250);
});
