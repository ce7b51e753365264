/**
 * Pure: neutralizes the parts of a recorded document that would reach the network from the replay page
 * without a request the Fetch domain can fail. A `<link rel=preconnect|dns-prefetch|prerender>` opens a
 * connection or resolves a name on insertion, and a `<meta http-equiv=refresh>` navigates the replay
 * iframe away from the rebuilt document. Their `rel` / `http-equiv` values get a prefix; nothing
 * rendered changes (both elements have no box). Events are copied only where something is rewritten: the
 * caller's events (shared with the DOM mirror) are never modified.
 */
import {
  EventType,
  type eventWithTime,
  IncrementalSource,
  NodeType,
  type serializedNodeWithId,
} from "@rrweb/types";

const HINT_REL = /\b(preconnect|dns-prefetch|prerender|prefetch|preload|modulepreload)\b/i;
const PREFIX = "x-krometrail-replay-";

type Attrs = Record<string, unknown>;

function risky(attrs: Attrs): boolean {
  const rel = attrs.rel;
  const equiv = attrs["http-equiv"];
  return (typeof rel === "string" && HINT_REL.test(rel)) ||
    (typeof equiv === "string" && equiv.trim().toLowerCase() === "refresh");
}

function neutral(attrs: Attrs): Attrs {
  const out = { ...attrs };
  if (typeof out.rel === "string" && HINT_REL.test(out.rel)) out.rel = PREFIX + out.rel;
  if (typeof out["http-equiv"] === "string" && out["http-equiv"].trim().toLowerCase() === "refresh") {
    out["http-equiv"] = PREFIX + out["http-equiv"];
  }
  return out;
}

function treeNeeds(node: serializedNodeWithId): boolean {
  if (node.type === NodeType.Element && risky(node.attributes)) return true;
  if (node.type === NodeType.Element || node.type === NodeType.Document) {
    for (const child of node.childNodes) if (treeNeeds(child)) return true;
  }
  return false;
}

function rewriteTree(node: serializedNodeWithId): serializedNodeWithId {
  if (!treeNeeds(node)) return node;
  if (node.type === NodeType.Element) {
    return {
      ...node,
      attributes: neutral(node.attributes) as typeof node.attributes,
      childNodes: node.childNodes.map(rewriteTree),
    };
  }
  if (node.type === NodeType.Document) return { ...node, childNodes: node.childNodes.map(rewriteTree) };
  return node;
}

/** The event itself when nothing in it can reach the network, else a rewritten copy. */
export function neutralizeEvent(event: eventWithTime): eventWithTime {
  if (event.type === EventType.FullSnapshot) {
    const node = rewriteTree(event.data.node);
    return node === event.data.node ? event : { ...event, data: { ...event.data, node } };
  }
  if (event.type !== EventType.IncrementalSnapshot || event.data.source !== IncrementalSource.Mutation) {
    return event;
  }
  const data = event.data;
  const addsNeed = data.adds.some((a) => treeNeeds(a.node));
  const attrsNeed = data.attributes.some((a) => risky(a.attributes));
  if (!addsNeed && !attrsNeed) return event;
  return {
    ...event,
    data: {
      ...data,
      adds: addsNeed ? data.adds.map((a) => ({ ...a, node: rewriteTree(a.node) })) : data.adds,
      attributes: attrsNeed
        ? data.attributes.map((a) =>
          risky(a.attributes) ? { ...a, attributes: neutral(a.attributes) as typeof a.attributes } : a
        )
        : data.attributes,
    },
  };
}
