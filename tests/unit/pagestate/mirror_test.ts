import { assert, assertEquals } from "../../assert.ts";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import { applyStyleDiff } from "../../../src/pagestate/inline_style.ts";
import { parseSelector, querySelectorAll } from "../../../src/pagestate/selector.ts";
import { NodeType } from "@rrweb/types";

import { addsFor, findSn, idOf, Rec } from "./rrweb_events.ts";
import { body, el } from "./mirror_helpers.ts";

Deno.test("meta and a full snapshot build the document, keeping rrweb's internals out of attrs", () => {
  const r = new Rec();
  const snap = r.page(
    r.el("style", { _cssText: "a { color: red }" }),
    r.el("div", { id: "box", class: "scroller", rr_scrollTop: 120, rr_scrollLeft: 4 }, "hello"),
    r.el("input", { id: "email", type: "email", value: "****" }),
    r.el("input", { id: "agree", type: "checkbox", checked: true }),
    r.el("input", { id: "was-default", type: "radio", checked: "" }),
    r.el("input", { id: "go", type: "submit", value: "Pay" }),
    r.el("textarea", { id: "note", value: "typed" }),
    r.el(
      "select",
      { id: "country", value: "de" },
      r.el("option", { value: "fr" }, "France"),
      r.el("option", { value: "de", selected: true }, "Germany"),
    ),
    r.comment("c"),
    r.svg("svg", { viewBox: "0 0 1 1" }, r.svg("path", { d: "M0" })),
    r.el("video", { rr_mediaState: "paused", rr_mediaCurrentTime: 2, src: "v.mp4" }),
  );
  const m = new DomMirror();
  assertEquals(m.document, undefined);
  const metaChange = m.apply(r.meta("https://shop.test/checkout", 1024, 640));
  assertEquals(metaChange?.kind, "meta");
  assertEquals(m.href, "https://shop.test/checkout");
  assertEquals(m.viewport, { width: 1024, height: 640 });
  const c = m.apply(r.full(snap, { left: 0, top: 300 }));
  assert(c);
  assertEquals(c.kind, "snapshot");
  assertEquals(c.added.length, m.size, "every node of the snapshot is reported as added");
  assertEquals(m.size, 22);
  assertEquals(m.document?.kind, "document");
  assertEquals(m.document?.children.map((n) => n.kind), ["doctype", "element"]);
  assertEquals(el(m, "style").attrs.size, 0, "_cssText is not an attribute");
  assertEquals([...el(m, "#box").attrs.keys()], ["id", "class"], "rr_* are not attributes");
  assertEquals(m.scroll(idOf(snap, "box")), { x: 4, y: 120 }, "rr_scroll* become the element's scroll");
  assertEquals(m.scroll(snap.id), { x: 0, y: 300 }, "initialOffset is the window scroll");
  assertEquals(el(m, "video").attrs.get("src"), "v.mp4");
  assertEquals(el(m, "video").attrs.has("rr_mediaState"), false);
  assertEquals(el(m, "#email").value, "****", "the recorded (masked) value is the input's value");
  assertEquals(el(m, "#agree").checked, true);
  assertEquals(
    el(m, "#agree").attrs.get("checked"),
    "",
    "true becomes an empty attribute, as rrweb rebuilds it",
  );
  assertEquals(
    el(m, "#was-default").checked,
    false,
    "a string checked is the default attribute, not the state",
  );
  assertEquals(el(m, "#go").value, undefined, "a submit button's value is its label, not form state");
  assertEquals(el(m, "#note").value, "typed");
  assertEquals(el(m, "#note").attrs.has("value"), false);
  assertEquals(el(m, "#country").value, "de");
  assertEquals(el(m, "option[selected]").attrs.get("value"), "de");
  assertEquals(el(m, "svg").isSvg, true);
  assertEquals(el(m, "path").parent?.tag, "svg");
  assertEquals(m.warnings, 0);
});

