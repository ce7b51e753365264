/**
 * The agent-legible DOM: a reconstructed subtree as the few lines a model needs to reason about state —
 * interactive and state-bearing elements only, placed by the kept ancestors around them, with allow-listed
 * attributes, text cut at 60 characters and explicit states (`[DISABLED]`, `[empty options: 0]`, ...).
 * A hard budget (60 lines, 1,200 characters, the footer included) is cut at a line boundary, and the footer
 * then says which subtrees to narrow to. Pure.
 */
import type { DomNode } from "./dom_types.ts";
import {
  collapseWhitespace,
  cut,
  INVISIBLE_TAGS,
  looksStable,
  optionsOf,
  outerHtmlLength,
  ownText,
  selfHiddenReason,
  semanticClass,
  textContent,
} from "./dom_facts.ts";
import { isChecked, isDisabled, optionValue, parseSelector, querySelectorAll } from "./selector.ts";

export interface LegibleOptions {
  /** Lines of the whole text, footer included (default 60). */
  maxLines?: number;
  /** Characters of the whole text, footer included (default 1,200). */
  maxChars?: number;
  /** Rows a table shows when it is not itself the scope (default 3). */
  tableRows?: number;
}

export interface LegibleDom {
  text: string;
  /** Lines of `text`, footer included. */
  line_count: number;
  /** Characters of `text`, footer included. */
  char_count: number;
  /** Length of the scope's outerHTML. */
  source_html_chars: number;
  /** Elements in the scope. */
  node_count: number;
  /** Lines the scope renders to before the budget. */
  total_lines: number;
  truncated: boolean;
  /** How to narrow: set when the budget bit or a table was summarized. */
  advice?: string;
}

export const LEGIBLE_MAX_LINES = 60;
export const LEGIBLE_MAX_CHARS = 1200;
export const LEGIBLE_TEXT_LIMIT = 60;
const ATTR_LIMIT = 40;
const MAX_INDENT = 10;

