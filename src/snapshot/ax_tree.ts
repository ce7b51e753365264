import type { Protocol } from "devtools-protocol";

/** One accessibility node as the snapshot keeps it: flattened, in canonical preorder. */
export interface SnapNode {
  index: number;
  role: string;
  name: string;
  value?: string;
  description?: string;
  states: Record<string, string | number | boolean>;
  backendNodeId?: number;
  depth: number;
  parent?: number;
  children: number[];
  target: boolean;
  editable: boolean;
  focused: boolean;
  link: boolean;
}

export const TARGET_ROLES = new Set([
  "button",
  "link",
  "textbox",
  "searchbox",
  "checkbox",
  "radio",
  "combobox",
  "listbox",
  "option",
  "menuitem",
  "menuitemcheckbox",
  "menuitemradio",
  "tab",
  "switch",
  "slider",
  "spinbutton",
  "treeitem",
  "ColorWell",
  "DisclosureTriangle",
  "date",
  "DateTime",
  "InputTime",
  "gridcell",
]);

/** Structural roots never become targets from generic focusable or clickable signals. */
const STRUCTURAL_ROLES = new Set([
  "RootWebArea",
  "WebArea",
  "document",
  "Iframe",
  "IframePresentational",
  "html",
]);
const SKIPPED_ROLES = new Set(["InlineTextBox", "LineBreak"]);
const TRANSPARENT_ROLES = new Set([
  "generic",
  "none",
  "presentation",
  "GenericContainer",
  "Ignored",
  "LayoutTable",
]);
const EDITABLE_ROLES = new Set(["textbox", "searchbox", "spinbutton"]);
const TEXT_LIMIT = 160;

const SALIENT_STATES = new Set([
  "focused",
  "disabled",
  "checked",
  "pressed",
  "expanded",
  "selected",
  "required",
  "readonly",
  "invalid",
  "modal",
  "level",
  "multiselectable",
  "busy",
  "haspopup",
]);

function text(v: Protocol.Accessibility.AXValue | undefined): string {
  if (!v || v.value === undefined || v.value === null) return "";
  return String(v.value).replace(/\s+/g, " ").trim();
}

function clip(s: string): string {
  return s.length > TEXT_LIMIT ? s.slice(0, TEXT_LIMIT - 1) + "…" : s;
}

/** What one AX node contributes to a snapshot row, independent of its place in the tree. */
export type NodeFields = Pick<
  SnapNode,
  "role" | "name" | "value" | "description" | "states" | "target" | "editable" | "focused" | "link"
>;

export function describeAxNode(node: Protocol.Accessibility.AXNode): NodeFields {
  const role = text(node.role);
  const states: Record<string, string | number | boolean> = {};
  let focusable = false;
  let editable = false;
  for (const prop of node.properties ?? []) {
    const v = prop.value.value;
    if (prop.name === "focusable") focusable = v === true;
    if (prop.name === "editable" && v) editable = true;
    if (!SALIENT_STATES.has(prop.name)) continue;
    if (v === false || v === undefined || v === null || v === "false" || v === "") continue;
    states[prop.name] = typeof v === "string" || typeof v === "number" || typeof v === "boolean"
      ? v
      : String(v);
  }
  const structural = STRUCTURAL_ROLES.has(role);
  const value = clip(text(node.value));
  const description = clip(text(node.description));
  return {
    role,
    name: clip(text(node.name)),
    ...(value ? { value } : {}),
    ...(description ? { description } : {}),
    states,
    target: !structural && node.backendDOMNodeId !== undefined && (TARGET_ROLES.has(role) || focusable),
    editable: !structural && (editable || EDITABLE_ROLES.has(role)),
    focused: states.focused === true,
    link: role === "link",
  };
}

/**
 * Flattens Chrome's AX tree into preorder, dropping ignored and purely structural nodes but keeping
 * their children. States keep only non-default values: false booleans are never repeated.
 */
export function flattenAxTree(raw: Protocol.Accessibility.AXNode[]): SnapNode[] {
  const byId = new Map(raw.map((n) => [n.nodeId, n]));
  const root = raw.find((n) => !n.parentId) ?? raw[0];
  const out: SnapNode[] = [];
  if (!root) return out;

  const visit = (node: Protocol.Accessibility.AXNode, depth: number, parent: number | undefined) => {
    const role = text(node.role);
    if (SKIPPED_ROLES.has(role)) return;
    const keep = !node.ignored && !(TRANSPARENT_ROLES.has(role) && !text(node.name) && !isFocusable(node));
    let here = parent;
    if (keep) {
      const snap: SnapNode = {
        index: out.length,
        ...describeAxNode(node),
        backendNodeId: node.backendDOMNodeId,
        depth,
        parent,
        children: [],
      };
      if (parent !== undefined) out[parent].children.push(snap.index);
      out.push(snap);
      here = snap.index;
    }
    for (const childId of node.childIds ?? []) {
      const child = byId.get(childId);
      if (child) visit(child, keep ? depth + 1 : depth, here);
    }
  };
  visit(root, 0, undefined);
  return out;
}

function isFocusable(node: Protocol.Accessibility.AXNode): boolean {
  return (node.properties ?? []).some((p) => p.name === "focusable" && p.value.value === true);
}

/** Concise ranking: focused, editable, other non-link targets, links; preorder breaks ties. */
export function rankTargets(nodes: SnapNode[]): SnapNode[] {
  const rank = (n: SnapNode) => (n.focused ? 0 : n.editable ? 1 : n.link ? 3 : 2);
  return nodes.filter((n) => n.target).sort((a, b) => rank(a) - rank(b) || a.index - b.index);
}
