/** A tiny DomNode tree builder for the selector tests (no rrweb events needed). */
import type { DomNode } from "../../../src/pagestate/dom_types.ts";

let nextId = 1;

function link(node: DomNode, children: DomNode[]): DomNode {
  for (const c of children) {
    c.parent = node;
    node.children.push(c);
  }
  return node;
}

export type Child = DomNode | string;

/** An element; string children become text nodes. */
export function el(tag: string, attrs: Record<string, string> = {}, ...children: Child[]): DomNode {
  const node: DomNode = {
    id: nextId++,
    kind: "element",
    tag,
    attrs: new Map(Object.entries(attrs)),
    text: "",
    parent: undefined,
    children: [],
  };
  return link(node, children.map((c) => typeof c === "string" ? text(c) : c));
}

export function text(value: string): DomNode {
  return {
    id: nextId++,
    kind: "text",
    tag: "",
    attrs: new Map(),
    text: value,
    parent: undefined,
    children: [],
  };
}

export function comment(value: string): DomNode {
  return {
    id: nextId++,
    kind: "comment",
    tag: "",
    attrs: new Map(),
    text: value,
    parent: undefined,
    children: [],
  };
}

/** A document node holding `html`. */
export function doc(...children: DomNode[]): DomNode {
  const node: DomNode = {
    id: nextId++,
    kind: "document",
    tag: "",
    attrs: new Map(),
    text: "",
    parent: undefined,
    children: [],
  };
  return link(node, children);
}

/** A document with `<html><head></head><body>…</body></html>`. */
export function page(...body: Child[]): DomNode {
  return doc(el("html", {}, el("head"), el("body", {}, ...body)));
}
