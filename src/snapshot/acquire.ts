import type { BrowserSession } from "../browser/session.ts";
import { markPhase, phase } from "../phase_timing.ts";
import type { PageTarget } from "../browser/targets.ts";
import { describeAxNode, flattenAxTree, type SnapNode } from "./ax_tree.ts";
import { encodeRef } from "./refs.ts";
import type { Snapshot } from "./present.ts";
import {
  backendIdsOf,
  compareProbes,
  type Probe,
  probeTargets,
  provesUnchanged,
  type ReadMark,
  type SemanticOutcome,
} from "./probe.ts";

interface PageSnapshotState {
  last?: Snapshot;
  /** Probe reading the `last` snapshot agrees with. */
  lastProbe?: Probe;
  /**
   * The DOM change count when `last`'s tree was last read whole. A patch keeps it: it brings the targets'
   * own changes in, so with no DOM change since that read, the patched snapshot is the current tree.
   */
  readAt?: ReadMark;
  /** Backend node ids of probed elements, by probe identity (stable within one probe world). */
  backendIds: { world?: string; ids: Map<number, number> };
  generationCounter: number;
}

const states = new WeakMap<PageTarget, PageSnapshotState>();

/** The page's current snapshot (the last one acquired or patched), if any. */
export function lastSnapshot(page: PageTarget): Snapshot | undefined {
  return states.get(page)?.last;
}

function stateOf(page: PageTarget): PageSnapshotState {
  let s = states.get(page);
  if (!s) {
    s = { generationCounter: 0, backendIds: { ids: new Map() } };
    states.set(page, s);
  }
  return s;
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}

function digestOf(nodes: SnapNode[], documentGeneration: number): string {
  return fnv1a(
    nodes.map((n) =>
      `${n.depth}|${n.role}|${n.name}|${n.value ?? ""}|${JSON.stringify(n.states)}|${n.backendNodeId ?? ""}`
    )
      .join("\n"),
  ) + `:${documentGeneration}`;
}

export interface AcquiredSnapshot {
  snapshot: Snapshot;
  /** True when the content equals the previous snapshot's, so its generation was reused. */
  unchanged: boolean;
}

export interface ObservedSnapshot extends AcquiredSnapshot {
  outcomes: SemanticOutcome[];
  /** How the snapshot was obtained: reused, patched from changed targets, or read in full. */
  source: "reused" | "patched" | "full";
}

/** Registers nodes as the page's current snapshot, reusing the generation when nothing differs. */
function register(
  session: BrowserSession,
  page: PageTarget,
  nodes: SnapNode[],
  documentGeneration: number,
  probe: Probe | undefined,
): AcquiredSnapshot {
  const state = stateOf(page);
  const digest = digestOf(nodes, documentGeneration);
  const unchanged = state.last !== undefined && state.last.digest === digest;
  const rootName = nodes[0]?.role === "RootWebArea" ? nodes[0].name : "";
  const snapshot: Snapshot = {
    page_id: page.id,
    url: page.url,
    title: rootName || page.title,
    document_generation: documentGeneration,
    snapshot_generation: unchanged && state.last ? state.last.snapshot_generation : ++state.generationCounter,
    nodes,
    refOf: (n) =>
      n.backendNodeId === undefined ? undefined : encodeRef({
        session: session.ordinal,
        page: page.ordinal,
        generation: documentGeneration,
        node: n.backendNodeId,
      }),
    digest,
  };
  state.last = snapshot;
  state.lastProbe = probe;
  return { snapshot, unchanged };
}

/** Reads the main document's accessibility tree and registers it as the page's current snapshot. */
export async function acquireSnapshot(
  session: BrowserSession,
  page: PageTarget,
  knownProbe?: Probe,
): Promise<AcquiredSnapshot> {
  // The reading is taken before the tree, so a change in between only costs an extra read later.
  const probe = knownProbe ?? await phase("probe", () => probeTargets(page));
  const documentGeneration = page.generation;
  const { nodes: raw } = await phase("ax_tree", () => page.send("Accessibility.getFullAXTree", {}));
  const t = performance.now();
  const flat = flattenAxTree(raw);
  const registered = register(session, page, flat, documentGeneration, probe);
  const state = stateOf(page);
  state.readAt = probe?.mutations ? { ...probe.mutations, generation: documentGeneration } : undefined;
  markPhase("ax_flatten", t);
  return registered;
}

