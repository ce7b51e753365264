/**
 * Builds rrweb 2.x events in exactly the shapes the recorder emits (checked against rrweb 2.2.2's
 * record/mutation.ts and rrweb-snapshot's serializer): serialized nodes with ids, full snapshots, mutation
 * batches whose adds list a node after its parent and after its next sibling (the recorder's own order),
 * inputs, scrolls, viewport changes.
 */
import type {
  addedNodeMutation,
  attributeMutation,
  eventWithTime,
  removedNodeMutation,
  serializedNodeWithId,
  textMutation,
} from "@rrweb/types";
import { EventType, IncrementalSource, NodeType } from "@rrweb/types";
import type { TimedDomEvent } from "../../../src/pagestate/dom_types.ts";

export type SnAttrs = Record<string, string | number | true>;
export type SnChild = serializedNodeWithId | string;

export class Rec {
  /** The recorder's id counter: ids grow across snapshots, so a checkpoint re-serializes with new ids. */
  nextId = 1;
  /** Page clock, ms since the epoch. */
  time = 1_700_000_000_000;

  el(tag: string, attributes: SnAttrs = {}, ...children: SnChild[]): serializedNodeWithId {
    const id = this.nextId++;
    return {
      type: NodeType.Element,
      tagName: tag,
      attributes,
      childNodes: children.map((c) => typeof c === "string" ? this.text(c) : c),
      id,
    };
  }

  svg(tag: string, attributes: SnAttrs = {}, ...children: SnChild[]): serializedNodeWithId {
    const node = this.el(tag, attributes, ...children);
    if (node.type === NodeType.Element) node.isSVG = true;
    return node;
  }

  text(textContent: string): serializedNodeWithId {
    return { type: NodeType.Text, textContent, id: this.nextId++ };
  }

  comment(textContent: string): serializedNodeWithId {
    return { type: NodeType.Comment, textContent, id: this.nextId++ };
  }

  doctype(): serializedNodeWithId {
    return { type: NodeType.DocumentType, name: "html", publicId: "", systemId: "", id: this.nextId++ };
  }

  doc(...children: serializedNodeWithId[]): serializedNodeWithId {
    return { type: NodeType.Document, childNodes: children, compatMode: "CSS1Compat", id: this.nextId++ };
  }

  /** `<!DOCTYPE html><html><head></head><body>…</body></html>` */
  page(...body: SnChild[]): serializedNodeWithId {
    return this.doc(this.doctype(), this.el("html", {}, this.el("head"), this.el("body", {}, ...body)));
  }

  private stamp<T extends object>(event: T, stepMs: number): T & { timestamp: number } {
    this.time += stepMs;
    return { ...event, timestamp: this.time };
  }

  meta(href: string, width = 1280, height = 720, stepMs = 1): eventWithTime {
    return this.stamp({ type: EventType.Meta, data: { href, width, height } }, stepMs);
  }

  full(node: serializedNodeWithId, initialOffset = { left: 0, top: 0 }, stepMs = 1): eventWithTime {
    return this.stamp({ type: EventType.FullSnapshot, data: { node, initialOffset } }, stepMs);
  }

  domContentLoaded(stepMs = 1): eventWithTime {
    return this.stamp({ type: EventType.DomContentLoaded, data: {} }, stepMs);
  }

  load(stepMs = 1): eventWithTime {
    return this.stamp({ type: EventType.Load, data: {} }, stepMs);
  }

  mutation(
    m: {
      adds?: addedNodeMutation[];
      removes?: removedNodeMutation[];
      texts?: textMutation[];
      attributes?: attributeMutation[];
      isAttachIframe?: true;
    },
    stepMs = 1,
  ): eventWithTime {
    return this.stamp({
      type: EventType.IncrementalSnapshot,
      data: {
        source: IncrementalSource.Mutation,
        texts: m.texts ?? [],
        attributes: m.attributes ?? [],
        removes: m.removes ?? [],
        adds: m.adds ?? [],
        ...(m.isAttachIframe ? { isAttachIframe: true as const } : {}),
      },
    }, stepMs);
  }

  input(id: number, text: string, isChecked = false, stepMs = 1): eventWithTime {
    return this.stamp({
      type: EventType.IncrementalSnapshot,
      data: { source: IncrementalSource.Input, id, text, isChecked, userTriggered: true },
    }, stepMs);
  }

  scroll(id: number, x: number, y: number, stepMs = 1): eventWithTime {
    return this.stamp({
      type: EventType.IncrementalSnapshot,
      data: { source: IncrementalSource.Scroll, id, x, y },
    }, stepMs);
  }

  viewport(width: number, height: number, stepMs = 1): eventWithTime {
    return this.stamp({
      type: EventType.IncrementalSnapshot,
      data: { source: IncrementalSource.ViewportResize, width, height },
    }, stepMs);
  }

  mouseMove(x: number, y: number, stepMs = 1): eventWithTime {
    return this.stamp({
      type: EventType.IncrementalSnapshot,
      data: { source: IncrementalSource.MouseMove, positions: [{ x, y, id: 1, timeOffset: 0 }] },
    }, stepMs);
  }

  styleRule(id: number, stepMs = 1): eventWithTime {
    return this.stamp({
      type: EventType.IncrementalSnapshot,
      data: { source: IncrementalSource.StyleSheetRule, id, adds: [{ rule: "a{color:red}", index: 0 }] },
    }, stepMs);
  }
}

/** Strips serialized children, as the recorder serializes each added node with `skipChild`. */
function shallow(sn: serializedNodeWithId): serializedNodeWithId {
  if (sn.type === NodeType.Element || sn.type === NodeType.Document) return { ...sn, childNodes: [] };
  return sn;
}

/**
 * The adds the recorder emits for inserting `node` (with its subtree) under `parentId` before `nextId`:
 * a node after its parent and after its next sibling.
 */
export function addsFor(
  parentId: number,
  node: serializedNodeWithId,
  nextId: number | null = null,
): addedNodeMutation[] {
  const out: addedNodeMutation[] = [];
  const visit = (n: serializedNodeWithId, parent: number, next: number | null): void => {
    out.push({ parentId: parent, nextId: next, node: shallow(n) });
    if (n.type !== NodeType.Element && n.type !== NodeType.Document) return;
    let following: number | null = null;
    for (let i = n.childNodes.length - 1; i >= 0; i--) {
      visit(n.childNodes[i], n.id, following);
      following = n.childNodes[i].id;
    }
  };
  visit(node, parentId, nextId);
  return out;
}

/** Places events on the session clock: `startNs` for the first, then `stepNs` apart. */
export function timed(
  events: eventWithTime[],
  startNs = 1_000_000_000,
  stepNs = 10_000_000,
): TimedDomEvent[] {
  return events.map((event, i) => ({ at_ns: startNs + i * stepNs, event }));
}

/** Finds a serialized node by a predicate (depth first). */
export function findSn(
  root: serializedNodeWithId,
  pred: (n: serializedNodeWithId) => boolean,
): serializedNodeWithId | undefined {
  if (pred(root)) return root;
  if (root.type === NodeType.Element || root.type === NodeType.Document) {
    for (const c of root.childNodes) {
      const hit = findSn(c, pred);
      if (hit) return hit;
    }
  }
  return undefined;
}

/** The id of the serialized element whose `id` attribute is `domId`. */
export function idOf(root: serializedNodeWithId, domId: string): number {
  const hit = findSn(root, (n) => n.type === NodeType.Element && n.attributes.id === domId);
  if (!hit) throw new Error(`no element #${domId}`);
  return hit.id;
}
