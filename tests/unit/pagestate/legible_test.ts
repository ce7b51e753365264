/** The agent-legible DOM: what is kept, how a line reads, and the hard budget with its footer and advice. */
import { assert, assertEquals, assertMatch } from "../../assert.ts";
import process from "node:process";
import { legibleDom, scopeSelector } from "../../../src/pagestate/legible.ts";
import { outerHtmlLength, VOID_TAGS } from "../../../src/pagestate/dom_facts.ts";
import type { DomNode } from "../../../src/pagestate/dom_types.ts";
import { byId, html, Ids } from "./dom_builder.ts";

const CHECKOUT_EMPTY = `<html><head><title>Checkout</title><style>.error{color:red}</style></head><body>
<div class="min-h-screen flex flex-col items-center bg-gray-50 px-4 py-8 md:px-8">
  <h1 class="text-2xl font-bold">Checkout</h1>
  <form id="checkout" class="w-full max-w-md space-y-4 rounded-lg shadow-md p-6">
    <div class="flex flex-col gap-1">
      <label for="email" class="text-sm font-medium text-gray-700">Email</label>
      <input id="email" name="email" type="email" value="****" aria-invalid="true" class="border rounded px-2 py-1">
    </div>
    <div class="flex flex-col gap-1">
      <label for="password">Password</label>
      <input id="password" name="password" type="password" value="hunter2">
    </div>
    <select name="province" required class="border rounded"></select>
    <div id="errors" role="alert"><div class="error">Province is required</div></div>
    <button type="submit" disabled class="bg-blue-600 hover:bg-blue-700 text-white">Pay</button>
  </form>
  <p class="text-xs text-gray-400">We never share your email with anyone, ever, under any circumstances at all.</p>
</div>
<script>window.secret = 1;</script>
</body></html>`;

/** A naive outerHTML serializer, to check the counted length against a string actually built. */
function serialize(n: DomNode): string {
  const esc = (s: string, attr: boolean): string =>
    s.replaceAll("&", "&amp;").replaceAll("\u00a0", "&nbsp;").replaceAll(
      attr ? '"' : "<",
      attr ? "&quot;" : "&lt;",
    )
      .replaceAll(attr ? "\u0000" : ">", attr ? "\u0000" : "&gt;");
  switch (n.kind) {
    case "text":
      return n.parent?.tag === "script" || n.parent?.tag === "style" ? n.text : esc(n.text, false);
    case "comment":
      return `<!--${n.text}-->`;
    case "document":
      return n.children.map(serialize).join("");
    case "element": {
      const attrs = [...n.attrs].map(([k, v]) => ` ${k}="${esc(v, true)}"`).join("");
      if (VOID_TAGS.has(n.tag)) return `<${n.tag}${attrs}>`;
      return `<${n.tag}${attrs}>${n.children.map(serialize).join("")}</${n.tag}>`;
    }
    default:
      return "";
  }
}

function assertBudget(r: ReturnType<typeof legibleDom>): void {
  const lines = r.text.split("\n");
  assertEquals(lines.length, r.line_count, "line_count counts the text's lines");
  assertEquals(r.text.length, r.char_count, "char_count counts the text's characters");
  assert(r.line_count <= 60, `at most 60 lines, got ${r.line_count}`);
  assert(r.char_count <= 1200, `at most 1,200 characters, got ${r.char_count}`);
}

function footerOf(r: ReturnType<typeof legibleDom>): string {
  const footer = r.text.split("\n").find((l) => l.startsWith("— "));
  assert(footer !== undefined, `a footer line in:\n${r.text}`);
  return footer;
}

