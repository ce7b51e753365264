import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { findElements } from "../../../src/pagestate/find.ts";
import { epochsOf } from "../../../src/pagestate/lifetimes.ts";
import { roleOf } from "../../../src/pagestate/roles.ts";
import type { TimedDomEvent } from "../../../src/pagestate/dom_types.ts";
import type { eventWithTime, serializedNodeWithId } from "@rrweb/types";
import { addsFor, idOf, Rec } from "./rrweb_events.ts";
import { el, page } from "./dom_tree.ts";

/** Events placed 10 ms apart from 1 s, with the at_ns of each returned by name. */
function timeline(events: eventWithTime[]): TimedDomEvent[] {
  return events.map((event, i) => ({ at_ns: 1_000_000_000 + i * 10_000_000, event }));
}
const nsOf = (i: number): number => 1_000_000_000 + i * 10_000_000;

function checkoutPage(r: Rec): serializedNodeWithId {
  return r.page(
    r.el("title", {}, "Pay here"),
    r.el(
      "form",
      { id: "checkout" },
      r.el("label", { for: "email" }, "Email"),
      r.el("input", { id: "email", type: "email", placeholder: "you@example.com" }),
      r.el("select", { id: "province" }, r.el("option", {}, "Ontario")),
      r.el("div", { id: "errors", role: "alert" }),
      r.el("button", { type: "submit" }, r.el("span", {}, "Pay now")),
      r.el("input", { type: "submit", value: "Pay later" }),
    ),
    r.el("nav", { "aria-label": "Main" }, r.el("a", { href: "/" }, "Home"), r.el("a", {}, "No link")),
    r.el("h2", {}, "Pay attention"),
  );
}

Deno.test("text matches are innermost, case-insensitive, and include name-ish attributes", () => {
  const r = new Rec();
  const snap = checkoutPage(r);
  const events = timeline([r.meta("https://shop.test/"), r.full(snap)]);
  const res = findElements(events, nsOf(1), { text: "pay" });
  assert(res.has_document);
  // <title> is not page text; the span (not its button) holds "Pay now"; the submit input is named by value.
  assertEquals(res.matches.map((m) => m.tag), ["span", "input", "h2"]);
  assertEquals(res.total, 3);
  assertEquals(res.matches[1].text, "Pay later");
  assertEquals(findElements(events, nsOf(1), { text: "YOU@example" }).matches[0].selector, "#email");
  assertEquals(findElements(events, nsOf(1), { text: "main" }).matches[0].tag, "nav");
  assertEquals(findElements(events, nsOf(1), { text: "nothing like this" }).total, 0);
});

Deno.test("roles: explicit, implicit, and combined with text and selector", () => {
  const r = new Rec();
  const snap = checkoutPage(r);
  const events = timeline([r.meta("https://shop.test/"), r.full(snap)]);
  const roles = (role: string) => findElements(events, nsOf(1), { role }, 10).matches.map((m) => m.tag);
  assertEquals(roles("button"), ["button", "input"]);
  assertEquals(roles("link"), ["a"], "an a without href is no link");
  assertEquals(roles("textbox"), ["input"]);
  assertEquals(roles("combobox"), ["select"]);
  assertEquals(roles("alert"), ["div"]);
  assertEquals(roles("navigation"), ["nav"]);
  assertEquals(roles("heading"), ["h2"]);
  assertEquals(roles("form"), ["form"]);
  const pay = findElements(events, nsOf(1), { role: "button", text: "pay now" });
  assertEquals(pay.matches.map((m) => [m.tag, m.role, m.text, m.selector, m.unique]), [
    ["button", "button", "Pay now", 'button[type="submit"]', true],
  ]);
  const scoped = findElements(events, nsOf(1), { selector: "form *", text: "pay" });
  assertEquals(scoped.matches.map((m) => m.tag), ["span", "input"]);
  assertThrows(() => findElements(events, nsOf(1), {}), "at least one");
  assertThrows(() => findElements(events, nsOf(1), { selector: "a:hover" }), "hover");
});

Deno.test("implicit roles of common tags", () => {
  const d = page(
    el("ul", {}, el("li")),
    el("table", {}, el("tbody", {}, el("tr", {}, el("th"), el("td")))),
    el("img", { alt: "logo" }),
    el("img", { alt: "" }),
    el("dialog"),
    el("main"),
    el("select", { multiple: "" }),
    el("input", { type: "checkbox" }),
    el("input", { type: "radio" }),
    el("input", { type: "hidden" }),
    el("textarea"),
    el("div", { role: "status polite" }),
    el("header"),
    el("article", {}, el("header")),
  );
  const all: string[] = [];
  const walk = (n: typeof d) => {
    for (const c of n.children) {
      if (c.kind !== "element") continue;
      all.push(`${c.tag}:${roleOf(c)}`);
      walk(c);
    }
  };
  walk(d);
  assertEquals(all.slice(3), [
    "ul:list",
    "li:listitem",
    "table:table",
    "tbody:rowgroup",
    "tr:row",
    "th:columnheader",
    "td:cell",
    "img:img",
    "img:presentation",
    "dialog:dialog",
    "main:main",
    "select:listbox",
    "input:checkbox",
    "input:radio",
    "input:null",
    "textarea:textbox",
    "div:status",
    "header:banner",
    "article:article",
    "header:null",
  ]);
});