const CONTROL_TAGS = new Set([
  "input",
  "select",
  "textarea",
  "button",
  "form",
  "label",
  "fieldset",
  "legend",
]);
const OTHER_KEPT_TAGS = new Set(["details", "summary", "dialog", "output", "progress", "meter", "iframe"]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
const LANDMARKS = new Set(["header", "nav", "main", "aside", "footer", "search"]);
/** Kept elements whose own text is not shown: their kept children say it. */
const CONTAINER_TAGS = new Set([
  "form",
  "fieldset",
  "main",
  "nav",
  "header",
  "footer",
  "aside",
  "section",
  "search",
  "dialog",
  "details",
  "table",
  "iframe",
  "body",
  "html",
  "select",
  "textarea",
  "input",
]);
const CONTAINER_ROLES = new Set([
  "dialog",
  "alertdialog",
  "region",
  "navigation",
  "main",
  "banner",
  "contentinfo",
  "complementary",
  "form",
  "search",
  "group",
  "list",
  "listbox",
  "tablist",
  "menu",
  "menubar",
  "grid",
  "tree",
  "toolbar",
  "radiogroup",
  "table",
]);
const IGNORED_ROLES = new Set(["presentation", "none", "generic"]);
const ARIA_STATES = [
  "aria-invalid",
  "aria-expanded",
  "aria-checked",
  "aria-selected",
  "aria-disabled",
  "aria-pressed",
  "aria-current",
  "aria-busy",
] as const;
const BRACKET_ATTRS = [
  "name",
  "type",
  "role",
  "for",
  "href",
  "placeholder",
  "aria-label",
  "alt",
  "title",
  "data-testid",
];
const TABLE_SECTIONS = new Set(["thead", "tbody", "tfoot"]);
const MESSAGE_ID = /error|message|alert|warning|notice|toast|status|feedback|hint|help/i;
const BLOCKISH = new Set(["p", "div", "li", "td", "th", "br", "tr", "dd", "dt"]);

interface Rec {
  node: DomNode | undefined;
  /** The line without indentation; filled after the subtree is walked (text is known then). */
  label: string;
  children: Rec[];
  wantsText: boolean;
  raw: string;
  /** Lines in this subtree, itself included (for advice). */
  size: number;
}

interface WalkState {
  tableRows: number;
  summarizedTables: Array<{ node: DomNode; rows: number; shown: number }>;
}

function roleOf(node: DomNode): string | undefined {
  const role = node.attrs.get("role")?.trim().toLowerCase();
  return role === undefined || role === "" ? undefined : role.split(/\s+/)[0];
}

/** Whether the element earns a line of its own (before placement structure is considered). */
function isKept(node: DomNode): boolean {
  const tag = node.tag;
  if (CONTROL_TAGS.has(tag) || OTHER_KEPT_TAGS.has(tag) || HEADINGS.has(tag) || LANDMARKS.has(tag)) {
    return true;
  }
  if (tag === "a") return node.attrs.has("href");
  if (tag === "table") return true;
  const role = roleOf(node);
  if (role !== undefined && !IGNORED_ROLES.has(role)) return true;
  if (tag === "section" && (node.attrs.has("aria-label") || node.attrs.has("aria-labelledby"))) return true;
  for (const a of ARIA_STATES) if (node.attrs.has(a)) return true;
  if (node.attrs.has("aria-live") || node.attrs.has("contenteditable") || node.attrs.has("onclick")) {
    return true;
  }
  const tabindex = node.attrs.get("tabindex");
  if (tabindex !== undefined && Number(tabindex) >= 0) return true;
  if (node.attrs.has("disabled") || node.attrs.has("required") || node.attrs.has("readonly")) return true;
  // Message containers and authored-id text: short text a person would read off the screen.
  const id = node.attrs.get("id");
  const named = semanticClass(node) !== undefined || (id !== undefined && MESSAGE_ID.test(id));
  if (named) return true;
  if ((id !== undefined && looksStable(id)) || node.attrs.has("data-testid")) return ownText(node).length > 0;
  return false;
}

function quoteAttr(value: string): string {
  return /^[\w\-./:@]+$/.test(value) ? value : `"${value.replaceAll('"', '\\"')}"`;
}

/** An href reduced to its path (no origin, query or fragment unless that is all there is). */
function hrefPath(href: string): string {
  let s = href.trim();
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/]*/i.exec(s);
  if (scheme) s = s.slice(scheme[0].length) || "/";
  if (/^(javascript|mailto|tel|data):/i.test(s)) return s.slice(0, s.indexOf(":") + 1);
  const q = s.search(/[?#]/);
  if (q > 0) s = s.slice(0, q);
  return cut(s, LEGIBLE_TEXT_LIMIT);
}

function selectorHead(node: DomNode): string {
  let s = node.tag;
  const id = node.attrs.get("id");
  if (id !== undefined && /^[A-Za-z_][\w-]*$/.test(id) && id.length <= ATTR_LIMIT) s += `#${id}`;
  const cls = semanticClass(node);
  if (cls !== undefined) s += `.${cls}`;
  for (const name of BRACKET_ATTRS) {
    const v = node.attrs.get(name);
    if (v === undefined) continue;
    if (name === "role" && v === node.tag) continue;
    if (name === "placeholder" && v === node.attrs.get("aria-label")) continue;
    const shown = name === "href" ? hrefPath(v) : cut(collapseWhitespace(v), ATTR_LIMIT);
    s += `[${name}=${quoteAttr(shown)}]`;
  }
  return s;
}

function maskedValue(node: DomNode, value: string): string {
  const type = (node.attrs.get("type") ?? "").toLowerCase();
  // A password never shows, whatever the recorder stored; masked values stay as stored ("****").
  if (type === "password" && !/^\*+$/.test(value)) return value.length === 0 ? "" : "****";
  return value;
}

function selectLabel(node: DomNode, options: DomNode[]): { text?: string; value?: string } {
  if (node.attrs.has("multiple")) return {}; // its selected options are listed under it
  if (node.value !== undefined) {
    const chosen = options.find((o) => optionValue(o) === node.value);
    return chosen ? { text: textContent(chosen, 200) } : { value: node.value };
  }
  const chosen = options.find((o) => o.attrs.has("selected")) ??
    (node.attrs.has("multiple") ? undefined : options[0]);
  return chosen ? { text: textContent(chosen, 200) } : {};
}

function states(node: DomNode): string[] {
  const out: string[] = [];
  for (const a of ARIA_STATES) {
    const v = node.attrs.get(a);
    if (v !== undefined) out.push(`${a}=${quoteAttr(cut(v, 20) || '""')}`);
  }
  if (isDisabled(node)) out.push("[DISABLED]");
  if (isChecked(node) && node.tag !== "option") out.push("[checked]");
  if (node.tag === "option" && isChecked(node)) out.push("[selected]");
  if (node.attrs.has("required")) out.push("[required]");
  if (node.attrs.has("readonly")) out.push("[readonly]");
  if (selfHiddenReason(node) !== undefined) out.push("[hidden]");
  if (node.attrs.has("open")) out.push("[open]");
  return out;
}

function makeRec(node: DomNode | undefined, wantsText: boolean): Rec {
  return { node, label: "", children: [], wantsText, raw: "", size: 1 };
}

function label(node: DomNode, text: string | undefined, extra: string[]): string {
  let s = selectorHead(node);
  if (text !== undefined && text.length > 0) s += ` "${cut(text, LEGIBLE_TEXT_LIMIT).replaceAll('"', "'")}"`;
  for (const e of extra) s += ` ${e}`;
  for (const st of states(node)) s += ` ${st}`;
  return s;
}

function controlLine(node: DomNode): string {
  if (node.tag === "select") {
    const options = optionsOf(node);
    const chosen = selectLabel(node, options);
    const extra = chosen.value !== undefined ? [`value="${cut(chosen.value, 30)}"`] : [];
    extra.push(options.length === 0 ? "[empty options: 0]" : `[options: ${options.length}]`);
    return label(node, chosen.text, extra);
  }
  if (node.tag === "textarea") {
    const value = maskedValue(node, node.value ?? textContent(node, 200));
    return label(node, undefined, [`value="${cut(value, 30)}"`]);
  }
  // input
  const type = (node.attrs.get("type") ?? "text").toLowerCase();
  const value = node.value ?? node.attrs.get("value");
  if (type === "checkbox" || type === "radio" || type === "file" || type === "image") {
    return label(node, undefined, []);
  }
  if (type === "submit" || type === "button" || type === "reset") return label(node, value, []);
  return label(node, undefined, [`value="${cut(maskedValue(node, value ?? ""), 30)}"`]);
}

/** A cell's text, or its control in short (`[x]`, `[ ]`, `[DISABLED]`) when it has no text. */
function cellText(cell: DomNode): string {
  const text = textContent(cell, 80);
  if (text.length > 0) return text;
  const stack = [...cell.children];
  while (stack.length > 0) {
    const n = stack.shift();
    if (!n || n.kind !== "element") continue;
    if (n.tag === "input" || n.tag === "select" || n.tag === "button" || n.tag === "textarea") {
      const type = (n.attrs.get("type") ?? "").toLowerCase();
      const box = type === "checkbox" || type === "radio" ? (isChecked(n) ? "[x]" : "[ ]") : `[${n.tag}]`;
      return isDisabled(n) ? `${box}[DISABLED]` : box;
    }
    stack.push(...n.children);
  }
  return "";
}

function rowText(row: DomNode): string {
  const cells: string[] = [];
  for (const c of row.children) {
    if (c.kind === "element" && (c.tag === "td" || c.tag === "th")) cells.push(cellText(c));
  }
  return cells.join(" | ");
}

function tableRowsOf(table: DomNode): DomNode[] {
  const rows: DomNode[] = [];
  for (const c of table.children) {
    if (c.kind !== "element") continue;
    if (c.tag === "tr") rows.push(c);
    else if (TABLE_SECTIONS.has(c.tag)) {
      for (const r of c.children) if (r.kind === "element" && r.tag === "tr") rows.push(r);
    }
  }
  return rows;
}

function rowRec(row: DomNode): Rec {
  const rec = makeRec(row, false);
  rec.label = label(row, rowText(row), []);
  return rec;
}

function tableRec(table: DomNode, state: WalkState, listAll: boolean): Rec {
  const rec = makeRec(table, false);
  const rows = tableRowsOf(table);
  const caption = table.children.find((c) => c.kind === "element" && c.tag === "caption");
  const title = caption ? textContent(caption, 200) : undefined;
  rec.label = label(table, title, [`[rows: ${rows.length}]`]);
  const shown = listAll ? rows.length : Math.min(rows.length, state.tableRows);
  for (let i = 0; i < shown; i++) rec.children.push(rowRec(rows[i]));
  if (shown < rows.length) {
    const more = makeRec(undefined, false);
    more.label = `… +${rows.length - shown} rows`;
    rec.children.push(more);
    state.summarizedTables.push({ node: table, rows: rows.length, shown });
  }
  return rec;
}

/** Walks `node`'s children, appending kept records to `out` and text to the nearest kept owner. */
function walk(node: DomNode, out: Rec[], owner: Rec | undefined, state: WalkState): void {
  for (const c of node.children) {
    if (c.kind === "text") {
      if (owner?.wantsText && owner.raw.length < 200) owner.raw += c.text;
      continue;
    }
    if (c.kind === "document") {
      walk(c, out, undefined, state);
      continue;
    }
    if (c.kind !== "element" || INVISIBLE_TAGS.has(c.tag) || c.tag === "svg" || c.tag === "option") continue;
    if (c.tag === "input" && (c.attrs.get("type") ?? "").toLowerCase() === "hidden") continue;
    out.push(...elementRecs(c, owner, state));
  }
}

function elementRecs(c: DomNode, owner: Rec | undefined, state: WalkState): Rec[] {
  if (c.tag === "table") return [tableRec(c, state, false)];
  if (c.tag === "select" || c.tag === "input" || c.tag === "textarea") {
    const rec = makeRec(c, false);
    rec.label = controlLine(c);
    if (c.tag === "select" && c.attrs.has("multiple")) {
      for (const o of optionsOf(c)) {
        if (!isChecked(o)) continue;
        const opt = makeRec(o, false);
        opt.label = label(o, textContent(o, 200), []);
        rec.children.push(opt);
      }
    }
    return [rec];
  }
  if (isKept(c)) {
    const role = roleOf(c);
    const rec = makeRec(c, !CONTAINER_TAGS.has(c.tag) && !(role !== undefined && CONTAINER_ROLES.has(role)));
    walk(c, rec.children, rec, state);
    let text = rec.wantsText ? collapseWhitespace(rec.raw) : undefined;
    if (!rec.wantsText && rec.children.length === 0 && c.tag !== "form") text = textContent(c, 200);
    rec.label = label(c, text, []);
    return [rec];
  }
  if (selfHiddenReason(c) !== undefined) {
    // A hidden wrapper is kept only to say that the kept things inside it are hidden.
    const rec = makeRec(c, false);
    walk(c, rec.children, undefined, state);
    if (rec.children.length === 0) return [];
    rec.label = label(c, undefined, []);
    return [rec];
  }
  const inner: Rec[] = [];
  if (owner?.wantsText && BLOCKISH.has(c.tag)) owner.raw += " ";
  walk(c, inner, owner, state);
  if (owner?.wantsText && BLOCKISH.has(c.tag)) owner.raw += " ";
  return inner;
}

function flatten(recs: Rec[], depth: number, lines: string[], owners: Rec[]): number {
  let count = 0;
  for (const r of recs) {
    lines.push("  ".repeat(Math.min(depth, MAX_INDENT)) + r.label);
    owners.push(r);
    r.size = 1 + flatten(r.children, depth + 1, lines, owners);
    count += r.size;
  }
  return count;
}

function countElements(node: DomNode): number {
  let n = 0;
  const stack = [node];
  while (stack.length > 0) {
    const x = stack.pop();
    if (!x) break;
    if (x.kind === "element") n++;
    for (const c of x.children) stack.push(c);
  }
  return n;
}

function topDocument(node: DomNode): DomNode {
  let n = node;
  while (n.parent) n = n.parent;
  return n;
}

/** A stable-ish selector to narrow to: id, test id, name, aria-label or role, anchored by an id'd ancestor. */
export function scopeSelector(node: DomNode): string {
  const id = node.attrs.get("id");
  if (id !== undefined && looksStable(id)) return `${node.tag}#${id}`;
  // Single quotes inside, so the selector reads cleanly when the advice quotes it.
  const quote = (v: string): string => `'${v.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  let own = node.tag;
  for (const name of ["data-testid", "name", "aria-label", "role"]) {
    const v = node.attrs.get(name);
    if (v !== undefined && v.length <= ATTR_LIMIT) {
      own += `[${name}=${quote(v)}]`;
      break;
    }
  }
  if (own === node.tag) {
    const cls = semanticClass(node);
    if (cls !== undefined) own += `.${cls}`;
  }
  for (let p = node.parent; p; p = p.parent) {
    const pid = p.kind === "element" ? p.attrs.get("id") : undefined;
    if (pid !== undefined && looksStable(pid)) return `${p.tag}#${pid} ${own}`;
  }
  return own;
}

function isUnique(selector: string, root: DomNode): boolean {
  try {
    return querySelectorAll(root, parseSelector(selector)).length === 1;
  } catch {
    return false;
  }
}

function adviceFor(
  owners: Rec[],
  total: number,
  truncated: boolean,
  firstCut: number,
  state: WalkState,
  root: DomNode,
  fitLines: number,
): string | undefined {
  const parts: string[] = [];
  if (truncated) {
    // The largest subtrees that would fit the budget first, then the largest of the rest.
    const floor = Math.min(10, Math.floor(fitLines / 4));
    const fits = (r: Rec): number => r.size <= fitLines && r.size >= floor ? 1 : 0;
    const candidates = owners
      .filter((r) => r.node !== undefined && r.size >= 2 && r.size < total && r.node.tag !== "tr")
      .sort((a, b) => fits(b) - fits(a) || b.size - a.size);
    const chosen: Rec[] = [];
    for (const c of candidates) {
      if (chosen.length >= 2) break;
      const n = c.node;
      if (!n || chosen.some((x) => x.node && (contains(x.node, n) || contains(n, x.node)))) continue;
      chosen.push(c);
    }
    const cutAt = owners[firstCut]?.node;
    if (chosen.length === 0 && cutAt?.tag === "tr" && cutAt.parent) {
      // Rows of a listed table: name the first row left out (positional, for reading only).
      const table = cutAt.parent.tag === "table" ? cutAt.parent : cutAt.parent.parent ?? cutAt.parent;
      const rows = tableRowsOf(table);
      const at = rows.indexOf(cutAt);
      const within = cutAt.parent.children.filter((c) => c.kind === "element").indexOf(cutAt) + 1;
      parts.push(
        `rows 1–${at} of ${rows.length} shown; narrow with scope: "${
          scopeSelector(cutAt.parent)
        } > tr:nth-child(${within})" for one row`,
      );
    } else if (chosen.length === 0 && cutAt) chosen.push(owners[firstCut]);
    const named = chosen.flatMap((r) => {
      if (!r.node) return [];
      const sel = scopeSelector(r.node);
      return [`"${sel}"${isUnique(sel, root) ? "" : " (not unique)"} (${r.size} lines)`];
    });
    if (named.length > 0) parts.push(`narrow with scope: ${named.join(" or ")}`);
    else if (parts.length === 0) parts.push("narrow the scope");
  }
  for (const t of state.summarizedTables.slice(0, 1)) {
    parts.push(`${scopeSelector(t.node)} shows ${t.shown} of ${t.rows} rows; scope to it to list them`);
  }
  return parts.length > 0 ? parts.join("; ") : undefined;
}

function contains(a: DomNode, b: DomNode): boolean {
  for (let p: DomNode | undefined = b; p; p = p.parent) if (p === a) return true;
  return false;
}

/** Thousands separators by hand: `toLocaleString` costs ~0.1 ms a call, and the footer is built many times. */
function fmt(n: number): string {
  const digits = String(Math.trunc(n));
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
    out += digits[i];
  }
  return out;
}

