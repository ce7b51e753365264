/**
 * ARIA roles and name-ish text of reconstructed elements, for find_element: the explicit `role` attribute or
 * the implicit role HTML-AAM gives the tag, and the attributes a reader would take as an element's name.
 * Pure; an approximation of the accessibility tree that needs no layout.
 */
import type { DomNode } from "./dom_types.ts";

const INPUT_ROLES: Record<string, string> = {
  button: "button",
  submit: "button",
  reset: "button",
  image: "button",
  checkbox: "checkbox",
  radio: "radio",
  range: "slider",
  number: "spinbutton",
  search: "searchbox",
  email: "textbox",
  tel: "textbox",
  text: "textbox",
  url: "textbox",
  password: "textbox",
  "": "textbox",
};

const TAG_ROLES: Record<string, string> = {
  button: "button",
  textarea: "textbox",
  option: "option",
  h1: "heading",
  h2: "heading",
  h3: "heading",
  h4: "heading",
  h5: "heading",
  h6: "heading",
  ul: "list",
  ol: "list",
  menu: "list",
  li: "listitem",
  table: "table",
  tr: "row",
  td: "cell",
  th: "columnheader",
  thead: "rowgroup",
  tbody: "rowgroup",
  tfoot: "rowgroup",
  dialog: "dialog",
  nav: "navigation",
  main: "main",
  form: "form",
  aside: "complementary",
  article: "article",
  progress: "progressbar",
  meter: "meter",
  output: "status",
  hr: "separator",
  fieldset: "group",
  details: "group",
  summary: "button",
  optgroup: "group",
  datalist: "listbox",
  figure: "figure",
  search: "search",
  dl: "list",
  dd: "definition",
  dt: "term",
};

/** Landmarks that belong to the page only when not inside sectioning content. */
const SECTIONING = new Set(["article", "aside", "main", "nav", "section"]);

function insideSectioning(node: DomNode): boolean {
  for (let p = node.parent; p && p.kind === "element"; p = p.parent) if (SECTIONING.has(p.tag)) return true;
  return false;
}

/** The element's role: the first token of its role attribute, else the tag's implicit role (null if none). */
export function roleOf(node: DomNode): string | null {
  if (node.kind !== "element") return null;
  const explicit = node.attrs.get("role");
  if (explicit !== undefined) {
    const first = explicit.trim().split(/\s+/)[0];
    if (first) return first.toLowerCase();
  }
  const tag = node.tag;
  switch (tag) {
    case "a":
    case "area":
      return node.attrs.has("href") ? "link" : null;
    case "input": {
      const type = (node.attrs.get("type") ?? "").toLowerCase();
      if (type === "hidden") return null;
      if ((type === "" || type === "text" || type === "search") && node.attrs.has("list")) return "combobox";
      return INPUT_ROLES[type] ?? "textbox";
    }
    case "select": {
      const size = Number(node.attrs.get("size") ?? "0");
      return node.attrs.has("multiple") || size > 1 ? "listbox" : "combobox";
    }
    case "img":
      return node.attrs.get("alt") === "" ? "presentation" : "img";
    case "header":
      return insideSectioning(node) ? null : "banner";
    case "footer":
      return insideSectioning(node) ? null : "contentinfo";
    case "section":
      return node.attrs.has("aria-label") || node.attrs.has("aria-labelledby") ? "region" : null;
    case "svg":
      return "img";
    default:
      return TAG_ROLES[tag] ?? null;
  }
}

/** Attribute text a reader would take as the element's name: aria-label, alt, title, placeholder, and the
 * value of a button-like input. */
export function nameAttributes(node: DomNode): string[] {
  const out: string[] = [];
  for (const name of ["aria-label", "alt", "title", "placeholder"]) {
    const v = node.attrs.get(name);
    if (v !== undefined && v.trim() !== "") out.push(v);
  }
  if (node.tag === "input") {
    const type = (node.attrs.get("type") ?? "").toLowerCase();
    const v = node.attrs.get("value");
    if ((type === "submit" || type === "button" || type === "reset") && v !== undefined && v.trim() !== "") {
      out.push(v);
    }
  }
  return out;
}