Deno.test("at most limit matches, with the exact total; no document before the first snapshot", () => {
  const r = new Rec();
  const items = [];
  for (let i = 0; i < 12; i++) items.push(r.el("li", {}, `item ${i}`));
  const snap = r.page(r.el("ul", { id: "list" }, ...items));
  const events = timeline([r.meta("https://x.test/"), r.full(snap)]);
  const res = findElements(events, nsOf(1), { role: "listitem" });
  assertEquals(res.matches.length, 5);
  assertEquals(res.total, 12);
  assertEquals(res.matches[0].selector, "ul#list li");
  assertEquals(res.matches[0].unique, false);
  assertEquals(findElements(events, nsOf(1), { text: "item" }, 2).matches.map((m) => m.text), [
    "item 0",
    "item 1",
  ]);
  const before = findElements(events, nsOf(0), { text: "item" });
  assertEquals(before, { matches: [], total: 0, has_document: false, warnings: 0 });
});

Deno.test("lifetimes come from the mutations that added and removed the node", () => {
  const r = new Rec();
  const snap = checkoutPage(r);
  const errors = idOf(snap, "errors");
  const message = r.el("p", { class: "error" }, "Province is required");
  const events = timeline([
    r.meta("https://shop.test/"), // 0
    r.full(snap), // 1
    r.mouseMove(1, 1), // 2
    r.mutation({ adds: addsFor(errors, message) }), // 3: the message appears
    r.mutation({ attributes: [{ id: message.id, attributes: { class: "error shake" } }] }), // 4
    r.mutation({ removes: [{ parentId: errors, id: message.id }] }), // 5: and goes
    r.mouseMove(2, 2), // 6
  ]);
  const during = findElements(events, nsOf(4), { text: "province is required" });
  assertEquals(during.matches.length, 1);
  const m = during.matches[0];
  assertEquals(m.tag, "p");
  assertEquals(m.first_seen_ns, nsOf(3));
  assertEquals(m.last_seen_ns, nsOf(5));
  assertEquals(m.present_at_end, false);
  const form = findElements(events, nsOf(4), { selector: "#checkout" }).matches[0];
  assertEquals(form.first_seen_ns, nsOf(1), "in the first snapshot: first seen at the snapshot");
  assertEquals(form.last_seen_ns, null);
  assertEquals(form.present_at_end, true);
  assertEquals(
    findElements(events, nsOf(5), { text: "province is required" }).total,
    0,
    "gone at its removal",
  );
});

Deno.test("removing an ancestor ends the lifetimes of everything under it", () => {
  const r = new Rec();
  const snap = r.page(r.el("section", { id: "panel" }, r.el("button", { id: "inner" }, "Go")));
  const panel = idOf(snap, "panel");
  const bodyId = findParentId(snap, panel);
  const events = timeline([
    r.meta("https://x.test/"),
    r.full(snap),
    r.mutation({ removes: [{ parentId: bodyId, id: panel }] }),
  ]);
  const m = findElements(events, nsOf(1), { selector: "#inner" }).matches[0];
  assertEquals(m.last_seen_ns, nsOf(2));
});

function findParentId(root: serializedNodeWithId, id: number): number {
  const stack: serializedNodeWithId[] = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n || !("childNodes" in n)) continue;
    for (const c of n.childNodes) {
      if (c.id === id) return n.id;
      stack.push(c);
    }
  }
  throw new Error(`no parent of ${id}`);
}

/** The checkout page serialized again by a checkpoint: the same document with new ids. */
function reserialize(r: Rec, withMessage: boolean): serializedNodeWithId {
  const errorsChildren = withMessage ? [r.el("p", { class: "error" }, "Province is required")] : [];
  return r.page(
    r.el("title", {}, "Pay here"),
    r.el(
      "form",
      { id: "checkout" },
      r.el("label", { for: "email" }, "Email"),
      r.el("input", { id: "email", type: "email", placeholder: "you@example.com" }),
      r.el("select", { id: "province" }, r.el("option", {}, "Ontario")),
      r.el("div", { id: "errors", role: "alert" }, ...errorsChildren),
      r.el("button", { type: "submit" }, r.el("span", {}, "Pay now")),
      r.el("input", { type: "submit", value: "Pay later" }),
    ),
    r.el("nav", { "aria-label": "Main" }, r.el("a", { href: "/" }, "Home"), r.el("a", {}, "No link")),
    r.el("h2", {}, "Pay attention"),
  );
}