/** The footer whose character count includes itself (and everything above it). */
function withFooter(body: string[], make: (chars: number) => string[]): { text: string; lines: number } {
  const bodyText = body.join("\n");
  const assemble = (chars: number): string => {
    const foot = make(chars).join("\n");
    return bodyText.length > 0 ? `${bodyText}\n${foot}` : foot;
  };
  let guess = bodyText.length + 60;
  for (let i = 0; i < 6; i++) {
    const text = assemble(guess);
    if (text.length === guess) return { text, lines: body.length + make(guess).length };
    guess = text.length;
  }
  // The count straddles a digit boundary: settle on the larger count and pad to it.
  for (let c = guess; c < guess + 8; c++) {
    const text = assemble(c);
    if (text.length <= c) {
      return { text: text + " ".repeat(c - text.length), lines: body.length + make(c).length };
    }
  }
  const text = assemble(guess);
  return { text, lines: body.length + make(guess).length };
}

/** Renders `scope` (an element, or a document for the whole page) within the budget. */
export function legibleDom(scope: DomNode, opts: LegibleOptions = {}): LegibleDom {
  const maxLines = opts.maxLines ?? LEGIBLE_MAX_LINES;
  const maxChars = opts.maxChars ?? LEGIBLE_MAX_CHARS;
  const state: WalkState = { tableRows: opts.tableRows ?? 3, summarizedTables: [] };
  const sourceChars = outerHtmlLength(scope);
  const nodeCount = countElements(scope);

  let recs: Rec[];
  if (scope.kind === "element" && (scope.tag === "table" || TABLE_SECTIONS.has(scope.tag))) {
    const table = scope.tag === "table" ? scope : undefined;
    if (table) recs = [tableRec(table, state, true)];
    else {
      const root = makeRec(scope, false);
      root.label = label(scope, undefined, []);
      for (const r of scope.children) {
        if (r.kind === "element" && r.tag === "tr") root.children.push(rowRec(r));
      }
      recs = [root];
    }
  } else if (scope.kind === "element") {
    const kept = elementRecs(scope, undefined, state);
    if (kept.length === 1 && kept[0].node === scope) recs = kept;
    else {
      // The scope always heads the text, kept or not, so the lines below it are placed.
      const root = makeRec(scope, false);
      root.children = kept;
      root.label = label(scope, undefined, []);
      recs = [root];
    }
  } else {
    recs = [];
    walk(scope, recs, undefined, state);
  }

  const lines: string[] = [];
  const owners: Rec[] = [];
  flatten(recs, 0, lines, owners);
  const total = lines.length;
  const docRoot = topDocument(scope);
  const counts = (shown: number, chars: number, footLines: number): string =>
    shown === total
      ? `— ${fmt(shown + footLines)} lines, ${fmt(chars)} chars (source ${fmt(sourceChars)} chars)`
      : `— truncated: ${fmt(shown)} of ${fmt(total)} DOM lines shown, ${fmt(chars)} chars (source ${
        fmt(sourceChars)
      } chars)`;

  const fullAdvice = adviceFor(owners, total, false, total, state, docRoot, maxLines - 2);
  const fits = (
    body: string[],
    footLines: (c: number) => string[],
  ): { text: string; lines: number } | undefined => {
    const r = withFooter(body, footLines);
    return r.lines <= maxLines && r.text.length <= maxChars ? r : undefined;
  };
  const whole = fits(lines, (c) => fullAdvice ? [counts(total, c, 2), fullAdvice] : [counts(total, c, 1)]);
  if (whole) {
    return {
      text: whole.text,
      line_count: whole.lines,
      char_count: whole.text.length,
      source_html_chars: sourceChars,
      node_count: nodeCount,
      total_lines: total,
      truncated: false,
      ...(fullAdvice ? { advice: fullAdvice } : {}),
    };
  }

  // The budget bites: keep the longest prefix of whole lines that fits with the footer and the advice.
  let k = Math.min(total, maxLines - 2);
  // Advice names the cut of the line budget; a character cut only moves it earlier.
  const advice = cut(
    adviceFor(owners, total, true, k, state, docRoot, maxLines - 2) ?? "narrow the scope",
    400,
  );
  let result: { text: string; lines: number } | undefined;
  while (k >= 0) {
    const shown = k;
    result = fits(lines.slice(0, k), (c) => [counts(shown, c, 2), advice]);
    if (result) break;
    k--;
  }
  const final = result ?? withFooter([], (c) => [counts(0, c, 2), advice]);
  return {
    text: final.text,
    line_count: final.lines,
    char_count: final.text.length,
    source_html_chars: sourceChars,
    node_count: nodeCount,
    total_lines: total,
    truncated: true,
    advice,
  };
}