Deno.test("legible: the empty-province checkout reads as its states", () => {
  const doc = html(CHECKOUT_EMPTY);
  const r = legibleDom(byId(doc, "checkout"));
  const lines = r.text.split("\n");
  assertEquals(lines[0], "form#checkout");
  assert(lines.includes('  input#email[name=email][type=email] value="****" aria-invalid=true'), r.text);
  assert(lines.includes("  select[name=province] [empty options: 0] [required]"), r.text);
  assert(lines.includes('    div.error "Province is required"'), r.text);
  assert(lines.includes('  button[type=submit] "Pay" [DISABLED]'), r.text);
  assert(lines.includes('  label[for=email] "Email"'), r.text);
  assert(!r.text.includes("hunter2"), "a password value never shows");
  assert(r.text.includes('input#password[name=password][type=password] value="****"'), r.text);
  assert(!/flex|px-|rounded|bg-/.test(r.text), "utility classes are discarded");
  assertBudget(r);
  assertEquals(r.truncated, false);
  assertEquals(r.advice, undefined);
  assertEquals(
    footerOf(r),
    `— ${r.line_count} lines, ${r.char_count} chars (source ${
      r.source_html_chars.toLocaleString("en-US")
    } chars)`,
  );
  const ratio = r.source_html_chars / r.char_count;
  console.error(
    `checkout form: ${r.source_html_chars} → ${r.char_count} chars (${
      ratio.toFixed(2)
    }×), ${r.line_count} lines`,
  );
});

Deno.test("legible: the whole page skips head, script and text that is not a message", () => {
  const r = legibleDom(html(CHECKOUT_EMPTY));
  assert(r.text.startsWith('h1 "Checkout"\nform#checkout\n'), r.text);
  assert(
    !r.text.includes("secret") && !r.text.includes("color:red") && !r.text.includes("We never share"),
    r.text,
  );
  assert(r.node_count > 15);
});

Deno.test("legible: source_html_chars is the serialized outerHTML length, counted without building it", () => {
  const doc = html(CHECKOUT_EMPTY + `<p title='a "q" &amp; b'>x &lt; y &amp; z</p><!-- note -->`);
  assertEquals(outerHtmlLength(doc), serialize(doc).length);
  const form = byId(doc, "checkout");
  assertEquals(legibleDom(form).source_html_chars, serialize(form).length);
});

Deno.test("legible: text is cut at 60 characters and attributes come from the allow-list", () => {
  const long = "x".repeat(100);
  const doc = html(
    `<main><button data-foo="bar" onclick="go()" style="color:red" class="btn-primary" data-testid="go">${long}</button>` +
      `<a href="https://shop.example.com/account/orders?page=2#top" target="_blank">Orders</a>` +
      `<img src="a.png" alt="logo"></main>`,
  );
  const r = legibleDom(doc);
  const button = r.text.split("\n").find((l) => l.includes("button"));
  assert(button !== undefined, r.text);
  assertMatch(button, /"x{59}…"/);
  assert(
    !button.includes("data-foo") && !button.includes("style") && !button.includes("btn-primary"),
    button,
  );
  assert(button.includes("[data-testid=go]"), button);
  assert(r.text.includes('a[href=/account/orders] "Orders"'), r.text);
});

Deno.test("legible: states — checked, selected count, readonly, hidden, open, fieldset-disabled", () => {
  const doc = html(`<form id="f">
    <fieldset disabled><legend>Shipping</legend><input name="street"></fieldset>
    <input type="checkbox" name="terms" checked>
    <input name="code" readonly value="A1">
    <select name="size"><option value="s">Small</option><option value="m" selected>Medium</option></select>
    <div id="modal" style="display: none"><button type="button">Close</button></div>
    <div aria-hidden="true"><a href="/x">X</a></div>
    <details open><summary>More</summary><button type="button">Deep</button></details>
    <div role="status">Saved</div>
    <div class="text-sm px-2">plain copy that is not state</div>
  </form>`);
  const r = legibleDom(byId(doc, "f"));
  const has = (line: string): void =>
    assert(r.text.split("\n").some((l) => l.trim() === line), `${line}\n${r.text}`);
  has('legend "Shipping"');
  has('input[name=street] value="" [DISABLED]');
  has("input[name=terms][type=checkbox] [checked]");
  has('input[name=code] value="A1" [readonly]');
  has('select[name=size] "Medium" [options: 2]');
  has("div#modal [hidden]");
  has('button[type=button] "Close"');
  has("details [open]");
  has('summary "More"');
  has('div[role=status] "Saved"');
  assert(!r.text.includes("plain copy"), r.text);
  const modal = r.text.split("\n").findIndex((l) => l.includes("div#modal"));
  assert(r.text.split("\n")[modal + 1].startsWith("    button"), "the hidden wrapper places its content");
});

