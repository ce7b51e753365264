/**
 * What changed between two reconstructed documents: elements added and removed (a removed subtree, or a run
 * of like siblings, is one change with its element count), attributes and form state changed, text changed.
 * At most 30 changes come back, interactive and structural ones first, with exact counts of everything.
 * Nodes are matched by rrweb id when both trees share a checkpoint lineage, otherwise by a structural key
 * (tag + id/name/type/test id + order among same-key siblings). Pure.
 */
import type { DomNode } from "./dom_types.ts";
import { cut, elementCount, looksStable, ownText, semanticClass, textContent } from "./dom_facts.ts";

export type DomChangeKind = "added" | "removed" | "attributeChanged" | "textChanged";

export interface DomChange {
  kind: DomChangeKind;
  /** A readable, non-positional path: `form#checkout > select[name=province] > option`. */
  selector: string;
  tag: string;
  /** The attribute (or form property: value, checked) of an attributeChanged. */
  name?: string;
  before?: string;
  after?: string;
  /** Text of an added or removed element (≤ 60). */
  text?: string;
  /** Elements added or removed by this change, descendants included. */
  elements?: number;
  /** Like siblings grouped into this change (`option ×3`). */
  siblings?: number;
  /** One line for a reader: `removed select[name=province] > option ×3`. */
  summary: string;
}

export interface DomDiffCounts {
  /** Elements added / removed, descendants included. */
  added: number;
  removed: number;
  attribute_changed: number;
  text_changed: number;
  total: number;
}

export interface DomDiff {
  changes: DomChange[];
  counts: DomDiffCounts;
  /** Changes before the cap (grouped as listed). */
  changes_total: number;
  truncated: boolean;
  /** How nodes were paired. */
  match: "id" | "structure";
}

export interface DiffOptions {
  /** At most this many changes (default 30). */
  limit?: number;
  /** `auto` (default) pairs by rrweb id when most ids line up, else by structure. */
  match?: "auto" | "id" | "structure";
}

export const DIFF_MAX_CHANGES = 30;
const TEXT_LIMIT = 60;
const CONTROLS = new Set([
  "input",
  "select",
  "textarea",
  "button",
  "option",
  "optgroup",
  "form",
  "fieldset",
  "label",
  "datalist",
]);
const STATE_ATTRS = new Set([
  "disabled",
  "checked",
  "value",
  "selected",
  "readonly",
  "required",
  "hidden",
  "open",
  "href",
]);
const FORM_VALUE_TAGS = new Set(["input", "textarea", "select"]);
const NOISE_TAGS = new Set(["head", "script", "style", "noscript", "template", "meta", "link", "title"]);
const MESSAGE_ID = /error|message|alert|warning|notice|toast|status|feedback/i;

interface Pending {
  change: DomChange;
  priority: number;
  order: number;
}

function isMessage(node: DomNode): boolean {
  const role = node.attrs.get("role");
  if (role === "alert" || role === "status" || role === "alertdialog" || role === "dialog") return true;
  if (node.attrs.has("aria-live") || node.tag === "dialog") return true;
  const id = node.attrs.get("id");
  return semanticClass(node) !== undefined || (id !== undefined && MESSAGE_ID.test(id));
}

function inNoise(node: DomNode): boolean {
  for (let n: DomNode | undefined = node; n && n.kind === "element"; n = n.parent) {
    if (NOISE_TAGS.has(n.tag)) return true;
  }
  return false;
}

/** Whether a subtree holds a form control or a message (what makes an add/remove interactive). */
function holdsInteractive(node: DomNode): boolean {
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    if (
      n.kind === "element" && (CONTROLS.has(n.tag) || isMessage(n) || (n.tag === "a" && n.attrs.has("href")))
    ) {
      return true;
    }
    for (const c of n.children) if (c.kind === "element") stack.push(c);
  }
  return false;
}

const q = (v: string): string => /^[\w\-./:@]+$/.test(v) ? v : `"${v.replaceAll('"', '\\"')}"`;

/** One step of a path: the tag and what names it, never a position. */
function segment(node: DomNode): { text: string; anchored: boolean } {
  if (node.kind === "document") return { text: "#document", anchored: true };
  const id = node.attrs.get("id");
  if (id !== undefined && looksStable(id)) return { text: `${node.tag}#${id}`, anchored: true };
  let s = node.tag;
  for (const name of ["data-testid", "name"]) {
    const v = node.attrs.get(name);
    if (v !== undefined && v.length <= 40) return { text: `${s}[${name}=${q(v)}]`, anchored: false };
  }
  const type = node.attrs.get("type");
  if (type !== undefined && (node.tag === "input" || node.tag === "button")) s += `[type=${q(type)}]`;
  const role = node.attrs.get("role");
  if (role !== undefined && role.length <= 20) s += `[role=${q(role)}]`;
  const cls = semanticClass(node);
  if (cls !== undefined) s += `.${cls}`;
  return { text: s, anchored: false };
}

