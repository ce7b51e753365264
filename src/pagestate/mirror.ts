/**
 * Reconstructs a page's document from its rrweb 2.x event stream without a browser: full snapshots replace the
 * document, mutations are applied in the order rrweb's own Replayer applies them (removes, adds with the same
 * queueing of adds whose parent or next sibling comes later, texts, attributes), inputs set form state, and
 * scroll / viewport / meta events keep the page's geometry. Ids that no longer exist are counted in
 * `warnings`, never thrown. Pure: nothing here knows CDP or a DOM.
 */
import type {
  addedNodeMutation,
  attributeMutation,
  eventWithTime,
  inputData,
  mutationData,
  removedNodeMutation,
  serializedNodeWithId,
  textMutation,
} from "@rrweb/types";
import { EventType, IncrementalSource, NodeType } from "@rrweb/types";
import type { DomNode, DomNodeKind } from "./dom_types.ts";
import { applyStyleDiff, type StyleDiff } from "./inline_style.ts";

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

const KIND: Record<NodeType, DomNodeKind> = {
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
const isInternalAttr = (name: string): boolean => name === "_cssText" || name.startsWith("rr_");

function change(kind: MirrorChange["kind"]): MirrorChange {
  return { kind, added: [], removed: [], attributes: [], texts: [] };
}

function inputType(node: DomNode): string {
  return (node.attrs.get("type") ?? "").toLowerCase();
}

const isToggle = (node: DomNode): boolean =>
  node.tag === "input" && (inputType(node) === "checkbox" || inputType(node) === "radio");

/** Position of `child` in `parent.children`; checks the end first, where appends and pops happen. */
function childIndex(parent: DomNode, child: DomNode): number {
  const ch = parent.children;
  const last = ch.length - 1;
  if (last >= 0 && ch[last] === child) return last;
  return ch.indexOf(child);
}

function detach(node: DomNode): void {
  const parent = node.parent;
  if (!parent) return;
  const i = childIndex(parent, node);
  if (i >= 0) parent.children.splice(i, 1);
  node.parent = undefined;
}

export class DomMirror {
  private nodes = new Map<number, DomNode>();
  private root: DomNode | undefined;
  private currentHref = "";
  private currentViewport: Viewport = { width: 0, height: 0 };
  private scrolls = new Map<number, ScrollPosition>();
  /** Iframe documents whose iframe element is not known yet, by the iframe's id (rrweb's newDocumentQueue). */
  private pendingDocuments = new Map<number, addedNodeMutation>();
  /** The href of the last full snapshot's document, and whether a new document has begun loading since. */
  private snapshotHref = "";
  private loadedSinceSnapshot = false;
  /** Mutations, inputs and scrolls that referred to nodes the mirror did not have. */
  warnings = 0;

  /** The root document node, undefined before the first full snapshot. */
  get document(): DomNode | undefined {
    return this.root;
  }

  get href(): string {
    return this.currentHref;
  }

  get viewport(): Viewport {
    return { ...this.currentViewport };
  }

  /** Number of nodes in the document (iframe documents included). */
  get size(): number {
    return this.nodes.size;
  }

  node(id: number): DomNode | undefined {
    return this.nodes.get(id);
  }

  /** A node's scroll offset (the document's id for the window scroll); 0,0 when never scrolled. */
  scroll(id: number): ScrollPosition {
    const s = this.scrolls.get(id);
    return s ? { ...s } : { x: 0, y: 0 };
  }

  apply(e: eventWithTime): MirrorChange | undefined {
    switch (e.type) {
      case EventType.Meta: {
        this.currentHref = e.data.href;
        this.currentViewport = { width: e.data.width, height: e.data.height };
        return change("meta");
      }
      case EventType.FullSnapshot:
        return this.fullSnapshot(e.data.node, e.data.initialOffset);
      case EventType.DomContentLoaded:
        // rrweb emits it for each document it records from the start: the next snapshot is a new document.
        this.loadedSinceSnapshot = true;
        return undefined;
      case EventType.IncrementalSnapshot: {
        const d = e.data;
        switch (d.source) {
          case IncrementalSource.Mutation:
            return this.mutation(d);
          case IncrementalSource.Input:
            return this.input(d);
          case IncrementalSource.Scroll: {
            const c = change("scroll");
            c.target = d.id;
            if (!this.nodes.has(d.id)) {
              this.warnings++;
              return c;
            }
            this.scrolls.set(d.id, { x: d.x, y: d.y });
            return c;
          }
          case IncrementalSource.ViewportResize:
            this.currentViewport = { width: d.width, height: d.height };
            return change("viewport");
          default:
            return undefined;
        }
      }
      default:
        return undefined;
    }
  }

  /** A deep copy sharing nothing mutable, so a cached mirror can be rolled forward independently. */
  clone(): DomMirror {
    const copy = new DomMirror();
    copy.currentHref = this.currentHref;
    copy.currentViewport = { ...this.currentViewport };
    copy.warnings = this.warnings;
    copy.snapshotHref = this.snapshotHref;
    copy.loadedSinceSnapshot = this.loadedSinceSnapshot;
    for (const [id, s] of this.scrolls) copy.scrolls.set(id, { x: s.x, y: s.y });
    copy.pendingDocuments = new Map(this.pendingDocuments);
    if (this.root) copy.root = cloneTree(this.root, undefined, copy.nodes);
    return copy;
  }

  // ---- full snapshots ----

  private fullSnapshot(sn: serializedNodeWithId, offset: { top: number; left: number }): MirrorChange {
    const c = change("snapshot");
    if (this.root) c.removed.push(this.root.id);
    // rrweb re-attaches a loaded iframe's document a task after the snapshot (onceIframeLoaded's setTimeout),
    // and mutations inside the frame may come first. A checkpoint keeps ids, so an iframe serialized again
    // under the same id keeps its document until the attach replaces it: no false "frame emptied" change.
    const frameDocs = new Map<number, DomNode>();
    const sameDocument = this.root !== undefined && !this.loadedSinceSnapshot &&
      this.currentHref === this.snapshotHref;
    for (const n of sameDocument ? this.nodes.values() : []) {
      if (n.tag !== "iframe") continue;
      const d = n.children.find((ch) => ch.kind === "document");
      if (d) frameDocs.set(n.id, d);
    }
    const oldScrolls = this.scrolls;
    this.nodes.clear();
    this.scrolls = new Map();
    this.root = this.build(sn, undefined, c.added);
    for (const [iframeId, d] of frameDocs) {
      const iframe = this.nodes.get(iframeId);
      if (!iframe || iframe.tag !== "iframe" || iframe.children.some((ch) => ch.kind === "document")) {
        continue;
      }
      d.parent = iframe;
      iframe.children.push(d);
      this.register(d, oldScrolls, c.added);
    }
    if (offset && (offset.top || offset.left)) this.scrolls.set(sn.id, { x: offset.left, y: offset.top });
    this.snapshotHref = this.currentHref;
    this.loadedSinceSnapshot = false;
    return c;
  }

  /** Builds `sn` and its serialized children; collects every new id in `added`. */
  private build(sn: serializedNodeWithId, parent: DomNode | undefined, added: number[]): DomNode {
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

  private setSnapshotAttributes(
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
  private register(node: DomNode, scrolls: Map<number, ScrollPosition>, added: number[]): void {
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
  private forget(node: DomNode): void {
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

  private attachPendingDocument(iframe: DomNode, added: number[]): void {
    const pending = this.pendingDocuments.get(iframe.id);
    if (!pending) return;
    this.pendingDocuments.delete(iframe.id);
    this.attachDocument(iframe, pending.node, added);
  }

  /** An iframe's (new) document replaces whatever document the iframe held. */
  private attachDocument(iframe: DomNode, sn: serializedNodeWithId, added: number[]): void {
    for (const ch of iframe.children.slice()) {
      detach(ch);
      this.forget(ch);
    }
    iframe.children.push(this.build(sn, iframe, added));
  }

  // ---- mutations ----

  private mutation(d: mutationData): MirrorChange {
    const c = change("mutation");
    const removedIds = new Set<number>();
    // As the Replayer, judge removes against the nodes known before the batch: removing a node whose
    // ancestor this batch already removed is not a warning.
    for (const r of d.removes) if (!this.nodes.has(r.id)) this.warnings++;
    for (const r of d.removes) this.remove(r, c, removedIds);
    this.adds(d.adds, c);
    this.texts(d.texts, c, removedIds);
    this.attributes(d.attributes, c, removedIds);
    return c;
  }

  private remove(r: removedNodeMutation, c: MirrorChange, removedIds: Set<number>): void {
    removedIds.add(r.id);
    const node = this.nodes.get(r.id);
    if (!node) return; // counted up front, or inside a subtree this batch removed
    const parent = this.nodes.get(r.parentId);
    if (!parent) {
      this.warnings++;
      return;
    }
    // A node moved elsewhere by an earlier batch (another document's or shadow root's observer reports the
    // removal later) is not its old parent's child any more: the DOM's removeChild would refuse, and the
    // node stays where it is now. Not a warning: the stream is consistent, only its observers' order differs.
    if (node.parent !== parent) return;
    detach(node);
    this.forget(node);
    c.removed.push(r.id);
  }

  /**
   * Adds in rrweb's order. An add whose parent or next sibling is not there yet waits for that id and runs as
   * soon as it arrives (the Replayer's resolve queue, without its quadratic rescans); what still waits when
   * the batch ends refers to nodes that never came, and is counted.
   */
  private adds(adds: addedNodeMutation[], c: MirrorChange): void {
    const waiting = new Map<number, addedNodeMutation[]>();
    let waitingCount = 0;
    const wait = (id: number, m: addedNodeMutation): void => {
      const list = waiting.get(id);
      if (list) list.push(m);
      else waiting.set(id, [m]);
      waitingCount++;
    };
    const work: addedNodeMutation[] = [];
    const run = (m: addedNodeMutation): void => {
      work.push(m);
      while (work.length > 0) {
        const next = work.pop();
        if (!next) break;
        const start = c.added.length;
        const missing = this.add(next, c);
        if (missing !== undefined) {
          if (missing !== -1) wait(missing, next);
          continue;
        }
        // Anything that waited for one of the nodes just added can go now, in its original order.
        for (let i = c.added.length - 1; i >= start; i--) {
          const released = waiting.get(c.added[i]);
          if (!released) continue;
          waiting.delete(c.added[i]);
          waitingCount -= released.length;
          for (let k = released.length - 1; k >= 0; k--) work.push(released[k]);
        }
      }
    };
    for (const m of adds) run(m);
    this.warnings += waitingCount;
  }

  /** Applies one add; returns the id it has to wait for (-1: parked for later events), or undefined. */
  private add(m: addedNodeMutation, c: MirrorChange): number | undefined {
    const parent = this.nodes.get(m.parentId);
    if (!parent) {
      if (m.node.type === NodeType.Document) {
        this.pendingDocuments.set(m.parentId, m);
        return -1;
      }
      return m.parentId;
    }
    if (m.node.type === NodeType.Document) {
      if (parent.tag === "iframe") this.attachDocument(parent, m.node, c.added);
      else this.warnings++;
      return undefined;
    }
    const nextId = m.nextId;
    let next: DomNode | undefined;
    if (nextId !== null && nextId !== undefined && nextId !== -1) {
      next = this.nodes.get(nextId);
      if (!next) return nextId;
    }
    const previous = m.previousId ? this.nodes.get(m.previousId) : undefined;
    const node = this.placeable(m.node, c.added);
    if (node === parent || isAncestor(node, parent)) {
      this.warnings++;
      return undefined;
    }
    detach(node);
    this.beforeInsert(parent, node);
    let at = parent.children.length;
    if (previous && previous.parent === parent && previous !== node) at = childIndex(parent, previous) + 1;
    else if (next && next.parent === parent && next !== node) at = childIndex(parent, next);
    node.parent = parent;
    if (at >= parent.children.length) parent.children.push(node);
    else parent.children.splice(at, 0, node);
    if (node.tag === "iframe") this.attachPendingDocument(node, c.added);
    return undefined;
  }

  /**
   * The node an add places: a node already known under the same id and of the same kind and tag is moved
   * (keeping its subtree), as rrweb's replayer reuses a node whose meta matches; anything else is built.
   */
  private placeable(sn: serializedNodeWithId, added: number[]): DomNode {
    const existing = this.nodes.get(sn.id);
    const tag = sn.type === NodeType.Element ? sn.tagName.toLowerCase() : "";
    if (existing && existing.kind === KIND[sn.type] && existing.tag === tag) {
      if (sn.type === NodeType.Element) {
        const { value, checked } = existing;
        existing.attrs = new Map();
        this.setSnapshotAttributes(existing, sn.attributes);
        if (value !== undefined && existing.value === undefined) existing.value = value;
        if (checked !== undefined && existing.checked === undefined) existing.checked = checked;
      } else if (sn.type === NodeType.Text || sn.type === NodeType.Comment) {
        existing.text = sn.textContent;
      }
      added.push(sn.id);
      return existing;
    }
    if (existing) {
      detach(existing);
      this.forget(existing);
    }
    return this.build(sn, undefined, added);
  }

  /** The DOM's own exclusivity rules the Replayer enforces: one doctype and one html per document, and a
   * textarea holds one text node. */
  private beforeInsert(parent: DomNode, node: DomNode): void {
    if (parent.kind === "document" && (node.kind === "doctype" || node.tag === "html")) {
      for (const ch of parent.children.slice()) {
        if (ch.kind === node.kind && ch.tag === node.tag) {
          detach(ch);
          this.forget(ch);
        }
      }
    } else if (parent.tag === "textarea" && node.kind === "text") {
      for (const ch of parent.children.slice()) {
        if (ch.kind === "text") {
          detach(ch);
          this.forget(ch);
        }
      }
    }
  }

  private texts(texts: textMutation[], c: MirrorChange, removedIds: Set<number>): void {
    // Only the last text of a node in a batch counts (rrweb's uniqueTextMutations).
    const last = new Map<number, string | null>();
    for (const t of texts) last.set(t.id, t.value);
    for (const [id, value] of last) {
      const node = this.nodes.get(id);
      if (!node) {
        if (!removedIds.has(id)) this.warnings++;
        continue;
      }
      node.text = value ?? "";
      c.texts.push(id);
    }
  }

  private attributes(list: attributeMutation[], c: MirrorChange, removedIds: Set<number>): void {
    for (const m of list) {
      const node = this.nodes.get(m.id);
      if (!node) {
        if (!removedIds.has(m.id)) this.warnings++;
        continue;
      }
      let touched = false;
      for (const name in m.attributes) {
        if (isInternalAttr(name)) continue;
        const value = m.attributes[name];
        touched = true;
        if (value === null) {
          node.attrs.delete(name);
        } else if (typeof value === "string") {
          if (name === "value" && node.tag === "textarea") node.value = value;
          else node.attrs.set(name, value);
        } else if (name === "style") {
          const style = applyStyleDiff(node.attrs.get("style") ?? "", value as StyleDiff);
          if (style === "") node.attrs.delete("style");
          else node.attrs.set("style", style);
        }
      }
      if (touched) c.attributes.push(m.id);
    }
  }

  // ---- form state ----

  private input(d: inputData): MirrorChange | undefined {
    // rrweb records -1 for inputs on nodes it never serialized (set programmatically before serialization).
    if (d.id === -1) return undefined;
    const c = change("input");
    c.target = d.id;
    const node = this.nodes.get(d.id);
    if (!node) {
      this.warnings++;
      return c;
    }
    node.value = d.text;
    if (isToggle(node)) node.checked = d.isChecked;
    c.attributes.push(d.id);
    return c;
  }
}

function isAncestor(candidate: DomNode, node: DomNode): boolean {
  for (let p = node.parent; p; p = p.parent) if (p === candidate) return true;
  return false;
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
