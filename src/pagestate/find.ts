/**
 * find_element's core: the elements of a page at one instant that match a text, a role and/or a selector
 * (innermost matches only), each named by a stable selector and given its lifetime measured exactly from
 * the mutation stream (`lifetimes.ts`). Pure: the caller supplies the page's decoded events.
 */
import { EventType, NodeType } from "@rrweb/types";
import type { serializedNodeWithId } from "@rrweb/types";
import type { DomNode, TimedDomEvent } from "./dom_types.ts";
import { collapseWhitespace, cut, INVISIBLE_TAGS, textContent } from "./dom_facts.ts";
import { type ParsedSelector, parseSelector, querySelectorAll } from "./selector.ts";
import { stableSelector } from "./stable_selector.ts";
import type { DomMirror } from "./mirror.ts";
import { nameAttributes, roleOf } from "./roles.ts";
import {
  emptyState,
  type Epoch,
  epochsOf,
  firstSeenOf,
  type Identity,
  identityOf,
  inSync,
  resolveIdentity,
  sameNode,
  step,
} from "./lifetimes.ts";

export interface ElementQuery {
  /** Case-insensitive substring of the element's text or name-ish attributes. */
  text?: string;
  /** Explicit or implicit ARIA role. */
  role?: string;
  /** CSS selector (the engine's supported subset). */
  selector?: string;
  /** Also search same-origin iframe documents. */
  frames?: boolean;
}

export interface ElementMatch {
  node_id: number;
  tag: string;
  selector: string;
  unique: boolean;
  text: string;
  role: string | null;
  first_seen_ns: number;
  /** When it left the page; null while it is still present at the end of the events. */
  last_seen_ns: number | null;
  present_at_end: boolean;
}

export interface FindResult {
  /** At most `limit` innermost matches, in document order. */
  matches: ElementMatch[];
  /** How many innermost matches there are in all. */
  total: number;
  /** False when no document was recorded yet at the instant. */
  has_document: boolean;
  /** Events that referred to nodes the reconstruction did not have. */
  warnings: number;
}

export const FIND_TEXT_LIMIT = 60;

interface Matcher {
  needle?: string;
  role?: string;
  selector?: ParsedSelector;
  frames: boolean;
}

function matcherOf(query: ElementQuery): Matcher {
  const m: Matcher = { frames: query.frames === true };
  if (query.text !== undefined) {
    const needle = collapseWhitespace(query.text).toLowerCase();
    if (needle === "") throw new Error("text must not be empty");
    m.needle = needle;
  }
  if (query.role !== undefined) {
    const role = query.role.trim().toLowerCase();
    if (role === "") throw new Error("role must not be empty");
    m.role = role;
  }
  if (query.selector !== undefined) m.selector = parseSelector(query.selector);
  if (!m.needle && !m.role && !m.selector) throw new Error("give at least one of text, role or selector");
  return m;
}

/**
 * Every element of `root` (into same-origin frames when asked) that satisfies all criteria. The text test walks down only while
 * an ancestor's text still holds the needle: a descendant's text is a substring of its ancestor's.
 */
function candidates(root: DomNode, m: Matcher): DomNode[] {
  const pool = m.selector ? new Set(querySelectorAll(root, m.selector, { frames: m.frames })) : undefined;
  const out: DomNode[] = [];
  const visit = (n: DomNode, textMayMatch: boolean): void => {
    for (const c of n.children) {
      // A frame's document: its text is not its iframe's, so the text test starts afresh inside.
      if (c.kind === "document" && m.frames) visit(c, true);
      if (c.kind !== "element") continue;
      if (INVISIBLE_TAGS.has(c.tag) && !pool?.has(c)) continue;
      let textHit = false;
      let childTextMayMatch = false;
      if (m.needle) {
        if (textMayMatch) {
          childTextMayMatch = textContent(c).toLowerCase().includes(m.needle);
          textHit = childTextMayMatch;
        }
        if (!textHit) {
          textHit = nameAttributes(c).some((v) =>
            collapseWhitespace(v).toLowerCase().includes(m.needle ?? "")
          );
        }
      }
      const ok = (!m.needle || textHit) && (!m.role || roleOf(c) === m.role) && (!pool || pool.has(c));
      if (ok) out.push(c);
      visit(c, childTextMayMatch || !m.needle);
    }
  };
  visit(root, true);
  return out;
}

/** Drops every match that contains another match. */
function innermost(matches: DomNode[]): DomNode[] {
  const set = new Set(matches);
  const hasInner = new Set<DomNode>();
  for (const n of matches) for (let p = n.parent; p; p = p.parent) if (set.has(p)) hasInner.add(p);
  return matches.filter((n) => !hasInner.has(n));
}

function displayText(n: DomNode): string {
  const text = textContent(n, 400);
  if (text !== "") return cut(text, FIND_TEXT_LIMIT);
  const name = nameAttributes(n)[0];
  return name === undefined ? "" : cut(collapseWhitespace(name), FIND_TEXT_LIMIT);
}

