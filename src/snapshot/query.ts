/**
 * Pure core of semantic queries (spec: "Structured Page Snapshots", semantic locators): which nodes of
 * one acquired tree a locator matches, how container text qualifies unnamed controls, and the
 * outcome with its bounded follow-up counts. Knows nothing of CDP; the adapter is query_page.ts.
 */
import { ToolError } from "../errors.ts";
import type { SnapNode } from "./ax_tree.ts";
import { type Locator, normalizeText, textMatches } from "./locator.ts";

/** Every count and candidate list is capped here; a count at the cap reports saturation. */
export const QUERY_CANDIDATE_LIMIT = 20;
/** A generic ancestor qualifies a control by its rendered text only while that text is this short. */
export const CONTAINER_TEXT_BOUND = 300;
/** Explicit container text is read up to this length (locator names are at most 1,000 characters). */
export const CONTAINER_TEXT_LIMIT = 2_000;
/** Unnamed same-role controls whose containers one query may read. */
export const CONTAINER_CANDIDATE_LIMIT = 200;
/** Accessibility nodes one query may scan in the selected document. */
export const QUERY_NODE_LIMIT = 20_000;
/** Raw DOM matches the page-side resolver reports before the result counts as truncated. */
export const DOM_MATCH_LIMIT = 100;
/** Elements the page-side resolver may visit before the acquisition counts as incomplete. */
export const DOM_VISIT_LIMIT = 50_000;

/**
 * Semantic container roles: the nearest one around an unnamed control is authoritative for
 * qualifying it by text. Page-scale landmarks (main, banner, contentinfo) are deliberately absent.
 */
export const CONTAINER_ROLES: ReadonlySet<string> = new Set([
  "listitem",
  "row",
  "cell",
  "gridcell",
  "columnheader",
  "rowheader",
  "treeitem",
  "group",
  "radiogroup",
  "toolbar",
  "menu",
  "menubar",
  "region",
  "article",
  "figure",
  "form",
  "search",
  "dialog",
  "alertdialog",
  "navigation",
  "complementary",
  "tabpanel",
]);

export type QueryKind = "role" | "label" | "text" | "test_id";

export interface QuerySpec {
  kind: QueryKind;
  /** Lower-cased role, for role queries. */
  role?: string;
  /** The name (role queries, optional), label, text or test id. */
  key?: string;
  exact: boolean;
}

function badLocator(message: string, recovery: string): ToolError {
  return new ToolError({
    code: "invalid_argument",
    message,
    retry: "never",
    recovery,
    affected: { argument: "locator" },
  });
}

/** Validates a locator into a spec; an all-icon or invisible-only key is refused, never matched. */
export function parseLocator(loc: Locator): QuerySpec {
  const forms = [loc.role, loc.label, loc.text, loc.test_id].filter((v) => v !== undefined).length;
  if (forms !== 1 || (loc.name !== undefined && loc.role === undefined)) {
    throw badLocator(
      "A locator needs exactly one of role (with optional name), label, text or test_id.",
      'Use for example {"role": "button", "name": "Save"} or {"label": "Email"}.',
    );
  }
  const exact = loc.exact ?? false;
  if (loc.role !== undefined) {
    if (loc.name !== undefined) textKey(loc.name, "name");
    return { kind: "role", role: loc.role.toLowerCase(), key: loc.name, exact };
  }
  if (loc.label !== undefined) return { kind: "label", key: textKey(loc.label, "label"), exact };
  if (loc.text !== undefined) return { kind: "text", key: textKey(loc.text, "text"), exact };
  return { kind: "test_id", key: loc.test_id ?? "", exact: true };
}

function textKey(value: string, field: string): string {
  if (value.length > 0 && normalizeText(value) === "") {
    throw badLocator(
      `The locator ${field} holds only icon glyphs or invisible characters, which are not text-match keys.`,
      "Match by the visible words, by role alone, or by a test_id.",
    );
  }
  return value;
}

/** Whether a query actually compared text exactly (test ids are identifiers, not text matchers). */
export function usesExactText(spec: QuerySpec): boolean {
  return spec.exact && spec.kind !== "test_id" && spec.key !== undefined;
}

export type MatchedBy = "role" | "name" | "container" | "label" | "text" | "test_id";

/** One matched node: a snapshot node (index) or, for DOM matches outside the tree, an element id. */
export interface Match {
  key: string;
  index?: number;
  element?: number;
  by: MatchedBy;
  actionable: boolean;
}

