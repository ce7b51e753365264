import { assert, assertEquals } from "../../assert.ts";
import { cssIdent, looksGenerated, stableSelector } from "../../../src/pagestate/stable_selector.ts";
import { matches, parseSelector, querySelector, querySelectorAll } from "../../../src/pagestate/selector.ts";
import type { DomNode } from "../../../src/pagestate/dom_types.ts";
import { DomMirror } from "../../../src/pagestate/mirror.ts";
import type { eventWithTime } from "@rrweb/types";
import { doc, el, page } from "./dom_tree.ts";

function pick(root: DomNode, selector: string): DomNode {
  const n = querySelector(root, parseSelector(selector), { frames: true });
  assert(n, selector);
  return n;
}

const sel = (root: DomNode, selector: string) => stableSelector(pick(root, selector), root);

Deno.test("a unique author id wins; generated ids are skipped", () => {
  const d = page(
    el("button", { id: "pay" }, "Pay"),
    el("button", { id: "ember1234", class: "confirm" }, "OK"),
    el("input", { id: "react-select-5-input", name: "country" }),
    el("div", { id: ":r1:", role: "dialog", "aria-label": "Cart" }),
    el("span", { id: "a9f3e1c07b", title: "hash" }),
  );
  assertEquals(sel(d, "#pay"), { selector: "#pay", unique: true });
  assertEquals(sel(d, "[id=ember1234]"), { selector: "button.confirm", unique: true });
  assertEquals(sel(d, "input"), { selector: 'input[name="country"]', unique: true });
  assertEquals(sel(d, "div"), { selector: 'div[aria-label="Cart"]', unique: true });
  assertEquals(sel(d, "span"), { selector: 'span[title="hash"]', unique: true });
});

