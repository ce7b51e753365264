/**
 * A CSS selector engine over reconstructed documents (`DomNode` trees): the closed subset `selector_parse.ts`
 * accepts, matched right to left as browsers do. Combinators never leave an element's own document; matching
 * descends into same-origin iframe documents only when the caller asks (`{ frames: true }`). Pure.
 */
import type { DomNode } from "./dom_types.ts";
import type {
  AttrTest,
  ComplexSelector,
  Compound,
  ParsedSelector,
  Pseudo,
  RelativeSelector,
} from "./selector_parse.ts";

export { parseSelector, SELECTOR_MAX_LENGTH, SelectorError } from "./selector_parse.ts";
export type { ParsedSelector } from "./selector_parse.ts";

export interface SelectorMatchOptions {
  /** Also search the documents of same-origin iframes (each matched within its own document). */
  frames?: boolean;
  /** Stop after this many matches (counting "is it unique" needs two). */
  limit?: number;
}

/** Sibling lists up to this long are scanned; longer ones are indexed once per query. */
const SMALL = 24;

/** Per-query caches of sibling positions, so `:nth-child` over a long list is not quadratic. */
class MatchContext {
  /** 1-based element position, and same-tag position, of each child of an indexed parent. */
  private childIndex = new Map<DomNode, number>();
  private typeIndex = new Map<DomNode, number>();
  private elementChildren = new Map<DomNode, DomNode[]>();

  private elements(parent: DomNode): DomNode[] {
    let elements = this.elementChildren.get(parent);
    if (elements) return elements;
    elements = [];
    for (const c of parent.children) {
      if (c.kind !== "element") continue;
      elements.push(c);
      this.childIndex.set(c, elements.length);
    }
    this.elementChildren.set(parent, elements);
    return elements;
  }

  /** 1-based position among element siblings (of the same type when `ofType`); 1 for a parentless node. */
  position(node: DomNode, ofType: boolean): number {
    const parent = node.parent;
    if (!parent) return 1;
    if (parent.children.length <= SMALL) {
      let i = 0;
      for (const c of parent.children) {
        if (c.kind === "element" && (!ofType || c.tag === node.tag)) i++;
        if (c === node) return i;
      }
      return 1;
    }
    if (!ofType) {
      this.elements(parent);
      return this.childIndex.get(node) ?? 1;
    }
    let v = this.typeIndex.get(node);
    if (v === undefined) {
      const counts = new Map<string, number>();
      for (const c of this.elements(parent)) {
        const t = (counts.get(c.tag) ?? 0) + 1;
        counts.set(c.tag, t);
        this.typeIndex.set(c, t);
      }
      v = this.typeIndex.get(node) ?? 1;
    }
    return v;
  }

  /** The previous element sibling. */
  previous(node: DomNode): DomNode | undefined {
    const parent = node.parent;
    if (!parent) return undefined;
    if (parent.children.length <= SMALL) {
      const siblings = parent.children;
      let i = siblings.indexOf(node) - 1;
      while (i >= 0 && siblings[i].kind !== "element") i--;
      return i >= 0 ? siblings[i] : undefined;
    }
    const elements = this.elements(parent);
    return elements[(this.childIndex.get(node) ?? 1) - 2];
  }

  /** 1-based position among element siblings counted from the end. */
  positionFromEnd(node: DomNode): number {
    const parent = node.parent;
    if (!parent) return 1;
    if (parent.children.length <= SMALL) {
      let i = 0;
      for (let k = parent.children.length - 1; k >= 0; k--) {
        const c = parent.children[k];
        if (c.kind === "element") i++;
        if (c === node) return i;
      }
      return 1;
    }
    const elements = this.elements(parent);
    return elements.length - (this.childIndex.get(node) ?? 1) + 1;
  }
}

const isElement = (n: DomNode | undefined): n is DomNode => n !== undefined && n.kind === "element";

/** The parent element within the same document (a document node ends the chain, as in the DOM). */
function parentElement(node: DomNode): DomNode | undefined {
  const p = node.parent;
  return isElement(p) ? p : undefined;
}

const WS = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13 || code === 12;

/** Whether the whitespace-separated `list` holds `token`, without allocating a split. */
export function hasToken(list: string, token: string): boolean {
  if (token === "") return false;
  let from = 0;
  while (true) {
    const i = list.indexOf(token, from);
    if (i < 0) return false;
    const end = i + token.length;
    if ((i === 0 || WS(list.charCodeAt(i - 1))) && (end === list.length || WS(list.charCodeAt(end)))) {
      return true;
    }
    from = i + 1;
  }
}