/**
 * The page's snapshot for an explicit request (snapshot_page, query_page): the last one when it provably
 * still holds — same document and URL, no DOM change since its tree was read, and every target reading
 * the same (values, focus, visibility are not DOM changes) — otherwise a fresh read.
 */
export async function currentSnapshot(session: BrowserSession, page: PageTarget): Promise<AcquiredSnapshot> {
  const state = stateOf(page);
  const probe = await phase("probe", () => probeTargets(page));
  const { last, lastProbe, readAt } = state;
  if (
    probe && last && last.document_generation === page.generation && last.url === page.url &&
    provesUnchanged(readAt, lastProbe, probe)
  ) {
    return { snapshot: last, unchanged: true };
  }
  return await acquireSnapshot(session, page, probe);
}

/** Re-reads only the changed targets' own AX nodes; undefined when that is not safe. */
async function patchSnapshot(
  page: PageTarget,
  last: Snapshot,
  ids: number[],
  world: string | undefined,
): Promise<SnapNode[] | undefined> {
  const backendIds = await knownBackendIds(page, ids, world);
  if (backendIds.some((id) => id === undefined)) return undefined;
  const nodes = last.nodes.map((n) => ({ ...n }));
  const byBackend = new Map(
    nodes.filter((n) => n.backendNodeId !== undefined).map((n) => [n.backendNodeId, n]),
  );
  const existing = (backendIds as number[]).map((id) => byBackend.get(id));
  if (existing.some((n) => n === undefined)) return undefined;
  // One request per changed target, sent together: the renderer answers them in one pass.
  const readings = await Promise.all(
    (backendIds as number[]).map((backendNodeId) =>
      page.send("Accessibility.getPartialAXTree", { backendNodeId, fetchRelatives: false })
        .then(({ nodes: partial }) => partial.find((n) => n.backendDOMNodeId === backendNodeId))
    ),
  );
  for (let i = 0; i < readings.length; i++) {
    const own = readings[i];
    const node = existing[i];
    if (!own || own.ignored || !node) return undefined;
    // Optional fields may disappear (a cleared value), so drop them before applying the new reading.
    delete node.value;
    delete node.description;
    Object.assign(node, describeAxNode(own));
  }
  return nodes;
}

/**
 * Backend ids of probed elements. A probe identity names one element for the life of its world, so an id
 * once resolved is kept (a field filled again costs no lookup).
 */
async function knownBackendIds(
  page: PageTarget,
  ids: number[],
  world: string | undefined,
): Promise<Array<number | undefined>> {
  if (world === undefined) return await backendIdsOf(page, ids);
  const state = stateOf(page);
  // A new world (a new document) starts its identities again.
  if (state.backendIds.world !== world) state.backendIds = { world, ids: new Map() };
  const known = state.backendIds.ids;
  const missing = ids.filter((id) => !known.has(id));
  const found = missing.length > 0 ? await backendIdsOf(page, missing) : [];
  missing.forEach((id, i) => {
    const backend = found[i];
    if (backend !== undefined) known.set(id, backend);
  });
  return ids.map((id) => known.get(id));
}

/**
 * For automatic observations: reuse the last snapshot when the target reading shows no change,
 * patch the few targets that changed, and read the whole tree only when the structure moved.
 */
export async function observeSnapshot(
  session: BrowserSession,
  page: PageTarget,
  reuse: boolean,
): Promise<ObservedSnapshot> {
  const state = stateOf(page);
  const probe = await phase("probe", () => probeTargets(page));
  const outcomes = probe?.outcomes ?? [];
  const last = state.last;
  if (reuse && probe && last && state.lastProbe && last.document_generation === page.generation) {
    const comparison = compareProbes(state.lastProbe, probe);
    if (comparison.kind === "same") return { snapshot: last, unchanged: true, outcomes, source: "reused" };
    if (comparison.kind === "changed") {
      const patched = await phase(
        "ax_patch",
        () => patchSnapshot(page, last, comparison.ids, probe.mutations?.world),
      ).catch(() => undefined);
      if (patched) {
        return {
          ...register(session, page, patched, last.document_generation, probe),
          outcomes,
          source: "patched",
        };
      }
    }
  }
  return { ...(await acquireSnapshot(session, page, probe)), outcomes, source: "full" };
}