/** Whether node `index` is a strict descendant of node `scope` (any node when there is no scope). */
export function inScope(nodes: SnapNode[], index: number, scope: number | undefined): boolean {
  if (scope === undefined) return true;
  for (let p = nodes[index]?.parent; p !== undefined; p = nodes[p]?.parent) if (p === scope) return true;
  return false;
}

function unnamed(n: SnapNode): boolean {
  return normalizeText(n.name) === "";
}

/** The nearest ancestor with a semantic container role; climbing stops there (it is authoritative). */
export function explicitContainerOf(nodes: SnapNode[], index: number): number | undefined {
  for (let p = nodes[index]?.parent; p !== undefined; p = nodes[p]?.parent) {
    if (CONTAINER_ROLES.has(nodes[p].role)) return p;
  }
  return undefined;
}

/** What the page reported around one unnamed control. */
export type ContainerText =
  | { kind: "explicit"; text: string }
  /** Generic ancestors' whitespace-collapsed texts, nearest first, each clipped past the bound. */
  | { kind: "generic"; texts: string[] };

export interface ContainerRequest {
  index: number;
  container?: number;
}

function roleHits(nodes: SnapNode[], spec: QuerySpec, scope: number | undefined): SnapNode[] {
  return nodes.filter((n) =>
    n.backendNodeId !== undefined && n.role.toLowerCase() === spec.role && inScope(nodes, n.index, scope)
  );
}

/** Unnamed controls of the queried role whose container text may qualify them. */
export function containerRequests(
  nodes: SnapNode[],
  spec: QuerySpec,
  scope: number | undefined,
): ContainerRequest[] {
  if (spec.kind !== "role" || spec.key === undefined || normalizeText(spec.key) === "") return [];
  return roleHits(nodes, spec, scope).filter(unnamed).map((n) => {
    const container = explicitContainerOf(nodes, n.index);
    return container === undefined ? { index: n.index } : { index: n.index, container };
  });
}

/**
 * Explicit containers match on their text. Generic ancestors qualify, nearest first, only until one
 * is over the bound: from there on every ancestor is at least as large, so page-scale text never counts.
 */
export function containerQualifies(ct: ContainerText, key: string, exact: boolean): boolean {
  if (ct.kind === "explicit") return textMatches(ct.text, key, exact);
  for (const text of ct.texts) {
    if (normalizeText(text).length > CONTAINER_TEXT_BOUND) return false;
    if (textMatches(text, key, exact)) return true;
  }
  return false;
}

/** Role matches: by own accessible name, or (unnamed controls only) by container text. */
export function roleMatches(
  nodes: SnapNode[],
  spec: QuerySpec,
  scope: number | undefined,
  containers: ReadonlyMap<number, ContainerText>,
  exact: boolean,
): Match[] {
  const out: Match[] = [];
  const key = spec.key;
  const keyed = key !== undefined && normalizeText(key) !== "";
  for (const n of roleHits(nodes, spec, scope)) {
    let by: MatchedBy | undefined;
    if (key === undefined) by = "role";
    else if (textMatches(n.name, key, exact)) by = "name";
    else if (keyed && unnamed(n)) {
      const ct = containers.get(n.index);
      if (ct && containerQualifies(ct, key, exact)) by = "container";
    }
    if (by) out.push({ key: `n${n.index}`, index: n.index, by, actionable: n.target });
  }
  return out;
}

/** One DOM match: its element, and the nearest snapshot node at or above it (if any was found). */
export interface DomHit {
  element: number;
  node?: number;
}

/**
 * DOM matches as snapshot matches. A hit that lands on a target strictly inside the scope is
 * actionable (text inside a button's span is the button; two such hits are one match). Any other
 * hit is a non-actionable match of its own element, so distinct elements are never merged.
 */
export function domMatches(
  nodes: SnapNode[],
  hits: DomHit[],
  scope: number | undefined,
  by: MatchedBy,
): Match[] {
  const seen = new Map<string, Match>();
  for (const hit of hits) {
    const node = hit.node === undefined ? undefined : nodes[hit.node];
    const match: Match = node && node.target && inScope(nodes, node.index, scope)
      ? { key: `n${node.index}`, index: node.index, element: hit.element, by, actionable: true }
      : { key: `e${hit.element}`, element: hit.element, by, actionable: false };
    if (!seen.has(match.key)) seen.set(match.key, match);
  }
  return [...seen.values()];
}

