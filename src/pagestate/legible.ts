/**
 * The agent-legible DOM: a reconstructed subtree as the few lines a model needs to reason about state —
 * interactive and state-bearing elements only, placed by the kept ancestors around them, with allow-listed
 * attributes, text cut at 60 characters and explicit states (`[DISABLED]`, `[empty options: 0]`, ...).
 * A hard budget (60 lines, 1,200 characters, the footer included) is cut at a line boundary, and the footer
 * then says which subtrees to narrow to. Pure.
 */
import type { DomNode } from "./dom_types.ts";
import {
  collapseWhitespace,
  cut,
  elementCount,
  INVISIBLE_TAGS,
  optionsOf,
  outerHtmlLength,
  selfHiddenReason,
  textContent,
} from "./dom_facts.ts";
import { isChecked } from "./selector.ts";
import {
  BLOCKISH,
  CONTAINER_ROLES,
  CONTAINER_TAGS,
  controlLine,
  isKept,
  label,
  roleOf,
  rowText,
  TABLE_SECTIONS,
  tableRowsOf,
} from "./legible_line.ts";
import { adviceFor, fmt, type SummarizedTable, withFooter } from "./legible_advice.ts";

export { LEGIBLE_TEXT_LIMIT } from "./legible_line.ts";
export { scopeSelector } from "./legible_advice.ts";

export interface LegibleOptions {
  /** Lines of the whole text, footer included (default 60). */
  maxLines?: number;
  /** Characters of the whole text, footer included (default 1,200). */
  maxChars?: number;
  /** Rows a table shows when it is not itself the scope (default 3). */
  tableRows?: number;
}

export interface LegibleDom {
  text: string;
  /** Lines of `text`, footer included. */
  line_count: number;
  /** Characters of `text`, footer included. */
  char_count: number;
  /** Length of the scope's outerHTML. */
  source_html_chars: number;
  /** Elements in the scope. */
  node_count: number;
  /** Lines the scope renders to before the budget. */
  total_lines: number;
  truncated: boolean;
  /** How to narrow: set when the budget bit or a table was summarized. */
  advice?: string;
}

export const LEGIBLE_MAX_LINES = 60;
export const LEGIBLE_MAX_CHARS = 1200;
const MAX_INDENT = 10;

interface Rec {
  node: DomNode | undefined;
  /** The line without indentation; filled after the subtree is walked (text is known then). */
  label: string;
  children: Rec[];
  wantsText: boolean;
  raw: string;
  /** Lines in this subtree, itself included (for advice). */
  size: number;
}

interface WalkState {
  tableRows: number;
  summarizedTables: SummarizedTable[];
}

function makeRec(node: DomNode | undefined, wantsText: boolean): Rec {
  return { node, label: "", children: [], wantsText, raw: "", size: 1 };
}

function rowRec(row: DomNode): Rec {
  const rec = makeRec(row, false);
  rec.label = label(row, rowText(row), []);
  return rec;
}

function tableRec(table: DomNode, state: WalkState, listAll: boolean): Rec {
  const rec = makeRec(table, false);
  const rows = tableRowsOf(table);
  const caption = table.children.find((c) => c.kind === "element" && c.tag === "caption");
  const title = caption ? textContent(caption, 200) : undefined;
  rec.label = label(table, title, [`[rows: ${rows.length}]`]);
  const shown = listAll ? rows.length : Math.min(rows.length, state.tableRows);
  for (let i = 0; i < shown; i++) rec.children.push(rowRec(rows[i]));
  if (shown < rows.length) {
    const more = makeRec(undefined, false);
    more.label = `… +${rows.length - shown} rows`;
    rec.children.push(more);
    state.summarizedTables.push({ node: table, rows: rows.length, shown });
  }
  return rec;
}

/** Walks `node`'s children, appending kept records to `out` and text to the nearest kept owner. */
function walk(node: DomNode, out: Rec[], owner: Rec | undefined, state: WalkState): void {
  for (const c of node.children) {
    if (c.kind === "text") {
      if (owner?.wantsText && owner.raw.length < 200) owner.raw += c.text;
      continue;
    }
    if (c.kind === "document") {
      walk(c, out, undefined, state);
      continue;
    }
    if (c.kind !== "element" || INVISIBLE_TAGS.has(c.tag) || c.tag === "svg" || c.tag === "option") continue;
    if (c.tag === "input" && (c.attrs.get("type") ?? "").toLowerCase() === "hidden") continue;
    elementRecs(c, owner, state, out);
  }
}

/** Appends the records `c` renders to (itself, or the kept elements inside a wrapper) to `out`. */
function elementRecs(c: DomNode, owner: Rec | undefined, state: WalkState, out: Rec[]): void {
  if (c.tag === "table") {
    out.push(tableRec(c, state, false));
    return;
  }
  if (c.tag === "select" || c.tag === "input" || c.tag === "textarea") {
    const rec = makeRec(c, false);
    rec.label = controlLine(c);
    if (c.tag === "select" && c.attrs.has("multiple")) {
      for (const o of optionsOf(c)) {
        if (!isChecked(o)) continue;
        const opt = makeRec(o, false);
        opt.label = label(o, textContent(o, 200), []);
        rec.children.push(opt);
      }
    }
    out.push(rec);
    return;
  }
  if (isKept(c)) {
    const role = roleOf(c);
    const rec = makeRec(c, !CONTAINER_TAGS.has(c.tag) && !(role !== undefined && CONTAINER_ROLES.has(role)));
    walk(c, rec.children, rec, state);
    let text = rec.wantsText ? collapseWhitespace(rec.raw) : undefined;
    if (!rec.wantsText && rec.children.length === 0 && c.tag !== "form") text = textContent(c, 200);
    rec.label = label(c, text, []);
    out.push(rec);
    return;
  }
  if (selfHiddenReason(c) !== undefined) {
    // A hidden wrapper is kept only to say that the kept things inside it are hidden.
    const rec = makeRec(c, false);
    walk(c, rec.children, undefined, state);
    if (rec.children.length === 0) return;
    rec.label = label(c, undefined, []);
    out.push(rec);
    return;
  }
  if (owner?.wantsText && BLOCKISH.has(c.tag)) owner.raw += " ";
  walk(c, out, owner, state);
  if (owner?.wantsText && BLOCKISH.has(c.tag)) owner.raw += " ";
}

