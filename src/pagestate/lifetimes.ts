/**
 * Element lifetimes over a page's rrweb timeline, exact to the event: when a node entered the document (the
 * add that placed it, or the full snapshot that first held it) and when it left (the remove of it or of an
 * ancestor). A checkpoint re-serializes the same document: rrweb 2.x keeps the ids, and where a recorder
 * re-numbers, identity is carried by the node's stable selector, tag and text; a new document (a navigation)
 * ends every lifetime. Pure.
 */
import { EventType } from "@rrweb/types";
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
  /** Ids that came with the epoch's full snapshot (their first_seen may lie in the previous epoch). */
  fromSnapshot: Set<number>;
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
 * the same document (`checkpoint`), a node alive before it under the same id and tag keeps its time: rrweb
 * 2.x keeps ids across checkpoints, so only nodes new to the checkpoint need identity tracing.
 */
export function step(
  state: EpochState,
  e: TimedDomEvent,
  checkpoint = false,
): ReturnType<DomMirror["apply"]> {
  const before = checkpoint && e.event.type === EventType.FullSnapshot
    ? nodesOf(state.mirror.document)
    : undefined;
  const c = state.mirror.apply(e.event);
  if (!c) return c;
  if (c.kind === "snapshot") {
    const previous = state.firstSeen;
    state.firstSeen = new Map();
    state.fromSnapshot = new Set();
    for (const id of c.added) {
      const old = before?.get(id);
      const now = state.mirror.node(id);
      const kept = old && now && sameNode(now, old) ? previous.get(id) : undefined;
      if (kept !== undefined) {
        state.firstSeen.set(id, kept);
      } else {
        state.firstSeen.set(id, e.at_ns);
        state.fromSnapshot.add(id);
      }
    }
  } else if (c.kind === "mutation") {
    for (const id of c.added) if (!state.firstSeen.has(id)) state.firstSeen.set(id, e.at_ns);
  }
  return c;
}

export function emptyState(): EpochState {
  return { mirror: new DomMirror(), firstSeen: new Map(), fromSnapshot: new Set() };
}

/** Replays events [from, to) into a fresh state. */
export function replay(events: readonly TimedDomEvent[], from: number, to: number): EpochState {
  const state = emptyState();
  for (let i = from; i < to; i++) step(state, events[i]);
  return state;
}

/**
 * When each of `ids` (nodes of `epochs[k]`, first seen per `state`) first entered the page, following nodes
 * that came with a checkpoint back through earlier epochs by identity.
 */
export function firstSeenOf(
  events: readonly TimedDomEvent[],
  epochs: readonly Epoch[],
  k: number,
  state: EpochState,
  ids: readonly number[],
): Map<number, number> {
  const out = new Map<number, number>();
  // Nodes still being traced back: original id → id in the epoch being looked at.
  let pending = new Map<number, number>();
  for (const id of ids) {
    const ns = state.firstSeen.get(id);
    if (ns === undefined) continue;
    out.set(id, ns);
    if (state.fromSnapshot.has(id) && k >= 0 && !epochs[k].newDocument) pending.set(id, id);
  }
  let epoch = k;
  while (pending.size > 0 && epoch > 0) {
    // The node as the checkpoint serialized it, recognized in the previous epoch's final document.
    const atSnapshot = replay(events, epochs[epoch].snapshotIndex, epochs[epoch].snapshotIndex + 1);
    const previous = replay(events, epochs[epoch - 1].snapshotIndex, epochs[epoch].snapshotIndex);
    const snapRoot = atSnapshot.mirror.document;
    const prevRoot = previous.mirror.document;
    const next = new Map<number, number>();
    for (const [original, id] of pending) {
      const node = atSnapshot.mirror.node(id);
      if (!node || !snapRoot || !prevRoot) continue;
      const before = sameNode(node, previous.mirror.node(id)) ??
        resolveIdentity(identityOf(node, snapRoot), prevRoot);
      if (!before) continue; // not in the previous document: it arrived with the checkpoint
      const ns = previous.firstSeen.get(before.id);
      if (ns === undefined) continue;
      out.set(original, ns);
      if (previous.fromSnapshot.has(before.id) && !epochs[epoch - 1].newDocument) {
        next.set(original, before.id);
      }
    }
    pending = next;
    epoch--;
  }
  return out;
}