export interface BoundedCount {
  count: number;
  saturated: boolean;
}

function bounded(n: number): BoundedCount {
  return { count: Math.min(n, QUERY_CANDIDATE_LIMIT), saturated: n > QUERY_CANDIDATE_LIMIT };
}

export type Outcome = "unique" | "no_match" | "ambiguous" | "truncated";

export interface Decision {
  outcome: Outcome;
  /** The one actionable match (unique only). */
  match?: Match;
  match_count: number;
  saturated: boolean;
  /** Actionable matches, capped at the candidate limit (ambiguous and truncated only). */
  candidates: Match[];
  relaxed_exact?: BoundedCount;
  container_dropped?: BoundedCount;
  non_actionable?: BoundedCount;
}

export interface DecideInput {
  primary: Match[];
  /** The source reported more raw matches than it resolved: nothing may be called unique. */
  incomplete?: boolean;
  /** Matches with every exact matcher relaxed to contains (only for queries that used one). */
  relaxed?: Match[];
  /** Matches with the container qualifier dropped (only for container-qualified role queries). */
  dropped?: Match[];
}

/** The query outcome. Only a unique actionable match carries a node; never one of several. */
export function decide(input: DecideInput): Decision {
  const actionable = input.primary.filter((m) => m.actionable);
  const cap = QUERY_CANDIDATE_LIMIT;
  if (input.incomplete || actionable.length > cap) {
    return {
      outcome: "truncated",
      match_count: cap,
      saturated: true,
      candidates: actionable.slice(0, cap),
    };
  }
  if (actionable.length === 1) {
    return { outcome: "unique", match: actionable[0], match_count: 1, saturated: false, candidates: [] };
  }
  if (actionable.length > 1) {
    return { outcome: "ambiguous", match_count: actionable.length, saturated: false, candidates: actionable };
  }
  const decision: Decision = { outcome: "no_match", match_count: 0, saturated: false, candidates: [] };
  const relaxed = input.relaxed?.filter((m) => m.actionable).length ?? 0;
  if (relaxed > 0) decision.relaxed_exact = bounded(relaxed);
  const dropped = input.dropped?.filter((m) => m.actionable).length ?? 0;
  if (dropped > 0) decision.container_dropped = bounded(dropped);
  const inert = input.primary.length - actionable.length;
  if (inert > 0) decision.non_actionable = bounded(inert);
  return decision;
}

/**
 * What an action may act on: the unique actionable match, else (kept for element-state waits and
 * label affordances) the single element when nothing actionable matched and exactly one thing did.
 */
export function actionMatch(primary: Match[], decision: Decision): Match | undefined {
  if (decision.outcome === "unique") return decision.match;
  if (decision.outcome !== "no_match" || primary.length !== 1) return undefined;
  return primary[0];
}

/** One frame on the way from the main document to the selected one, as the page reports it. */
export interface FrameFacts {
  url: string;
  /** `self.origin` inside the frame ("null" when opaque). */
  origin: string;
}

function inheritsOrigin(url: string): boolean {
  return url === "about:srcdoc" || /^about:blank([?#]|$)/.test(url);
}

/**
 * Why a frame does not qualify for frame-scoped queries, or undefined when it does. `chain` runs from
 * the main document to the frame. srcdoc/about:blank frames inherit their parent's origin and qualify
 * with it; other frames must share the main document's non-opaque origin. data: frames never do,
 * even under an opaque parent, because each gets a fresh opaque origin.
 */
export function frameRefusal(chain: FrameFacts[]): string | undefined {
  const main = chain[0];
  if (!main) return "the frame chain is empty";
  for (let i = 1; i < chain.length; i++) {
    const frame = chain[i];
    const parent = chain[i - 1];
    if (inheritsOrigin(frame.url)) {
      if (frame.origin !== parent.origin) return "it is sandboxed: its opaque origin is not its parent's";
      continue;
    }
    if (frame.url.startsWith("data:")) {
      return "data: frames get a fresh opaque origin, so they are never same-origin with the page";
    }
    if (frame.origin === "null") return "its origin is opaque";
    if (main.origin === "null" || frame.origin !== main.origin) {
      return `it is cross-origin (${frame.origin.slice(0, 80)}, page ${main.origin.slice(0, 80)})`;
    }
  }
  return undefined;
}
