/**
 * One line of the agent-legible DOM: which elements earn a line, and how a line reads — the tag with its
 * stable names (`#id`, one semantic class, allow-listed attributes), its text cut at 60 characters, its
 * value as stored (masked values stay masked, a password never shows), and its states. Pure.
 */
import type { DomNode } from "./dom_types.ts";
import {
  collapseWhitespace,
  cut,
  looksStable,
  optionsOf,
  ownText,
  selfHiddenReason,
  semanticClass,
  textContent,
} from "./dom_facts.ts";
import { isChecked, isDisabled, optionValue } from "./selector.ts";

export const LEGIBLE_TEXT_LIMIT = 60;
export const ATTR_LIMIT = 40;

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
export const CONTAINER_TAGS = new Set([
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
export const CONTAINER_ROLES = new Set([
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
export const TABLE_SECTIONS = new Set(["thead", "tbody", "tfoot"]);
const MESSAGE_ID = /error|message|alert|warning|notice|toast|status|feedback|hint|help/i;
export const BLOCKISH = new Set(["p", "div", "li", "td", "th", "br", "tr", "dd", "dt"]);

export function roleOf(node: DomNode): string | undefined {
  const role = node.attrs.get("role")?.trim().toLowerCase();
  return role === undefined || role === "" ? undefined : role.split(/\s+/)[0];
}

/** Whether the element earns a line of its own (before placement structure is considered). */
export function isKept(node: DomNode): boolean {
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

export function label(node: DomNode, text: string | undefined, extra: string[]): string {
  let s = selectorHead(node);
  if (text !== undefined && text.length > 0) s += ` "${cut(text, LEGIBLE_TEXT_LIMIT).replaceAll('"', "'")}"`;
  for (const e of extra) s += ` ${e}`;
  for (const st of states(node)) s += ` ${st}`;
  return s;
}

export function controlLine(node: DomNode): string {
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
    for (const ch of n.children) stack.push(ch);
  }
  return "";
}

export function rowText(row: DomNode): string {
  const cells: string[] = [];
  for (const c of row.children) {
    if (c.kind === "element" && (c.tag === "td" || c.tag === "th")) cells.push(cellText(c));
  }
  return cells.join(" | ");
}

export function tableRowsOf(table: DomNode): DomNode[] {
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
