import type { Protocol } from "devtools-protocol";
import type { PageTarget } from "../browser/targets.ts";
import { describeAxNode } from "../snapshot/ax_tree.ts";
import { lastSnapshot } from "../snapshot/acquire.ts";
import { describeElementSource } from "./targeting.ts";

/**
 * What a pointer click actually hit, read before dispatch: the control under the point (or the
 * element itself when no control is there), its accessibility role and name, whether it is
 * disabled, and the control it covers when the topmost element is not one. When the hit looks like
 * a no-op (disabled, covering, or not a control) a DOM mutation watch starts, so the postconditions
 * can say "nothing changed" from an observation rather than a guess.
 */

export interface Named {
  role: string;
  name: string;
}

export interface HitView extends Named {
  disabled?: true;
  covers?: Named;
  /** The element itself (tag, id, classes, text) when it is not a control. */
  element?: string;
}

export type HitKind = "control" | "covered" | "plain" | "graphic";

export interface PointHit {
  hit: HitView;
  kind: HitKind;
  /** A mutation watch runs until `settleHit` reads it. */
  watching: boolean;
}

const WORLD = "krometrail-hit";
const GROUP = "krometrail-hit";
const worlds = new WeakMap<PageTarget, { loaderId?: string; contextId: number }>();

/** Runs in an isolated world; leaves the hit and covered elements on globalThis for the next reads. */
const INSPECT = `(x, y) => {
  const CONTROL = 'a[href],area[href],button,input:not([type=hidden]),select,textarea,summary,label,[contenteditable]:not([contenteditable=false]),[tabindex]:not([tabindex="-1"]),[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=option],[role=combobox],[role=textbox],[role=searchbox],[role=slider],[role=spinbutton],[role=treeitem],[role=gridcell]';
  const GRAPHIC = 'canvas,svg,img,video,iframe,object,embed';
  const up = (n) => n.parentNode instanceof ShadowRoot ? n.parentNode.host : n.parentElement;
  const closest = (el, sel) => { for (let n = el; n; n = up(n)) if (n.matches?.(sel)) return n; return null; };
  let top = document.elementFromPoint(x, y);
  while (top && top.shadowRoot) {
    const inner = top.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === top) break;
    top = inner;
  }
  const g = globalThis;
  g.__krometrailHit = { hit: null, under: null };
  if (!top) return null;
  let control = closest(top, CONTROL);
  if (control && control.tagName === "LABEL") control = control.control ?? control;
  let under = null;
  if (!control) {
    for (const el of document.elementsFromPoint(x, y)) {
      if (el.contains(top)) continue;
      under = closest(el, CONTROL);
      if (under && !under.contains(top)) break;
      under = null;
    }
  }
  const disabled = !!control && (control.matches(":disabled") || !!closest(control, '[aria-disabled="true"]'));
  const kind = control ? "control" : under ? "covered" : closest(top, GRAPHIC) ? "graphic" : "plain";
  g.__krometrailHit = { hit: control ?? top, under };
  const watching = disabled || kind === "covered" || kind === "plain";
  g.__krometrailWatch?.disconnect();
  g.__krometrailMutations = 0;
  if (watching) {
    g.__krometrailWatch = new MutationObserver((records) => { g.__krometrailMutations += records.length; });
    g.__krometrailWatch.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  }
  const background = top === document.documentElement || top === document.body;
  const element = control ? undefined : background ? "page background" : (${describeElementSource}).call(top);
  return { kind, disabled, watching, ...(element ? { element } : {}) };
}`;

const SETTLE = `(() => {
  const g = globalThis;
  const w = g.__krometrailWatch;
  if (!w) return -1;
  const n = (g.__krometrailMutations ?? 0) + w.takeRecords().length;
  w.disconnect();
  g.__krometrailWatch = undefined;
  return n;
})()`;

async function worldOf(page: PageTarget, fresh: boolean): Promise<number | undefined> {
  const cached = worlds.get(page);
  if (!fresh && cached && cached.loaderId === page.loaderId) return cached.contextId;
  if (!page.mainFrameId) return undefined;
  const { executionContextId } = await page.send("Page.createIsolatedWorld", {
    frameId: page.mainFrameId,
    worldName: WORLD,
  });
  worlds.set(page, { loaderId: page.loaderId, contextId: executionContextId });
  return executionContextId;
}

