import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import type { ResolvedTarget } from "./targeting.ts";

/**
 * Shared by the actions that work on one element and never on a point (select_option,
 * upload_files): refusing coordinates up front, and reading the element's state back once the
 * action ran, when the targeting handles have already been released.
 */

export type ElementTarget = Extract<ResolvedTarget, { kind: "element" }>;

/** Narrows a resolved target to an element, or explains that this tool cannot act on x/y. */
export function elementOnly(target: ResolvedTarget, tool: string, what: string): ElementTarget {
  if (target.kind === "element") return target;
  throw new ToolError({
    code: "invalid_target",
    message: `${tool} needs an element (ref, locator or selector), not coordinates.`,
    retry: "never",
    recovery: `Pass the ${what}'s ref from snapshot_page, or a locator like {"label": "..."}.`,
  });
}

const READBACK_GROUP = "krometrail-readback";

/** Calls a function on a node by backend id after the action (its earlier handle may be released). */
export async function readBack(
  page: PageTarget,
  backendNodeId: number,
  functionDeclaration: string,
  args: unknown[] = [],
): Promise<unknown> {
  try {
    const { object } = await page.send("DOM.resolveNode", { backendNodeId, objectGroup: READBACK_GROUP });
    if (!object.objectId) return undefined;
    const { result } = await page.send("Runtime.callFunctionOn", {
      objectId: object.objectId,
      functionDeclaration,
      arguments: args.map((value) => ({ value })),
      returnByValue: true,
    });
    return result.value;
  } catch {
    return undefined;
  } finally {
    page.send("Runtime.releaseObjectGroup", { objectGroup: READBACK_GROUP }).catch(() => {});
  }
}
