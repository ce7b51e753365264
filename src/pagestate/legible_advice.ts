/**
 * The legible DOM's footer and narrowing advice: counts that include the footer itself, and the scopes to
 * narrow to when the budget bites (the largest kept subtrees that would fit, by a stable-ish selector). Pure.
 */
import type { DomNode } from "./dom_types.ts";
import { looksStable, semanticClass } from "./dom_facts.ts";
import { parseSelector, querySelectorAll } from "./selector.ts";
import { ATTR_LIMIT, tableRowsOf } from "./legible_line.ts";

/** A rendered line's element and the lines of its subtree (itself included). */
export interface Placed {
  node: DomNode | undefined;
  size: number;
}

export interface SummarizedTable {
  node: DomNode;
  rows: number;
  shown: number;
}

/** A stable-ish selector to narrow to: id, test id, name, aria-label or role, anchored by an id'd ancestor. */
export function scopeSelector(node: DomNode): string {
  const id = node.attrs.get("id");
  if (id !== undefined && looksStable(id)) return `${node.tag}#${id}`;
  // Single quotes inside, so the selector reads cleanly when the advice quotes it.
  const quote = (v: string): string => `'${v.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`;
  let own = node.tag;
  for (const name of ["data-testid", "name", "aria-label", "role"]) {
    const v = node.attrs.get(name);
    if (v !== undefined && v.length <= ATTR_LIMIT) {
      own += `[${name}=${quote(v)}]`;
      break;
    }
  }
  if (own === node.tag) {
    const cls = semanticClass(node);
    if (cls !== undefined) own += `.${cls}`;
  }
  for (let p = node.parent; p; p = p.parent) {
    const pid = p.kind === "element" ? p.attrs.get("id") : undefined;
    if (pid !== undefined && looksStable(pid)) return `${p.tag}#${pid} ${own}`;
  }
  return own;
}

function isUnique(selector: string, root: DomNode, memo: Map<string, boolean>): boolean {
  const known = memo.get(selector);
  if (known !== undefined) return known;
  let unique = false;
  try {
    unique = querySelectorAll(root, parseSelector(selector)).length === 1;
  } catch {
    unique = false;
  }
  memo.set(selector, unique);
  return unique;
}

export function adviceFor(
  owners: Placed[],
  total: number,
  truncated: boolean,
  firstCut: number,
  state: { summarizedTables: SummarizedTable[] },
  root: DomNode,
  fitLines: number,
  memo: Map<string, boolean>,
): string | undefined {
  const parts: string[] = [];
  if (truncated) {
    // The largest subtrees that would fit the budget first, then the largest of the rest.
    const floor = Math.min(10, Math.floor(fitLines / 4));
    const fits = (r: Placed): number => r.size <= fitLines && r.size >= floor ? 1 : 0;
    const candidates = owners
      .filter((r) => r.node !== undefined && r.size >= 2 && r.size < total && r.node.tag !== "tr")
      .sort((a, b) => fits(b) - fits(a) || b.size - a.size);
    const chosen: Placed[] = [];
    for (const c of candidates) {
      if (chosen.length >= 2) break;
      const n = c.node;
      if (!n || chosen.some((x) => x.node && (contains(x.node, n) || contains(n, x.node)))) continue;
      chosen.push(c);
    }
    const cutAt = owners[firstCut]?.node;
    if (chosen.length === 0 && cutAt?.tag === "tr" && cutAt.parent) {
      // Rows of a listed table: name the first row left out (positional, for reading only).
      const table = cutAt.parent.tag === "table" ? cutAt.parent : cutAt.parent.parent ?? cutAt.parent;
      const rows = tableRowsOf(table);
      const at = rows.indexOf(cutAt);
      const within = cutAt.parent.children.filter((c) => c.kind === "element").indexOf(cutAt) + 1;
      parts.push(
        `rows 1–${at} of ${rows.length} shown; narrow with scope: "${
          scopeSelector(cutAt.parent)
        } > tr:nth-child(${within})" for one row`,
      );
    } else if (chosen.length === 0 && cutAt) chosen.push(owners[firstCut]);
    const named = chosen.flatMap((r) => {
      if (!r.node) return [];
      const sel = scopeSelector(r.node);
      return [`"${sel}"${isUnique(sel, root, memo) ? "" : " (not unique)"} (${r.size} lines)`];
    });
    if (named.length > 0) parts.push(`narrow with scope: ${named.join(" or ")}`);
    else if (parts.length === 0) parts.push("narrow the scope");
  }
  for (const t of state.summarizedTables.slice(0, 1)) {
    parts.push(`${scopeSelector(t.node)} shows ${t.shown} of ${t.rows} rows; scope to it to list them`);
  }
  return parts.length > 0 ? parts.join("; ") : undefined;
}

function contains(a: DomNode, b: DomNode): boolean {
  for (let p: DomNode | undefined = b; p; p = p.parent) if (p === a) return true;
  return false;
}

/** Thousands separators by hand: `toLocaleString` costs ~0.1 ms a call, and the footer is built many times. */
export function fmt(n: number): string {
  const digits = String(Math.trunc(n));
  let out = "";
  for (let i = 0; i < digits.length; i++) {
    if (i > 0 && (digits.length - i) % 3 === 0) out += ",";
    out += digits[i];
  }
  return out;
}

/** The footer whose character count includes itself (and everything above it). */
export function withFooter(
  body: string[],
  make: (chars: number) => string[],
): { text: string; lines: number } {
  const bodyText = body.join("\n");
  const assemble = (chars: number): string => {
    const foot = make(chars).join("\n");
    return bodyText.length > 0 ? `${bodyText}\n${foot}` : foot;
  };
  let guess = bodyText.length + 60;
  for (let i = 0; i < 6; i++) {
    const text = assemble(guess);
    if (text.length === guess) return { text, lines: body.length + make(guess).length };
    guess = text.length;
  }
  // The count straddles a digit boundary: settle on the larger count and pad to it.
  for (let c = guess; c < guess + 8; c++) {
    const text = assemble(c);
    if (text.length <= c) {
      return { text: text + " ".repeat(c - text.length), lines: body.length + make(c).length };
    }
  }
  const text = assemble(guess);
  return { text, lines: body.length + make(guess).length };
}