function flatten(recs: Rec[], depth: number, lines: string[], owners: Rec[]): number {
  let count = 0;
  for (const r of recs) {
    lines.push("  ".repeat(Math.min(depth, MAX_INDENT)) + r.label);
    owners.push(r);
    r.size = 1 + flatten(r.children, depth + 1, lines, owners);
    count += r.size;
  }
  return count;
}

function topDocument(node: DomNode): DomNode {
  let n = node;
  while (n.parent) n = n.parent;
  return n;
}

/** Renders `scope` (an element, or a document for the whole page) within the budget. */
export function legibleDom(scope: DomNode, opts: LegibleOptions = {}): LegibleDom {
  const maxLines = opts.maxLines ?? LEGIBLE_MAX_LINES;
  const maxChars = opts.maxChars ?? LEGIBLE_MAX_CHARS;
  const state: WalkState = { tableRows: opts.tableRows ?? 3, summarizedTables: [] };
  const sourceChars = outerHtmlLength(scope);
  const nodeCount = elementCount(scope);

  let recs: Rec[];
  if (scope.kind === "element" && (scope.tag === "table" || TABLE_SECTIONS.has(scope.tag))) {
    const table = scope.tag === "table" ? scope : undefined;
    if (table) recs = [tableRec(table, state, true)];
    else {
      const root = makeRec(scope, false);
      root.label = label(scope, undefined, []);
      for (const r of scope.children) {
        if (r.kind === "element" && r.tag === "tr") root.children.push(rowRec(r));
      }
      recs = [root];
    }
  } else if (scope.kind === "element") {
    const kept: Rec[] = [];
    elementRecs(scope, undefined, state, kept);
    if (kept.length === 1 && kept[0].node === scope) recs = kept;
    else {
      // The scope always heads the text, kept or not, so the lines below it are placed.
      const root = makeRec(scope, false);
      root.children = kept;
      root.label = label(scope, undefined, []);
      recs = [root];
    }
  } else {
    recs = [];
    walk(scope, recs, undefined, state);
  }

  const lines: string[] = [];
  const owners: Rec[] = [];
  flatten(recs, 0, lines, owners);
  const total = lines.length;
  const docRoot = topDocument(scope);
  const counts = (shown: number, chars: number, footLines: number): string =>
    shown === total
      ? `— ${fmt(shown + footLines)} lines, ${fmt(chars)} chars (source ${fmt(sourceChars)} chars)`
      : `— truncated: ${fmt(shown)} of ${fmt(total)} DOM lines shown, ${fmt(chars)} chars (source ${
        fmt(sourceChars)
      } chars)`;

  const fullAdvice = adviceFor(owners, total, false, total, state, docRoot, maxLines - 2, new Map());
  const fits = (
    body: string[],
    footLines: (c: number) => string[],
  ): { text: string; lines: number } | undefined => {
    const r = withFooter(body, footLines);
    return r.lines <= maxLines && r.text.length <= maxChars ? r : undefined;
  };
  const whole = fits(lines, (c) => fullAdvice ? [counts(total, c, 2), fullAdvice] : [counts(total, c, 1)]);
  if (whole) {
    return {
      text: whole.text,
      line_count: whole.lines,
      char_count: whole.text.length,
      source_html_chars: sourceChars,
      node_count: nodeCount,
      total_lines: total,
      truncated: false,
      ...(fullAdvice ? { advice: fullAdvice } : {}),
    };
  }

  // The budget bites: keep the longest prefix of whole lines that fits with the footer and the advice.
  let k = Math.min(total, maxLines - 2);
  // The advice can name the first line left out, so it is made again for each cut tried (uniqueness
  // checks, the costly part, are remembered).
  const unique = new Map<string, boolean>();
  const adviceAt = (at: number): string =>
    cut(adviceFor(owners, total, true, at, state, docRoot, maxLines - 2, unique) ?? "narrow the scope", 400);
  let advice = adviceAt(k);
  let result: { text: string; lines: number } | undefined;
  while (k >= 0) {
    const shown = k;
    advice = adviceAt(k);
    const a = advice;
    result = fits(lines.slice(0, k), (c) => [counts(shown, c, 2), a]);
    if (result) break;
    k--;
  }
  const final = result ?? withFooter([], (c) => [counts(0, c, 2), advice]);
  return {
    text: final.text,
    line_count: final.lines,
    char_count: final.text.length,
    source_html_chars: sourceChars,
    node_count: nodeCount,
    total_lines: total,
    truncated: true,
    advice,
  };
}