Deno.test("a node that survives a checkpoint keeps its first_seen, and its removal after it is exact", () => {
  const r = new Rec();
  const snap = checkoutPage(r);
  const message = r.el("p", { class: "error" }, "Province is required");
  const second = reserialize(r, true);
  const third = reserialize(r, true);
  const msgInThird = findByText(third, "Province is required");
  const events = timeline([
    r.meta("https://shop.test/"), // 0
    r.full(snap), // 1
    r.mutation({ adds: addsFor(idOf(snap, "errors"), message) }), // 2
    r.meta("https://shop.test/"), // 3: checkpoint, same href, no DomContentLoaded
    r.full(second), // 4
    r.mouseMove(1, 1), // 5
    r.meta("https://shop.test/"), // 6: a second checkpoint
    r.full(third), // 7
    r.mutation({ removes: [{ parentId: idOf(third, "errors"), id: msgInThird }] }), // 8
  ]);
  const epochs = epochsOf(events);
  assertEquals(epochs.map((e) => e.newDocument), [true, false, false]);
  // Asked before the checkpoints: the removal two checkpoints later is found through both.
  const early = findElements(events, nsOf(2), { text: "province is required" }).matches[0];
  assertEquals([early.first_seen_ns, early.last_seen_ns], [nsOf(2), nsOf(8)]);
  // Asked after them (new ids): first_seen is carried back through both checkpoints.
  const late = findElements(events, nsOf(7), { text: "province is required" }).matches[0];
  assertEquals(late.node_id, msgInThird);
  assertEquals([late.first_seen_ns, late.last_seen_ns, late.present_at_end], [nsOf(2), nsOf(8), false]);
  const form = findElements(events, nsOf(5), { selector: "form" }).matches[0];
  assertEquals([form.first_seen_ns, form.last_seen_ns], [nsOf(1), null]);
});

function findByText(root: serializedNodeWithId, text: string): number {
  const stack: serializedNodeWithId[] = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n || !("childNodes" in n)) continue;
    for (const c of n.childNodes) {
      if ("textContent" in c && c.textContent === text) return n.id;
      stack.push(c);
    }
  }
  throw new Error(`no element with ${text}`);
}

Deno.test("a node that appears only in a checkpoint (a missed mutation) is first seen at that checkpoint", () => {
  const r = new Rec();
  const snap = checkoutPage(r);
  const second = reserialize(r, true);
  const events = timeline([
    r.meta("https://shop.test/"),
    r.full(snap),
    r.meta("https://shop.test/"),
    r.full(second),
  ]);
  const m = findElements(events, nsOf(3), { text: "province is required" }).matches[0];
  assertEquals(m.first_seen_ns, nsOf(3));
});

Deno.test("a new document ends every lifetime: a reload (DomContentLoaded) or another href", () => {
  for (const navigation of ["reload", "href"] as const) {
    const r = new Rec();
    const snap = checkoutPage(r);
    const next = reserialize(r, false);
    const boundary: eventWithTime[] = navigation === "reload"
      ? [r.domContentLoaded(), r.meta("https://shop.test/")]
      : [r.meta("https://shop.test/thanks")];
    const events = timeline([
      r.meta("https://shop.test/"),
      r.full(snap),
      r.mouseMove(1, 1),
      ...boundary,
      r.full(next),
    ]);
    const epochs = epochsOf(events);
    assertEquals(epochs.map((e) => e.newDocument), [true, true], navigation);
    const before = findElements(events, nsOf(2), { selector: "form" }).matches[0];
    assertEquals(before.last_seen_ns, nsOf(3), `${navigation}: ends at the new document's first event`);
    assertEquals(before.present_at_end, false);
    const after = findElements(events, nsOf(3 + boundary.length), { selector: "form" }).matches[0];
    assertEquals(after.first_seen_ns, nsOf(3 + boundary.length), `${navigation}: a new lifetime`);
    assertEquals(after.last_seen_ns, null);
  }
});