/** A readable path from the nearest id'd ancestor (or at most four steps up), body and html left out. */
export function pathSelector(node: DomNode, maxSteps = 4): string {
  const steps: string[] = [];
  for (let n: DomNode | undefined = node; n && steps.length < maxSteps; n = n.parent) {
    if (n.kind !== "element") break;
    if ((n.tag === "body" || n.tag === "html") && steps.length > 0) break;
    const seg = segment(n);
    steps.unshift(seg.text);
    if (seg.anchored) break;
  }
  return steps.join(" > ");
}

/** The structural key two nodes must share to be paired when ids do not line up. */
function structuralKey(node: DomNode): string {
  if (node.kind === "document") return "#document";
  if (node.kind !== "element") return `#${node.kind}`;
  const a = node.attrs;
  return `${node.tag}|${a.get("id") ?? ""}|${a.get("name") ?? ""}|${a.get("type") ?? ""}|${
    a.get("data-testid") ?? ""
  }`;
}

/** Siblings grouped into one change when they share this. */
function groupKey(node: DomNode): string {
  return `${node.tag}|${node.attrs.get("name") ?? ""}|${node.attrs.get("type") ?? ""}|${
    node.attrs.get("class") ?? ""
  }`;
}

function pairable(n: DomNode): boolean {
  return n.kind === "element" || n.kind === "document";
}

function collectIds(root: DomNode): Map<number, DomNode> {
  const map = new Map<number, DomNode>();
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop();
    if (!n) break;
    if (pairable(n)) map.set(n.id, n);
    for (const c of n.children) stack.push(c);
  }
  return map;
}

/** Ids line up when most elements of the smaller tree reappear with the same tag under the same parent id. */
function idsLineUp(before: DomNode, after: DomNode): boolean {
  const b = collectIds(before);
  const a = collectIds(after);
  let same = 0;
  for (const [id, node] of b) {
    const other = a.get(id);
    if (other && other.tag === node.tag && other.kind === node.kind && other.parent?.id === node.parent?.id) {
      same++;
    }
  }
  return same * 2 >= Math.min(a.size, b.size) && same > 0;
}

class Differ {
  readonly pending: Pending[] = [];
  readonly counts: DomDiffCounts = { added: 0, removed: 0, attribute_changed: 0, text_changed: 0, total: 0 };
  private order = 0;

  constructor(readonly byId: boolean) {}

  push(change: DomChange, priority: number): void {
    this.pending.push({ change, priority, order: this.order++ });
  }

  pair(b: DomNode, a: DomNode): void {
    if (b.kind === "element") {
      this.attributes(b, a);
      this.text(b, a);
    }
    const bKids = b.children.filter(pairable);
    const aKids = a.children.filter(pairable);
    const pairs: Array<[DomNode, DomNode]> = [];
    const removed: DomNode[] = [];
    const taken = new Set<DomNode>();
    if (this.byId) {
      const byId = new Map(aKids.map((n) => [n.id, n]));
      for (const n of bKids) {
        const m = byId.get(n.id);
        if (m && m.tag === n.tag && m.kind === n.kind) {
          pairs.push([n, m]);
          taken.add(m);
        } else removed.push(n);
      }
    } else {
      const queues = new Map<string, DomNode[]>();
      for (const n of aKids) {
        const k = structuralKey(n);
        const list = queues.get(k);
        if (list) list.push(n);
        else queues.set(k, [n]);
      }
      for (const n of bKids) {
        const m = queues.get(structuralKey(n))?.shift();
        if (m) {
          pairs.push([n, m]);
          taken.add(m);
        } else removed.push(n);
      }
    }
    this.subtrees("removed", removed, b);
    this.subtrees("added", aKids.filter((n) => !taken.has(n)), a);
    for (const [x, y] of pairs) this.pair(x, y);
  }

  /** A tree present on one side only: its top elements are added (or removed). */
  whole(kind: "added" | "removed", root: DomNode): void {
    if (root.kind === "element") this.subtrees(kind, [root], root.parent ?? root);
    else this.subtrees(kind, root.children.filter(pairable), root);
  }