export function findElements(
  events: readonly TimedDomEvent[],
  atNs: number,
  query: ElementQuery,
  limit = 5,
): FindResult {
  const m = matcherOf(query);
  const epochs = epochsOf(events);
  const epochAt = new Map<number, number>();
  epochs.forEach((e, i) => epochAt.set(e.snapshotIndex, i));
  // Up to the instant: the document then, and when each of its nodes arrived. Nothing of it existed before
  // the document began, so the walk starts at that document's first snapshot (with its Meta and load events).
  const state = emptyState();
  let i = documentStart(events, epochs, atNs);
  for (; i < events.length && events[i].at_ns <= atNs; i++) {
    const epoch = epochAt.get(i);
    step(state, events[i], epoch !== undefined && !epochs[epoch].newDocument, epoch ?? -1);
  }
  const root = state.mirror.document;
  if (!root) return { matches: [], total: 0, has_document: false, warnings: state.mirror.warnings };
  const found = innermost(candidates(root, m));
  const chosen = found.slice(0, Math.max(0, limit));
  const ids = chosen.map((n) => n.id);
  const first = firstSeenOf(events, epochs, state, ids);
  const last = lastSeenOf(events, epochs, epochAt, i, state.mirror, ids);
  const matches = chosen.map((n): ElementMatch => {
    const s = stableSelector(n, root);
    const left = last.get(n.id) ?? null;
    return {
      node_id: n.id,
      tag: n.tag,
      selector: s.selector,
      unique: s.unique,
      text: displayText(n),
      role: roleOf(n),
      first_seen_ns: first.get(n.id) ?? atNs,
      last_seen_ns: left,
      present_at_end: left === null,
    };
  });
  return { matches, total: found.length, has_document: true, warnings: state.mirror.warnings };
}

/**
 * Rolls the mirror on from event `from` to the end, noting when each tracked node left: the event after
 * which it is no longer in the document, a checkpoint that no longer holds it, or a new document.
 */
function lastSeenOf(
  events: readonly TimedDomEvent[],
  epochs: readonly Epoch[],
  epochAt: ReadonlyMap<number, number>,
  from: number,
  mirror: DomMirror,
  ids: readonly number[],
): Map<number, number> {
  const out = new Map<number, number>();
  // current id → original id
  let tracked = new Map<number, number>();
  for (const id of ids) tracked.set(id, id);
  for (let i = from; i < events.length && tracked.size > 0; i++) {
    const { at_ns, event } = events[i];
    const epoch = epochAt.get(i);
    if (epoch !== undefined) {
      const e = epochs[epoch];
      if (e.newDocument) {
        for (const original of tracked.values()) out.set(original, e.boundaryNs);
        break;
      }
      // A checkpoint the mirror is in sync with changes nothing: every tracked node carries on.
      if (event.type === EventType.FullSnapshot && inSync(mirror, event.data.node)) continue;
      const before = mirror.document;
      // rrweb keeps ids across checkpoints: a tracked id the snapshot serializes again with its tag needs no
      // identity (each costs a stable selector and a query); the others are recognized by it afterwards.
      const serialized = event.type === EventType.FullSnapshot
        ? serializedTags(event.data.node)
        : new Map<number, string>();
      const identities: [number, number, DomNode, Identity | undefined][] = [];
      for (const [id, original] of tracked) {
        const node = mirror.node(id);
        if (!before || !node) continue;
        const kept = serialized.get(id) === node.tag;
        identities.push([id, original, node, kept ? undefined : identityOf(node, before)]);
      }
      mirror.apply(event);
      const after = mirror.document;
      const next = new Map<number, number>();
      for (const [id, original, old, identity] of identities) {
        const now = mirror.node(id);
        const node = (now && sameNode(now, old)) ?? (after && identity && resolveIdentity(identity, after));
        if (node) next.set(node.id, original);
        else out.set(original, at_ns);
      }
      tracked = next;
      continue;
    }
    const c = mirror.apply(event);
    if (!c || (c.kind !== "mutation" && event.type !== EventType.FullSnapshot)) continue;
    for (const [id, original] of tracked) {
      if (!mirror.node(id)) {
        out.set(original, at_ns);
        tracked.delete(id);
      }
    }
  }
  return out;
}

/** Tag ("" for non-elements) of every node a serialized snapshot holds, by id. */
function serializedTags(root: serializedNodeWithId): Map<number, string> {
  const out = new Map<number, string>();
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    out.set(n.id, n.type === NodeType.Element ? n.tagName.toLowerCase() : "");
    if (n.type === NodeType.Element || n.type === NodeType.Document) {
      for (const c of n.childNodes) stack.push(c);
    }
  }
  return out;
}

/** Index to replay from for the instant: the last new document's snapshot at or before it, less the Meta and
 * DomContentLoaded events that precede that snapshot. */
function documentStart(events: readonly TimedDomEvent[], epochs: readonly Epoch[], atNs: number): number {
  let start = 0;
  for (const e of epochs) {
    if (e.snapshotNs > atNs) break;
    if (e.newDocument) start = e.snapshotIndex;
  }
  while (start > 0) {
    const t = events[start - 1].event.type;
    if (t !== EventType.Meta && t !== EventType.DomContentLoaded) break;
    start--;
  }
  return start;
}
