import { assert, assertEquals, assertThrows } from "../../assert.ts";
import type { SnapNode } from "../../../src/snapshot/ax_tree.ts";
import { normalizeText, textMatches } from "../../../src/snapshot/locator.ts";
import {
  actionMatch,
  CONTAINER_TEXT_BOUND,
  containerQualifies,
  containerRequests,
  type ContainerText,
  decide,
  domMatches,
  frameRefusal,
  inScope,
  parseLocator,
  QUERY_CANDIDATE_LIMIT,
  roleMatches,
} from "../../../src/snapshot/query.ts";

/** Builds a preorder tree from [depth, role, name, target?] rows; backend ids are index + 100. */
function tree(rows: Array<[number, string, string, boolean?]>): SnapNode[] {
  const nodes: SnapNode[] = [];
  const stack: number[] = [];
  rows.forEach(([depth, role, name, target], index) => {
    stack.length = depth;
    const parent = depth > 0 ? stack[depth - 1] : undefined;
    nodes.push({
      index,
      role,
      name,
      states: {},
      backendNodeId: index + 100,
      depth,
      parent,
      children: [],
      target: target ?? false,
      editable: false,
      focused: false,
      link: false,
    });
    if (parent !== undefined) nodes[parent].children.push(index);
    stack[depth] = index;
  });
  return nodes;
}

const ICON = "\uE872";

// 0 root; a list of files with unnamed icon buttons; a decorated button; a heading; a grid row.
const page = tree([
  [0, "RootWebArea", "Files"],
  [1, "list", "Files"],
  [2, "listitem", ""],
  [3, "StaticText", "report.pdf"],
  [3, "button", ICON, true], // 4
  [2, "listitem", ""],
  [3, "StaticText", "notes.txt"],
  [3, "button", "", true], // 7
  [1, "button", "Cargo.toml, (File)", true], // 8
  [1, "heading", "Release notes"], // 9
  [1, "row", ""], // 10
  [2, "cell", ""], // 11
  [3, "button", "", true], // 12
  [1, "button", "", true], // 13: no explicit container
]);

const containers = new Map<number, ContainerText>([
  [4, { kind: "explicit", text: "report.pdf" }],
  [7, { kind: "explicit", text: "notes.txt" }],
  [12, { kind: "explicit", text: "Remove" }], // the cell, not the row
  [13, { kind: "generic", texts: ["Alpha card", "x".repeat(CONTAINER_TEXT_BOUND + 1)] }],
]);

function run(loc: Parameters<typeof parseLocator>[0], scope?: number) {
  const spec = parseLocator(loc);
  const primary = roleMatches(page, spec, scope, containers, spec.exact);
  const requests = containerRequests(page, spec, scope);
  return decide({
    primary,
    relaxed: spec.exact ? roleMatches(page, spec, scope, containers, false) : undefined,
    dropped: requests.length > 0
      ? roleMatches(page, { ...spec, key: undefined }, scope, containers, false)
      : undefined,
  });
}

Deno.test("parseLocator takes exactly one form and refuses keys that are only icons or invisible", () => {
  assertEquals(parseLocator({ role: "Button", name: "Go" }), {
    kind: "role",
    role: "button",
    key: "Go",
    exact: false,
  });
  assertEquals(parseLocator({ test_id: "x", exact: false }).exact, true, "test ids compare as identifiers");
  assertThrows(() => parseLocator({ role: "button", label: "x" }));
  assertThrows(() => parseLocator({ name: "Go" }));
  assertThrows(() => parseLocator({ text: `${ICON}\u200B` }), "icon glyphs");
  assertEquals(parseLocator({ role: "button", name: "" }).key, "", "a literal empty name means unnamed");
});

Deno.test("text keys: all-icon queries match nothing; supplementary icon glyphs and bidi marks are ignored", () => {
  assert(!textMatches("", ICON, false));
  assert(!textMatches(ICON, ICON, true));
  assert(textMatches(ICON, "", true), "an all-icon name is unnamed");
  assertEquals(normalizeText("Open\u{F0001}menu\u2066"), "Open menu");
});

Deno.test("a name match is unique with its node; several are ambiguous; past the cap truncated", () => {
  const unique = run({ role: "button", name: "Cargo" });
  assertEquals([unique.outcome, unique.match?.index, unique.match?.by], ["unique", 8, "name"]);
  const many = tree([
    [0, "RootWebArea", ""],
    ...Array.from({ length: 25 }, () =>
      [1, "button", "Item", true] as [
        number,
        string,
        string,
        boolean,
      ]),
  ]);
  const spec = parseLocator({ role: "button", name: "Item" });
  const truncated = decide({ primary: roleMatches(many, spec, undefined, new Map(), false) });
  assertEquals([truncated.outcome, truncated.match_count, truncated.saturated], ["truncated", 20, true]);
  assertEquals(truncated.match, undefined);
  const three = decide({ primary: roleMatches(many.slice(0, 4), spec, undefined, new Map(), false) });
  assertEquals([three.outcome, three.match_count, three.candidates.length, three.match], [
    "ambiguous",
    3,
    3,
    undefined,
  ]);
});

