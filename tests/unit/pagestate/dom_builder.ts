/**
 * Test helpers that build `DomNode` trees by hand: `h()` for elements, `t()` for text, and `html()` for a
 * small, strict subset of HTML (tags, quoted/bare/empty attributes, void elements, text). Ids come from a
 * counter so tests can build two trees whose ids line up or do not.
 */
import type { DomNode } from "../../../src/pagestate/dom_types.ts";
import { VOID_TAGS } from "../../../src/pagestate/dom_facts.ts";

export class Ids {
  constructor(public next = 1) {}
  take(): number {
    return this.next++;
  }
}

const shared = new Ids(1);

type Child = DomNode | string;

function adopt(parent: DomNode, children: Child[], ids: Ids): void {
  for (const c of children) {
    const node = typeof c === "string" ? t(c, ids) : c;
    node.parent = parent;
    parent.children.push(node);
  }
}

export function t(text: string, ids: Ids = shared): DomNode {
  return { id: ids.take(), kind: "text", tag: "", attrs: new Map(), text, parent: undefined, children: [] };
}

export function h(tag: string, attrs: Record<string, string> = {}, ...children: Child[]): DomNode {
  return hIds(shared, tag, attrs, ...children);
}

export function hIds(
  ids: Ids,
  tag: string,
  attrs: Record<string, string> = {},
  ...children: Child[]
): DomNode {
  const node: DomNode = {
    id: ids.take(),
    kind: "element",
    tag,
    attrs: new Map(Object.entries(attrs)),
    text: "",
    parent: undefined,
    children: [],
  };
  adopt(node, children, ids);
  return node;
}

export function documentOf(ids: Ids, ...children: DomNode[]): DomNode {
  const doc: DomNode = {
    id: ids.take(),
    kind: "document",
    tag: "",
    attrs: new Map(),
    text: "",
    parent: undefined,
    children: [],
  };
  adopt(doc, children, ids);
  return doc;
}

/**
 * Parses a small HTML subset into a document node (`<html><body>` are not implied: what is written is what
 * is built). Attribute `value` on input/textarea/select also becomes `node.value`, as the mirror does.
 */
export function html(source: string, ids: Ids = new Ids(1)): DomNode {
  const doc = documentOf(ids);
  const stack: DomNode[] = [doc];
  const top = (): DomNode => stack[stack.length - 1];
  const re =
    /<!--([\s\S]*?)-->|<\/([a-zA-Z][\w-]*)\s*>|<([a-zA-Z][\w-]*)((?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*)\s*(\/?)>|([^<]+)/g;
  const attrRe = /([^\s=>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  for (const m of source.matchAll(re)) {
    const [, comment, close, open, attrText, selfClose, text] = m;
    if (comment !== undefined) {
      const node: DomNode = {
        id: ids.take(),
        kind: "comment",
        tag: "",
        attrs: new Map(),
        text: comment,
        parent: top(),
        children: [],
      };
      top().children.push(node);
    } else if (close !== undefined) {
      const tag = close.toLowerCase();
      const at = stack.findLastIndex((n) => n.tag === tag);
      if (at < 1) throw new Error(`unbalanced </${tag}>`);
      stack.length = at;
    } else if (open !== undefined) {
      const tag = open.toLowerCase();
      const attrs: Record<string, string> = {};
      for (const a of (attrText ?? "").matchAll(attrRe)) {
        attrs[a[1].toLowerCase()] = a[2] ?? a[3] ?? a[4] ?? "";
      }
      const node = hIds(ids, tag, attrs);
      if ((tag === "input" || tag === "textarea" || tag === "select") && attrs.value !== undefined) {
        node.value = attrs.value;
      }
      node.parent = top();
      top().children.push(node);
      if (!VOID_TAGS.has(tag) && selfClose !== "/") stack.push(node);
    } else if (text !== undefined) {
      const node = t(text, ids);
      node.parent = top();
      top().children.push(node);
    }
  }
  return doc;
}

/** The first element with this id attribute (tests' own lookup, independent of selector.ts). */
export function byId(root: DomNode, id: string): DomNode {
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    if (n.kind === "element" && n.attrs.get("id") === id) return n;
    for (const c of n.children) stack.push(c);
  }
  throw new Error(`no element #${id}`);
}

/** Every node of the tree in document order. */
export function allNodes(root: DomNode): DomNode[] {
  const out: DomNode[] = [];
  const walk = (n: DomNode): void => {
    out.push(n);
    for (const c of n.children) walk(c);
  };
  walk(root);
  return out;
}

/** A deep copy keeping every id (what a mirror at a later instant of the same lineage looks like). */
export function cloneTree(node: DomNode, parent?: DomNode): DomNode {
  const copy: DomNode = { ...node, attrs: new Map(node.attrs), parent, children: [] };
  copy.children = node.children.map((c) => cloneTree(c, copy));
  return copy;
}

/** Detaches `node` from its parent. */
export function detach(node: DomNode): void {
  const p = node.parent;
  if (!p) return;
  p.children.splice(p.children.indexOf(node), 1);
  node.parent = undefined;
}

/** Appends `child` under `parent`. */
export function append(parent: DomNode, child: DomNode): DomNode {
  child.parent = parent;
  parent.children.push(child);
  return child;
}