function attrMatches(node: DomNode, test: AttrTest): boolean {
  const raw = node.attrs.get(test.name);
  if (raw === undefined) return false;
  if (test.op === undefined) return true;
  const actual = test.caseInsensitive ? raw.toLowerCase() : raw;
  const want = test.caseInsensitive ? test.value.toLowerCase() : test.value;
  switch (test.op) {
    case "=":
      return actual === want;
    case "~=":
      return !/\s/.test(want) && hasToken(actual, want);
    case "|=":
      return actual === want || actual.startsWith(want + "-");
    case "^=":
      return want !== "" && actual.startsWith(want);
    case "$=":
      return want !== "" && actual.endsWith(want);
    case "*=":
      return want !== "" && actual.includes(want);
  }
}

const DISABLEABLE = new Set(["button", "input", "select", "textarea", "optgroup", "option", "fieldset"]);
const FIELDSET_DISABLES = new Set(["button", "input", "select", "textarea", "fieldset"]);

/** HTML's "actually disabled": the attribute, a disabled optgroup for options, a disabled fieldset ancestor. */
export function isDisabled(node: DomNode): boolean {
  if (node.kind !== "element" || !DISABLEABLE.has(node.tag)) return false;
  if (node.attrs.has("disabled")) return true;
  if (node.tag === "option") {
    const p = parentElement(node);
    return p !== undefined && p.tag === "optgroup" && p.attrs.has("disabled");
  }
  if (!FIELDSET_DISABLES.has(node.tag)) return false;
  let child = node;
  for (let p = parentElement(node); p; child = p, p = parentElement(p)) {
    if (p.tag !== "fieldset" || !p.attrs.has("disabled")) continue;
    const firstLegend = p.children.find((c) => c.kind === "element" && c.tag === "legend");
    if (child !== firstLegend) return true;
  }
  return false;
}

/** The select an option belongs to (directly or through an optgroup). */
function owningSelect(option: DomNode): DomNode | undefined {
  let p = parentElement(option);
  if (p && p.tag === "optgroup") p = parentElement(p);
  return p && p.tag === "select" ? p : undefined;
}

/** An option's value as HTML defines it: the value attribute, else its text with whitespace collapsed. */
export function optionValue(option: DomNode): string {
  const v = option.attrs.get("value");
  if (v !== undefined) return v;
  let text = "";
  const walk = (n: DomNode): void => {
    for (const c of n.children) {
      if (c.kind === "text") text += c.text;
      else if (c.kind === "element") walk(c);
    }
  };
  walk(option);
  return text.replace(/\s+/g, " ").trim();
}

/** Checkedness: recorded input state first, then the attributes the snapshot carried. */
export function isChecked(node: DomNode): boolean {
  if (node.kind !== "element") return false;
  if (node.tag === "input") {
    const type = (node.attrs.get("type") ?? "").toLowerCase();
    if (type !== "checkbox" && type !== "radio") return false;
    return node.checked ?? node.attrs.has("checked");
  }
  if (node.tag === "option") {
    const select = owningSelect(node);
    // A masked value (maskAllInputs records "***") says nothing about which option is chosen.
    const value = select?.value;
    if (value !== undefined && !/^\*+$/.test(value) && !select?.attrs.has("multiple")) {
      return optionValue(node) === value;
    }
    return node.attrs.has("selected");
  }
  return false;
}

function isEmpty(node: DomNode): boolean {
  for (const c of node.children) {
    if (c.kind === "element") return false;
    if ((c.kind === "text" || c.kind === "cdata") && c.text !== "") return false;
  }
  return true;
}

function nthMatches(a: number, b: number, position: number): boolean {
  if (a === 0) return position === b;
  const n = (position - b) / a;
  return Number.isInteger(n) && n >= 0;
}

function pseudoMatches(node: DomNode, p: Pseudo, ctx: MatchContext): boolean {
  switch (p.kind) {
    case "not":
      return !p.list.some((s) => complexMatches(node, s, ctx));
    case "is":
    case "where":
      return p.list.some((s) => complexMatches(node, s, ctx));
    case "has":
      return p.list.some((r) => hasMatches(node, r, ctx));
    case "checked":
      return isChecked(node);
    case "disabled":
      return isDisabled(node);
    case "enabled":
      return DISABLEABLE.has(node.tag) && !isDisabled(node);
    case "empty":
      return isEmpty(node);
    case "first-child":
      return ctx.position(node, false) === 1;
    case "last-child":
      return ctx.positionFromEnd(node) === 1;
    case "only-child":
      return ctx.position(node, false) === 1 && ctx.positionFromEnd(node) === 1;
    case "nth-child":
      return nthMatches(p.a, p.b, ctx.position(node, false));
    case "nth-of-type":
      return nthMatches(p.a, p.b, ctx.position(node, true));
  }
}

