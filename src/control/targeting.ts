import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { decodeRef, encodeRef } from "../snapshot/refs.ts";
import { describeLocator, type Locator } from "../snapshot/locator.ts";
import { runQuery } from "../snapshot/query_page.ts";

/** How a tool names what to act on. Exactly one form is used per call. */
export interface TargetSpec {
  ref?: string;
  locator?: Locator;
  selector?: string;
  x?: number;
  y?: number;
}

export type ResolvedTarget =
  | { kind: "element"; page: PageTarget; backendNodeId: number; objectId: string; ref: string; via: string }
  | { kind: "point"; page: PageTarget; x: number; y: number; via: "coordinates" };

const LOCATOR_CAP = 20;
const OBJECT_GROUP = "krometrail-targeting";

export function staleRef(ref: string, why: string): ToolError {
  return new ToolError({
    code: "stale_ref",
    message: `Ref ${ref} is stale: ${why}.`,
    retry: "after_recovery",
    recovery: "Call snapshot_page for fresh refs, then retry with the new ref.",
    affected: { ref },
  });
}

function invalidTarget(message: string): ToolError {
  return new ToolError({
    code: "invalid_target",
    message,
    retry: "never",
    recovery: "Give exactly one of: ref, locator, selector, or x and y together.",
    affected: { argument: "ref" },
  });
}

export function countTargetForms(spec: TargetSpec): number {
  return [
    spec.ref !== undefined,
    spec.locator !== undefined,
    spec.selector !== undefined,
    spec.x !== undefined ||
    spec.y !== undefined,
  ].filter(Boolean).length;
}

/** Returns the page a target spec acts on: a ref names its own page; otherwise page_id or the selection. */
export function pageForTarget(session: BrowserSession, spec: TargetSpec, pageId?: string): PageTarget {
  if (spec.ref !== undefined) {
    const parts = decodeRef(spec.ref);
    if (!parts) {
      throw new ToolError({
        code: "invalid_ref",
        message: `${JSON.stringify(spec.ref.slice(0, 40))} is not a snapshot ref.`,
        retry: "never",
        recovery: "Copy a ref exactly as snapshot_page printed it (like s123p1g1n42).",
        affected: { argument: "ref" },
      });
    }
    if (parts.session !== session.ordinal) throw staleRef(spec.ref, "it belongs to another browser session");
    const page = session.pages.get(`p${parts.page}`);
    if (!page) throw staleRef(spec.ref, `its page p${parts.page} is closed`);
    if (pageId !== undefined && pageId !== page.id) {
      throw invalidTarget(`Ref ${spec.ref} belongs to page ${page.id}, not ${pageId}.`);
    }
    return page;
  }
  return session.page(pageId);
}

async function objectForBackendNode(page: PageTarget, backendNodeId: number): Promise<string | undefined> {
  try {
    const { object } = await page.send("DOM.resolveNode", { backendNodeId, objectGroup: OBJECT_GROUP });
    if (!object.objectId) return undefined;
    const { result } = await page.send("Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration: "function() { return this.isConnected; }",
      returnByValue: true,
    });
    return result.value === true ? object.objectId : undefined;
  } catch {
    return undefined;
  }
}

async function backendIdOf(page: PageTarget, objectId: string): Promise<number> {
  const { node } = await page.send("DOM.describeNode", { objectId });
  return node.backendNodeId;
}

function refFor(session: BrowserSession, page: PageTarget, backendNodeId: number): string {
  return encodeRef({
    session: session.ordinal,
    page: page.ordinal,
    generation: page.generation,
    node: backendNodeId,
  });
}

/** A resolved element with a fresh ref for the page's current document. */
function elementTarget(
  session: BrowserSession,
  page: PageTarget,
  backendNodeId: number,
  objectId: string,
  via: string,
): ResolvedTarget {
  return { kind: "element", page, backendNodeId, objectId, ref: refFor(session, page, backendNodeId), via };
}

