/**
 * CDP adapter for semantic queries: selects the document (main or a qualified frame), acquires its
 * accessibility tree, adds DOM semantics only where the query needs them, and hands the facts to
 * the pure core in query.ts. Used by query_page and by actions that take a locator.
 */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { limitExceeded, ToolError } from "../errors.ts";
import { currentSnapshot } from "./acquire.ts";
import { flattenAxTree, type SnapNode } from "./ax_tree.ts";
import type { Locator } from "./locator.ts";
import {
  actionMatch,
  CONTAINER_CANDIDATE_LIMIT,
  CONTAINER_TEXT_BOUND,
  CONTAINER_TEXT_LIMIT,
  type ContainerRequest,
  containerRequests,
  type ContainerText,
  decide,
  type Decision,
  DOM_MATCH_LIMIT,
  DOM_VISIT_LIMIT,
  type DomHit,
  domMatches,
  type Match,
  parseLocator,
  QUERY_NODE_LIMIT,
  type QuerySpec,
  roleMatches,
  usesExactText,
} from "./query.ts";
import { containerTextSource, domQuerySource, GENERIC_TAGS } from "./query_dom.ts";
import { decodeRef, encodeRef } from "./refs.ts";
import { selectDocument, type SelectedDocument } from "./query_frames.ts";

const OBJECT_GROUP = "krometrail-query";
/** How far above a DOM match the adapter looks for its snapshot node (a span inside a button). */
const CHAIN_DEPTH = 12;

export interface QueryRun {
  spec: QuerySpec;
  decision: Decision;
  nodes: SnapNode[];
  document: SelectedDocument;
  /** Whether DOM semantics were acquired besides the accessibility tree. */
  dom: boolean;
  document_generation: number;
  /** Set when the main document's snapshot was (re)registered by this query. */
  snapshot_generation?: number;
  /** The exact generation-scoped ref of the unique match; nothing else ever gets one. */
  ref?: string;
  /** What an action may act on (see actionMatch in query.ts). */
  action_node?: number;
}

function narrowing(subject: string, actual: number, limit: number): ToolError {
  return limitExceeded(
    subject,
    actual,
    limit,
    "Narrow the query: set locator.scope to a container's ref (from snapshot_page), select a frame, or use a test_id.",
  );
}

function scopeError(code: string, message: string, ref: string): ToolError {
  return new ToolError({
    code,
    message,
    retry: "after_recovery",
    recovery: "Call snapshot_page (with the same frame) for a fresh container ref, then query again.",
    affected: { ref, argument: "locator.scope" },
  });
}

/** The snapshot node a scope ref names, checked against this session, page and document. */
function scopeIndex(session: BrowserSession, page: PageTarget, nodes: SnapNode[], ref: string): number {
  const parts = decodeRef(ref);
  if (!parts) {
    throw new ToolError({
      code: "invalid_ref",
      message: `${JSON.stringify(ref.slice(0, 40))} is not a snapshot ref.`,
      retry: "never",
      recovery: "Copy a ref exactly as snapshot_page printed it (like s123p1g1n42).",
      affected: { argument: "locator.scope" },
    });
  }
  if (
    parts.session !== session.ordinal || parts.page !== page.ordinal || parts.generation !== page.generation
  ) {
    throw scopeError(
      "stale_ref",
      `Scope ref ${ref} does not belong to page ${page.id}'s current document.`,
      ref,
    );
  }
  const node = nodes.find((n) => n.backendNodeId === parts.node);
  if (!node) {
    throw scopeError(
      "scope_not_found",
      `Scope ref ${ref} is not an element of the selected document's accessibility tree.`,
      ref,
    );
  }
  return node.index;
}

async function worldOf(page: PageTarget, frameId: string): Promise<number> {
  const { executionContextId } = await page.send("Page.createIsolatedWorld", {
    frameId,
    worldName: "krometrail-query",
  });
  return executionContextId;
}

async function objectOf(
  page: PageTarget,
  backendNodeId: number,
  contextId: number,
): Promise<string | undefined> {
  try {
    const { object } = await page.send("DOM.resolveNode", {
      backendNodeId,
      executionContextId: contextId,
      objectGroup: OBJECT_GROUP,
    });
    return object.objectId;
  } catch {
    return undefined;
  }
}

/** The page-side search root: the scope element, or the selected document. */
async function searchRoot(
  page: PageTarget,
  contextId: number,
  scopeBackend: number | undefined,
): Promise<string> {
  const id = scopeBackend === undefined
    ? (await page.send("Runtime.evaluate", { expression: "document", contextId, objectGroup: OBJECT_GROUP }))
      .result.objectId
    : await objectOf(page, scopeBackend, contextId);
  if (!id) throw new Error("the search root could not be resolved");
  return id;
}

