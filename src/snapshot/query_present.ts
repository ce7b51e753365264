/**
 * Presentation of a query run. Outcomes other than unique never carry a ref, so a caller cannot
 * act on one of several candidates by accident; counts come with their saturation flags.
 */
import { describeLocator, type Locator } from "./locator.ts";
import type { Detail } from "./present.ts";
import { type BoundedCount, CONTAINER_TEXT_BOUND, type Match, QUERY_CANDIDATE_LIMIT } from "./query.ts";
import type { QueryRun } from "./query_page.ts";

const CONCISE_CANDIDATES = 5;

export interface PresentedQuery {
  text: string;
  structured: Record<string, unknown>;
}

function countFields(name: string, c: BoundedCount | undefined): Record<string, unknown> {
  return c ? { [`${name}_count`]: c.count, [`${name}_saturated`]: c.saturated } : {};
}

function countText(c: BoundedCount): string {
  return `${c.count}${c.saturated ? "+" : ""}`;
}

export function presentQuery(run: QueryRun, loc: Locator, pageId: string, detail: Detail): PresentedQuery {
  const d = run.decision;
  const what = describeLocator(loc);
  const row = (m: Match) => {
    const n = m.index === undefined ? undefined : run.nodes[m.index];
    return { role: n?.role ?? "", name: n?.name ?? "", matched_by: m.by };
  };
  const shownCount = detail === "concise" ? CONCISE_CANDIDATES : QUERY_CANDIDATE_LIMIT;
  const candidates = d.candidates.slice(0, shownCount).map(row);
  const structured: Record<string, unknown> = {
    page_id: pageId,
    outcome: d.outcome,
    match_count: d.match_count,
    saturated: d.saturated,
    candidate_limit: QUERY_CANDIDATE_LIMIT,
    document: run.document.main
      ? { main: true }
      : { main: false, ...(run.document.name ? { frame_name: run.document.name } : {}) },
    source: run.dom ? "accessibility_tree+dom" : "accessibility_tree",
    document_generation: run.document_generation,
    ...(run.snapshot_generation !== undefined ? { snapshot_generation: run.snapshot_generation } : {}),
  };
  const lines: string[] = [];
  if (d.outcome === "unique" && d.match) {
    const r = row(d.match);
    Object.assign(structured, { ref: run.ref, ...r });
    lines.push(
      `unique: ${run.ref} ${r.role} ${JSON.stringify(r.name)} (matched by ${r.matched_by}) for ${what}`,
    );
  } else if (d.outcome === "no_match") {
    Object.assign(
      structured,
      countFields("relaxed_exact", d.relaxed_exact),
      countFields("container_dropped", d.container_dropped),
      countFields("non_actionable_match", d.non_actionable),
    );
    lines.push(`no_match: no actionable element matches ${what}; no ref.`);
    if (d.relaxed_exact) {
      lines.push(
        `With exact relaxed to contains, ${
          countText(d.relaxed_exact)
        } would match: drop exact or copy the full accessible name.`,
      );
    }
    if (d.container_dropped) {
      lines.push(
        `Without the name or container text, ${
          countText(d.container_dropped)
        } elements have that role (containers qualify within ${CONTAINER_TEXT_BOUND} characters of text).`,
      );
    }
    if (d.non_actionable) {
      lines.push(
        `${
          countText(d.non_actionable)
        } non-actionable element(s) match; use snapshot_page detail "full" to inspect them.`,
      );
    }
  } else {
    Object.assign(structured, {
      candidates,
      candidates_omitted: Math.max(0, d.match_count - candidates.length),
    });
    lines.push(
      d.outcome === "truncated"
        ? `truncated: more than ${QUERY_CANDIDATE_LIMIT} elements (or unresolved DOM matches) match ${what}; no ref.`
        : `ambiguous: ${d.match_count} elements match ${what}; no ref.`,
      ...candidates.map((c) => `  ${c.role} ${JSON.stringify(c.name)} (by ${c.matched_by})`),
      "Narrow the query (exact, locator.scope, a container name, a test_id) until it is unique.",
    );
  }
  return { text: lines.join("\n"), structured };
}
