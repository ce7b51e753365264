/**
 * Small facts about reconstructed nodes that the legible DOM, the differ and the predicates all read the
 * same way: normalized text, inline-style evidence of hiddenness, option counts, the one semantic class a
 * line may keep, and the outerHTML length of a subtree. Pure.
 */
import type { DomNode } from "./dom_types.ts";

/** Tags whose content never reaches the screen or the reader. */
export const INVISIBLE_TAGS: ReadonlySet<string> = new Set([
  "head",
  "script",
  "style",
  "noscript",
  "template",
  "meta",
  "link",
  "title",
  "base",
]);

export const VOID_TAGS: ReadonlySet<string> = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "param",
  "source",
  "track",
  "wbr",
]);

/** Collapses runs of whitespace to one space and trims, in one pass. */
export function collapseWhitespace(s: string): string {
  let out = "";
  let pendingSpace = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 160) {
      pendingSpace = out.length > 0;
      continue;
    }
    if (pendingSpace) out += " ";
    pendingSpace = false;
    out += s[i];
  }
  return out;
}

/** Cuts to `max` characters, marking the cut with an ellipsis (counted inside `max`). */
export function cut(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, Math.max(0, max - 1)) + "…";
}

/**
 * The text a reader would see in `node`'s subtree, whitespace-collapsed, skipping script/style and the like.
 * Stops collecting once `limit` raw characters are gathered, so a huge subtree costs little.
 */
export function textContent(node: DomNode, limit = Infinity): string {
  let raw = "";
  const walk = (n: DomNode): void => {
    for (const c of n.children) {
      if (raw.length >= limit) return;
      if (c.kind === "text" || c.kind === "cdata") raw += c.text;
      else if (c.kind === "element" && !INVISIBLE_TAGS.has(c.tag)) {
        walk(c);
        if (c.tag === "br" || c.tag === "p" || c.tag === "div" || c.tag === "td" || c.tag === "th") {
          raw += " ";
        }
      }
    }
  };
  walk(node);
  return collapseWhitespace(raw);
}

/** The text of `node`'s own text children only. */
export function ownText(node: DomNode): string {
  let raw = "";
  for (const c of node.children) if (c.kind === "text") raw += c.text;
  return collapseWhitespace(raw);
}

/** The value of one declaration in an inline style string (lower-cased), or undefined. */
export function inlineStyle(node: DomNode, property: string): string | undefined {
  const style = node.attrs.get("style");
  if (style === undefined || !style.includes(property)) return undefined;
  for (const decl of style.split(";")) {
    const colon = decl.indexOf(":");
    if (colon < 0) continue;
    if (decl.slice(0, colon).trim().toLowerCase() !== property) continue;
    return decl.slice(colon + 1).replace("!important", "").trim().toLowerCase();
  }
  return undefined;
}

/** Why the element itself hides its subtree by its own markup, or undefined when nothing says so. */
export function selfHiddenReason(
  node: DomNode,
): "hidden" | "display:none" | "visibility:hidden" | "aria-hidden" | undefined {
  if (node.kind !== "element") return undefined;
  if (node.attrs.has("hidden") && (node.attrs.get("hidden") ?? "").toLowerCase() !== "until-found") {
    return "hidden";
  }
  if (inlineStyle(node, "display") === "none") return "display:none";
  const vis = inlineStyle(node, "visibility");
  if (vis === "hidden" || vis === "collapse") return "visibility:hidden";
  if ((node.attrs.get("aria-hidden") ?? "").toLowerCase() === "true") return "aria-hidden";
  if (node.tag === "input" && (node.attrs.get("type") ?? "").toLowerCase() === "hidden") return "hidden";
  return undefined;
}

/** Option elements of a select or datalist, through optgroups (not into nested selects). */
export function optionsOf(node: DomNode): DomNode[] {
  const out: DomNode[] = [];
  for (const c of node.children) {
    if (c.kind !== "element") continue;
    if (c.tag === "option") out.push(c);
    else if (c.tag === "optgroup") {
      for (const g of c.children) if (g.kind === "element" && g.tag === "option") out.push(g);
    }
  }
  return out;
}

