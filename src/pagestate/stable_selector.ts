/**
 * A selector for one element that should keep naming it as the page changes and across checkpoints: never
 * positional, built from author-given names (ids that do not look generated, test ids, names, labels,
 * roles, types, meaningful classes), anchored under the nearest ancestor that has such a name when the
 * element's own is not unique. Pure.
 */
import type { DomNode } from "./dom_types.ts";
import { parseSelector, querySelectorAll } from "./selector.ts";

export interface StableSelector {
  selector: string;
  /** Exactly one element of the root matches the selector now. */
  unique: boolean;
}

const TEST_ID_ATTRS = ["data-testid", "data-test-id", "data-test", "data-qa", "data-cy"];

/** Frameworks' generated id prefixes (Ember, React useId and react-select, Radix, Headless UI, MUI, …). */
const GENERATED_PREFIX =
  /^(ember|react-|radix-|headlessui-|mui-|rc-|rc_|downshift-|select2-|cdk-|mat-|ext-gen|yui_|gwt-|j_id|ng-|vs__|__)/i;

/** Whether an id (or class) token looks machine-made rather than named by an author. */
export function looksGenerated(value: string): boolean {
  if (value.length === 0 || value.length > 48) return true;
  if (value.includes(":")) return true; // React's useId (":r1:")
  if (/\d{4,}/.test(value)) return true; // long digit runs
  if (/^\d/.test(value)) return true;
  if (/[0-9a-f]{8}-[0-9a-f]{4}-/i.test(value)) return true; // uuid
  if (GENERATED_PREFIX.test(value) && /\d/.test(value)) return true;
  for (const token of value.split(/[-_.]/)) {
    // A hex hash token: at least 6 hex characters mixing digits and letters (a1b2c3, 3f9e0a7).
    if (token.length >= 6 && /^[0-9a-f]+$/i.test(token) && /\d/.test(token) && /[a-f]/i.test(token)) {
      return true;
    }
    // CSS-in-JS hashes mix cases and digits in one short token (sc-bdVaJa, css-1x2y3z).
    if (token.length >= 5 && /\d/.test(token) && /[a-z]/.test(token) && /[A-Z]/.test(token)) return true;
  }
  return /^(css|sc|jsx|emotion|styled)-/.test(value) && /\d|[A-Z]/.test(value.slice(value.indexOf("-")));
}

/** Classes that say the element's state now, not what it is: they would break the name when state flips. */
const STATE_CLASS =
  /^(active|selected|open|opened|show|shown|hidden|hide|disabled|enabled|focus|focused|hover|visible|invisible|collapsed|expanded|checked|current|loading|loaded|in|fade|is-.+|has-.+|ng-.+)$/i;

/** Utility-class soup: variants (`md:flex`, `hover:bg-x`), arbitrary values, scales (`p-4`, `w-1/2`). */
const UTILITY_PREFIX = new RegExp(
  "^-?(m|p|mx|my|mt|mb|ml|mr|ms|me|px|py|pt|pb|pl|pr|ps|pe|w|h|size|gap|space|top|left|right|bottom|inset|z|" +
    "text|bg|border|rounded|shadow|flex|grid|col|row|order|font|leading|tracking|opacity|min|max|overflow|" +
    "justify|items|content|self|place|ease|transition|duration|delay|animate|ring|outline|cursor|select|" +
    "pointer|align|whitespace|break|list|object|aspect|dark|divide|fill|stroke|translate|rotate|scale|skew|" +
    "origin|float|clear|box|decoration|indent|underline|line|from|via|to|backdrop|blur|brightness|contrast|" +
    "drop|grayscale|invert|saturate|sepia|filter|accent|caret|scroll|snap|touch|resize|appearance|will|" +
    "columns|basis|grow|shrink|d|g|fs|fw|lh|bg-opacity|visible|invisible|sr|not-sr)-",
);
const UTILITY_WORDS = new Set([
  "flex",
  "grid",
  "block",
  "inline",
  "inline-block",
  "inline-flex",
  "inline-grid",
  "hidden",
  "contents",
  "relative",
  "absolute",
  "fixed",
  "sticky",
  "static",
  "container",
  "truncate",
  "underline",
  "italic",
  "uppercase",
  "lowercase",
  "capitalize",
  "sr-only",
  "not-sr-only",
  "clearfix",
  "row",
  "col",
  "d-flex",
  "shrink",
  "grow",
  "border",
  "rounded",
  "shadow",
  "transition",
  "transform",
  "antialiased",
  "subpixel-antialiased",
  "visible",
  "invisible",
  "isolate",
  "table",
  "ring",
  "outline",
  "filter",
  "blur",
  "italic",
  "not-italic",
  "ordinal",
  "normal-nums",
  "tabular-nums",
  "overline",
  "no-underline",
  "line-through",
  "break-words",
  "whitespace-nowrap",
  "uppercase",
  "w-full",
  "h-full",
  "mx-auto",
]);