function compoundMatches(node: DomNode, c: Compound, ctx: MatchContext): boolean {
  if (node.kind !== "element") return false;
  if (c.tag !== undefined && node.tag !== c.tag) return false;
  if (c.ids.length > 0) {
    const id = node.attrs.get("id");
    for (const want of c.ids) if (id !== want) return false;
  }
  if (c.classes.length > 0) {
    const cls = node.attrs.get("class");
    if (cls === undefined) return false;
    for (const want of c.classes) if (!hasToken(cls, want)) return false;
  }
  for (const a of c.attrs) if (!attrMatches(node, a)) return false;
  for (const p of c.pseudos) if (!pseudoMatches(node, p, ctx)) return false;
  return true;
}

/**
 * Whether `node` matches compounds[0..index] of `sel` with compounds[index] at `node`. `anchor` (for `:has`)
 * requires the leftmost compound's element to stand in the `leading` relation to it.
 */
function matchFrom(
  node: DomNode,
  sel: ComplexSelector,
  index: number,
  ctx: MatchContext,
  anchor?: { node: DomNode; leading: " " | ">" },
): boolean {
  if (!compoundMatches(node, sel.compounds[index], ctx)) return false;
  if (index === 0) {
    if (!anchor) return true;
    if (anchor.leading === ">") return node.parent === anchor.node;
    for (let p = parentElement(node); p; p = parentElement(p)) if (p === anchor.node) return true;
    return false;
  }
  const comb = sel.combinators[index - 1];
  switch (comb) {
    case ">": {
      const p = parentElement(node);
      return p !== undefined && matchFrom(p, sel, index - 1, ctx, anchor);
    }
    case " ":
      for (let p = parentElement(node); p; p = parentElement(p)) {
        if (anchor && p === anchor.node) return false;
        if (matchFrom(p, sel, index - 1, ctx, anchor)) return true;
      }
      return false;
    case "+": {
      const prev = ctx.previous(node);
      return prev !== undefined && matchFrom(prev, sel, index - 1, ctx, anchor);
    }
    case "~":
      for (let s = ctx.previous(node); s; s = ctx.previous(s)) {
        if (matchFrom(s, sel, index - 1, ctx, anchor)) return true;
      }
      return false;
  }
}

function complexMatches(node: DomNode, sel: ComplexSelector, ctx: MatchContext): boolean {
  return matchFrom(node, sel, sel.compounds.length - 1, ctx);
}

function hasMatches(anchor: DomNode, rel: RelativeSelector, ctx: MatchContext): boolean {
  const last = rel.selector.compounds.length - 1;
  const relation = { node: anchor, leading: rel.leading };
  const stack: DomNode[] = [];
  for (let i = anchor.children.length - 1; i >= 0; i--) stack.push(anchor.children[i]);
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n || n.kind !== "element") continue;
    if (matchFrom(n, rel.selector, last, ctx, relation)) return true;
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return false;
}

function matchesWith(node: DomNode, sel: ParsedSelector, ctx: MatchContext): boolean {
  if (node.kind !== "element") return false;
  for (const s of sel.list) if (complexMatches(node, s, ctx)) return true;
  return false;
}

export function matches(node: DomNode, sel: ParsedSelector): boolean {
  return matchesWith(node, sel, new MatchContext());
}

/** Elements under `root` (not `root` itself, as in the DOM) in document order; stops after `limit`. */
function collect(root: DomNode, sel: ParsedSelector, opts: SelectorMatchOptions, limit: number): DomNode[] {
  const ctx = new MatchContext();
  const out: DomNode[] = [];
  const stack: DomNode[] = [];
  const pushChildren = (n: DomNode): void => {
    for (let i = n.children.length - 1; i >= 0; i--) {
      const c = n.children[i];
      if (c.kind === "element" || (c.kind === "document" && opts.frames === true)) stack.push(c);
    }
  };
  pushChildren(root);
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    if (n.kind === "element" && matchesWith(n, sel, ctx)) {
      out.push(n);
      if (out.length >= limit) break;
    }
    pushChildren(n);
  }
  return out;
}

export function querySelectorAll(
  root: DomNode,
  sel: ParsedSelector,
  opts: SelectorMatchOptions = {},
): DomNode[] {
  return collect(root, sel, opts, opts.limit ?? Infinity);
}

export function querySelector(
  root: DomNode,
  sel: ParsedSelector,
  opts: SelectorMatchOptions = {},
): DomNode | undefined {
  return collect(root, sel, opts, 1)[0];
}
