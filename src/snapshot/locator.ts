/**
 * Semantic locator matching rules shared by the AX-side (role/name) and page-side (label, text,
 * test id) resolvers. The page-side resolver embeds these very functions via toString(), so the
 * rules live in one place.
 */
export interface Locator {
  role?: string;
  name?: string;
  label?: string;
  text?: string;
  test_id?: string;
  exact?: boolean;
  /** A ref: only descendants of that element match. */
  scope?: string;
  /** A qualified same-origin, same-process frame: its name or a ref of its <iframe>. */
  frame?: string;
}

/** Whitespace-collapsed text with invisible format characters dropped and icon glyphs as spaces. */
export function normalizeText(input: string): string {
  return input
    .replace(/[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD]/g, "")
    .replace(/[\uE000-\uF8FF\u{F0000}-\u{FFFFD}\u{100000}-\u{10FFFD}]/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

export function textMatches(candidate: string, query: string, exact: boolean): boolean {
  const c = normalizeText(candidate);
  const q = normalizeText(query);
  // An all-icon (or invisible-only) query is not a text-match key; only a literal "" means unnamed.
  if (q.length === 0) return query.length === 0 && c.length === 0;
  if (c.length === 0) return false;
  return exact ? c === q : c.toLowerCase().includes(q.toLowerCase());
}

export function describeLocator(loc: Locator): string {
  const parts: string[] = [];
  if (loc.role) parts.push(`role=${loc.role}`);
  if (loc.name !== undefined) parts.push(`name=${JSON.stringify(loc.name)}`);
  if (loc.label !== undefined) parts.push(`label=${JSON.stringify(loc.label)}`);
  if (loc.text !== undefined) parts.push(`text=${JSON.stringify(loc.text)}`);
  if (loc.test_id !== undefined) parts.push(`test_id=${JSON.stringify(loc.test_id)}`);
  if (loc.exact) parts.push("exact");
  if (loc.scope !== undefined) parts.push(`scope=${loc.scope}`);
  if (loc.frame !== undefined) parts.push(`frame=${JSON.stringify(loc.frame)}`);
  return parts.join(" ");
}

/**
 * Page-side resolver for label, text and test-id locators. Runs inside the page; returns matching
 * elements (at most `cap` + 1 so the caller can tell truncation).
 */
export function pageLocatorSource(): string {
  return `function(kind, query, exact, cap) {
  const normalizeText = ${normalizeText.toString()};
  const textMatches = ${textMatches.toString()};
  const out = [];
  const push = (el) => { if (!out.includes(el)) out.push(el); return out.length > cap; };
  if (kind === "test_id") {
    for (const el of document.querySelectorAll("[data-testid],[data-test-id],[data-test]")) {
      const id = el.getAttribute("data-testid") ?? el.getAttribute("data-test-id") ?? el.getAttribute("data-test");
      if (id === query && push(el)) break;
    }
    return out;
  }
  if (kind === "label") {
    const controls = document.querySelectorAll("input:not([type=hidden]),textarea,select,button,[contenteditable=''],[contenteditable=true],[role=textbox],[role=combobox],[role=checkbox],[role=switch],[role=slider],[role=spinbutton],meter,progress,output");
    for (const el of controls) {
      const names = [];
      for (const l of el.labels ?? []) names.push(l.innerText || l.textContent || "");
      const aria = el.getAttribute("aria-label"); if (aria) names.push(aria);
      const by = el.getAttribute("aria-labelledby");
      if (by) names.push(by.split(/\\s+/).map((id) => document.getElementById(id)?.textContent ?? "").join(" "));
      if (names.some((n) => textMatches(n, query, exact)) && push(el)) break;
    }
    return out;
  }
  const skip = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "TITLE"]);
  const matches = (el) => textMatches(el.innerText ?? el.textContent ?? "", query, exact);
  const walk = (el) => {
    if (skip.has(el.tagName)) return false;
    if (!matches(el) && exact === false) return false;
    let childMatched = false;
    for (const child of el.children) if (walk(child)) childMatched = true;
    if (!childMatched && matches(el)) { push(el); return true; }
    return childMatched;
  };
  if (document.body) walk(document.body);
  return out.slice(0, cap + 1);
}`;
}
