import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { acquireSnapshot } from "../snapshot/acquire.ts";
import { decodeRef, encodeRef } from "../snapshot/refs.ts";
import { describeLocator, type Locator, pageLocatorSource, textMatches } from "../snapshot/locator.ts";

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

async function resolveLocator(
  session: BrowserSession,
  page: PageTarget,
  loc: Locator,
): Promise<{ backendNodeId: number; objectId: string }> {
  const kinds =
    [loc.role !== undefined, loc.label !== undefined, loc.text !== undefined, loc.test_id !== undefined]
      .filter(Boolean).length;
  if (kinds !== 1) {
    throw new ToolError({
      code: "invalid_argument",
      message: "A locator needs exactly one of role (with optional name), label, text or test_id.",
      retry: "never",
      recovery: 'Use for example {"role": "button", "name": "Save"} or {"label": "Email"}.',
      affected: { argument: "locator" },
    });
  }
  const exact = loc.exact ?? false;
  if (loc.role !== undefined) {
    const { snapshot } = await acquireSnapshot(session, page);
    const role = loc.role.toLowerCase();
    const hits = snapshot.nodes.filter((n) =>
      n.backendNodeId !== undefined && n.role.toLowerCase() === role &&
      (loc.name === undefined || textMatches(n.name, loc.name, exact))
    );
    if (hits.length !== 1) {
      throw locatorOutcome(
        loc,
        hits.length,
        false,
        hits.slice(0, 5).map((n) => `${n.role} ${JSON.stringify(n.name)}`),
      );
    }
    const backendNodeId = hits[0].backendNodeId as number;
    const objectId = await objectForBackendNode(page, backendNodeId);
    if (!objectId) throw locatorOutcome(loc, 0, false, []);
    return { backendNodeId, objectId };
  }
  const [kind, query] = loc.label !== undefined
    ? ["label", loc.label]
    : loc.text !== undefined
    ? ["text", loc.text]
    : ["test_id", loc.test_id ?? ""];
  const { result } = await page.send("Runtime.callFunctionOn", {
    functionDeclaration: pageLocatorSource(),
    arguments: [{ value: kind }, { value: query }, { value: exact }, { value: LOCATOR_CAP }],
    objectId:
      (await page.send("Runtime.evaluate", { expression: "document", objectGroup: OBJECT_GROUP })).result
        .objectId,
    objectGroup: OBJECT_GROUP,
  });
  if (!result.objectId) throw locatorOutcome(loc, 0, false, []);
  const { result: props } = await page.send("Runtime.getProperties", {
    objectId: result.objectId,
    ownProperties: true,
  });
  const elements = props.filter((p) => /^\d+$/.test(p.name) && p.value?.objectId);
  if (elements.length !== 1) {
    const described: string[] = [];
    for (const p of elements.slice(0, 5)) {
      const d = await page.send("Runtime.callFunctionOn", {
        objectId: p.value?.objectId,
        functionDeclaration: describeElementSource,
        returnByValue: true,
      });
      described.push(String(d.result.value));
    }
    throw locatorOutcome(loc, elements.length, elements.length > LOCATOR_CAP, described);
  }
  const objectId = elements[0].value?.objectId as string;
  return { backendNodeId: await backendIdOf(page, objectId), objectId };
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