Deno.test("containers: unnamed controls qualify by their nearest explicit container, never past it", () => {
  assertEquals(run({ role: "button", name: "notes.txt" }).match?.index, 7);
  assertEquals(run({ role: "button", name: "report.pdf", exact: true }).match?.by, "container");
  const requests = containerRequests(page, parseLocator({ role: "button", name: "x" }), undefined);
  assertEquals(requests.map((r) => [r.index, r.container]), [[4, 2], [7, 5], [12, 11], [13, undefined]]);
  // Named controls never qualify by container text.
  assertEquals(run({ role: "button", name: "Files" }).outcome, "no_match");
});

Deno.test("generic ancestors qualify only within the container-scope bound", () => {
  assertEquals(run({ role: "button", name: "Alpha card" }).match?.index, 13);
  const long = "x".repeat(CONTAINER_TEXT_BOUND + 1);
  assert(!containerQualifies({ kind: "generic", texts: [long + " Zebra"] }, "Zebra", false));
  assert(!containerQualifies({ kind: "generic", texts: ["other", long, "Zebra"] }, "Zebra", false));
  assert(containerQualifies({ kind: "generic", texts: ["other", "Zebra row"] }, "Zebra", false));
});

Deno.test("no_match follow-ups: relaxed exact count, container-dropped count, non-actionable count", () => {
  const cargo = run({ role: "button", name: "Cargo.toml", exact: true });
  assertEquals(cargo.outcome, "no_match");
  assertEquals(cargo.relaxed_exact, { count: 1, saturated: false });
  assertEquals(cargo.container_dropped, { count: 5, saturated: false });
  assertEquals(run({ role: "button", name: "Nothing" }).relaxed_exact, undefined, "no exact matcher used");
  assertEquals(
    run({ role: "button", name: "Nothing", exact: true }).relaxed_exact,
    undefined,
    "relaxing finds none",
  );

  const heading = run({ role: "heading", name: "Release notes" });
  assertEquals([heading.outcome, heading.non_actionable], ["no_match", { count: 1, saturated: false }]);
  assertEquals(heading.container_dropped, undefined, "headings have no unnamed candidates here");
  assertEquals(run({ role: "button", name: "Release notes" }).non_actionable, undefined);
});

Deno.test("scope keeps strict descendants only", () => {
  assert(inScope(page, 4, 2));
  assert(!inScope(page, 2, 2));
  assert(!inScope(page, 7, 2));
  assertEquals(run({ role: "button" }, 5).match?.index, 7);
  const scoped = run({ role: "button", name: "nothing.zip" }, 1);
  assertEquals(scoped.container_dropped, { count: 2, saturated: false });
});

Deno.test("DOM hits: text inside a target is that target; other elements stay distinct non-actionable", () => {
  const hits = [{ element: 900, node: 8 }, { element: 901, node: 8 }, { element: 902, node: 9 }, {
    element: 903,
  }];
  const matches = domMatches(page, hits, undefined, "text");
  assertEquals(matches.map((m) => [m.key, m.actionable]), [["n8", true], ["e902", false], ["e903", false]]);
  const decision = decide({ primary: matches });
  assertEquals(decision.match?.index, 8);
  // Outside the scope a target is not actionable.
  assertEquals(domMatches(page, [{ element: 900, node: 8 }], 2, "text")[0].actionable, false);
});

Deno.test("actions act on a unique target, else on the one matched element when nothing is actionable", () => {
  const only = domMatches(page, [{ element: 950, node: 9 }], undefined, "text");
  assertEquals(actionMatch(only, decide({ primary: only }))?.element, 950);
  const two = domMatches(page, [{ element: 950 }, { element: 951 }], undefined, "text");
  const d = decide({ primary: two });
  assertEquals([d.non_actionable?.count, actionMatch(two, d)], [2, undefined]);
  const cap = QUERY_CANDIDATE_LIMIT;
  const lots = domMatches(
    page,
    Array.from({ length: cap + 3 }, (_, i) => ({ element: i })),
    undefined,
    "text",
  );
  assertEquals(decide({ primary: lots }).non_actionable, { count: cap, saturated: true });
});

Deno.test("frames: srcdoc inherits its parent's origin; data: never qualifies, even under an opaque parent", () => {
  const main = { url: "http://127.0.0.1:8000/query.html", origin: "http://127.0.0.1:8000" };
  assertEquals(frameRefusal([main, { url: "about:srcdoc", origin: main.origin }]), undefined);
  assertEquals(frameRefusal([main, { url: "http://127.0.0.1:8000/a.html", origin: main.origin }]), undefined);
  assert(frameRefusal([main, { url: "data:text/html,x", origin: "null" }])?.includes("data:"));
  const opaque = { url: "data:text/html,top", origin: "null" };
  assert(frameRefusal([opaque, { url: "data:text/html,x", origin: "null" }])?.includes("data:"));
  assertEquals(frameRefusal([opaque, { url: "about:srcdoc", origin: "null" }]), undefined);
  assert(frameRefusal([main, { url: "about:srcdoc", origin: "null" }])?.includes("sandboxed"));
  assert(
    frameRefusal([main, { url: "http://127.0.0.1:9000/", origin: "http://127.0.0.1:9000" }])?.includes(
      "cross",
    ),
  );
});