interface DomReading {
  hits: DomHit[];
  saturated: boolean;
}

/** Runs the page-side resolver and maps each hit to the nearest snapshot node at or above it. */
async function readDom(
  page: PageTarget,
  rootId: string,
  spec: QuerySpec,
  exact: boolean,
  nodeByBackend: ReadonlyMap<number, number>,
): Promise<DomReading> {
  const { result, exceptionDetails } = await page.send("Runtime.callFunctionOn", {
    objectId: rootId,
    functionDeclaration: domQuerySource(),
    arguments: [spec.kind, spec.key ?? "", exact, DOM_MATCH_LIMIT, DOM_VISIT_LIMIT, CHAIN_DEPTH].map((
      value,
    ) => ({
      value,
    })),
    objectGroup: OBJECT_GROUP,
  });
  if (exceptionDetails || !result.objectId) throw new Error("the page-side query failed");
  const meta = (await page.send("Runtime.callFunctionOn", {
    objectId: result.objectId,
    functionDeclaration: "function() { return this.meta; }",
    returnByValue: true,
  })).result.value as { chains: number[][]; saturated: boolean; incomplete: boolean; visited: number };
  if (meta.incomplete) throw narrowing("elements in the selected document", meta.visited, DOM_VISIT_LIMIT);
  const { result: props } = await page.send("Runtime.getProperties", {
    objectId: result.objectId,
    ownProperties: true,
  });
  const objects = new Map<number, string>();
  for (const p of props) {
    if (/^\d+$/.test(p.name) && p.value?.objectId) objects.set(Number(p.name), p.value.objectId);
  }
  const backends = new Map<number, number | undefined>();
  const backendOf = async (i: number) => {
    if (!backends.has(i)) {
      const objectId = objects.get(i);
      const described = objectId
        ? await page.send("DOM.describeNode", { objectId }).catch(() => undefined)
        : undefined;
      backends.set(i, described?.node.backendNodeId);
    }
    return backends.get(i);
  };
  // Level by level, so only hits not yet placed in the tree cost another lookup.
  const hits: Array<DomHit | undefined> = await Promise.all(meta.chains.map(async (chain) => {
    const element = await backendOf(chain[0]);
    return element === undefined ? undefined : { element };
  }));
  for (let level = 0; level < CHAIN_DEPTH + 1; level++) {
    const open = meta.chains.map((chain, i) => ({ chain, hit: hits[i] })).filter(({ chain, hit }) =>
      hit && hit.node === undefined && level < chain.length
    );
    if (open.length === 0) break;
    await Promise.all(open.map(async ({ chain, hit }) => {
      const backend = await backendOf(chain[level]);
      const node = backend === undefined ? undefined : nodeByBackend.get(backend);
      if (hit && node !== undefined) hit.node = node;
    }));
  }
  return { hits: hits.filter((h): h is DomHit => h !== undefined), saturated: meta.saturated };
}

/** Container texts for unnamed candidates, read in one page call. */
async function readContainers(
  page: PageTarget,
  contextId: number,
  rootId: string,
  nodes: SnapNode[],
  requests: ContainerRequest[],
): Promise<Map<number, ContainerText>> {
  if (requests.length > CONTAINER_CANDIDATE_LIMIT) {
    throw narrowing(
      "unnamed controls to qualify by container text",
      requests.length,
      CONTAINER_CANDIDATE_LIMIT,
    );
  }
  const resolve = (index: number | undefined) => {
    const backend = index === undefined ? undefined : nodes[index]?.backendNodeId;
    return backend === undefined ? Promise.resolve(undefined) : objectOf(page, backend, contextId);
  };
  const pairs = await Promise.all(requests.map(async (r) => {
    const [control, container] = await Promise.all([resolve(r.index), resolve(r.container)]);
    return { r, control, container };
  }));
  const usable = pairs.filter((p) => p.control && (p.r.container === undefined || p.container));
  const out = new Map<number, ContainerText>();
  if (usable.length === 0) return out;
  const { result } = await page.send("Runtime.callFunctionOn", {
    objectId: rootId,
    functionDeclaration: containerTextSource(),
    arguments: [
      { value: CONTAINER_TEXT_BOUND },
      { value: CONTAINER_TEXT_LIMIT },
      { value: GENERIC_TAGS },
      { value: DOM_VISIT_LIMIT },
      ...usable.flatMap((
        p,
      ) => [{ objectId: p.control }, p.container ? { objectId: p.container } : { value: null }]),
    ],
    returnByValue: true,
  });
  const value = result.value as ContainerText[] | { incomplete: true } | undefined;
  if (!Array.isArray(value)) {
    throw narrowing("elements in the selected document", DOM_VISIT_LIMIT + 1, DOM_VISIT_LIMIT);
  }
  usable.forEach((p, i) => {
    const ct = value[i];
    if (ct) out.set(p.r.index, ct);
  });
  return out;
}

