import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { flattenAxTree, type SnapNode } from "./ax_tree.ts";
import { encodeRef } from "./refs.ts";
import type { Snapshot } from "./present.ts";
import { probeTargets, type SemanticOutcome } from "./probe.ts";

interface PageSnapshotState {
  last?: Snapshot;
  /** Target fingerprint read just before `last` was acquired. */
  lastProbe?: string;
  generationCounter: number;
}

const states = new WeakMap<PageTarget, PageSnapshotState>();

function stateOf(page: PageTarget): PageSnapshotState {
  let s = states.get(page);
  if (!s) {
    s = { generationCounter: 0 };
    states.set(page, s);
  }
  return s;
}

export function lastSnapshot(page: PageTarget): Snapshot | undefined {
  return stateOf(page).last;
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

function digestOf(nodes: SnapNode[]): string {
  return fnv1a(
    nodes.map((n) =>
      `${n.depth}|${n.role}|${n.name}|${n.value ?? ""}|${JSON.stringify(n.states)}|${n.backendNodeId ?? ""}`
    )
      .join("\n"),
  );
}

export interface AcquiredSnapshot {
  snapshot: Snapshot;
  /** True when the content equals the previous snapshot's, so its generation was reused. */
  unchanged: boolean;
}

export interface ObservedSnapshot extends AcquiredSnapshot {
  outcomes: SemanticOutcome[];
}

/** Reads the main document's accessibility tree and registers it as the page's current snapshot. */
export async function acquireSnapshot(
  session: BrowserSession,
  page: PageTarget,
  probe?: string,
): Promise<AcquiredSnapshot> {
  const documentGeneration = page.generation;
  const { nodes: raw } = await page.send("Accessibility.getFullAXTree", {});
  const nodes = flattenAxTree(raw);
  const rootName = nodes[0]?.role === "RootWebArea" ? nodes[0].name : "";
  const state = stateOf(page);
  const digest = digestOf(nodes) + `:${documentGeneration}`;
  const unchanged = state.last !== undefined && state.last.digest === digest;
  const refOf = (n: SnapNode) =>
    n.backendNodeId === undefined ? undefined : encodeRef({
      session: session.ordinal,
      page: page.ordinal,
      generation: documentGeneration,
      node: n.backendNodeId,
    });
  const snapshot: Snapshot = {
    page_id: page.id,
    url: page.url,
    title: rootName || page.title,
    document_generation: documentGeneration,
    snapshot_generation: unchanged && state.last ? state.last.snapshot_generation : ++state.generationCounter,
    nodes,
    refOf,
    digest,
  };
  state.last = snapshot;
  state.lastProbe = probe;
  return { snapshot, unchanged };
}

/**
 * For automatic observations: reuse the last snapshot when the target fingerprint shows nothing the
 * target index depends on changed; otherwise read the tree again.
 */
export async function observeSnapshot(
  session: BrowserSession,
  page: PageTarget,
  reuse: boolean,
): Promise<ObservedSnapshot> {
  const state = stateOf(page);
  const probe = await probeTargets(page);
  const outcomes = probe?.outcomes ?? [];
  const last = state.last;
  if (
    reuse && probe && last && state.lastProbe === probe.digest && last.document_generation === page.generation
  ) {
    return { snapshot: last, unchanged: true, outcomes };
  }
  return { ...(await acquireSnapshot(session, page, probe?.digest)), outcomes };
}