function table300(): DomNode {
  const rows = Array.from(
    { length: 300 },
    (_, i) =>
      `<tr><td>order-${i}</td><td>${i * 3} items</td><td><button type="button">Open</button></td></tr>`,
  ).join("");
  return html(
    `<body><main><h2>Orders</h2><table id="orders"><caption>Recent orders</caption>` +
      `<thead><tr><th>Order</th><th>Items</th><th></th></tr></thead><tbody>${rows}</tbody></table></main></body>`,
  );
}

Deno.test("legible budget: a 300-row table is summarized in a page and truncated when it is the scope", () => {
  const doc = table300();
  const page = legibleDom(doc);
  assertBudget(page);
  assert(page.text.includes('table#orders "Recent orders" [rows: 301]'), page.text);
  assert(page.text.split("\n").filter((l) => l.trim().startsWith("tr ")).length <= 3, page.text);
  assert(page.text.includes("… +298 rows"), page.text);
  assert(page.advice?.includes("table#orders shows 3 of 301 rows"), String(page.advice));
  footerOf(page);

  const table = legibleDom(byId(doc, "orders"));
  assertBudget(table);
  assertEquals(table.truncated, true);
  assertMatch(
    footerOf(table),
    /^— truncated: \d+ of 302 DOM lines shown, [\d,]+ chars \(source [\d,]+ chars\)$/,
  );
  assert(table.advice !== undefined && table.advice.includes("tr:nth-child("), String(table.advice));
  const shownRows = table.text.split("\n").filter((l) => l.trim().startsWith("tr ")).length;
  assert(table.advice.startsWith(`rows 1–${shownRows} of 301 shown`), `${shownRows}: ${table.advice}`);
  assert(table.text.endsWith(table.advice), "the advice is the last line");
  console.error(
    `300-row table: page ${page.source_html_chars} → ${page.char_count} chars ` +
      `(${
        (page.source_html_chars / page.char_count).toFixed(1)
      }×); table scope ${table.source_html_chars} → ` +
      `${table.char_count} chars, ${table.line_count} lines`,
  );
});

function utilitySoup(): DomNode {
  const soup = (i: number): string =>
    Array.from(
      { length: 22 },
      (_, j) => ["p", "m", "px", "md:flex", "hover:bg", "w"][j % 6] + `-${(i + j) % 9}`,
    )
      .join(" ") + " bg-[#f3f4f6] text-gray-900/50";
  let cards = "";
  for (let i = 0; i < 120; i++) {
    let inner = `<button type="button" class="${soup(i)}">Add item ${i}</button>` +
      `<input name="qty-${i}" class="${soup(i + 1)}" value="1">`;
    for (let d = 0; d < 8; d++) {
      inner = `<div class="${soup(i + d)}"><span class="${soup(d)}">·</span>${inner}</div>`;
    }
    cards += `<section class="${soup(i)}">${inner}</section>`;
  }
  return html(
    `<body><div id="app" class="${soup(0)}"><nav aria-label="Main"><a href="/">Home</a></nav>` +
      `<main id="catalog">${cards}</main></div></body>`,
  );
}