Deno.test("mutations: removes, adds in the recorder's order, texts and attributes", () => {
  const r = new Rec();
  const snap = r.page(
    r.el("ul", { id: "list" }, r.el("li", { id: "a" }, "one"), r.el("li", { id: "c" }, "three")),
    r.el("p", { id: "msg" }, "hi"),
  );
  const m = new DomMirror();
  m.apply(r.meta("https://x.test/"));
  m.apply(r.full(snap));
  const list = idOf(snap, "list");
  const c = idOf(snap, "c");
  const liB = r.el("li", { id: "b", class: "new" }, r.el("b", {}, "two"));
  const msgText = el(m, "#msg").children[0].id;
  const ch = m.apply(r.mutation({
    adds: addsFor(list, liB, c),
    removes: [{ parentId: idOf(snap, "list"), id: idOf(snap, "a") }],
    texts: [{ id: msgText, value: "first" }, { id: msgText, value: "last wins" }],
    attributes: [{ id: idOf(snap, "msg"), attributes: { class: "error", role: "alert" } }],
  }));
  assert(ch);
  assertEquals(ch.kind, "mutation");
  assertEquals(ch.removed, [idOf(snap, "a")]);
  assertEquals(ch.added.length, 3, "li, b and the text");
  assertEquals(ch.texts, [msgText]);
  assertEquals(ch.attributes, [idOf(snap, "msg")]);
  assertEquals(
    body(m),
    '<ul id="list"><li id="b" class="new"><b>two</b></li><li id="c">three</li></ul><p id="msg" class="error" role="alert">last wins</p>',
  );
  assertEquals(m.node(idOf(snap, "a")), undefined, "a removed subtree leaves the id map");
  assertEquals(m.node(snap.id + 100), undefined);
  // Attribute null removes it; a style object is applied to the inline style; internals are ignored.
  m.apply(
    r.mutation({
      attributes: [{ id: idOf(snap, "msg"), attributes: { role: null, style: "color: red; margin: 0" } }],
    }),
  );
  m.apply(
    r.mutation({
      attributes: [{
        id: idOf(snap, "msg"),
        attributes: { style: { color: false, width: ["10px", "important"], margin: "1px" } },
      }],
    }),
  );
  const ignored = m.apply(
    r.mutation({ attributes: [{ id: idOf(snap, "msg"), attributes: { rr_scrollTop: "4", _cssText: "x" } }] }),
  );
  assertEquals(ignored?.attributes, [], "only rrweb internals: nothing changed");
  assertEquals(el(m, "#msg").attrs.get("style"), "margin: 1px; width: 10px !important;");
  assertEquals(el(m, "#msg").attrs.has("role"), false);
  assertEquals(m.warnings, 0);
});

Deno.test("adds whose parent or next sibling come later in the batch are queued and resolved", () => {
  const r = new Rec();
  const snap = r.page(r.el("div", { id: "root" }));
  const m = new DomMirror();
  m.apply(r.full(snap));
  const root = idOf(snap, "root");
  const table = r.el(
    "table",
    {},
    r.el("tr", { id: "r1" }, r.el("td", {}, "1")),
    r.el("tr", { id: "r2" }, r.el("td", {}, "2")),
    r.el("tr", { id: "r3" }),
  );
  const adds = addsFor(root, table);
  // Worst case: the batch lists every child before its parent and every node before its next sibling.
  m.apply(r.mutation({ adds: adds.slice().reverse() }));
  assertEquals(
    body(m),
    '<div id="root"><table><tr id="r1"><td>1</td></tr><tr id="r2"><td>2</td></tr><tr id="r3"></tr></table></div>',
  );
  // previousId places a node right after its previous sibling when no next is given.
  const x = r.el("tr", { id: "x" });
  m.apply(
    r.mutation({ adds: [{ parentId: table.id, previousId: idOf(table, "r1"), nextId: null, node: x }] }),
  );
  assertEquals(querySelectorAll(el(m, "table"), parseSelector("tr")).map((n) => n.attrs.get("id")), [
    "r1",
    "x",
    "r2",
    "r3",
  ]);
  assertEquals(m.warnings, 0);
  // An add whose next sibling never arrives is dropped and counted, like the Replayer's resolve queue.
  m.apply(
    r.mutation({
      adds: [{ parentId: root, nextId: 99_999, node: r.el("span") }, {
        parentId: 88_888,
        nextId: null,
        node: r.el("i"),
      }],
    }),
  );
  assertEquals(m.warnings, 2);
  assertEquals(querySelectorAll(el(m, "#root"), parseSelector("span, i")).length, 0);
});

Deno.test("an add of a node that already exists moves it with its subtree", () => {
  const r = new Rec();
  const snap = r.page(
    r.el("div", { id: "from" }, r.el("section", { id: "moving" }, r.el("b", {}, "kept"))),
    r.el("div", { id: "to" }),
  );
  const m = new DomMirror();
  m.apply(r.full(snap));
  const moving = findSn(snap, (n) => n.type === NodeType.Element && n.attributes.id === "moving");
  assert(moving && moving.type === NodeType.Element);
  const ch = m.apply(
    r.mutation({ adds: [{ parentId: idOf(snap, "to"), nextId: null, node: { ...moving, childNodes: [] } }] }),
  );
  assertEquals(body(m), '<div id="from"></div><div id="to"><section id="moving"><b>kept</b></section></div>');
  assertEquals(ch?.added, [moving.id]);
  assertEquals(m.node(moving.id)?.parent?.attrs.get("id"), "to");
});