/** Resolves a locator against the selected document of a page. Outcomes are results, not errors. */
export async function runQuery(session: BrowserSession, page: PageTarget, loc: Locator): Promise<QueryRun> {
  const spec = parseLocator(loc);
  const generation = page.generation;
  const document = await selectDocument(session, page, loc.frame);
  let nodes: SnapNode[];
  let snapshotGeneration: number | undefined;
  if (document.main) {
    const { snapshot } = await currentSnapshot(session, page);
    nodes = snapshot.nodes;
    snapshotGeneration = snapshot.snapshot_generation;
  } else {
    const { nodes: raw } = await page.send("Accessibility.getFullAXTree", { frameId: document.frame_id });
    nodes = flattenAxTree(raw);
  }
  if (nodes.length > QUERY_NODE_LIMIT) throw narrowing("accessibility nodes", nodes.length, QUERY_NODE_LIMIT);
  const scope = loc.scope === undefined ? undefined : scopeIndex(session, page, nodes, loc.scope);
  const scopeBackend = scope === undefined ? undefined : nodes[scope].backendNodeId;

  let dom = false;
  let context: { contextId: number; rootId: string } | undefined;
  const pageSide = async () => {
    dom = true;
    if (!context) {
      const contextId = await worldOf(page, document.frame_id);
      context = { contextId, rootId: await searchRoot(page, contextId, scopeBackend) };
    }
    return context;
  };

  let primary: Match[];
  let relaxed: () => Promise<Match[]>;
  let relaxedSaturated = false;
  let dropped: Match[] | undefined;
  let incomplete = false;
  try {
    if (spec.kind === "role") {
      const requests = containerRequests(nodes, spec, scope);
      let containers = new Map<number, ContainerText>();
      if (requests.length > 0) {
        const { contextId, rootId } = await pageSide();
        containers = await readContainers(page, contextId, rootId, nodes, requests);
        dropped = roleMatches(nodes, { ...spec, key: undefined }, scope, containers, false);
      }
      primary = roleMatches(nodes, spec, scope, containers, spec.exact);
      relaxed = () => Promise.resolve(roleMatches(nodes, spec, scope, containers, false));
    } else {
      const nodeByBackend = new Map<number, number>();
      for (const n of nodes) if (n.backendNodeId !== undefined) nodeByBackend.set(n.backendNodeId, n.index);
      const { rootId } = await pageSide();
      const by = spec.kind;
      const reading = await readDom(page, rootId, spec, spec.exact, nodeByBackend);
      primary = domMatches(nodes, reading.hits, scope, by);
      incomplete = reading.saturated;
      relaxed = async () => {
        const loose = await readDom(page, rootId, spec, false, nodeByBackend);
        relaxedSaturated = loose.saturated;
        return domMatches(nodes, loose.hits, scope, by);
      };
    }
    let decision = decide({ primary, incomplete });
    if (decision.outcome === "no_match") {
      decision = decide({
        primary,
        relaxed: usesExactText(spec) ? await relaxed() : undefined,
        dropped,
      });
      // Unresolved raw matches past the DOM limit may hide more: the count is a lower bound.
      if (decision.relaxed_exact && relaxedSaturated) decision.relaxed_exact.saturated = true;
    }
    if (page.generation !== generation) {
      throw new ToolError({
        code: "document_changed",
        message: `Page ${page.id} loaded a new document while the query ran.`,
        retry: "safe",
        recovery: "Run the query again.",
        affected: { page_id: page.id },
      });
    }
    const unique = decision.match?.index === undefined ? undefined : nodes[decision.match.index];
    const act = actionMatch(primary, decision);
    // A target acts as its snapshot node; a non-actionable DOM hit as the very element that matched.
    const actNode = act === undefined
      ? undefined
      : !act.actionable && act.element !== undefined
      ? act.element
      : act.index === undefined
      ? undefined
      : nodes[act.index].backendNodeId;
    return {
      spec,
      decision,
      nodes,
      document,
      dom,
      document_generation: generation,
      ...(snapshotGeneration !== undefined ? { snapshot_generation: snapshotGeneration } : {}),
      ...(unique?.backendNodeId !== undefined
        ? {
          ref: encodeRef({
            session: session.ordinal,
            page: page.ordinal,
            generation,
            node: unique.backendNodeId,
          }),
        }
        : {}),
      ...(actNode !== undefined ? { action_node: actNode } : {}),
    };
  } finally {
    if (dom) page.send("Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP }).catch(() => {});
  }
}