function locatorOutcome(loc: Locator, count: number, truncated: boolean, candidates: string[]): ToolError {
  const what = describeLocator(loc);
  if (count === 0) {
    return new ToolError({
      code: "locator_no_match",
      message: `No element matches ${what}.`,
      retry: "after_recovery",
      recovery: loc.exact
        ? "Drop exact, check the spelling against snapshot_page, or wait for the element to appear."
        : "Check the text against snapshot_page, or wait for the element to appear.",
      details: { outcome: "no_match" },
    });
  }
  return new ToolError({
    code: truncated ? "locator_truncated" : "locator_ambiguous",
    message: `${truncated ? `More than ${LOCATOR_CAP}` : count} elements match ${what}; nothing was done.`,
    retry: "never",
    recovery: "Narrow the locator (add role and name, exact, or a test_id) or use a ref from snapshot_page.",
    details: { outcome: truncated ? "truncated" : "ambiguous", match_count: count, candidates },
  });
}

/**
 * Acts through the same resolution as query_page (runQuery), so a locator query_page reports as
 * unique acts on exactly that element; ambiguous and truncated outcomes never act.
 */
async function resolveLocator(
  session: BrowserSession,
  page: PageTarget,
  loc: Locator,
): Promise<{ backendNodeId: number; objectId: string }> {
  const run = await runQuery(session, page, loc);
  const d = run.decision;
  const backendNodeId = run.action_node;
  if (backendNodeId === undefined) {
    const candidates = d.candidates.slice(0, 5).map((m) => {
      const n = m.index === undefined ? undefined : run.nodes[m.index];
      return `${n?.role ?? "element"} ${JSON.stringify(n?.name ?? "")}`;
    });
    // Without an actionable match, several non-actionable matches are still an ambiguity.
    const count = d.outcome === "no_match" ? d.non_actionable?.count ?? 0 : d.match_count;
    throw locatorOutcome(loc, count, d.outcome === "truncated", candidates);
  }
  const objectId = await objectForBackendNode(page, backendNodeId);
  if (!objectId) throw locatorOutcome(loc, 0, false, []);
  return { backendNodeId, objectId };
}

export const describeElementSource = `function() {
  const el = this;
  let s = el.tagName ? el.tagName.toLowerCase() : String(el.nodeName);
  if (el.id) s += "#" + el.id;
  if (typeof el.className === "string" && el.className.trim()) s += "." + el.className.trim().split(/\\s+/).slice(0, 2).join(".");
  const t = (el.innerText || el.textContent || "").replace(/\\s+/g, " ").trim().slice(0, 40);
  return t ? s + " " + JSON.stringify(t) : s;
}`;

/** Resolves one target form into a live element or a viewport point. Verifies refs before use. */
export async function resolveTarget(
  session: BrowserSession,
  spec: TargetSpec,
  pageId?: string,
): Promise<ResolvedTarget> {
  const forms = countTargetForms(spec);
  if (forms !== 1) {
    throw invalidTarget(forms === 0 ? "No target was given." : "More than one target form was given.");
  }
  const page = pageForTarget(session, spec, pageId);
  if (spec.ref !== undefined) {
    const parts = decodeRef(spec.ref);
    if (!parts) throw staleRef(spec.ref, "it cannot be read");
    if (parts.generation !== page.generation) {
      throw staleRef(spec.ref, "the page loaded a new document since that snapshot");
    }
    const objectId = await objectForBackendNode(page, parts.node);
    if (!objectId) throw staleRef(spec.ref, "its element was removed or replaced");
    return { kind: "element", page, backendNodeId: parts.node, objectId, ref: spec.ref, via: "ref" };
  }
  if (spec.locator !== undefined) {
    const { backendNodeId, objectId } = await resolveLocator(session, page, spec.locator);
    return elementTarget(session, page, backendNodeId, objectId, "locator");
  }
  if (spec.selector !== undefined) {
    const evaluated = await page.send("Runtime.evaluate", {
      expression: `document.querySelector(${JSON.stringify(spec.selector)})`,
      objectGroup: OBJECT_GROUP,
    });
    if (evaluated.exceptionDetails) {
      throw new ToolError({
        code: "invalid_selector",
        message: `${JSON.stringify(spec.selector.slice(0, 200))} is not a valid CSS selector.`,
        retry: "never",
        recovery: "Fix the selector, or prefer a ref from snapshot_page.",
        affected: { argument: "selector" },
      });
    }
    const objectId = evaluated.result.objectId;
    if (!objectId || evaluated.result.subtype === "null") {
      throw new ToolError({
        code: "selector_no_match",
        message: `No element matches selector ${JSON.stringify(spec.selector.slice(0, 200))}.`,
        retry: "after_recovery",
        recovery: "Check the selector, or wait for the element to appear.",
        affected: { argument: "selector" },
      });
    }
    return elementTarget(session, page, await backendIdOf(page, objectId), objectId, "selector");
  }
  if (spec.x === undefined || spec.y === undefined) throw invalidTarget("Coordinates need both x and y.");
  return { kind: "point", page, x: spec.x, y: spec.y, via: "coordinates" };
}

