import { assert, assertEquals } from "../../assert.ts";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import { parseSelector, querySelectorAll } from "../../../src/pagestate/selector.ts";
import { NodeType } from "@rrweb/types";
import type { eventWithTime } from "@rrweb/types";
import { addsFor, idOf, Rec } from "./rrweb_events.ts";
import { cpuMs, el } from "./mirror_helpers.ts";

Deno.test("same-origin iframe documents: in the snapshot, attached later, or before their iframe exists", () => {
  const r = new Rec();
  const inner = r.doc(r.el("html", {}, r.el("body", {}, r.el("button", { id: "in-frame" }, "Pay"))));
  const snap = r.page(r.el("iframe", { id: "f1" }, inner), r.el("iframe", { id: "f2" }));
  const m = new DomMirror();
  m.apply(r.full(snap));
  assertEquals(el(m, "#in-frame").text, "");
  assertEquals(el(m, "#f1").children[0].kind, "document");
  assertEquals(
    querySelectorAll(m.document ?? el(m, "html"), parseSelector("button")).length,
    0,
    "frames only on request",
  );
  // rrweb attaches a loaded iframe's document with an isAttachIframe mutation.
  const second = r.doc(r.el("html", {}, r.el("body", {}, r.el("a", { id: "link", href: "/x" }, "x"))));
  const ch = m.apply(
    r.mutation({ adds: [{ parentId: idOf(snap, "f2"), nextId: null, node: second }], isAttachIframe: true }),
  );
  assertEquals(ch?.added.length, 5);
  assertEquals(el(m, "#link").attrs.get("href"), "/x");
  // A navigation inside the frame attaches a new document, replacing the old one.
  const third = r.doc(r.el("html", {}, r.el("body", {}, r.el("h1", { id: "new" }, "new"))));
  m.apply(
    r.mutation({ adds: [{ parentId: idOf(snap, "f2"), nextId: null, node: third }], isAttachIframe: true }),
  );
  assertEquals(m.node(idOf(second, "link")), undefined);
  assertEquals(el(m, "#f2").children.length, 1);
  // The attach may be emitted before the iframe itself is added: it waits for the iframe.
  const early = r.doc(r.el("html", {}, r.el("body", {}, r.el("p", { id: "late" }, "late"))));
  const iframeId = r.nextId++;
  m.apply(r.mutation({ adds: [{ parentId: iframeId, nextId: null, node: early }], isAttachIframe: true }));
  assertEquals(m.warnings, 0);
  m.apply(
    r.mutation({
      adds: [{
        parentId: el(m, "body").id,
        nextId: null,
        node: {
          type: NodeType.Element,
          tagName: "iframe",
          attributes: { id: "f3" },
          childNodes: [],
          id: iframeId,
        },
      }],
    }),
  );
  assertEquals(el(m, "#late").parent?.tag, "body");
  assertEquals(el(m, "#f3").children[0].kind, "document");
});

Deno.test("shadow roots are flattened under their host", () => {
  const r = new Rec();
  const shadowChild = r.el("button", { id: "shadow-btn" }, "Inside");
  const shadowSn = { ...shadowChild, isShadow: true };
  const host = {
    ...r.el("my-widget", { id: "host" }, shadowSn, r.el("span", { id: "light" }, "slot")),
    isShadowHost: true,
  };
  const snap = r.page(host);
  const m = new DomMirror();
  m.apply(r.full(snap));
  assertEquals(el(m, "#shadow-btn").parent?.attrs.get("id"), "host");
  const later = { ...r.el("input", { id: "added-in-shadow" }), isShadow: true };
  m.apply(r.mutation({ adds: [{ parentId: host.id, nextId: null, node: later }] }));
  assertEquals(el(m, "#host > #added-in-shadow").tag, "input");
});