Deno.test("unknown ids are skipped and counted, never thrown", () => {
  const r = new Rec();
  const snap = r.page(r.el("p", { id: "p" }, "x"));
  const m = new DomMirror();
  // Before any snapshot everything is unknown.
  m.apply(r.mutation({ attributes: [{ id: 5, attributes: { a: "b" } }] }));
  m.apply(r.input(7, "v"));
  m.apply(r.scroll(8, 0, 10));
  assertEquals(m.warnings, 3);
  m.apply(r.full(snap));
  const p = idOf(snap, "p");
  const ch = m.apply(r.mutation({
    removes: [{ parentId: 1234, id: p }, { parentId: p, id: 4321 }],
    texts: [{ id: 5555, value: "t" }],
    attributes: [{ id: 6666, attributes: { x: "y" } }],
  }));
  assertEquals(ch?.removed, []);
  assertEquals(m.warnings, 7);
  // A text or attribute change of a node removed in the same batch is not a warning (rrweb skips it too).
  const textId = el(m, "#p").children[0].id;
  m.apply(r.mutation({ removes: [{ parentId: p, id: textId }], texts: [{ id: textId, value: "gone" }] }));
  assertEquals(m.warnings, 7);
  assertEquals(el(m, "#p").children.length, 0);
});

Deno.test("input events set value and checked; radio groups arrive one event per radio; selects take values", () => {
  const r = new Rec();
  const snap = r.page(
    r.el("input", { id: "name", type: "text" }),
    r.el("input", { id: "r1", type: "radio", name: "ship", value: "std", checked: true }),
    r.el("input", { id: "r2", type: "radio", name: "ship", value: "fast" }),
    r.el("input", { id: "cb", type: "checkbox" }),
    r.el(
      "select",
      { id: "s" },
      r.el("option", { id: "o1", value: "a", selected: true }, "A"),
      r.el("option", { id: "o2", value: "b" }, "B"),
    ),
  );
  const m = new DomMirror();
  m.apply(r.full(snap));
  assertEquals(el(m, "#cb").checked, false);
  const c = m.apply(r.input(idOf(snap, "name"), "****"));
  assertEquals(c?.kind, "input");
  assertEquals(c?.target, idOf(snap, "name"));
  assertEquals(el(m, "#name").value, "****");
  assertEquals(el(m, "#name").checked, undefined, "a text field has no checkedness");
  m.apply(r.input(idOf(snap, "r2"), "fast", true));
  m.apply(r.input(idOf(snap, "r1"), "std", false));
  m.apply(r.input(idOf(snap, "cb"), "on", true));
  const checked = (): string[] =>
    querySelectorAll(m.document ?? el(m, "html"), parseSelector(":checked")).map((n) =>
      n.attrs.get("id") ?? ""
    );
  assertEquals(checked(), ["r2", "cb", "o1"]);
  m.apply(r.input(idOf(snap, "s"), "b"));
  assertEquals(el(m, "#s").value, "b");
  assertEquals(checked(), ["r2", "cb", "o2"], "the select's value decides which option is selected");
  assertEquals(m.warnings, 0);
  assertEquals(m.apply(r.input(-1, "x")), undefined, "rrweb's -1 id (an unserialized node) is not an event");
});

Deno.test("scroll and viewport events; other sources are ignored without failing", () => {
  const r = new Rec();
  const snap = r.page(r.el("div", { id: "pane" }));
  const m = new DomMirror();
  m.apply(r.meta("https://x.test/", 800, 600));
  m.apply(r.full(snap));
  assertEquals(m.apply(r.scroll(snap.id, 0, 500))?.kind, "scroll");
  m.apply(r.scroll(idOf(snap, "pane"), 10, 20));
  assertEquals(m.scroll(snap.id), { x: 0, y: 500 });
  assertEquals(m.scroll(idOf(snap, "pane")), { x: 10, y: 20 });
  assertEquals(m.scroll(idOf(snap, "pane") + 1000), { x: 0, y: 0 });
  assertEquals(m.apply(r.viewport(390, 844))?.kind, "viewport");
  assertEquals(m.viewport, { width: 390, height: 844 });
  assertEquals(m.apply(r.mouseMove(1, 2)), undefined);
  assertEquals(m.apply(r.styleRule(idOf(snap, "pane"))), undefined);
  assertEquals(m.apply(r.domContentLoaded()), undefined);
  assertEquals(m.apply(r.load()), undefined);
  assertEquals(m.warnings, 0);
});

