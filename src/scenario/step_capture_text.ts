import { createHash } from "node:crypto";
import type { Protocol } from "devtools-protocol";
import type { StoredValue, TextArtifact } from "./capture.ts";
import type { DomLine } from "./step_capture_page.ts";

/**
 * The pure halves of the scenario artifacts: the text forms the comparison digests. Nothing here may
 * depend on per-run identity (node ids, backend ids, request ids), so two runs of the same page give the
 * same text.
 */

/** What the runner hands every capture for secrets (H1's class in secrets.ts implements it). */
export interface Redactor {
  /** Replaces every declared secret value in `s` with `${secret:ID}`. */
  text(s: string): string;
  /** The secret's id when the whole value equals a declared secret. */
  isSecret(value: string): string | undefined;
}

const encoder = new TextEncoder();

/** A URL the page reached, as a capture keeps it (the contract): no userinfo, secrets as references. */
export function observedUrl(redactor: Redactor): (raw: string) => string {
  return (raw) => {
    try {
      const u = new URL(raw);
      u.username = "";
      u.password = "";
      return redactor.text(u.href);
    } catch {
      return redactor.text(raw);
    }
  };
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(typeof data === "string" ? encoder.encode(data) : data).digest("hex");
}

export function textArtifact(text: string): TextArtifact {
  const bytes = encoder.encode(text);
  return { sha256: sha256Hex(bytes), bytes: bytes.byteLength, text };
}

/** A stored value as evidence: its digest, or nothing at all when it is or holds a declared secret. */
export function storedValue(value: string, redactor: Redactor): StoredValue {
  if (redactor.isSecret(value) !== undefined || redactor.text(value) !== value) {
    return { value_state: "redacted-secret", value_sha256: null };
  }
  return { value_state: "hashed", value_sha256: sha256Hex(value) };
}

/** The DOM walk's lines as one text: script/style bodies become their digest; then secrets are redacted. */
export function domText(lines: readonly DomLine[], redactor: Redactor): string {
  const text = lines.map((line) =>
    typeof line === "string" ? line : `${line[0]} sha256=${sha256Hex(line[1])}>`
  ).join("\n");
  return redactor.text(text + "\n");
}

/** Roles that only group: without a name they add depth, not meaning, so their children move up. */
const TRANSPARENT = new Set(["generic", "none", "presentation", "GenericContainer", "LayoutTable"]);
/** Property value types that carry node ids, which differ across runs. */
const ID_TYPES = new Set(["idref", "idrefList", "node", "nodeList"]);
/** The document URL is the url artifact's (and a run's port or query flag would change every step). */
const SKIPPED_PROPERTIES = new Set(["url"]);

function axText(v: Protocol.Accessibility.AXValue | undefined): string {
  if (!v || v.value === undefined || v.value === null) return "";
  return String(v.value).replace(/\s+/g, " ").trim();
}

function axStates(node: Protocol.Accessibility.AXNode): string[] {
  const states: string[] = [];
  for (const prop of node.properties ?? []) {
    if (ID_TYPES.has(prop.value.type) || SKIPPED_PROPERTIES.has(prop.name)) continue;
    const v = prop.value.value;
    if (v === false || v === undefined || v === null || v === "" || v === "false") continue;
    states.push(v === true || v === "true" ? prop.name : `${prop.name}=${String(v)}`);
  }
  return states.sort();
}

/** A child frame's own AX tree, hung under its owner element (by backend node id). */
export interface AxFrame {
  ownerBackendId: number;
  nodes: readonly Protocol.Accessibility.AXNode[] | null;
}

/**
 * A ref-free rendering of Chrome's full AX tree: `role "name" value="…" description="…" [states]`, two
 * spaces per depth. Ignored nodes, inline text boxes and unnamed grouping nodes give their place to their
 * children; names are whole (the snapshot's 160-character clip would hide a change past it). Child frames
 * whose trees were read are rendered inside their owner; one that could not be read (out of process) says so.
 */
export function renderAxTree(
  raw: readonly Protocol.Accessibility.AXNode[],
  frames: readonly AxFrame[] = [],
): string {
  const lines: string[] = [];
  renderInto(lines, raw, 0, frames);
  return lines.join("\n") + "\n";
}

function renderInto(
  lines: string[],
  raw: readonly Protocol.Accessibility.AXNode[],
  baseDepth: number,
  frames: readonly AxFrame[],
): void {
  const byId = new Map(raw.map((n) => [n.nodeId, n]));
  const root = raw.find((n) => !n.parentId) ?? raw[0];
  const seen = new Set<string>();
  const visit = (node: Protocol.Accessibility.AXNode, depth: number) => {
    if (seen.has(node.nodeId)) return;
    seen.add(node.nodeId);
    const role = axText(node.role);
    if (role === "InlineTextBox") return;
    const name = axText(node.name);
    const keep = !node.ignored && !(TRANSPARENT.has(role) && !name);
    if (keep) {
      const value = axText(node.value);
      const description = axText(node.description);
      const states = axStates(node);
      lines.push(
        "  ".repeat(depth) + role + (name ? ` ${JSON.stringify(name)}` : "") +
          (value ? ` value=${JSON.stringify(value)}` : "") +
          (description ? ` description=${JSON.stringify(description)}` : "") +
          (states.length > 0 ? ` [${states.join(", ")}]` : ""),
      );
    }
    for (const id of node.childIds ?? []) {
      const child = byId.get(id);
      if (child) visit(child, keep ? depth + 1 : depth);
    }
    const frame = node.backendDOMNodeId === undefined
      ? undefined
      : frames.find((f) => f.ownerBackendId === node.backendDOMNodeId);
    if (frame && !node.ignored) {
      if (frame.nodes) renderInto(lines, frame.nodes, depth + 1, frames);
      else lines.push("  ".repeat(depth + 1) + "#frame (not readable: out of process)");
    }
  };
  if (root) visit(root, baseDepth);
}

/** Cuts `s` to at most `maxBytes` of UTF-8 on a code point boundary. */
export function boundUtf8(s: string, maxBytes: number): { text: string; truncated: boolean } {
  if (s.length * 3 <= maxBytes) return { text: s, truncated: false };
  const bytes = encoder.encode(s);
  if (bytes.byteLength <= maxBytes) return { text: s, truncated: false };
  let end = maxBytes;
  // Step back over continuation bytes so no code point is split.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return { text: new TextDecoder().decode(bytes.subarray(0, end)), truncated: true };
}