Deno.test("looksGenerated tells machine-made ids from author names", () => {
  for (
    const id of [
      "ember123",
      "react-select-5-input",
      ":r1:",
      "a9f3e1c0",
      "item-1234567",
      "3d",
      "radix-7",
      "mui-12",
      "sc-bdVaJa",
      "css-1x2y3z",
      "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    ]
  ) {
    assert(looksGenerated(id), id);
  }
  for (const id of ["checkout", "submit-button", "email", "nav_main", "step2", "h1-title", "card"]) {
    assert(!looksGenerated(id), id);
  }
});

Deno.test("test ids, then name, aria-label, role and type, each with the tag", () => {
  const d = page(
    el("div", { "data-testid": "cart-total" }, "€12"),
    el("div", { "data-qa": "promo" }),
    el("div", { "data-test": "banner" }),
    el("input", { name: "email", type: "email" }),
    el("input", { name: "email", type: "hidden" }),
    el("nav", { "aria-label": "Main" }),
    el("div", { role: "alert" }, "Error"),
    el("button", { type: "submit" }, "Go"),
    el("button", { type: "button" }, "Back"),
  );
  assertEquals(sel(d, "[data-testid]").selector, '[data-testid="cart-total"]');
  assertEquals(sel(d, "[data-qa]").selector, '[data-qa="promo"]');
  assertEquals(sel(d, "[data-test]").selector, '[data-test="banner"]');
  assertEquals(sel(d, "input[type=email]"), { selector: 'input[name="email"][type="email"]', unique: true });
  assertEquals(sel(d, "nav").selector, 'nav[aria-label="Main"]');
  assertEquals(sel(d, "[role=alert]").selector, 'div[role="alert"]');
  assertEquals(sel(d, "button[type=submit]").selector, 'button[type="submit"]');
});

Deno.test("utility-class soup and state classes are never used; meaningful classes are", () => {
  const d = page(
    el("div", { class: "flex md:flex-row px-4 w-1/2 bg-[#fff] hover:bg-blue-500 text-sm card active" }, "a"),
    el("div", { class: "flex px-4" }, "b"),
  );
  assertEquals(sel(d, "div.card"), { selector: "div.card", unique: true });
  const soup = sel(d, "div:not(.card)");
  assertEquals(soup.unique, false, "nothing but utilities: not unique");
  assertEquals(soup.selector, "div");
});

Deno.test("anchored under the nearest ancestor with a stable name", () => {
  const d = page(
    el("form", { id: "search" }, el("button", { type: "submit" }, "Search")),
    el(
      "form",
      { id: "checkout" },
      el("div", { class: "row" }, el("button", { type: "submit", class: "btn" }, "Pay")),
    ),
  );
  assertEquals(sel(d, "#checkout button"), { selector: 'form#checkout button[type="submit"]', unique: true });
  assertEquals(sel(d, "#search button"), { selector: 'form#search button[type="submit"]', unique: true });
  // A list of identical items under a named list: unique is false and the selector still never counts.
  const list = page(el("ul", { id: "items" }, el("li", {}, "a"), el("li", {}, "b")));
  const second = querySelectorAll(list, parseSelector("li"))[1];
  const s = stableSelector(second, list);
  assertEquals(s, { selector: "ul#items li", unique: false });
});

Deno.test("classes of ancestors anchor when no author name exists", () => {
  const d = page(
    el("div", { class: "card-footer" }, el("button", {}, "Save")),
    el("div", { class: "toolbar" }, el("button", {}, "Save")),
  );
  assertEquals(sel(d, ".toolbar button"), { selector: "div.toolbar button", unique: true });
});

Deno.test("selectors are never positional, always parse and always match their element", () => {
  const rows = [];
  for (let i = 0; i < 40; i++) {
    rows.push(
      el(
        "tr",
        { class: i % 3 ? "row" : "row special" },
        el("td", {}, `r${i}`),
        el("td", {}, el("a", { href: `/item/${i % 7}` }, "open")),
      ),
    );
  }
  const d = page(
    el(
      "header",
      { id: "top" },
      el("a", { href: "/" }, "Home"),
      el("input", { type: "search", placeholder: "Find" }),
    ),
    el("table", { "data-testid": "orders" }, el("tbody", {}, ...rows)),
    el("div", { id: "price.total" }, el("span", { class: "é-accent" }), el("b", {}, "€")),
  );
  const all = querySelectorAll(d, parseSelector("*"));
  let unique = 0;
  for (const n of all) {
    const s = stableSelector(n, d);
    assert(!/nth-|first-child|last-child|only-child/.test(s.selector), s.selector);
    const parsed = parseSelector(s.selector);
    assert(matches(n, parsed), `${s.selector} matches its element`);
    const count = querySelectorAll(d, parsed).length;
    assertEquals(s.unique, count === 1, `${s.selector}: unique iff one match (${count})`);
    if (s.unique) unique++;
  }
  assert(unique >= 10, `${unique} unique`);
  assertEquals(sel(d, "span").selector, "span.é-accent");
  assertEquals(sel(d, "[id='price.total']").selector, "#price\\.total");
  assertEquals(sel(d, "b").selector, "div#price\\.total b");
});

Deno.test("text nodes name their element; iframe elements are counted within their own document", () => {
  const inner = doc(el("html", {}, el("body", {}, el("button", { id: "pay" }, "Pay in frame"))));
  const iframe = el("iframe", { id: "f" });
  inner.parent = iframe;
  iframe.children.push(inner);
  const d = page(iframe, el("button", { id: "pay" }, "Pay"));
  const framed = pick(inner, "#pay");
  assertEquals(stableSelector(framed, d), { selector: "#pay", unique: true });
  const text = framed.children[0];
  assertEquals(stableSelector(text, d).selector, "#pay");
});

Deno.test("cssIdent escapes like CSS.escape", () => {
  assertEquals(cssIdent("a:b"), "a\\:b");
  assertEquals(cssIdent("1x"), "\\31 x");
  assertEquals(cssIdent("-2"), "-\\32 ");
  assertEquals(cssIdent("-"), "\\-");
  assertEquals(cssIdent("a b"), "a\\ b");
  assertEquals(cssIdent("ok_-9"), "ok_-9");
});

Deno.test("stable selectors for every element of a 5,000-node page stay cheap", () => {
  const rows = [];
  for (let i = 0; i < 1000; i++) {
    rows.push(
      el(
        "tr",
        { class: "row" },
        el("td", {}, `r${i}`),
        el("td", {}, el("button", { "aria-label": `Edit ${i}` })),
      ),
    );
  }
  const d = page(el("table", { id: "t" }, el("tbody", {}, ...rows)));
  const buttons = querySelectorAll(d, parseSelector("button"));
  const start = performance.now();
  for (let i = 0; i < 20; i++) stableSelector(buttons[i * 50], d);
  const ms = (performance.now() - start) / 20;
  assertEquals(stableSelector(buttons[7], d), { selector: 'button[aria-label="Edit 7"]', unique: true });
  const td = stableSelector(querySelectorAll(d, parseSelector("td"))[3], d);
  assertEquals(td, { selector: "table#t td", unique: false });
  console.error(`stableSelector on a 5,000-node page: ${ms.toFixed(2)} ms per element`);
});

Deno.test("on a real utility-class page (fixtures/recordings/utility_soup.json) buttons get unique names without utilities", async () => {
  const url = new URL("../../../fixtures/recordings/utility_soup.json", import.meta.url);
  const events = JSON.parse(await Deno.readTextFile(url)) as eventWithTime[];
  const m = new DomMirror();
  for (const e of events) m.apply(e);
  const root = m.document;
  assert(root);
  const buttons = querySelectorAll(root, parseSelector("button"));
  assert(buttons.length > 10);
  for (const b of buttons) {
    const s = stableSelector(b, root);
    assert(s.unique, s.selector);
    assert(
      !/\\:|\\\[|\.[\w-]*\d\b|\.(flex|grid|relative|border)\b/.test(s.selector),
      `no utility classes: ${s.selector}`,
    );
  }
  const all = querySelectorAll(root, parseSelector("*"));
  for (const n of all) {
    const s = stableSelector(n, root);
    assert(!s.selector.includes("\\:"), `no variant classes: ${s.selector}`);
  }
});

Deno.test("data-* attributes name elements; state-like ones do not", () => {
  const d = page(
    el("button", { "data-action": "save" }, "Save"),
    el("button", { "data-action": "discard" }, "Discard"),
    el("div", { "data-state": "open" }),
  );
  assertEquals(sel(d, "[data-action=save]"), { selector: 'button[data-action="save"]', unique: true });
  assertEquals(sel(d, "[data-state]"), { selector: "div", unique: true });
});