function isUtilityClass(token: string): boolean {
  if (/[:[\]/!@#%().,=]/.test(token)) return true;
  if (/(^|-)\d+(\.\d+)?$/.test(token)) return true; // p-4, mt-10, gap-0.5, col-6
  return UTILITY_PREFIX.test(token) || UTILITY_WORDS.has(token);
}

function stableClasses(node: DomNode): string[] {
  const cls = node.attrs.get("class");
  if (!cls) return [];
  const out: string[] = [];
  for (const token of cls.split(/\s+/)) {
    if (token === "" || token.length > 32 || out.includes(token)) continue;
    if (isUtilityClass(token) || STATE_CLASS.test(token) || looksGenerated(token)) continue;
    out.push(token);
  }
  return out;
}

/** CSS.escape for identifiers. */
export function cssIdent(value: string): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    const code = value.charCodeAt(i);
    if (code === 0) out += "\ufffd";
    else if ((code >= 1 && code <= 31) || code === 127) out += `\\${code.toString(16)} `;
    else if (i === 0 && code >= 48 && code <= 57) out += `\\${code.toString(16)} `;
    else if (i === 1 && code >= 48 && code <= 57 && value[0] === "-") out += `\\${code.toString(16)} `;
    else if (i === 0 && ch === "-" && value.length === 1) out += "\\-";
    else if (code >= 128 || ch === "-" || ch === "_" || /[0-9A-Za-z]/.test(ch)) out += ch;
    else out += `\\${ch}`;
  }
  return out;
}

/** A quoted attribute value. */
export function cssString(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\a ")}"`;
}

const attr = (name: string, value: string): string => `[${name}=${cssString(value)}]`;

/** Attribute values worth naming an element by: short, and not machine-made. */
function usableValue(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== "" && value.length <= 80;
}

/**
 * The node's own candidate selectors, most preferred first (all non-positional): `strong` ones name it by
 * author-given attributes, `weak` ones by classes and the tag alone.
 */
function ownCandidates(node: DomNode): { strong: string[]; weak: string[] } {
  const tag = cssIdent(node.tag);
  const out: string[] = [];
  const id = node.attrs.get("id");
  if (id !== undefined && id !== "" && !looksGenerated(id)) out.push(`#${cssIdent(id)}`);
  for (const name of TEST_ID_ATTRS) {
    const v = node.attrs.get(name);
    if (usableValue(v)) out.push(attr(name, v), `${tag}${attr(name, v)}`);
  }
  const nameAttr = node.attrs.get("name");
  const aria = node.attrs.get("aria-label");
  const role = node.attrs.get("role");
  const type = node.attrs.get("type");
  if (usableValue(nameAttr) && !looksGenerated(nameAttr)) {
    out.push(`${tag}${attr("name", nameAttr)}`);
    if (usableValue(type)) out.push(`${tag}${attr("name", nameAttr)}${attr("type", type)}`);
  }
  if (usableValue(aria)) out.push(`${tag}${attr("aria-label", aria)}`);
  if (usableValue(role)) {
    out.push(`${tag}${attr("role", role)}`);
    if (usableValue(aria)) out.push(`${tag}${attr("role", role)}${attr("aria-label", aria)}`);
  }
  for (const extra of ["placeholder", "title", "alt", "for", "href", "src"]) {
    const v = node.attrs.get(extra);
    if (usableValue(v) && !(extra === "href" && (v.startsWith("javascript:") || v === "#"))) {
      out.push(`${tag}${attr(extra, v)}`);
    }
  }
  // Other data-* attributes authors name elements by (data-action="save-32"), a few at most.
  let data = 0;
  for (const [name, v] of node.attrs) {
    if (data >= 3) break;
    if (!name.startsWith("data-") || TEST_ID_ATTRS.includes(name) || !usableValue(v) || looksGenerated(v)) {
      continue;
    }
    if (name === "data-state" || name.startsWith("data-rr")) continue; // state, not a name
    out.push(`${tag}${attr(name, v)}`);
    data++;
  }
  if (usableValue(type)) out.push(`${tag}${attr("type", type)}`);
  const weak: string[] = [];
  const classes = stableClasses(node).slice(0, 4);
  for (const c of classes) weak.push(`${tag}.${cssIdent(c)}`);
  for (let i = 0; i < classes.length; i++) {
    for (let j = i + 1; j < classes.length; j++) {
      weak.push(`${tag}.${cssIdent(classes[i])}.${cssIdent(classes[j])}`);
    }
  }
  if (usableValue(type) && classes.length > 0) {
    weak.push(`${tag}.${cssIdent(classes[0])}${attr("type", type)}`);
  }
  weak.push(tag);
  return { strong: out, weak };
}

