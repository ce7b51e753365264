/**
 * Element lifetimes over a page's rrweb timeline, exact to the event: when a node entered the document (the
 * add that placed it, or the full snapshot that first held it) and when it left (the remove of it or of an
 * ancestor). A checkpoint re-serializes the same document: rrweb 2.x keeps the ids, and where a recorder
 * re-numbers, identity is carried by the node's stable selector, tag and text; a new document (a navigation)
 * ends every lifetime. Pure.
 */
import { EventType } from "@rrweb/types";
import type { serializedNodeWithId } from "@rrweb/types";
import { NodeType } from "@rrweb/types";
import type { DomNode, TimedDomEvent } from "./dom_types.ts";
import { DomMirror } from "./mirror.ts";
import { cut, textContent } from "./dom_facts.ts";
import { parseSelector, querySelectorAll } from "./selector.ts";
import { stableSelector } from "./stable_selector.ts";

/** One full snapshot of the timeline and whether it starts a new document or re-serializes the same one. */
export interface Epoch {
  /** Index of the FullSnapshot event in the timeline. */
  snapshotIndex: number;
  snapshotNs: number;
  /** A navigation (or the first document): the previous epoch's nodes do not continue into this one. */
  newDocument: boolean;
  /** When the new document began: its DomContentLoaded or Meta event, else the snapshot itself. */
  boundaryNs: number;
}

/**
 * The timeline's epochs. A snapshot starts a new document when it is the first, when a DomContentLoaded came
 * since the previous snapshot (rrweb emits one for each document it records from the start), or when the
 * Meta before it names another href than the document had.
 */
export function epochsOf(events: readonly TimedDomEvent[]): Epoch[] {
  const out: Epoch[] = [];
  let sawLoaded = false;
  let boundaryNs: number | undefined;
  let metaHref: string | undefined;
  let href: string | undefined;
  for (let i = 0; i < events.length; i++) {
    const { at_ns, event } = events[i];
    if (event.type === EventType.DomContentLoaded) {
      sawLoaded = true;
      boundaryNs ??= at_ns;
    } else if (event.type === EventType.Meta) {
      metaHref = event.data.href;
      boundaryNs ??= at_ns;
    } else if (event.type === EventType.FullSnapshot) {
      const newDocument = out.length === 0 || sawLoaded || (metaHref !== undefined && metaHref !== href);
      out.push({ snapshotIndex: i, snapshotNs: at_ns, newDocument, boundaryNs: boundaryNs ?? at_ns });
      href = metaHref ?? href;
      sawLoaded = false;
      boundaryNs = undefined;
      metaHref = undefined;
    }
  }
  return out;
}

/** How a node is recognized in a re-serialized document. */
export interface Identity {
  tag: string;
  selector: string;
  text: string;
  /** Position among the nodes sharing selector, tag and text (0 when it is alone). */
  ordinal: number;
}

function candidates(root: DomNode, selector: string, tag: string, text: string): DomNode[] {
  const found = querySelectorAll(root, parseSelector(selector), { frames: true });
  return found.filter((n) => n.tag === tag && cut(textContent(n, 200), 60) === text);
}

export function identityOf(node: DomNode, root: DomNode): Identity {
  const selector = stableSelector(node, root).selector;
  const text = cut(textContent(node, 200), 60);
  const same = selector === "" ? [] : candidates(root, selector, node.tag, text);
  return { tag: node.tag, selector, text, ordinal: Math.max(0, same.indexOf(node)) };
}

export function resolveIdentity(id: Identity, root: DomNode): DomNode | undefined {
  if (id.selector === "") return undefined;
  const same = candidates(root, id.selector, id.tag, id.text);
  if (same.length === 1) return same[0];
  return same[id.ordinal];
}

/**
 * rrweb 2.x keeps its node ids across checkpoints (only a new document restarts them), so the same id with the
 * same tag on both sides of a checkpoint is the same node; identity by selector is the fallback for
 * recorders that re-number.
 */
export function sameNode(now: DomNode, before: DomNode | undefined): DomNode | undefined {
  return before && before.kind === now.kind && before.tag === now.tag ? before : undefined;
}

/** A mirror replayed over one epoch, with when each of its nodes arrived. */
export interface EpochState {
  mirror: DomMirror;
  /** Session time each node id entered the document within this epoch. */
  firstSeen: Map<number, number>;
  /** Ids that first came with a checkpoint's snapshot, by that epoch's index (their first_seen may lie in
   * the epoch before it). */
  fromSnapshot: Map<number, number>;
}

/**
 * Whether the mirror already holds exactly the document a checkpoint serializes: the same ids with the same
 * tags and parents, and nothing else but iframe documents the snapshot leaves for a later attach. rrweb 2.x
 * keeps ids across checkpoints, so this is the usual case, and rebuilding the document can be skipped.
 */
