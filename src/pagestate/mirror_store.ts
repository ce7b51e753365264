/**
 * The node store behind DomMirror: the id map, scroll offsets, iframe documents waiting for their iframe,
 * and building nodes from rrweb's serialized form (attributes cleaned of rrweb's internals, form state
 * taken out of them). Pure.
 */
import type { addedNodeMutation, serializedNodeWithId } from "@rrweb/types";
import { NodeType } from "@rrweb/types";
import type { DomNode, DomNodeKind } from "./dom_types.ts";

/** What one event touched, by node id, so callers know which predicates it could have changed. */
export interface MirrorChange {
  kind: "snapshot" | "mutation" | "input" | "scroll" | "viewport" | "meta";
  /** Every node that entered the document (a moved node too); for a snapshot, every node of it. */
  added: number[];
  /** The root of each removed subtree (the previous document's root for a snapshot). */
  removed: number[];
  /** Nodes whose attributes, or (for input events) form state, changed. */
  attributes: number[];
  /** Text, comment and cdata nodes whose text changed. */
  texts: number[];
  /** The node an input or scroll event was about. */
  target?: number;
}

export interface ScrollPosition {
  x: number;
  y: number;
}

export interface Viewport {
  width: number;
  height: number;
}

export const KIND: Record<NodeType, DomNodeKind> = {
  [NodeType.Document]: "document",
  [NodeType.DocumentType]: "doctype",
  [NodeType.Element]: "element",
  [NodeType.Text]: "text",
  [NodeType.CDATA]: "cdata",
  [NodeType.Comment]: "comment",
};

const FORM_VALUE_TAGS = new Set(["input", "textarea", "select"]);
const NO_VALUE_INPUT_TYPES = new Set(["radio", "checkbox", "submit", "button", "reset", "image"]);

/** rrweb's own bookkeeping attributes (`_cssText`, `rr_*`) that are not the page's. */
export const isInternalAttr = (name: string): boolean => name === "_cssText" || name.startsWith("rr_");

export function change(kind: MirrorChange["kind"]): MirrorChange {
  return { kind, added: [], removed: [], attributes: [], texts: [] };
}

export function inputType(node: DomNode): string {
  return (node.attrs.get("type") ?? "").toLowerCase();
}

export const isToggle = (node: DomNode): boolean =>
  node.tag === "input" && (inputType(node) === "checkbox" || inputType(node) === "radio");

/** Position of `child` in `parent.children`; checks the end first, where appends and pops happen. */
export function childIndex(parent: DomNode, child: DomNode): number {
  const ch = parent.children;
  const last = ch.length - 1;
  if (last >= 0 && ch[last] === child) return last;
  return ch.indexOf(child);
}

export function detach(node: DomNode): void {
  const parent = node.parent;
  if (!parent) return;
  const i = childIndex(parent, node);
  if (i >= 0) parent.children.splice(i, 1);
  node.parent = undefined;
}

export class NodeStore {
  nodes = new Map<number, DomNode>();
  scrolls = new Map<number, ScrollPosition>();
  /** Iframe documents whose iframe element is not known yet, by the iframe's id (rrweb's newDocumentQueue). */
  pendingDocuments = new Map<number, addedNodeMutation>();
  /** Mutations, inputs and scrolls that referred to nodes the store did not have. */
  warnings = 0;

  /** Builds `sn` and its serialized children; collects every new id in `added`. */
  build(sn: serializedNodeWithId, parent: DomNode | undefined, added: number[]): DomNode {
    const node: DomNode = {
      id: sn.id,
      kind: KIND[sn.type],
      tag: "",
      attrs: new Map(),
      text: "",
      parent,
      children: [],
    };
    if (sn.type === NodeType.Element) {
      node.tag = sn.tagName.toLowerCase();
      if (sn.isSVG) node.isSvg = true;
      this.setSnapshotAttributes(node, sn.attributes);
    } else if (sn.type === NodeType.Text || sn.type === NodeType.Comment) {
      node.text = sn.textContent;
    }
    const old = this.nodes.get(sn.id);
    if (old) {
      // Only malformed input reuses a live id inside a new tree; the newer node wins, as in rrweb's mirror.
      detach(old);
      this.forget(old);
    }
    this.nodes.set(sn.id, node);
    added.push(sn.id);
    if (sn.type === NodeType.Document || sn.type === NodeType.Element) {
      for (const child of sn.childNodes) node.children.push(this.build(child, node, added));
    }
    if (node.tag === "iframe") this.attachPendingDocument(node, added);
    return node;
  }