  private attributes(b: DomNode, a: DomNode): void {
    const names = new Set([...b.attrs.keys(), ...a.attrs.keys()]);
    const changed: Array<[string, string | undefined, string | undefined]> = [];
    // rrweb serializes a control's current value as its `value` attribute, and inputs set node.value:
    // compare the one effective value, so a checkpoint that re-serializes it is no change.
    const control = FORM_VALUE_TAGS.has(a.tag);
    for (const name of names) {
      if (control && name === "value") continue;
      const x = b.attrs.get(name);
      const y = a.attrs.get(name);
      if (x !== y) changed.push([name, x, y]);
    }
    if (control) {
      const x = b.value ?? b.attrs.get("value");
      const y = a.value ?? a.attrs.get("value");
      if (x !== y) changed.push(["value", x, y]);
    } else if (b.value !== a.value) changed.push(["value", b.value, a.value]);
    if (b.checked !== a.checked) {
      changed.push([
        "checked",
        b.checked === undefined ? undefined : String(b.checked),
        a.checked === undefined ? undefined : String(a.checked),
      ]);
    }
    if (changed.length === 0) return;
    const selector = pathSelector(a);
    const noise = inNoise(a);
    for (const [name, x, y] of changed) {
      this.counts.attribute_changed++;
      const interactive = !noise &&
        (STATE_ATTRS.has(name) || name.startsWith("aria-") || CONTROLS.has(a.tag));
      const structural = !noise && (name === "id" || name === "name" || name === "role" || name === "type");
      const show = (v: string | undefined): string => v === undefined ? "(absent)" : `"${cut(v, 40)}"`;
      this.push({
        kind: "attributeChanged",
        selector,
        tag: a.tag,
        name,
        ...(x !== undefined ? { before: cut(x, TEXT_LIMIT) } : {}),
        ...(y !== undefined ? { after: cut(y, TEXT_LIMIT) } : {}),
        summary: `${selector} ${name}: ${show(x)} → ${show(y)}`,
      }, interactive ? 0 : structural ? 1 : 2);
    }
  }

  private text(b: DomNode, a: DomNode): void {
    if (a.tag === "script") return;
    const x = ownText(b);
    const y = ownText(a);
    if (x === y) return;
    this.counts.text_changed++;
    const selector = pathSelector(a);
    const noise = inNoise(a);
    const priority = noise ? 2 : (CONTROLS.has(a.tag) || isMessage(a)) ? 0 : 1;
    this.push({
      kind: "textChanged",
      selector,
      tag: a.tag,
      before: cut(x, TEXT_LIMIT),
      after: cut(y, TEXT_LIMIT),
      summary: `${selector} text: "${cut(x, 40)}" → "${cut(y, 40)}"`,
    }, priority);
  }

  /** Added or removed children of one parent: one change per run of like siblings. */
  private subtrees(kind: "added" | "removed", nodes: DomNode[], parent: DomNode): void {
    const groups = new Map<string, DomNode[]>();
    for (const n of nodes) {
      if (n.kind !== "element") continue; // an iframe's document comes and goes with its iframe
      const k = groupKey(n);
      const list = groups.get(k);
      if (list) list.push(n);
      else groups.set(k, [n]);
    }
    for (const list of groups.values()) {
      const first = list[0];
      const elements = list.reduce((s, n) => s + elementCount(n), 0);
      if (kind === "added") this.counts.added += elements;
      else this.counts.removed += elements;
      const parentPath = parent.kind === "element" ? pathSelector(parent, 3) : "";
      const own = segment(first).text;
      const selector = list.length === 1 ? pathSelector(first) : parentPath ? `${parentPath} > ${own}` : own;
      const texts = list.map((n) => textContent(n, 200)).filter((t) => t.length > 0);
      const text = cut(texts.join(", "), TEXT_LIMIT);
      const times = list.length > 1 ? ` ×${list.length}` : "";
      const noise = inNoise(first);
      const interactive = !noise && list.some(holdsInteractive);
      this.push({
        kind,
        selector,
        tag: first.tag,
        ...(text.length > 0 ? { text } : {}),
        elements,
        ...(list.length > 1 ? { siblings: list.length } : {}),
        summary: `${kind} ${selector}${times}${text ? ` "${cut(text, 40)}"` : ""}${
          elements > list.length ? ` (${elements} elements)` : ""
        }`,
      }, interactive ? 0 : noise ? 2 : 1);
    }
  }
}

/** The changes from `before` to `after` (either may be absent: everything is then added or removed). */
export function diffDom(
  before: DomNode | undefined,
  after: DomNode | undefined,
  opts: DiffOptions = {},
): DomDiff {
  const limit = opts.limit ?? DIFF_MAX_CHANGES;
  let byId = opts.match === "id";
  if ((opts.match ?? "auto") === "auto" && before && after) byId = idsLineUp(before, after);
  const d = new Differ(byId);
  if (before && after) d.pair(before, after);
  else if (after) d.whole("added", after);
  else if (before) d.whole("removed", before);
  d.counts.total = d.counts.added + d.counts.removed + d.counts.attribute_changed + d.counts.text_changed;
  const sorted = [...d.pending].sort((x, y) => x.priority - y.priority || x.order - y.order);
  return {
    changes: sorted.slice(0, limit).map((p) => p.change),
    counts: d.counts,
    changes_total: sorted.length,
    truncated: sorted.length > limit,
    match: byId ? "id" : "structure",
  };
}
