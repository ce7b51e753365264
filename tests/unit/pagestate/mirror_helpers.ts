/** Shared helpers of the DomMirror tests: CPU timing, a compact rendering, element lookup. */
import process from "node:process";
import { assert } from "../../assert.ts";
import type { DomMirror } from "../../../src/pagestate/mirror.ts";
import { parseSelector, querySelector } from "../../../src/pagestate/selector.ts";
import type { DomNode } from "../../../src/pagestate/dom_types.ts";

/** CPU time of `f` in ms: wall time is meaningless on a machine shared with browsers under test. */
export function cpuMs(f: () => void): number {
  const before = process.cpuUsage();
  f();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / 1000;
}

/** A compact, deterministic rendering of a subtree to compare whole documents. */
export function html(node: DomNode | undefined): string {
  if (!node) return "";
  switch (node.kind) {
    case "document":
      return node.children.map(html).join("");
    case "doctype":
      return "<!DOCTYPE>";
    case "text":
      return node.text;
    case "comment":
      return `<!--${node.text}-->`;
    case "cdata":
      return "<![CDATA[]]>";
    case "element": {
      const attrs = [...node.attrs].map(([k, v]) => v === "" ? ` ${k}` : ` ${k}="${v}"`).join("");
      return `<${node.tag}${attrs}>${node.children.map(html).join("")}</${node.tag}>`;
    }
  }
}

export const body = (m: DomMirror): string => {
  const b = m.document && querySelector(m.document, parseSelector("body"));
  return b ? html(b).replace(/^<body>|<\/body>$/g, "") : "";
};

export function el(m: DomMirror, selector: string): DomNode {
  assert(m.document, "a document");
  const n = querySelector(m.document, parseSelector(selector), { frames: true });
  assert(n, `an element for ${selector}`);
  return n;
}
