/**
 * Postconditions: the observed pre/post facts relevant to a dispatched action (URL and navigation
 * identity, the subject's checked/expanded/selected/pressed state, whether its node is still there,
 * new pages), read from the snapshots the action already takes, so they cost no extra round trip.
 * At most one conservative note says when a common expectation observably did not hold; it never
 * claims the action failed.
 */
import type { SnapNode } from "../snapshot/ax_tree.ts";
import type { Snapshot } from "../snapshot/present.ts";
import type { HitKind, HitView } from "./hit.ts";

const STATE_KEYS = ["checked", "expanded", "selected", "pressed"] as const;
type StateKey = typeof STATE_KEYS[number];
type States = Partial<Record<StateKey, string | number | boolean>>;

export interface SubjectView {
  backendNodeId: number;
  role?: string;
  states: States;
}

export interface Postconditions {
  url: { before: string; after: string };
  navigated: boolean;
  new_document: boolean;
  new_pages: number;
  /** Download activity: the cursor before dispatch (a wait_for_download `after`) and downloads begun since. */
  downloads?: { cursor_before: number; started: number };
  subject?: {
    role?: string;
    before: States;
    after?: States;
    changed: StateKey[];
    /** False when the subject's node is no longer in the page's accessibility tree (removed or replaced). */
    present_after: boolean;
  };
  /** What the pointer hit (clicks by x/y, and disabled targets). */
  hit?: HitView;
  note?: string;
}

function statesOf(node: SnapNode): States {
  const out: States = {};
  for (const k of STATE_KEYS) if (node.states[k] !== undefined) out[k] = node.states[k];
  return out;
}

/** The subject as the page's current snapshot shows it, when the snapshot is of the same document. */
export function subjectIn(
  snapshot: Snapshot | undefined,
  backendNodeId: number,
  generation: number,
): SubjectView | undefined {
  if (!snapshot || snapshot.document_generation !== generation) return undefined;
  const node = snapshot.nodes.find((n) => n.backendNodeId === backendNodeId);
  return node ? { backendNodeId, role: node.role, states: statesOf(node) } : undefined;
}

export interface PostconditionInput {
  operation: string;
  url_before: string;
  url_after: string;
  navigated: boolean;
  new_document: boolean;
  new_pages: number;
  downloads?: { cursor_before: number; started: number };
  subject_before?: SubjectView;
  /** Undefined when the after-snapshot is unavailable (e.g. a dialog blocks the renderer). */
  after_snapshot?: Snapshot;
  generation_after: number;
}

export function postconditions(input: PostconditionInput): Postconditions {
  const out: Postconditions = {
    url: { before: input.url_before, after: input.url_after },
    navigated: input.navigated,
    new_document: input.new_document,
    new_pages: input.new_pages,
    ...(input.downloads ? { downloads: input.downloads } : {}),
  };
  const before = input.subject_before;
  if (before) {
    const sameDocument = !input.new_document &&
      input.after_snapshot?.document_generation === input.generation_after;
    const after = sameDocument
      ? subjectIn(input.after_snapshot, before.backendNodeId, input.generation_after)
      : undefined;
    const changed = after
      ? STATE_KEYS.filter((k) => (before.states[k] ?? null) !== (after.states[k] ?? null))
      : [];
    out.subject = {
      ...(before.role ? { role: before.role } : {}),
      before: before.states,
      ...(after ? { after: after.states } : {}),
      changed,
      present_after: after !== undefined || !sameDocument,
    };
    const toggle = ["checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio"].includes(
      before.role ?? "",
    );
    const downloaded = (input.downloads?.started ?? 0) > 0;
    if (
      input.operation === "click" && before.role === "link" && !input.navigated && input.new_pages === 0 &&
      !downloaded
    ) {
      out.note = "The link was activated but no navigation or new page was observed (yet).";
    } else if (input.operation === "click" && toggle && after && !changed.includes("checked")) {
      out.note = "The control's checked state did not change.";
    }
  }
  return out;
}

/** True when the action observably changed nothing: no DOM mutation, navigation, page or download. */
export function nothingChanged(pc: Postconditions, mutations: number | undefined): boolean {
  return mutations === 0 && !pc.navigated && !pc.new_document && pc.new_pages === 0 &&
    (pc.downloads?.started ?? 0) === 0 && (pc.subject?.changed.length ?? 0) === 0 &&
    pc.subject?.present_after !== false;
}

/**
 * The conservative note for a click whose hit was probably not what the caller meant: a disabled
 * control, an element covering a control, or something that is not a control at all. "nothing
 * changed" is said only when it was observed; a non-control hit gets a note only then.
 */
export function hitNote(hit: HitView, kind: HitKind, quiet: boolean): string | undefined {
  const changed = quiet ? "; nothing changed." : ".";
  if (hit.disabled) return `The target was disabled${changed}`;
  const what = `${hit.role}${hit.name ? ` ${JSON.stringify(hit.name)}` : ""}${
    hit.element ? ` (${hit.element})` : ""
  }`;
  if (kind === "covered" && hit.covers) {
    const under = `${hit.covers.role}${hit.covers.name ? ` ${JSON.stringify(hit.covers.name)}` : ""}`;
    return `The point hit ${what} covering ${under}${changed}`;
  }
  if (kind === "plain" && quiet) {
    return hit.element === "page background"
      ? "The point hit the page background, not a control; nothing changed."
      : `The point hit ${what}, which is not a control; nothing changed.`;
  }
  return undefined;
}