/** The anchor name of an ancestor: only author names count (an id or a test id), rendered with its tag. */
function anchorCandidates(node: DomNode): string[] {
  const tag = cssIdent(node.tag);
  const out: string[] = [];
  const id = node.attrs.get("id");
  if (id !== undefined && id !== "" && !looksGenerated(id)) out.push(`${tag}#${cssIdent(id)}`);
  for (const name of TEST_ID_ATTRS) {
    const v = node.attrs.get(name);
    if (usableValue(v)) out.push(`${tag}${attr(name, v)}`);
  }
  const role = node.attrs.get("role");
  const aria = node.attrs.get("aria-label");
  if (usableValue(aria)) out.push(`${tag}${attr("aria-label", aria)}`);
  if (usableValue(role) && usableValue(aria)) {
    out.push(`${tag}${attr("role", role)}${attr("aria-label", aria)}`);
  }
  const nameAttr = node.attrs.get("name");
  if (usableValue(nameAttr) && !looksGenerated(nameAttr) && node.tag === "form") {
    out.push(`${tag}${attr("name", nameAttr)}`);
  }
  return out;
}

/** The document `node` lives in (its frame's document), or `root` when there is none below it. */
function scopeOf(node: DomNode, root: DomNode): DomNode {
  for (let p = node.parent; p; p = p.parent) {
    if (p.kind === "document" || p === root) return p;
  }
  return root;
}

function count(scope: DomNode, selector: string, limit = 2): number {
  return querySelectorAll(scope, parseSelector(selector), { limit }).length;
}

const MAX_ANCESTORS = 12;
/** Anchored combinations tried per element at most: each is one query over the document. */
const MAX_COMBINATIONS = 48;

/** The ancestors worth anchoring under, nearest first, with their anchor selectors. */
function anchors(el: DomNode, scope: DomNode): { named: string[]; classes: string[]; unique: boolean }[] {
  const out: { named: string[]; classes: string[]; unique: boolean }[] = [];
  let depth = 0;
  for (let a = el.parent; a && a.kind === "element" && depth < MAX_ANCESTORS; a = a.parent, depth++) {
    const named = anchorCandidates(a).filter((c) => count(scope, c) === 1);
    const classes = stableClasses(a).slice(0, 2).map((c) => `${cssIdent(a.tag)}.${cssIdent(c)}`);
    if (named.length === 0 && classes.length === 0) continue;
    out.push({ named, classes, unique: named.length > 0 });
    // Nothing farther than the nearest uniquely named ancestor can narrow the match further.
    if (named.length > 0) break;
  }
  return out;
}

/**
 * Tries, in order: the element's own author names; those under a uniquely named ancestor
 * (`form#checkout button[type="submit"]`); its classes; classes or tag under a named ancestor; the tag alone;
 * everything under ancestors' meaningful classes. The first selector with exactly one match wins.
 */
export function stableSelector(node: DomNode, root: DomNode): StableSelector {
  let target: DomNode | undefined = node;
  while (target && target.kind !== "element") target = target.parent;
  if (!target) return { selector: "", unique: false };
  const el = target;
  const scope = scopeOf(el, root);
  const { strong, weak } = ownCandidates(el);
  const best = strong[0] ?? weak[0];
  for (const c of strong) if (count(scope, c) === 1) return { selector: c, unique: true };
  const ancestors = anchors(el, scope);
  const named = ancestors.flatMap((a) => a.named);
  const classAnchors = ancestors.flatMap((a) => a.classes);
  let budget = MAX_COMBINATIONS;
  const tryUnder = (anchorList: string[], own: string[]): string | undefined => {
    for (const anchor of anchorList) {
      for (const c of own) {
        if (budget-- <= 0) return undefined;
        const combined = `${anchor} ${c}`;
        if (count(scope, combined) === 1) return combined;
      }
    }
    return undefined;
  };
  const tagOnly = weak[weak.length - 1];
  const found = tryUnder(named, strong.slice(0, 6)) ??
    weak.slice(0, -1).find((c) => count(scope, c) === 1) ??
    tryUnder(named, weak.slice(0, 4)) ??
    (count(scope, tagOnly) === 1 ? tagOnly : undefined) ??
    tryUnder(classAnchors, [...strong.slice(0, 3), ...weak.slice(0, 3)]);
  if (found) return { selector: found, unique: true };
  return { selector: named.length > 0 ? `${named[0]} ${best}` : best, unique: false };
}
