/**
 * Applies one rrweb mutation batch to a NodeStore in the order rrweb's Replayer does: removes, adds (queued
 * until their parent or next sibling arrives), texts, attributes. Pure.
 */
import type {
  addedNodeMutation,
  attributeMutation,
  mutationData,
  removedNodeMutation,
  serializedNodeWithId,
  textMutation,
} from "@rrweb/types";
import { NodeType } from "@rrweb/types";
import type { DomNode } from "./dom_types.ts";
import { applyStyleDiff, type StyleDiff } from "./inline_style.ts";
import {
  change,
  childIndex,
  detach,
  isInternalAttr,
  KIND,
  type MirrorChange,
  type NodeStore,
} from "./mirror_store.ts";

export function applyMutation(store: NodeStore, d: mutationData): MirrorChange {
  const c = change("mutation");
  const removedIds = new Set<number>();
  // As the Replayer, judge removes against the nodes known before the batch: removing a node whose
  // ancestor this batch already removed is not a warning.
  for (const r of d.removes) if (!store.nodes.has(r.id)) store.warnings++;
  for (const r of d.removes) remove(store, r, c, removedIds);
  if (d.adds.length > 0) adds(store, d.adds, c);
  if (d.texts.length > 0) texts(store, d.texts, c, removedIds);
  attributes(store, d.attributes, c, removedIds);
  return c;
}

function remove(store: NodeStore, r: removedNodeMutation, c: MirrorChange, removedIds: Set<number>): void {
  removedIds.add(r.id);
  const node = store.nodes.get(r.id);
  if (!node) return; // counted up front, or inside a subtree this batch removed
  const parent = store.nodes.get(r.parentId);
  if (!parent) {
    store.warnings++;
    return;
  }
  // A node moved elsewhere by an earlier batch (another document's or shadow root's observer reports the
  // removal later) is not its old parent's child any more: the DOM's removeChild would refuse, and the
  // node stays where it is now. Not a warning: the stream is consistent, only its observers' order differs.
  if (node.parent !== parent) return;
  detach(node);
  store.forget(node);
  c.removed.push(r.id);
}

/**
 * Adds in rrweb's order. An add whose parent or next sibling is not there yet waits for that id and runs as
 * soon as it arrives (the Replayer's resolve queue, without its quadratic rescans); what still waits when
 * the batch ends refers to nodes that never came, and is counted.
 */
function adds(store: NodeStore, adds: addedNodeMutation[], c: MirrorChange): void {
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
      const missing = add(store, next, c);
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
  store.warnings += waitingCount;
}

/** Applies one add; returns the id it has to wait for (-1: parked for later events), or undefined. */
function add(store: NodeStore, m: addedNodeMutation, c: MirrorChange): number | undefined {
  const parent = store.nodes.get(m.parentId);
  if (!parent) {
    if (m.node.type === NodeType.Document) {
      store.pendingDocuments.set(m.parentId, m);
      return -1;
    }
    return m.parentId;
  }
  if (m.node.type === NodeType.Document) {
    if (parent.tag === "iframe") store.attachDocument(parent, m.node, c.added);
    else store.warnings++;
    return undefined;
  }
  const nextId = m.nextId;
  let next: DomNode | undefined;
  if (nextId !== null && nextId !== undefined && nextId !== -1) {
    next = store.nodes.get(nextId);
    if (!next) return nextId;
  }
  const previous = m.previousId ? store.nodes.get(m.previousId) : undefined;
  const node = placeable(store, m.node, c.added);
  if (node === parent || isAncestor(node, parent)) {
    store.warnings++;
    return undefined;
  }
  detach(node);
  beforeInsert(store, parent, node);
  let at = parent.children.length;
  if (previous && previous.parent === parent && previous !== node) at = childIndex(parent, previous) + 1;
  else if (next && next.parent === parent && next !== node) at = childIndex(parent, next);
  node.parent = parent;
  if (at >= parent.children.length) parent.children.push(node);
  else parent.children.splice(at, 0, node);
  if (node.tag === "iframe") store.attachPendingDocument(node, c.added);
  return undefined;
}

/**
 * The node an add places: a node already known under the same id and of the same kind and tag is moved
 * (keeping its subtree), as rrweb's replayer reuses a node whose meta matches; anything else is built.
 */
function placeable(store: NodeStore, sn: serializedNodeWithId, added: number[]): DomNode {
  const existing = store.nodes.get(sn.id);
  const tag = sn.type === NodeType.Element ? sn.tagName.toLowerCase() : "";
  if (existing && existing.kind === KIND[sn.type] && existing.tag === tag) {
    if (sn.type === NodeType.Element) {
      const { value, checked } = existing;
      existing.attrs = new Map();
      store.setSnapshotAttributes(existing, sn.attributes);
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
    store.forget(existing);
  }
  return store.build(sn, undefined, added);
}

/** The DOM's own exclusivity rules the Replayer enforces: one doctype and one html per document, and a
 * textarea holds one text node. */
function beforeInsert(store: NodeStore, parent: DomNode, node: DomNode): void {
  if (parent.kind === "document" && (node.kind === "doctype" || node.tag === "html")) {
    for (const ch of parent.children.slice()) {
      if (ch.kind === node.kind && ch.tag === node.tag) {
        detach(ch);
        store.forget(ch);
      }
    }
  } else if (parent.tag === "textarea" && node.kind === "text") {
    for (const ch of parent.children.slice()) {
      if (ch.kind === "text") {
        detach(ch);
        store.forget(ch);
      }
    }
  }
}

function texts(store: NodeStore, texts: textMutation[], c: MirrorChange, removedIds: Set<number>): void {
  // Only the last text of a node in a batch counts (rrweb's uniqueTextMutations).
  const last = new Map<number, string | null>();
  for (const t of texts) last.set(t.id, t.value);
  for (const [id, value] of last) {
    const node = store.nodes.get(id);
    if (!node) {
      if (!removedIds.has(id)) store.warnings++;
      continue;
    }
    node.text = value ?? "";
    c.texts.push(id);
  }
}

function attributes(
  store: NodeStore,
  list: attributeMutation[],
  c: MirrorChange,
  removedIds: Set<number>,
): void {
  for (const m of list) {
    const node = store.nodes.get(m.id);
    if (!node) {
      if (!removedIds.has(m.id)) store.warnings++;
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

function isAncestor(candidate: DomNode, node: DomNode): boolean {
  for (let p = node.parent; p; p = p.parent) if (p === candidate) return true;
  return false;
}
