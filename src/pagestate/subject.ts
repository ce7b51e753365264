/**
 * Keeps "the first element a selector matches" current while a mirror is rolled forward, without walking the
 * whole document after every event. An event can only change the first match if it touches structure, form
 * state or an attribute the selector reads. For selectors whose matching depends on an element and its
 * ancestors only (compounds joined by descendant / child combinators, no positional or sibling-dependent
 * pseudo-classes), the only new candidates are the added nodes and the subtrees of touched nodes, so those
 * are matched and compared in document order; losing the subject, or any other selector, walks the
 * document again. Pure.
 */
import type { eventWithTime } from "@rrweb/types";
import { EventType, IncrementalSource } from "@rrweb/types";
import type { DomNode } from "./dom_types.ts";
import type { DomMirror, MirrorChange } from "./mirror.ts";
import { matches, type ParsedSelector, querySelector } from "./selector.ts";
import type { ComplexSelector, Compound } from "./selector_parse.ts";

/** What a selector's matching reads besides the element and its ancestors' tags. */
interface SelectorDeps {
  attrs: Set<string>;
  input: boolean;
  text: boolean;
  /** Matching depends only on the element and its ancestors. */
  local: boolean;
}

function selectorDeps(sel: ParsedSelector): SelectorDeps {
  const deps: SelectorDeps = { attrs: new Set(), input: false, text: false, local: true };
  const complex = (c: ComplexSelector): void => {
    if (c.combinators.some((k) => k === "+" || k === "~")) deps.local = false;
    c.compounds.forEach(compound);
  };
  const compound = (c: Compound): void => {
    if (c.ids.length > 0) deps.attrs.add("id");
    if (c.classes.length > 0) deps.attrs.add("class");
    for (const a of c.attrs) deps.attrs.add(a.name);
    for (const p of c.pseudos) {
      switch (p.kind) {
        case "not":
        case "is":
        case "where":
          p.list.forEach(complex);
          break;
        case "has":
          deps.local = false;
          for (const r of p.list) complex(r.selector);
          break;
        case "checked":
          deps.input = true;
          for (const n of ["checked", "selected", "value", "multiple", "type"]) deps.attrs.add(n);
          break;
        case "disabled":
        case "enabled":
          deps.attrs.add("disabled");
          deps.local = false; // a fieldset's first legend depends on sibling order
          break;
        case "empty":
          deps.text = true;
          deps.local = false;
          break;
        default:
          deps.local = false; // positional pseudo-classes read siblings
          break;
      }
    }
  };
  sel.list.forEach(complex);
  return deps;
}

/** Names of the attributes a mutation event set or removed, by node id. */
function changedAttributes(e: eventWithTime): Array<{ id: number; names: string[] }> {
  if (e.type !== EventType.IncrementalSnapshot || e.data.source !== IncrementalSource.Mutation) return [];
  return e.data.attributes.map((a) => ({ id: a.id, names: Object.keys(a.attributes) }));
}

/** Past this many candidate elements an incremental update costs about as much as walking the document. */
const CANDIDATE_LIMIT = 2000;

export class SubjectTracker {
  private readonly deps: SelectorDeps;
  private current: DomNode | undefined;
  /** Whole-document walks, and incremental re-checks, made so far. */
  fullQueries = 0;
  incrementalQueries = 0;
  // The group being accumulated.
  private full = false;
  private roots: number[] = [];

  constructor(private readonly mirror: DomMirror, private readonly selector: ParsedSelector) {
    this.deps = selectorDeps(selector);
  }

  get subject(): DomNode | undefined {
    return this.current;
  }

  /** Resolves from scratch (a walk of the whole document). */
  resolve(): DomNode | undefined {
    const doc = this.mirror.document;
    this.current = doc ? querySelector(doc, this.selector) : undefined;
    this.fullQueries++;
    this.reset();
    return this.current;
  }

  /** Notes what one applied event touched; returns whether the first match could have changed. */
  note(c: MirrorChange | undefined, e: eventWithTime): boolean {
    if (!c) return false;
    switch (c.kind) {
      case "snapshot":
        this.full = true;
        return true;
      case "mutation": {
        let hit = false;
        if (c.added.length > 0 || c.removed.length > 0) {
          for (const id of c.added) this.roots.push(id);
          hit = true;
        }
        if (c.texts.length > 0 && this.deps.text) {
          this.full = true;
          hit = true;
        }
        if (c.attributes.length > 0) {
          for (const a of changedAttributes(e)) {
            if (a.names.some((n) => this.deps.attrs.has(n.toLowerCase()))) {
              this.roots.push(a.id);
              hit = true;
            }
          }
        }
        return hit;
      }
      case "input":
        if (!this.deps.input) return false;
        if (c.target !== undefined) this.roots.push(c.target);
        return true;
      default:
        return false;
    }
  }

  /** Brings the subject up to date after the noted events (call only when `note` returned true). */
  update(): DomNode | undefined {
    if (this.full || !this.deps.local) return this.resolve();
    const doc = this.mirror.document;
    if (!doc) return this.resolve();
    const old = this.current;
    // A subject that left the document or stopped matching: the next match may be anywhere after it.
    if (old && (!this.inDocument(old, doc) || !matches(old, this.selector))) return this.resolve();
    let best = old;
    const seen = new Set<DomNode>();
    let visited = 0;
    for (const id of this.roots) {
      const root = this.mirror.node(id);
      if (!root || seen.has(root) || !this.inDocument(root, doc)) continue;
      const stack = [root];
      while (stack.length > 0) {
        const n = stack.pop();
        if (!n || seen.has(n)) continue;
        seen.add(n);
        if (++visited > CANDIDATE_LIMIT) return this.resolve();
        if (n.kind !== "element") continue;
        if (matches(n, this.selector) && (!best || precedes(n, best))) best = n;
        for (const ch of n.children) if (ch.kind === "element") stack.push(ch);
      }
    }
    this.current = best;
    this.incrementalQueries++;
    this.reset();
    return best;
  }

  private reset(): void {
    this.full = false;
    this.roots = [];
  }

  /** In the main document, not detached and not inside an iframe's document (the selector stays out). */
  private inDocument(node: DomNode, doc: DomNode): boolean {
    let n: DomNode | undefined = node;
    while (n && n !== doc) {
      if (n.kind === "document") return false;
      n = n.parent;
    }
    return n === doc;
  }
}

/** Whether `a` comes before `b` in document order (both in one tree). */
export function precedes(a: DomNode, b: DomNode): boolean {
  if (a === b) return false;
  const chain = (n: DomNode): DomNode[] => {
    const out: DomNode[] = [];
    for (let x: DomNode | undefined = n; x; x = x.parent) out.push(x);
    return out.reverse();
  };
  const ca = chain(a);
  const cb = chain(b);
  let i = 0;
  while (i < ca.length && i < cb.length && ca[i] === cb[i]) i++;
  if (i === ca.length) return true; // a is an ancestor of b
  if (i === cb.length) return false; // b is an ancestor of a
  const parent = ca[i - 1];
  if (!parent) return false;
  return parent.children.indexOf(ca[i]) < parent.children.indexOf(cb[i]);
}
