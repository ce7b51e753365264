/**
 * Page-side halves of semantic queries (label, rendered text, test id, container text). They run in
 * an isolated world of the selected document, pierce open shadow roots along the flat tree, and
 * embed the shared text rules from locator.ts via toString() so matching is defined in one place.
 */
import { normalizeText, textMatches } from "./locator.ts";

/** Tags whose elements have the generic role (when no explicit role says otherwise). */
export const GENERIC_TAGS = ["DIV", "SPAN", "B", "I", "EM", "STRONG", "SMALL", "U", "S", "FONT", "CENTER"];

/** Helpers shared by both page functions: the flat tree, and rendered text that includes shadow content. */
const FLAT_TREE = `
  const normalizeText = ${normalizeText.toString()};
  const textMatches = ${textMatches.toString()};
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE"]);
  const assigned = (slot) => slot.assignedElements({ flatten: true });
  const childrenOf = (el) => el.shadowRoot ? [...el.shadowRoot.children]
    : el.tagName === "SLOT" && assigned(el).length > 0 ? assigned(el) : [...el.children];
  const parentOf = (el) => el.assignedSlot ?? el.parentElement ?? el.parentNode?.host ?? null;
  // innerText stops at shadow roots and slots, so elements above one compose their text by hand.
  const composed = new Set();
  let visited = 0;
  // Surveys the flat tree under start: marks composed elements, returns the roots to search
  // (start and every open shadow root below it), or undefined past the visit limit.
  const survey = (start) => {
    const roots = [start];
    const mark = (el) => { for (let n = el; n && !composed.has(n); n = parentOf(n)) composed.add(n); };
    if (start.nodeType === 1 && start.shadowRoot) { mark(start); roots.push(start.shadowRoot); }
    for (let i = 0; i < roots.length; i++) {
      for (const el of roots[i].querySelectorAll("*")) {
        if (++visited > visitLimit) return undefined;
        if (!el.shadowRoot && el.tagName !== "SLOT") continue;
        if (el.shadowRoot) roots.push(el.shadowRoot);
        mark(el);
      }
    }
    return roots;
  };
  const texts = new Map();
  const textOf = (el) => {
    if (!composed.has(el)) return el.innerText ?? el.textContent ?? "";
    if (texts.has(el)) return texts.get(el);
    let out = "";
    if (typeof el.checkVisibility !== "function" || el.checkVisibility()) {
      const kids = el.shadowRoot ? el.shadowRoot.childNodes
        : el.tagName === "SLOT" && el.assignedNodes({ flatten: true }).length > 0 ? el.assignedNodes({ flatten: true })
        : el.childNodes;
      for (const k of kids) {
        if (k.nodeType === 3) out += k.data;
        else if (k.nodeType === 1 && !SKIP.has(k.tagName)) {
          const inline = String(getComputedStyle(k).display).startsWith("inline");
          out += (inline ? "" : " ") + textOf(k) + (inline ? "" : " ");
        }
      }
    }
    texts.set(el, out);
    return out;
  };`;

/**
 * function(kind, query, exact, cap, visitLimit) on the search root (a document or the scope element):
 * returns the matched elements followed by their flat-tree ancestors, and `this.meta` on the array:
 * { chains (indices into the array, self first), saturated, incomplete }. Text matches are the
 * innermost elements whose rendered text matches; labels name form controls; test ids are exact.
 */
export function domQuerySource(): string {
  return `function(kind, query, exact, cap, visitLimit, chainDepth) {
  ${FLAT_TREE}
  const scopeEl = this.nodeType === 9 ? this.documentElement : this;
  const hits = [];
  let saturated = false;
  const push = (el) => { if (hits.includes(el)) return; if (hits.length >= cap) saturated = true; else hits.push(el); };
  const roots = survey(this);
  const incomplete = roots === undefined;
  const all = (selector) => (roots ?? []).flatMap((r) => [...r.querySelectorAll(selector)]);
  if (!incomplete && kind === "test_id") {
    for (const el of all("[data-testid],[data-test-id],[data-test]")) {
      const id = el.getAttribute("data-testid") ?? el.getAttribute("data-test-id") ?? el.getAttribute("data-test");
      if (id === query) push(el);
    }
  } else if (!incomplete && kind === "label") {
    const controls = all("input:not([type=hidden]),textarea,select,button,[contenteditable=''],[contenteditable=true],[role=textbox],[role=combobox],[role=checkbox],[role=switch],[role=slider],[role=spinbutton],[role=searchbox],[role=radio],meter,progress,output");
    for (const el of controls) {
      const names = [];
      for (const l of el.labels ?? []) names.push(textOf(l));
      const aria = el.getAttribute("aria-label"); if (aria) names.push(aria);
      const by = el.getAttribute("aria-labelledby");
      const home = el.getRootNode();
      if (by) names.push(by.split(/\\s+/).map((id) => home.getElementById?.(id)?.textContent ?? "").join(" "));
      if (names.some((n) => textMatches(n, query, exact))) push(el);
    }
  } else if (!incomplete) {
    // Contains is a necessary condition for exact too, so non-matching subtrees are pruned.
    const walk = (el) => {
      if (SKIP.has(el.tagName) || !textMatches(textOf(el), query, false)) return false;
      let inner = false;
      for (const child of childrenOf(el)) if (walk(child)) inner = true;
      if (!inner && textMatches(textOf(el), query, exact)) { push(el); return true; }
      return inner;
    };
    const start = this.nodeType === 9 ? (this.body ? [this.body] : []) : childrenOf(this);
    for (const el of start) walk(el);
  }
  const out = [...hits];
  const chains = hits.map((el, i) => {
    const chain = [i];
    for (let n = parentOf(el), d = 0; n && d < chainDepth; n = parentOf(n), d++) {
      let at = out.indexOf(n);
      if (at < 0) { at = out.length; out.push(n); }
      chain.push(at);
      if (n === scopeEl) break;
    }
    return chain;
  });
  out.meta = { chains, saturated, incomplete, visited };
  return out;
}`;
}

/**
 * function(bound, limit, genericTags, visitLimit, ...pairs): for each (control, container|null) pair,
 * the container's whitespace-collapsed text clipped to `limit`, or, without one, the texts of the
 * control's generic flat-tree ancestors, nearest first, stopping after the first over `bound` and
 * before <body>. Returned by value: [{ kind, text } | { kind, texts }], or { incomplete: true }.
 */
export function containerTextSource(): string {
  return `function(bound, limit, genericTags, visitLimit, ...pairs) {
  ${FLAT_TREE}
  const doc = this.nodeType === 9 ? this : this.ownerDocument;
  if (!survey(doc)) return { incomplete: true };
  const generic = new Set(genericTags);
  const isGeneric = (el) => {
    const role = (el.getAttribute("role") ?? "").trim().toLowerCase();
    if (role) return role === "generic" || role === "none" || role === "presentation";
    return generic.has(el.tagName) || el.tagName.includes("-");
  };
  const out = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const control = pairs[i], container = pairs[i + 1];
    if (container) { out.push({ kind: "explicit", text: normalizeText(textOf(container)).slice(0, limit) }); continue; }
    const list = [];
    for (let n = parentOf(control); n && n.tagName !== "BODY" && n.tagName !== "HTML"; n = parentOf(n)) {
      if (!isGeneric(n)) continue;
      const text = normalizeText(textOf(n));
      list.push(text.slice(0, bound + 1));
      if (text.length > bound) break;
    }
    out.push({ kind: "generic", texts: list });
  }
  return out;
}`;
}
