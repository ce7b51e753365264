import type { SnapNode } from "./ax_tree.ts";
import { rankTargets } from "./ax_tree.ts";

export type Detail = "concise" | "expanded" | "full";

/** Presentation bounds; every bounded projection reports what it left out. */
export const CONCISE_TARGET_LIMIT = 150;
export const EXPANDED_LINE_LIMIT = 400;

export interface Snapshot {
  page_id: string;
  url: string;
  title: string;
  /** Document generation the refs are scoped to. */
  document_generation: number;
  /** Bumps when the presented content differs from the previous snapshot of this page. */
  snapshot_generation: number;
  nodes: SnapNode[];
  refOf: (node: SnapNode) => string | undefined;
  digest: string;
}

export interface PresentedSnapshot {
  text: string;
  structured: Record<string, unknown>;
}

function quote(s: string): string {
  return JSON.stringify(s);
}

function stateList(n: SnapNode): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(n.states)) {
    if (k === "focused") continue;
    parts.push(v === true ? k : `${k}=${v}`);
  }
  if (n.focused) parts.unshift("focused");
  return parts.length > 0 ? ` [${parts.join(", ")}]` : "";
}

export function nodeLine(n: SnapNode, ref: string | undefined): string {
  const head = ref ? `${ref} ` : "";
  const name = n.name ? ` ${quote(n.name)}` : "";
  const value = n.value !== undefined && n.value !== n.name ? ` = ${quote(n.value)}` : "";
  return `${head}${n.role}${name}${value}${stateList(n)}`;
}

function targetRow(n: SnapNode, ref: string | undefined): Record<string, unknown> {
  return {
    ref,
    role: n.role,
    name: n.name,
    ...(n.value !== undefined ? { value: n.value } : {}),
    ...(Object.keys(n.states).length > 0 ? { states: n.states } : {}),
  };
}

/** The structural content worth showing in expanded mode besides targets. */
function isContext(n: SnapNode): boolean {
  if (n.target) return true;
  if (n.role === "StaticText") return false;
  if (
    /^(heading|alert|status|dialog|alertdialog|main|navigation|banner|contentinfo|form|region|table|list|img|log)$/
      .test(n.role)
  ) {
    return true;
  }
  return n.name.length > 0 && n.role !== "generic" && n.role !== "paragraph" && n.role !== "cell" &&
    n.role !== "row" && n.role !== "listitem";
}

export function presentSnapshot(snap: Snapshot, detail: Detail): PresentedSnapshot {
  const header = `Page ${snap.page_id} ${quote(snap.title)} ${snap.url}`;
  const base = {
    page_id: snap.page_id,
    url: snap.url,
    title: snap.title,
    document_generation: snap.document_generation,
    snapshot_generation: snap.snapshot_generation,
    node_count: snap.nodes.length,
  };
  const ranked = rankTargets(snap.nodes);
  if (detail === "concise") {
    const shown = ranked.slice(0, CONCISE_TARGET_LIMIT);
    const omittedTargets = ranked.length - shown.length;
    const omittedContent = snap.nodes.length - ranked.length;
    const lines = shown.map((n) => nodeLine(n, snap.refOf(n)));
    const footer = `targets ${shown.length} of ${ranked.length}` +
      (omittedTargets > 0 ? ` (${omittedTargets} omitted; use detail "expanded"/"full" or query_page)` : "") +
      `; non-target nodes omitted: ${omittedContent}`;
    return {
      text: [header, ...lines, footer].join("\n"),
      structured: {
        ...base,
        target_count: ranked.length,
        targets: shown.map((n) => targetRow(n, snap.refOf(n))),
        omitted: { targets: omittedTargets, non_target_nodes: omittedContent },
      },
    };
  }
  if (detail === "expanded") {
    const context = snap.nodes.filter(isContext);
    const shown = context.slice(0, EXPANDED_LINE_LIMIT);
    const lines = shown.map((n) => "  ".repeat(Math.min(n.depth, 12)) + nodeLine(n, snap.refOf(n)));
    const omittedLines = context.length - shown.length;
    const omittedOther = snap.nodes.length - context.length;
    return {
      text: [
        header,
        ...lines,
        `nodes ${shown.length} of ${context.length} context nodes` +
        (omittedLines > 0 ? ` (${omittedLines} omitted)` : "") +
        `; plain text nodes omitted: ${omittedOther}`,
      ].join("\n"),
      structured: {
        ...base,
        target_count: ranked.length,
        nodes: shown.map((n) => ({ depth: n.depth, ...targetRow(n, snap.refOf(n)) })),
        omitted: { context_nodes: omittedLines, plain_text_nodes: omittedOther },
      },
    };
  }
  const lines = snap.nodes.map((n) => "  ".repeat(n.depth) + nodeLine(n, snap.refOf(n)));
  return {
    text: [header, ...lines].join("\n"),
    structured: {
      ...base,
      target_count: ranked.length,
      nodes: snap.nodes.map((n) => ({ depth: n.depth, target: n.target, ...targetRow(n, snap.refOf(n)) })),
      omitted: {},
    },
  };
}

/** The marker an automatic observation emits when the page's presented content did not change. */
export function unchangedMarker(snap: Snapshot): Record<string, unknown> {
  const targets = rankTargets(snap.nodes).length;
  return {
    generation: snap.snapshot_generation,
    unchanged: true,
    target_count: targets,
    omitted: {
      targets: Math.max(0, targets - CONCISE_TARGET_LIMIT),
      non_target_nodes: snap.nodes.length - targets,
    },
  };
}