Deno.test("legible budget: utility-class soup stays inside 60 lines and 1,200 characters with advice", () => {
  const doc = utilitySoup();
  const r = legibleDom(doc);
  assertBudget(r);
  assertEquals(r.truncated, true);
  footerOf(r);
  assert(
    r.advice !== undefined && r.advice.startsWith('narrow with scope: "main#catalog"'),
    String(r.advice),
  );
  assert(!/md:|hover:|bg-\[|px-/.test(r.text), "no utility tokens");
  assert(r.text.includes('nav[aria-label=Main]\n  a[href=/] "Home"'), r.text);
  console.error(
    `utility soup: ${r.source_html_chars} → ${r.char_count} chars (${
      (r.source_html_chars / r.char_count).toFixed(0)
    }×), ` +
      `${r.total_lines} lines before the budget`,
  );
});

Deno.test("legible budget: the footer and the advice count inside a small budget too", () => {
  const doc = utilitySoup();
  for (const [maxLines, maxChars] of [[10, 400], [5, 300], [60, 250]]) {
    const r = legibleDom(doc, { maxLines, maxChars });
    assert(
      r.line_count <= maxLines && r.char_count <= maxChars,
      `${maxLines}/${maxChars}: ${r.line_count}/${r.char_count}`,
    );
    assertEquals(r.text.length, r.char_count);
    assert(r.truncated);
  }
});

Deno.test("legible: scopeSelector prefers a stable id, then attributes under an id'd ancestor", () => {
  const doc = html(
    `<div id="app"><form name="pay"><select name="province"></select></form><div id="ember1234"></div></div>`,
  );
  const form = doc.children[0].children[0];
  assertEquals(scopeSelector(form), "div#app form[name='pay']");
  assertEquals(scopeSelector(byId(doc, "app")), "div#app");
  assertEquals(scopeSelector(byId(doc, "ember1234")), "div#app div");
});

Deno.test("legible: a 5,000-node tree renders quickly", () => {
  let body = "";
  for (let i = 0; i < 650; i++) {
    body +=
      `<div class="row p-2"><span>Item ${i}</span><label>Qty</label><input name="q${i}"><button>Add</button></div>`;
  }
  const doc = html(`<body><main>${body}</main></body>`);
  let nodes = 0;
  const count = (n: DomNode): void => {
    nodes++;
    n.children.forEach(count);
  };
  count(doc);
  assert(nodes >= 5000, `${nodes} nodes`);
  for (let i = 0; i < 5; i++) legibleDom(doc); // JIT warm-up: the first runs measure the compiler
  // CPU time, not wall time: the machine is shared with browsers under test.
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const runs = 10;
  for (let i = 0; i < runs; i++) assertBudget(legibleDom(doc));
  const c = process.cpuUsage(c0);
  const cpu = (c.user + c.system) / 1000 / runs;
  const wall = (performance.now() - t0) / runs;
  console.error(`legibleDom on ${nodes} nodes: ${cpu.toFixed(2)} ms CPU (${wall.toFixed(2)} ms wall)`);
  assert(cpu < 150, `${cpu} ms CPU`);
});

Deno.test("legible: labels around inputs, multi-selects, dialogs, iframes, hidden inputs", () => {
  const doc = html(`<body>
    <label>Email <input name="email" type="email"></label>
    <input type="hidden" name="csrf" value="secret-token">
    <select name="tags" multiple><option selected>red</option><option>green</option><option selected>blue</option></select>
    <dialog open id="confirm"><p>Really delete?</p></dialog>
    <div contenteditable="true">Edit me</div>
    <iframe title="Payment"></iframe>
  </body>`);
  const iframe = doc.children[0].children.find((c) => c.tag === "iframe");
  assert(iframe);
  const inner = html(`<html><body><button id="pay-inner">Pay inside</button></body></html>`, new Ids(5000));
  inner.parent = iframe;
  iframe.children.push(inner);
  const r = legibleDom(doc);
  const lines = r.text.split("\n");
  assertEquals(lines[0], 'label "Email"');
  assertEquals(lines[1], '  input[name=email][type=email] value=""');
  assert(!r.text.includes("csrf") && !r.text.includes("secret-token"), "hidden inputs are left out");
  assert(
    r.text.includes('select[name=tags] [options: 3]\n  option "red" [selected]\n  option "blue" [selected]'),
    r.text,
  );
  assert(r.text.includes('dialog#confirm "Really delete?" [open]'), r.text);
  assert(r.text.includes('div "Edit me"'), r.text);
  assert(r.text.includes('iframe[title=Payment]\n  button#pay-inner "Pay inside"'), r.text);
});