export function releaseTargeting(page: PageTarget): void {
  page.send("Runtime.releaseObjectGroup", { objectGroup: OBJECT_GROUP }).catch(() => {});
}

/** Whether the topmost element at (x, y) is the target (or inside it, or one of its labels). */
/**
 * Hit test of a pointer point against an element. The point is in main-viewport coordinates (as CDP's
 * content quads are); inside a same-origin iframe it is shifted by each frame element's offset into that
 * frame's own viewport. Cross-origin ancestors cannot be measured from here: the test is skipped.
 */
export const POINTER_HIT_TEST = `function(x, y) {
  if (this.ownerDocument !== document) return { ok: true, skipped: true };
  for (let w = window; w !== w.top; w = w.parent) {
    let frame = null;
    try { frame = w.frameElement; } catch { frame = null; }
    if (!frame) return { ok: true, skipped: true };
    const r = frame.getBoundingClientRect();
    x -= r.left + frame.clientLeft;
    y -= r.top + frame.clientTop;
  }
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (!hit) return { ok: false, outside: true, by: "nothing (point is outside the viewport)" };
  for (let n = hit; n; n = n.parentNode || n.host) if (n === this) return { ok: true };
  for (const l of this.labels || []) for (let n = hit; n; n = n.parentNode || n.host) if (n === l) return { ok: true };
  return { ok: false, by: (${describeElementSource}).call(hit) };
}`;

/**
 * One renderer round trip for a pointer target: is the element still there, scroll it into view when
 * it is not wholly visible, take the centre of its first non-empty box, hit-test that point in the
 * element's own frame, and convert it to main-viewport coordinates through each same-origin frame
 * element's offset. Under continuous capture a renderer round trip costs tens of milliseconds, so this
 * replaces four. `cross_origin` means an ancestor frame cannot be measured from inside.
 */
const POINTER_POINT = `function(scroll) {
  const el = this;
  if (!el.isConnected) return { gone: true };
  const boxes = () => [...el.getClientRects()].filter((r) => r.width * r.height > 0.5);
  const whole = (r) => r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  let rects = boxes();
  if (scroll && (rects.length === 0 || !whole(rects[0]))) {
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    rects = boxes();
  }
  const r = rects[0];
  if (!r) return { nobox: true };
  const x = r.left + r.width / 2;
  const y = r.top + r.height / 2;
  let mx = x;
  let my = y;
  for (let w = window; w !== w.top; w = w.parent) {
    let frame = null;
    try { frame = w.frameElement; } catch { frame = null; }
    if (!frame) return { cross_origin: true };
    const f = frame.getBoundingClientRect();
    mx += f.left + frame.clientLeft;
    my += f.top + frame.clientTop;
  }
  let hit = document.elementFromPoint(x, y);
  while (hit && hit.shadowRoot) {
    const inner = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const disabled = !!el.matches?.(":disabled") || !!el.closest?.('[aria-disabled="true"]');
  const result = { x: mx, y: my, disabled };
  if (!hit) return { ...result, ok: false, outside: true, by: "nothing (point is outside the viewport)" };
  for (let n = hit; n; n = n.parentNode || n.host) if (n === el) return { ...result, ok: true };
  for (const l of el.labels || []) for (let n = hit; n; n = n.parentNode || n.host) if (n === l) return { ...result, ok: true };
  return { ...result, ok: false, by: (${describeElementSource}).call(hit) };
}`;