export function inSync(mirror: DomMirror, sn: serializedNodeWithId): boolean {
  if (mirror.document?.id !== sn.id) return false;
  let count = 0;
  let extra = 0;
  const stack: [serializedNodeWithId, number | undefined][] = [[sn, undefined]];
  while (stack.length > 0) {
    const top = stack.pop();
    if (!top) break;
    const [n, parentId] = top;
    count++;
    const node = mirror.node(n.id);
    if (!node || node.parent?.id !== parentId) return false;
    if (n.type === NodeType.Element) {
      if (node.tag !== n.tagName.toLowerCase()) return false;
      if (node.tag === "iframe" && !n.childNodes.some((c) => c.type === NodeType.Document)) {
        const kept = node.children.find((c) => c.kind === "document");
        if (kept) extra += nodesOf(kept).size;
      }
    } else if (node.kind === "element") {
      return false;
    }
    if (n.type === NodeType.Element || n.type === NodeType.Document) {
      for (const c of n.childNodes) stack.push([c, n.id]);
    }
  }
  return mirror.size === count + extra;
}

/** Every node of a document by id (iframe documents included). */
function nodesOf(root: DomNode | undefined): Map<number, DomNode> {
  const out = new Map<number, DomNode>();
  const stack = root ? [root] : [];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    out.set(n.id, n);
    for (const ch of n.children) stack.push(ch);
  }
  return out;
}

/**
 * Applies one event to an epoch state, keeping first-seen times; returns what it touched. At a checkpoint of
 * the same document (`checkpoint`) the mirror is already in sync with, nothing is rebuilt; otherwise a node
 * alive before it under the same id and tag keeps its time, and only nodes new to the checkpoint (noted with
 * `epoch`, its index) need identity tracing.
 */
export function step(
  state: EpochState,
  e: TimedDomEvent,
  checkpoint = false,
  epoch = -1,
): ReturnType<DomMirror["apply"]> {
  const isSnapshot = e.event.type === EventType.FullSnapshot;
  if (checkpoint && e.event.type === EventType.FullSnapshot && inSync(state.mirror, e.event.data.node)) {
    return undefined;
  }
  const before = checkpoint && isSnapshot ? nodesOf(state.mirror.document) : undefined;
  const c = state.mirror.apply(e.event);
  if (!c) return c;
  if (c.kind === "snapshot") {
    const previous = state.firstSeen;
    const previousFrom = state.fromSnapshot;
    state.firstSeen = new Map();
    state.fromSnapshot = new Map();
    for (const id of c.added) {
      const old = before?.get(id);
      const now = state.mirror.node(id);
      const kept = old && now && sameNode(now, old) ? previous.get(id) : undefined;
      if (kept !== undefined) {
        state.firstSeen.set(id, kept);
        const from = previousFrom.get(id);
        if (from !== undefined) state.fromSnapshot.set(id, from);
      } else {
        state.firstSeen.set(id, e.at_ns);
        state.fromSnapshot.set(id, epoch);
      }
    }
  } else if (c.kind === "mutation") {
    for (const id of c.added) if (!state.firstSeen.has(id)) state.firstSeen.set(id, e.at_ns);
  }
  return c;
}

export function emptyState(): EpochState {
  return { mirror: new DomMirror(), firstSeen: new Map(), fromSnapshot: new Map() };
}

/** Replays events [from, to) into a fresh state; `epoch` is the index of the snapshot at `from`. */
export function replay(events: readonly TimedDomEvent[], from: number, to: number, epoch = -1): EpochState {
  const state = emptyState();
  for (let i = from; i < to; i++) step(state, events[i], false, epoch);
  return state;
}

/**
 * When each of `ids` (nodes of the document `state` holds) first entered the page, following nodes that came
 * with a checkpoint back through earlier epochs: by id (rrweb keeps them), else by identity.
 */
export function firstSeenOf(
  events: readonly TimedDomEvent[],
  epochs: readonly Epoch[],
  state: EpochState,
  ids: readonly number[],
): Map<number, number> {
  const out = new Map<number, number>();
  const atSnapshot = new Map<number, EpochState>();
  const final = new Map<number, EpochState>();
  const cached = (cache: Map<number, EpochState>, j: number, to: number): EpochState => {
    let st = cache.get(j);
    if (!st) {
      st = replay(events, epochs[j].snapshotIndex, to, j);
      cache.set(j, st);
    }
    return st;
  };
  for (const id of ids) {
    const ns = state.firstSeen.get(id);
    if (ns === undefined) continue;
    out.set(id, ns);
    let j = state.fromSnapshot.get(id);
    let current = id;
    while (j !== undefined && j > 0 && !epochs[j].newDocument) {
      // The node as checkpoint j serialized it, recognized in the previous epoch's final document.
      const at = cached(atSnapshot, j, epochs[j].snapshotIndex + 1);
      const previous = cached(final, j - 1, epochs[j].snapshotIndex);
      const node = at.mirror.node(current);
      const snapRoot = at.mirror.document;
      const prevRoot = previous.mirror.document;
      if (!node || !snapRoot || !prevRoot) break;
      const before = sameNode(node, previous.mirror.node(current)) ??
        resolveIdentity(identityOf(node, snapRoot), prevRoot);
      if (!before) break; // not in the previous document: it arrived with the checkpoint
      const t = previous.firstSeen.get(before.id);
      if (t === undefined) break;
      out.set(id, t);
      current = before.id;
      j = previous.fromSnapshot.get(before.id);
    }
  }
  return out;
}