  setSnapshotAttributes(
    node: DomNode,
    attributes: Record<string, string | number | boolean | null>,
  ): void {
    for (const name in attributes) {
      const raw = attributes[name];
      if (name === "rr_scrollLeft" || name === "rr_scrollTop") {
        const s = this.scrolls.get(node.id) ?? { x: 0, y: 0 };
        if (name === "rr_scrollLeft") s.x = Number(raw);
        else s.y = Number(raw);
        this.scrolls.set(node.id, s);
        continue;
      }
      if (isInternalAttr(name) || raw === null || raw === false || raw === undefined) continue;
      node.attrs.set(name, raw === true ? "" : String(raw));
    }
    if (FORM_VALUE_TAGS.has(node.tag)) {
      const value = node.attrs.get("value");
      if (value !== undefined && !(node.tag === "input" && NO_VALUE_INPUT_TYPES.has(inputType(node)))) {
        node.value = value;
        // textarea and select have no value attribute in HTML: the recorded value is state only.
        if (node.tag !== "input") node.attrs.delete("value");
      }
      // rrweb writes `checked: true` (a boolean) for a checked box or radio; a string is only the page's
      // default-state attribute on one that is not checked now.
      if (isToggle(node)) node.checked = attributes.checked === true;
    }
  }

  /** Puts a kept subtree back in the id map, with the scroll offsets it had. */
  register(node: DomNode, scrolls: Map<number, ScrollPosition>, added: number[]): void {
    const stack = [node];
    while (stack.length > 0) {
      const n = stack.pop();
      if (!n) break;
      if (this.nodes.has(n.id)) continue; // the new snapshot's node wins
      this.nodes.set(n.id, n);
      added.push(n.id);
      const s = scrolls.get(n.id);
      if (s) this.scrolls.set(n.id, s);
      for (const ch of n.children) stack.push(ch);
    }
  }

  /** Drops `node`'s subtree from the id map (it stays linked to nothing the map reaches). */
  forget(node: DomNode): void {
    const stack = [node];
    while (stack.length > 0) {
      const n = stack.pop();
      if (!n) break;
      if (this.nodes.get(n.id) === n) {
        this.nodes.delete(n.id);
        this.scrolls.delete(n.id);
      }
      for (const ch of n.children) stack.push(ch);
    }
  }

  attachPendingDocument(iframe: DomNode, added: number[]): void {
    const pending = this.pendingDocuments.get(iframe.id);
    if (!pending) return;
    this.pendingDocuments.delete(iframe.id);
    this.attachDocument(iframe, pending.node, added);
  }

  /** An iframe's (new) document replaces whatever document the iframe held. */
  attachDocument(iframe: DomNode, sn: serializedNodeWithId, added: number[]): void {
    for (const ch of iframe.children.slice()) {
      detach(ch);
      this.forget(ch);
    }
    iframe.children.push(this.build(sn, iframe, added));
  }

  /** A deep copy of the store and of the tree under `root` (whose nodes it indexes). */
  cloneWith(root: DomNode | undefined): { store: NodeStore; root: DomNode | undefined } {
    const copy = new NodeStore();
    copy.warnings = this.warnings;
    for (const [id, s] of this.scrolls) copy.scrolls.set(id, { x: s.x, y: s.y });
    copy.pendingDocuments = new Map(this.pendingDocuments);
    return { store: copy, root: root ? cloneTree(root, undefined, copy.nodes) : undefined };
  }
}

function cloneTree(root: DomNode, parent: DomNode | undefined, index: Map<number, DomNode>): DomNode {
  const copy = (n: DomNode, p: DomNode | undefined): DomNode => {
    const c: DomNode = {
      id: n.id,
      kind: n.kind,
      tag: n.tag,
      attrs: n.attrs.size === 0 ? new Map() : new Map(n.attrs),
      text: n.text,
      parent: p,
      children: new Array<DomNode>(n.children.length),
    };
    if (n.value !== undefined) c.value = n.value;
    if (n.checked !== undefined) c.checked = n.checked;
    if (n.isSvg) c.isSvg = true;
    index.set(n.id, c);
    for (let i = 0; i < n.children.length; i++) c.children[i] = copy(n.children[i], c);
    return c;
  };
  return copy(root, parent);
}
