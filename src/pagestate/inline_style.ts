/**
 * rrweb records some `style` attribute changes as a property diff (`{ color: "red", margin: false,
 * width: ["1px", "important"] }`) instead of the attribute string; this applies such a diff to the inline
 * style text the way `CSSStyleDeclaration.setProperty` / `removeProperty` would. Pure.
 */

export type StyleDiff = Record<string, string | false | [string, string]>;

/** Splits `a: b; c: url(x;y)` into declarations, respecting quotes and parentheses. */
function declarations(style: string): [string, string][] {
  const out: [string, string][] = [];
  let depth = 0;
  let quote = "";
  let start = 0;
  const push = (end: number): void => {
    const decl = style.slice(start, end);
    const colon = decl.indexOf(":");
    if (colon > 0) {
      const name = decl.slice(0, colon).trim();
      const value = decl.slice(colon + 1).trim();
      if (name !== "") out.push([name, value]);
    }
    start = end + 1;
  };
  for (let i = 0; i < style.length; i++) {
    const c = style[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (c === ";" && depth === 0) push(i);
  }
  push(style.length);
  return out;
}

export function applyStyleDiff(style: string, diff: StyleDiff): string {
  const decls = declarations(style);
  const index = new Map<string, number>();
  decls.forEach(([name], i) => index.set(name.startsWith("--") ? name : name.toLowerCase(), i));
  const removed = new Set<number>();
  for (const [rawName, change] of Object.entries(diff)) {
    const name = rawName.startsWith("--") ? rawName : rawName.toLowerCase();
    const at = index.get(name);
    if (change === false) {
      if (at !== undefined) removed.add(at);
      continue;
    }
    const value = Array.isArray(change)
      ? (change[1] ? `${change[0]} !${change[1].replace(/^!/, "")}` : change[0])
      : change;
    if (value === "") {
      // setProperty with an empty value removes the property.
      if (at !== undefined) removed.add(at);
    } else if (at !== undefined && !removed.has(at)) {
      decls[at] = [decls[at][0], value];
    } else {
      index.set(name, decls.length);
      decls.push([name, value]);
    }
  }
  return decls.filter((_, i) => !removed.has(i)).map(([n, v]) => `${n}: ${v};`).join(" ");
}