Deno.test("a moved node keeps its lifetime", () => {
  const r = new Rec();
  const snap = r.page(
    r.el("div", { id: "a" }, r.el("button", { id: "b" }, "Move me")),
    r.el("div", { id: "c" }),
  );
  const b = idOf(snap, "b");
  const events = timeline([
    r.meta("https://x.test/"),
    r.full(snap),
    r.mutation({
      removes: [{ parentId: idOf(snap, "a"), id: b }],
      adds: [{
        parentId: idOf(snap, "c"),
        nextId: null,
        node: { type: 2, tagName: "button", attributes: { id: "b" }, childNodes: [], id: b },
      }],
    }),
  ]);
  const m = findElements(events, nsOf(1), { selector: "#b" }).matches[0];
  assertEquals([m.first_seen_ns, m.last_seen_ns], [nsOf(1), null]);
});

Deno.test("replays a real rrweb recording end to end (fixtures/recordings/checkout.json)", async () => {
  const url = new URL("../../../fixtures/recordings/checkout.json", import.meta.url);
  const raw = JSON.parse(await Deno.readTextFile(url)) as eventWithTime[];
  const t0 = raw[0].timestamp;
  const events = raw.map((event) => ({ at_ns: Math.round((event.timestamp - t0) * 1e6), event }));
  const end = events[events.length - 1].at_ns;
  const epochs = epochsOf(events);
  assertEquals(epochs.map((e) => e.newDocument), [true, false], "one document, one checkpoint");
  const msg = findElements(events, end, { text: "Province is required" });
  assertEquals(msg.total, 1);
  assertEquals(msg.warnings, 0);
  const m = msg.matches[0];
  // The message was added by a mutation before the checkpoint: its first_seen survives it.
  const added = events.find((e) =>
    e.event.type === 3 && e.event.data.source === 0 &&
    JSON.stringify(e.event.data).includes("Province is required")
  );
  assert(added, "the mutation that added the message");
  assertEquals(m.first_seen_ns, added.at_ns);
  assertEquals(m.last_seen_ns, null);
  const submit = findElements(events, end, { selector: "#submit" }).matches[0];
  assertEquals(submit.first_seen_ns, events[epochs[0].snapshotIndex].at_ns);
  assertEquals(findElements(events, end, { selector: "#submit:disabled" }).total, 1);
  assertEquals(findElements(events, epochs[1].snapshotNs - 1, { selector: "#submit:disabled" }).total, 1);
  assertEquals(findElements(events, added.at_ns - 1, { selector: "#submit:disabled" }).total, 0);
  assertEquals(
    findElements(events, end, { selector: "#province option" }).total,
    0,
    "the options were removed",
  );
});

Deno.test("frames are searched only when asked", () => {
  const r = new Rec();
  const inner = r.doc(r.el("html", {}, r.el("body", {}, r.el("button", { id: "framed" }, "Pay in frame"))));
  const snap = r.page(r.el("iframe", { id: "f" }, inner), r.el("button", { id: "top" }, "Pay"));
  const events = timeline([r.meta("https://x.test/"), r.full(snap)]);
  assertEquals(findElements(events, nsOf(1), { text: "pay" }).matches.map((m) => m.selector), ["#top"]);
  const all = findElements(events, nsOf(1), { text: "pay", frames: true });
  assertEquals(all.matches.map((m) => m.selector), ["#framed", "#top"]);
  assertEquals(findElements(events, nsOf(1), { selector: "button", frames: true }).total, 2);
  assertEquals(findElements(events, nsOf(1), { role: "button" }).total, 1);
});

Deno.test("checkpoints that keep ids (rrweb 2.x) keep every node's first_seen without identity guesses", () => {
  const r = new Rec();
  const snap = r.page(r.el("ul", { id: "list" }));
  const list = idOf(snap, "list");
  const one = r.el("li", {}, "same");
  const two = r.el("li", {}, "same");
  const events = timeline([
    r.meta("https://x.test/"), // 0
    r.full(snap), // 1
    r.mutation({ adds: addsFor(list, one) }), // 2
    r.mutation({ adds: addsFor(list, two) }), // 3
    r.meta("https://x.test/"), // 4
    r.full(structuredClone(snap)), // 5: the same ids, re-serialized (with both items, below)
  ]);
  // The checkpoint serializes the list with both items, under their ids.
  const sn = events[5].event;
  assert(sn.type === 2);
  const ul = findSnById(sn.data.node, list);
  assert(ul && "childNodes" in ul);
  ul.childNodes = [one, two];
  const res = findElements(events, nsOf(5), { text: "same" });
  assertEquals(res.matches.map((m) => [m.node_id, m.first_seen_ns]), [[one.id, nsOf(2)], [two.id, nsOf(3)]]);
});

function findSnById(root: serializedNodeWithId, id: number): serializedNodeWithId | undefined {
  if (root.id === id) return root;
  if ("childNodes" in root) {
    for (const c of root.childNodes) {
      const hit = findSnById(c, id);
      if (hit) return hit;
    }
  }
  return undefined;
}