interface PointReading {
  gone?: boolean;
  nobox?: boolean;
  cross_origin?: boolean;
  x?: number;
  y?: number;
  ok?: boolean;
  outside?: boolean;
  by?: string;
  disabled?: boolean;
}

/** The slow path for elements whose frame offsets cannot be read from inside (cross-origin ancestors). */
async function quadPoint(
  page: PageTarget,
  target: { objectId: string; backendNodeId: number },
  scroll: boolean,
): Promise<PointReading> {
  if (scroll) {
    await page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: target.backendNodeId }).catch(() => {});
  }
  let quads: number[][] = [];
  try {
    quads = (await page.send("DOM.getContentQuads", { backendNodeId: target.backendNodeId })).quads;
  } catch { /* no layout object */ }
  const quad = quads.find((q) => Math.abs((q[4] - q[0]) * (q[5] - q[1])) > 0.5) ?? quads[0];
  if (!quad) return { nobox: true };
  const x = (quad[0] + quad[2] + quad[4] + quad[6]) / 4;
  const y = (quad[1] + quad[3] + quad[5] + quad[7]) / 4;
  const { result } = await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: POINTER_HIT_TEST,
    arguments: [{ value: x }, { value: y }],
    returnByValue: true,
  });
  return { x, y, ...(result.value as PointReading | undefined ?? { ok: true }) };
}

/**
 * The viewport point a pointer action on an element uses: the centre of its first non-empty box, after
 * scrolling it into view (unless `scroll` is false), hit-tested so a covering element is reported as
 * `<operation>_intercepted` instead of silently receiving the pointer.
 */
export async function hitTestedPoint(
  page: PageTarget,
  target: { objectId: string; backendNodeId: number },
  operation: string,
  opts: { scroll?: boolean; role?: string } = {},
): Promise<{ x: number; y: number; disabled?: boolean }> {
  const scroll = opts.scroll !== false;
  const { result } = await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: POINTER_POINT,
    arguments: [{ value: scroll }],
    returnByValue: true,
  });
  let hit = (result.value ?? { cross_origin: true }) as PointReading;
  if (hit.cross_origin) hit = await quadPoint(page, target, scroll);
  const what = opts.role ? `The ${opts.role} element` : "The element";
  if (hit.gone) {
    throw new ToolError({
      code: "stale_ref",
      message: `${what} was removed from the page before it could be acted on.`,
      retry: "after_recovery",
      recovery: "Take a new snapshot (snapshot_page) and use a fresh ref.",
      affected: { page_id: page.id },
    });
  }
  if (hit.nobox || hit.x === undefined || hit.y === undefined) {
    throw new ToolError({
      code: "element_not_visible",
      message: `${what} has no visible box to act on.`,
      retry: "after_recovery",
      recovery:
        "Wait until it is visible (take a snapshot or screenshot to check), or target a visible element.",
      affected: { page_id: page.id },
    });
  }
  const { x, y } = { x: hit.x, y: hit.y };
  if (hit.ok === false) {
    const details = { x: Math.round(x), y: Math.round(y), ...(opts.role ? { end: opts.role } : {}) };
    if (hit.outside) {
      throw new ToolError({
        code: "element_out_of_view",
        message:
          `${what}'s centre (${details.x}, ${details.y}) is outside the viewport; nothing was dispatched.`,
        retry: "after_recovery",
        recovery:
          "Scroll (scroll tool) or resize (set_viewport) so the element is in the viewport, then retry.",
        affected: { page_id: page.id },
        details,
      });
    }
    throw new ToolError({
      code: `${operation}_intercepted`,
      message: `The ${operation} would land on ${hit.by} instead of the target; nothing was dispatched.`,
      retry: "after_recovery",
      recovery: "Close or wait out the covering element (an overlay or dialog), or target it instead.",
      affected: { page_id: page.id },
      details: { ...details, covered_by: hit.by },
    });
  }
  return { x, y, ...(hit.disabled ? { disabled: true } : {}) };
}
