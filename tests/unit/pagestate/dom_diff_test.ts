/** diffDom: what changed between two instants, by id within a lineage and by structure across snapshots. */
import { assert, assertEquals } from "../../assert.ts";
import { diffDom, pathSelector } from "../../../src/pagestate/dom_diff.ts";
import type { DomNode } from "../../../src/pagestate/dom_types.ts";
import type { eventWithTime } from "@rrweb/types";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import { append, byId, cloneTree, detach, hIds, html, Ids } from "./dom_builder.ts";

const CHECKOUT = `<html><head><style>.x{}</style></head><body>
<div class="page p-4 md:p-8">
<form id="checkout">
  <input name="email" value="">
  <select name="province"><option value="on">Ontario</option><option value="qc">Quebec</option><option value="bc">British Columbia</option></select>
  <div id="errors" role="alert"></div>
  <button id="submit" type="submit">Pay</button>
</form>
<p id="status">ready</p>
</div></body></html>`;

function first(root: DomNode, tag: string): DomNode {
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.shift();
    if (!n) break;
    if (n.kind === "element" && n.tag === tag) return n;
    stack.push(...n.children);
  }
  throw new Error(`no <${tag}>`);
}

/** The empty-province transition applied to a tree: options gone, message in, aria-invalid, disabled. */
function breakCheckout(doc: DomNode, ids: Ids): void {
  const select = first(doc, "select");
  for (const o of [...select.children]) detach(o);
  select.attrs.set("aria-invalid", "true");
  append(byId(doc, "errors"), hIds(ids, "div", { class: "error" }, "Province is required"));
  byId(doc, "submit").attrs.set("disabled", "");
  const status = byId(doc, "status");
  status.children[0].text = "provinces unavailable";
  first(doc, "div").attrs.set("class", "page p-2 md:p-4");
  first(doc, "input").value = "****";
}

function assertBroken(diff: ReturnType<typeof diffDom>): void {
  assertEquals(diff.counts, { added: 1, removed: 3, attribute_changed: 4, text_changed: 1, total: 9 });
  assertEquals(diff.truncated, false);
  const summaries = diff.changes.map((c) => c.summary);
  const removed = diff.changes.find((c) => c.kind === "removed");
  assertEquals(removed?.selector, "form#checkout > select[name=province] > option");
  assertEquals(removed?.siblings, 3);
  assertEquals(removed?.elements, 3);
  assertEquals(removed?.text, "Ontario, Quebec, British Columbia");
  assert(
    summaries.includes(
      'removed form#checkout > select[name=province] > option ×3 "Ontario, Quebec, British Columbia"',
    ),
    summaries.join("\n"),
  );
  const added = diff.changes.find((c) => c.kind === "added");
  assertEquals(added?.selector, "div#errors > div.error");
  assertEquals(added?.text, "Province is required");
  const disabled = diff.changes.find((c) => c.name === "disabled");
  assertEquals(disabled?.selector, "button#submit");
  assertEquals(disabled?.before, undefined);
  assertEquals(disabled?.after, "");
  const value = diff.changes.find((c) => c.name === "value");
  assertEquals([value?.before, value?.after], ["", "****"]);
  const text = diff.changes.find((c) => c.kind === "textChanged");
  assertEquals([text?.selector, text?.before, text?.after], ["p#status", "ready", "provinces unavailable"]);
  // Interactive first: the class churn on the wrapper comes last.
  assertEquals(diff.changes[diff.changes.length - 1].name, "class");
  const lastInteractive = Math.max(
    ...["removed", "added"].map((k) => diff.changes.findIndex((c) => c.kind === k)),
  );
  assert(lastInteractive < diff.changes.findIndex((c) => c.kind === "textChanged"), summaries.join("\n"));
}

Deno.test("diffDom: within one lineage nodes pair by rrweb id", () => {
  const ids = new Ids(1);
  const before = html(CHECKOUT, ids);
  const after = cloneTree(before);
  breakCheckout(after, ids);
  const diff = diffDom(before, after);
  assertEquals(diff.match, "id");
  assertBroken(diff);
});

Deno.test("diffDom: across full snapshots (new ids) nodes pair by structure", () => {
  const before = html(CHECKOUT, new Ids(1));
  const ids = new Ids(10_000);
  const after = html(CHECKOUT, ids);
  breakCheckout(after, ids);
  const diff = diffDom(before, after);
  assertEquals(diff.match, "structure");
  assertBroken(diff);
});

Deno.test("diffDom: a node replaced by an identical one is a change by id and none by structure", () => {
  const ids = new Ids(1);
  const before = html(CHECKOUT, ids);
  const after = cloneTree(before);
  const button = byId(after, "submit");
  const form = button.parent;
  assert(form);
  const replacement = hIds(ids, "button", { id: "submit", type: "submit" }, "Pay");
  form.children[form.children.indexOf(button)] = replacement;
  replacement.parent = form;
  const byId_ = diffDom(before, after);
  assertEquals(byId_.match, "id");
  assertEquals([byId_.counts.added, byId_.counts.removed], [1, 1]);
  assertEquals(diffDom(before, after, { match: "structure" }).counts.total, 0);
});

