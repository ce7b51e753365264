/** The closed predicate set: validation up front, each kind's evaluator, elementMissing apart from false. */
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import {
  domVisible,
  evaluatePredicate,
  evaluatePredicateDetailed,
  parsePredicate,
  type Predicate,
  PredicateError,
  predicateSchema,
} from "../../../src/pagestate/predicates.ts";
import { parseSelector } from "../../../src/pagestate/selector.ts";
import { byId, html } from "./dom_builder.ts";

const PAGE = `<body>
<form id="checkout">
  <fieldset id="shipping" disabled><legend><button id="in-legend" type="button">Help</button></legend>
    <input id="street" name="street"></fieldset>
  <input id="email" name="email" value="****" aria-invalid="true">
  <input id="terms" type="checkbox" checked>
  <input id="code" readonly value="A1">
  <select id="province" name="province"><option value="on">Ontario</option><option value="qc" selected>Quebec</option></select>
  <select id="empty" name="city"></select>
  <textarea id="notes">hello  there</textarea>
  <button id="pay" type="submit" disabled>Pay   now</button>
  <div id="msg" class="error">Province is required</div>
</form>
<div id="overlay" style="display:none"><span id="inside">covered</span></div>
<div aria-hidden="true"><p id="aria-inside">x</p></div>
<details><summary id="sum">More</summary><p id="detail-body">body</p></details>
<details open><p id="open-body">shown</p></details>
<p id="plain">Plain</p>
</body>`;

const doc = html(PAGE);
const ev = (selector: string, p: unknown) =>
  evaluatePredicate(doc, parseSelector(selector), parsePredicate(p));

Deno.test("predicates: the schema is a closed discriminated union that refuses anything else", () => {
  for (
    const bad of [
      { kind: "jsExpression", source: "document.title" },
      { kind: "exists", extra: 1 },
      { kind: "textContains", text: "" },
      { kind: "propertyEquals", property: "innerHTML", equals: "x" },
      { kind: "propertyEquals", property: "disabled", equals: "true" },
      { kind: "propertyEquals", property: "value", equals: true },
      { kind: "attributeExists" },
      { kind: "attributeExists", name: "a", attribute: "b" },
      { kind: "attributeEquals", name: "on click", equals: "x" },
      { kind: "optionCount", equals: -1 },
      { kind: "optionCount", equals: 1.5 },
      { kind: "optionCount" },
      "exists",
    ]
  ) {
    assert(!predicateSchema.safeParse(bad).success, `refused: ${JSON.stringify(bad)}`);
    const e = assertThrows(() => parsePredicate(bad));
    assert(e instanceof PredicateError && e.code === "invalid_predicate", String(e));
  }
  const e = assertThrows(() => parsePredicate({ kind: "nope" }));
  assert(e.message.includes("supported kinds: exists, visible, textContains"), e.message);
});

Deno.test("predicates: Traces' shapes are accepted and canonicalized", () => {
  assertEquals(parsePredicate({ kind: "exists" }), { kind: "exists", equals: true });
  assertEquals(parsePredicate({ kind: "exists", equals: false }), { kind: "exists", equals: false });
  assertEquals(parsePredicate({ kind: "attributeExists", attribute: "Disabled" }), {
    kind: "attributeExists",
    name: "disabled",
  });
  const p: Predicate = parsePredicate({ kind: "propertyEquals", property: "value", equals: "x" });
  assertEquals(p, { kind: "propertyEquals", property: "value", equals: "x" });
});

Deno.test("predicates: exists is true/false, never elementMissing", () => {
  assertEquals(ev("#pay", { kind: "exists" }), true);
  assertEquals(ev("#nothing", { kind: "exists" }), false);
  assertEquals(ev("#nothing", { kind: "exists", equals: false }), true);
});

Deno.test("predicates: every other kind is elementMissing when the selector matches nothing", () => {
  for (
    const p of [
      { kind: "visible" },
      { kind: "textContains", text: "x" },
      { kind: "propertyEquals", property: "disabled", equals: true },
      { kind: "attributeExists", name: "id" },
      { kind: "attributeEquals", name: "id", equals: "x" },
      { kind: "optionCount", equals: 0 },
    ]
  ) assertEquals(ev("form#checkout > .missing", p), "elementMissing", JSON.stringify(p));
});