Deno.test("a new full snapshot replaces the whole document", () => {
  const r = new Rec();
  const one = r.page(r.el("p", { id: "old" }));
  const m = new DomMirror();
  m.apply(r.full(one, { left: 0, top: 40 }));
  m.apply(r.scroll(idOf(one, "old"), 0, 5));
  const two = r.page(r.el("p", { id: "new" }));
  const c = m.apply(r.full(two));
  assertEquals(c?.removed, [one.id]);
  assertEquals(m.node(idOf(one, "old")), undefined);
  assertEquals(m.scroll(idOf(one, "old")), { x: 0, y: 0 });
  assertEquals(body(m), '<p id="new"></p>');
});

Deno.test("the html and doctype of a document are exclusive; a textarea holds one text node", () => {
  const r = new Rec();
  const snap = r.page(r.el("textarea", { id: "t" }, "old"));
  const m = new DomMirror();
  m.apply(r.full(snap));
  m.apply(r.mutation({ adds: [{ parentId: idOf(snap, "t"), nextId: null, node: r.text("new") }] }));
  assertEquals(el(m, "#t").children.map((n) => n.text), ["new"]);
  const html2 = r.el("html", {}, r.el("body", {}, r.el("main", { id: "reopened" })));
  m.apply(r.mutation({ adds: addsFor(snap.id, html2) }));
  assertEquals(m.document?.children.filter((n) => n.tag === "html").length, 1);
  assertEquals(el(m, "#reopened").tag, "main");
  assertEquals(m.node(idOf(snap, "t")), undefined);
});

Deno.test("clone is deep and independent", () => {
  const r = new Rec();
  const snap = r.page(r.el("p", { id: "p", class: "a" }, "text"), r.el("input", { id: "i" }));
  const m = new DomMirror();
  m.apply(r.meta("https://x.test/a"));
  m.apply(r.full(snap));
  m.apply(r.scroll(snap.id, 0, 10));
  const copy = m.clone();
  m.apply(
    r.mutation({
      attributes: [{ id: idOf(snap, "p"), attributes: { class: "b" } }],
      removes: [{ parentId: el(m, "body").id, id: idOf(snap, "i") }],
    }),
  );
  m.apply(r.scroll(snap.id, 0, 99));
  m.apply(r.meta("https://x.test/b"));
  assertEquals(el(copy, "#p").attrs.get("class"), "a");
  assert(copy.node(idOf(snap, "i")), "the copy keeps what the original removed");
  assertEquals(copy.scroll(snap.id), { x: 0, y: 10 });
  assertEquals(copy.href, "https://x.test/a");
  assert(el(copy, "#p") !== el(m, "#p"));
  assert(el(copy, "#p").parent === el(copy, "body"), "parents point into the copy");
  copy.apply(r.input(idOf(snap, "i"), "typed"));
  assertEquals(m.node(idOf(snap, "i")), undefined);
  assertEquals(el(copy, "#i").value, "typed");
});

Deno.test("inline style diffs follow setProperty / removeProperty", () => {
  assertEquals(
    applyStyleDiff("color: red; background: url(a;b.png)", { color: "blue" }),
    "color: blue; background: url(a;b.png);",
  );
  assertEquals(applyStyleDiff("color: red", { color: false }), "");
  assertEquals(
    applyStyleDiff("", { "--Gap": "2px", top: ["0", "important"] }),
    "--Gap: 2px; top: 0 !important;",
  );
  assertEquals(applyStyleDiff("COLOR: red", { color: "" }), "");
});

Deno.test("removes follow the DOM: a stale parent leaves the node, a removed subtree's descendants are quiet", () => {
  const r = new Rec();
  const snap = r.page(
    r.el("div", { id: "a" }, r.el("span", { id: "s" }, r.el("b", { id: "b" }))),
    r.el("div", { id: "z" }),
  );
  const m = new DomMirror();
  m.apply(r.full(snap));
  const [a, s, b, z] = ["a", "s", "b", "z"].map((id) => idOf(snap, id));
  // The span moved to #z in one batch; another observer's batch reports its removal from #a afterwards.
  m.apply(
    r.mutation({
      adds: [{
        parentId: z,
        nextId: null,
        node: { type: NodeType.Element, tagName: "span", attributes: { id: "s" }, childNodes: [], id: s },
      }],
    }),
  );
  m.apply(r.mutation({ removes: [{ parentId: a, id: s }] }));
  assertEquals(el(m, "#s").parent?.attrs.get("id"), "z");
  assertEquals(m.warnings, 0);
  // Removing a subtree and one of its descendants in the same batch (rrweb lists both at times).
  m.apply(r.mutation({ removes: [{ parentId: z, id: s }, { parentId: s, id: b }] }));
  assertEquals(m.node(b), undefined);
  assertEquals(m.warnings, 0);
});