Deno.test("diffDom: at most 30 changes, exact counts, state changes kept ahead of churn", () => {
  const ids = new Ids(1);
  let rows = "";
  for (let i = 0; i < 80; i++) rows += `<div class="c${i}">row ${i}</div>`;
  const before = html(`<body><main>${rows}<button id="go">Go</button></main></body>`, ids);
  const after = cloneTree(before);
  for (const d of first(after, "main").children) if (d.tag === "div") d.attrs.set("class", "changed");
  byId(after, "go").attrs.set("disabled", "");
  byId(after, "go").attrs.set("aria-busy", "true");
  const diff = diffDom(before, after);
  assertEquals(diff.changes.length, 30);
  assertEquals(diff.truncated, true);
  assertEquals(diff.changes_total, 82);
  assertEquals(diff.counts.attribute_changed, 82);
  assertEquals(diff.changes[0].name, "disabled");
  assertEquals(diff.changes[1].name, "aria-busy");
  assertEquals(diffDom(before, after, { limit: 5 }).changes.length, 5);
});

Deno.test("diffDom: a removed subtree is one change counting its elements", () => {
  const ids = new Ids(1);
  const before = html(
    `<body><div id="cart"><ul class="items"><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul></div></body>`,
    ids,
  );
  const after = cloneTree(before);
  detach(first(after, "ul"));
  const diff = diffDom(before, after);
  assertEquals(diff.changes.length, 1);
  assertEquals(diff.changes[0].kind, "removed");
  assertEquals(diff.changes[0].elements, 5);
  assertEquals(diff.changes[0].selector, "div#cart > ul");
  assertEquals(diff.counts.removed, 5);
});

Deno.test("diffDom: a missing side means everything was added or removed", () => {
  const doc = html(CHECKOUT);
  const added = diffDom(undefined, doc);
  assertEquals(added.counts.removed, 0);
  assert(added.counts.added > 10);
  assertEquals(added.changes.length, 1, "the html element, one subtree");
  assertEquals(diffDom(doc, undefined).counts.removed, added.counts.added);
  assertEquals(diffDom(undefined, undefined).counts.total, 0);
});

Deno.test("pathSelector: anchored at the nearest stable id, never positional", () => {
  const doc = html(
    `<body><div id="app"><section><form name="pay"><input type="email" name="e"></form></section></div>` +
      `<div id="react-select-12345-input"><span class="error">x</span></div></body>`,
  );
  assertEquals(pathSelector(first(doc, "input")), "div#app > section > form[name=pay] > input[name=e]");
  assertEquals(pathSelector(first(doc, "span")), "div > span.error");
  assert(!pathSelector(first(doc, "input")).includes("nth"));
});

Deno.test("diffDom over the real checkout recording: the transition, and a checkpoint that changed nothing", async () => {
  const dir = new URL("../../../fixtures/recordings/", import.meta.url);
  const events: eventWithTime[] = JSON.parse(
    await Deno.readTextFile(new URL("checkout.json", dir)),
  );
  const truth: { truth: Array<{ what: string; at_epoch_ms: number }> } = JSON.parse(
    await Deno.readTextFile(new URL("checkout.truth.json", dir)),
  );
  const at = (what: string) => truth.truth.find((t) => t.what === what)?.at_epoch_ms ?? 0;
  const mirrorAt = (ms: number) => {
    const m = new DomMirror();
    for (const e of events) if (e.timestamp <= ms) m.apply(e);
    return m.document;
  };
  const before = mirrorAt(at("load_clicked"));
  const after = mirrorAt(at("submit_disabled") + 20);
  const diff = diffDom(before, after);
  assertEquals(diff.match, "id");
  const summaries = diff.changes.map((c) => c.summary).join("\n");
  const removed = diff.changes.find((c) => c.kind === "removed" && c.tag === "option");
  assertEquals(removed?.siblings, 4, summaries);
  assertEquals(removed?.selector, "select#province > option");
  assert(diff.changes.some((c) => c.kind === "added" && c.text === "Province is required"), summaries);
  assert(diff.changes.some((c) => c.name === "disabled" && c.selector === "button#submit"), summaries);
  assert(diff.changes.some((c) => c.name === "aria-invalid" && c.after === "true"), summaries);
  assert(
    diff.changes.some((c) => c.kind === "textChanged" && c.after === "provinces unavailable"),
    summaries,
  );

  const checkpoints = events.filter((e) => e.type === 2).map((e) => e.timestamp);
  assertEquals(checkpoints.length, 2);
  const x = mirrorAt(checkpoints[1] - 1);
  const y = mirrorAt(checkpoints[1] + 1);
  // rrweb 2.2.2 re-serializes a checkpoint with the ids its mirror already gave: the lineage continues.
  const across = diffDom(x, y);
  assertEquals(across.match, "id");
  assertEquals(across.changes.map((c) => c.summary), [], "nothing changed on the page across the checkpoint");
  assertEquals(diffDom(x, y, { match: "structure" }).changes.map((c) => c.summary), []);
  // The same page recorded twice (ids that do not line up) pairs by structure and still sees no change.
  const xs = x ? renumber(x, 100_000) : undefined;
  const again = diffDom(xs, y);
  assertEquals(again.match, "structure");
  assertEquals(again.changes.map((c) => c.summary), []);
});

/** A copy of the tree with every id shifted, as a separate recording of the same page would number it. */
function renumber(node: DomNode, by: number, parent?: DomNode): DomNode {
  const copy: DomNode = { ...node, id: node.id + by, attrs: new Map(node.attrs), parent, children: [] };
  copy.children = node.children.map((c) => renumber(c, by, copy));
  return copy;
}