Deno.test("timings: a 5,000-node snapshot, 10,000 mutations, a clone", () => {
  const r = new Rec();
  const rows = [];
  for (let i = 0; i < 1000; i++) {
    rows.push(
      r.el(
        "tr",
        { class: "row", "data-i": String(i) },
        r.el("td", {}, `cell ${i}`),
        r.el("td", {}, r.el("button", {})),
      ),
    );
  }
  const snap = r.page(r.el("table", {}, r.el("tbody", { id: "tb" }, ...rows)));
  const fullEvent = r.full(snap);
  const tbody = idOf(snap, "tb");
  const muts: eventWithTime[] = [];
  for (let i = 0; i < 2500; i++) {
    const row = r.el("tr", { class: "added" }, r.el("td", {}, `new ${i}`));
    muts.push(r.mutation({ adds: addsFor(tbody, row, rows[i % rows.length].id) })); // 3 adds
    muts.push(
      r.mutation({
        attributes: [{ id: rows[i % rows.length].id, attributes: { class: i % 2 ? "row odd" : "row" } }],
      }),
    );
    muts.push(
      r.mutation({
        texts: [{
          id: row.type === NodeType.Element && row.childNodes[0].type === NodeType.Element
            ? row.childNodes[0].childNodes[0].id
            : 0,
          value: `changed ${i}`,
        }],
      }),
    );
    muts.push(r.mutation({ removes: [{ parentId: tbody, id: row.id }] }));
  }
  const m = new DomMirror();
  const snapMs = cpuMs(() => m.apply(fullEvent));
  assertEquals(m.size, 5007);
  const mutMs = cpuMs(() => {
    for (const e of muts) m.apply(e);
  });
  assertEquals(m.size, 5007);
  assertEquals(m.warnings, 0);
  let copy = m;
  const cloneMs = cpuMs(() => {
    for (let i = 0; i < 10; i++) copy = m.clone();
  }) / 10;
  assert(copy !== m);
  assertEquals(copy.size, 5007);
  console.error(
    `mirror (CPU time): 5,000-node snapshot ${snapMs.toFixed(1)} ms; 10,000 mutations ${
      mutMs.toFixed(1)
    } ms; ` +
      `clone ${cloneMs.toFixed(2)} ms`,
  );
  assert(snapMs < 200 && mutMs < 1000 && cloneMs < 100, "within budget");
});

Deno.test("a checkpoint keeps an iframe's document until rrweb re-attaches it (ids persist across checkpoints)", () => {
  const r = new Rec();
  const build = () => r.page(r.el("iframe", { id: "f" }));
  const snap = build();
  const m = new DomMirror();
  m.apply(r.meta("https://x.test/"));
  m.apply(r.full(snap));
  const iframe = idOf(snap, "f");
  const inner = r.doc(r.el("html", {}, r.el("body", {}, r.el("p", { id: "in" }, "framed"))));
  m.apply(r.mutation({ adds: [{ parentId: iframe, nextId: null, node: inner }], isAttachIframe: true }));
  // rrweb 2.x re-serializes a checkpoint with the same ids; the frame's document is attached a task later,
  // and a mutation inside the frame can arrive before that.
  m.apply(r.meta("https://x.test/"));
  const c = m.apply(r.full(snap));
  assertEquals(el(m, "#in").text, "", "still there after the checkpoint");
  assert(c?.added.includes(idOf(inner, "in")));
  const p = idOf(inner, "in");
  m.apply(r.mutation({ attributes: [{ id: p, attributes: { class: "seen" } }] }));
  assertEquals(el(m, "#in").attrs.get("class"), "seen");
  m.apply(r.mutation({ adds: [{ parentId: iframe, nextId: null, node: inner }], isAttachIframe: true }));
  assertEquals(el(m, "#in").attrs.has("class"), false, "the attach replaces it");
  assertEquals(m.warnings, 0);
  // A new document (DomContentLoaded, or another href) carries nothing over.
  m.apply(r.domContentLoaded());
  m.apply(r.meta("https://x.test/"));
  m.apply(r.full(snap));
  assertEquals(el(m, "#f").children.length, 0);
  m.apply(r.mutation({ adds: [{ parentId: iframe, nextId: null, node: inner }], isAttachIframe: true }));
  m.apply(r.meta("https://x.test/other"));
  m.apply(r.full(snap));
  assertEquals(el(m, "#f").children.length, 0);
});

Deno.test("the committed real recordings replay without a single unknown id", async () => {
  for (const name of ["checkout", "table300", "utility_soup"]) {
    const url = new URL(`../../../fixtures/recordings/${name}.json`, import.meta.url);
    const events = JSON.parse(await Deno.readTextFile(url)) as eventWithTime[];
    const m = new DomMirror();
    for (const e of events) m.apply(e);
    assertEquals(m.warnings, 0, name);
    assert(m.document && m.size > 50, `${name}: a document`);
    assert(m.href.endsWith(`/${name}.html`), m.href);
  }
});