/** Role and name of a DOM node: the first non-ignored accessibility node at or above it. */
async function axNamed(page: PageTarget, objectId: string): Promise<Named | undefined> {
  const { nodes } = await page.send("Accessibility.getPartialAXTree", { objectId, fetchRelatives: true });
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  // The requested node comes first, then its ancestors, siblings and children.
  let at: Protocol.Accessibility.AXNode | undefined = nodes[0];
  while (at?.ignored && at.parentId) at = byId.get(at.parentId);
  if (!at) return undefined;
  const fields = describeAxNode(at);
  // Climbing past every ancestor reaches the document: the element itself has no semantics.
  return fields.role === "RootWebArea"
    ? { role: "generic", name: "" }
    : { role: fields.role, name: fields.name };
}

/**
 * Role and name of an element by backend id: from the page's current snapshot when it holds the
 * node, else one accessibility read. Used on error paths and for disabled targets.
 */
export async function namedNode(page: PageTarget, backendNodeId: number): Promise<Named | undefined> {
  const snap = lastSnapshot(page);
  const known = snap?.document_generation === page.generation
    ? snap.nodes.find((n) => n.backendNodeId === backendNodeId)
    : undefined;
  if (known) return { role: known.role, name: known.name };
  try {
    const { nodes } = await page.send("Accessibility.getPartialAXTree", {
      backendNodeId,
      fetchRelatives: false,
    });
    const own = nodes.find((n) => n.backendDOMNodeId === backendNodeId && !n.ignored);
    if (!own) return undefined;
    const fields = describeAxNode(own);
    return { role: fields.role, name: fields.name };
  } catch {
    return undefined;
  }
}

/** Hit-tests (x, y) in the main document and names what is there; undefined when it cannot be read. */
export async function inspectPoint(page: PageTarget, x: number, y: number): Promise<PointHit | undefined> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const contextId = await worldOf(page, attempt > 0);
      if (contextId === undefined) return undefined;
      // Sent together and answered in order: one round trip for the reading and both handles.
      const read = (expression: string, byValue: boolean) =>
        page.send("Runtime.evaluate", { expression, contextId, returnByValue: byValue, objectGroup: GROUP });
      const [info, hitObj, underObj] = await Promise.all([
        read(`(${INSPECT})(${x}, ${y})`, true),
        read("globalThis.__krometrailHit.hit", false),
        read("globalThis.__krometrailHit.under", false),
      ]);
      const value = info.result.value as
        | { kind: HitKind; disabled: boolean; watching: boolean; element?: string }
        | null;
      if (info.exceptionDetails || !value || !hitObj.result.objectId) return undefined;
      const [named, covered] = await Promise.all([
        axNamed(page, hitObj.result.objectId),
        underObj.result.objectId ? axNamed(page, underObj.result.objectId) : Promise.resolve(undefined),
      ]);
      if (!named) return undefined;
      return {
        kind: value.kind,
        watching: value.watching,
        hit: {
          ...named,
          ...(value.disabled ? { disabled: true as const } : {}),
          ...(covered ? { covers: covered } : {}),
          ...(value.element ? { element: value.element } : {}),
        },
      };
    } catch {
      // The isolated world went away with a navigation: make a new one once.
      worlds.delete(page);
    } finally {
      page.send("Runtime.releaseObjectGroup", { objectGroup: GROUP }).catch(() => {});
    }
  }
  return undefined;
}

/** Mutations since `inspectPoint` started its watch (and stops it); undefined when unknown. */
export async function settleHit(page: PageTarget): Promise<number | undefined> {
  const contextId = worlds.get(page)?.contextId;
  if (contextId === undefined || page.dialog || page.closed) return undefined;
  try {
    const r = await page.send(
      "Runtime.evaluate",
      { expression: SETTLE, contextId, returnByValue: true },
      2_000,
    );
    const n = r.result.value;
    return typeof n === "number" && n >= 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

export function hitText(hit: HitView): string {
  if (hit.element === "page background") return "the page background";
  const name = (n: Named) => `${n.role}${n.name ? ` ${JSON.stringify(n.name)}` : ""}`;
  return `${name(hit)}${hit.disabled ? " (disabled)" : ""}${
    hit.covers ? ` covering ${name(hit.covers)}` : ""
  }`;
}