Deno.test("predicates: disabled follows HTML, including fieldset inheritance and its first legend", () => {
  const disabled = { kind: "propertyEquals", property: "disabled", equals: true };
  assertEquals(ev("#pay", disabled), true);
  assertEquals(ev("#street", disabled), true, "inside a disabled fieldset");
  assertEquals(ev("#in-legend", disabled), false, "the first legend's content is not disabled");
  assertEquals(ev("#email", disabled), false);
  assertEquals(ev("#msg", disabled), false, "a div cannot be disabled");
  assertEquals(ev("#email", { kind: "propertyEquals", property: "disabled", equals: false }), true);
});

Deno.test("predicates: checked, readOnly and value read recorded state", () => {
  assertEquals(ev("#terms", { kind: "propertyEquals", property: "checked", equals: true }), true);
  const terms = byId(doc, "terms");
  terms.checked = false; // an Input event unchecked it: recorded state wins over the attribute
  assertEquals(ev("#terms", { kind: "propertyEquals", property: "checked", equals: true }), false);
  terms.checked = true;
  assertEquals(ev("#code", { kind: "propertyEquals", property: "readOnly", equals: true }), true);
  assertEquals(ev("#email", { kind: "propertyEquals", property: "readOnly", equals: true }), false);
  assertEquals(ev("#email", { kind: "propertyEquals", property: "value", equals: "****" }), true);
  assertEquals(ev("#province", { kind: "propertyEquals", property: "value", equals: "qc" }), true);
  assertEquals(ev("#notes", { kind: "propertyEquals", property: "value", equals: "hello  there" }), true);
  assertEquals(ev("#plain", { kind: "propertyEquals", property: "value", equals: "" }), true);
});

Deno.test("predicates: textContains, attributeExists, attributeEquals, optionCount", () => {
  assertEquals(ev("#pay", { kind: "textContains", text: "Pay now" }), true, "whitespace collapsed");
  assertEquals(ev("#pay", { kind: "textContains", text: "pay" }), false, "case-sensitive");
  assertEquals(ev("#checkout", { kind: "textContains", text: "Province is required" }), true);
  assertEquals(ev("#email", { kind: "attributeExists", name: "aria-invalid" }), true);
  assertEquals(ev("#email", { kind: "attributeEquals", name: "aria-invalid", equals: "true" }), true);
  assertEquals(ev("#email", { kind: "attributeEquals", name: "aria-invalid", equals: "false" }), false);
  assertEquals(ev("#province", { kind: "optionCount", equals: 2 }), true);
  assertEquals(ev("#empty", { kind: "optionCount", equals: 0 }), true);
  const e = assertThrows(() => ev("#msg", { kind: "optionCount", equals: 0 }));
  assert(e instanceof PredicateError && e.code === "predicate_not_applicable" && e.message.includes("<div>"));
});

Deno.test("predicates: visible from markup is approximate and a layout oracle overrides it", () => {
  const vis = parsePredicate({ kind: "visible" });
  for (const id of ["inside", "aria-inside", "detail-body"]) {
    assertEquals(domVisible(byId(doc, id)), false, id);
  }
  for (const id of ["pay", "sum", "open-body", "plain"]) assertEquals(domVisible(byId(doc, id)), true, id);
  assertEquals(domVisible(byId(doc, "province").children[0]), false, "a drop-down's options are not drawn");
  const detailed = evaluatePredicateDetailed(doc, parseSelector("#inside"), vis);
  assertEquals(detailed, { value: false, basis: "dom_approximation" });
  const oracle = (id: number) => id === byId(doc, "inside").id ? true : undefined;
  assertEquals(evaluatePredicateDetailed(doc, parseSelector("#inside"), vis, oracle), {
    value: true,
    basis: "layout",
  });
  assertEquals(
    evaluatePredicateDetailed(doc, parseSelector("#plain"), vis, oracle).basis,
    "dom_approximation",
  );
  assertEquals(
    evaluatePredicate(doc, parseSelector("#inside"), parsePredicate({ kind: "visible", equals: false })),
    true,
  );
});