const SEMANTIC_CLASS =
  /^(error|errors|warning|warn|alert|message|msg|notice|notification|success|info|invalid|valid|help|hint|toast|feedback|validation|danger|banner|badge|empty|loading|spinner|modal|overlay|dialog|active|selected|open|closed|disabled|hidden|visible|expanded|collapsed)$|error|warning|invalid|alert|message|notice|toast|feedback|overlay|modal/;

/** A cheap whole-string test first: most class soup holds none of the words, and is never split. */
const SEMANTIC_WORD =
  /error|warn|alert|messag|msg|notice|notification|success|info|valid|help|hint|toast|feedback|danger|banner|badge|empty|loading|spinner|modal|overlay|dialog|active|selected|open|closed|disabled|hidden|visible|expanded|collapsed/i;

/**
 * At most one short class token that reads as meaning (`error`, `field-error`, `toast`), never a utility
 * token (`px-4`, `md:flex`, `bg-[#fff]`); undefined when there is none.
 */
export function semanticClass(node: DomNode): string | undefined {
  const cls = node.attrs.get("class");
  if (!cls || !SEMANTIC_WORD.test(cls)) return undefined;
  for (const token of cls.split(/\s+/)) {
    if (token.length === 0 || token.length > 24) continue;
    if (/[:[\]/!@#%().]/.test(token) || /\d/.test(token)) continue;
    if (SEMANTIC_CLASS.test(token.toLowerCase())) return token;
  }
  return undefined;
}

/** Whether a token looks like an author's stable name rather than a generated one (`ember123`, `a9f3e1c0`). */
export function looksStable(value: string): boolean {
  if (value.length === 0 || value.length > 40) return false;
  if (/\d{4,}/.test(value)) return false;
  if (/^[0-9a-f]{8,}$/i.test(value)) return false;
  if (/^(ember|react-|radix-|headlessui-|mui-|:r)/i.test(value)) return false;
  return /^[A-Za-z_][\w-]*$/.test(value);
}

function escapedLength(s: string, attr: boolean): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 38) n += 4; // &amp;
    else if (c === 160) n += 5; // &nbsp;
    else if (attr && c === 34) n += 5; // &quot;
    else if (!attr && (c === 60 || c === 62)) n += 3; // &lt; &gt;
  }
  return n;
}

const RAW_TEXT_PARENTS: ReadonlySet<string> = new Set([
  "script",
  "style",
  "noscript",
  "xmp",
  "iframe",
  "plaintext",
]);

/**
 * The length of `node.outerHTML` as a browser would serialize it, counted without building the string
 * (a document counts its children; same-origin iframe documents are not part of their host's outerHTML).
 */
export function outerHtmlLength(node: DomNode): number {
  let total = 0;
  const stack: DomNode[] = [node];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    switch (n.kind) {
      case "text": {
        const parentTag = n.parent?.tag ?? "";
        total += RAW_TEXT_PARENTS.has(parentTag) ? n.text.length : escapedLength(n.text, false);
        break;
      }
      case "comment":
        total += n.text.length + 7;
        break;
      case "cdata":
        total += n.text.length + 12;
        break;
      case "doctype":
        total += 15; // <!DOCTYPE html>
        break;
      case "document":
        if (n !== node) break; // an iframe's document is not in the host's outerHTML
        for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
        break;
      case "element": {
        total += n.tag.length + 2; // <tag>
        for (const [name, value] of n.attrs) total += 1 + name.length + 3 + escapedLength(value, true);
        if (VOID_TAGS.has(n.tag)) break;
        total += n.tag.length + 3; // </tag>
        for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
        break;
      }
    }
  }
  return total;
}

/** Elements in a subtree, the node itself included. */
export function elementCount(node: DomNode): number {
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
