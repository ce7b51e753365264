import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { encodeRef } from "../snapshot/refs.ts";
import type { ElementTarget } from "./element_action.ts";
import { FIRST_LABEL, MATCH_OPTIONS, PICK_RADIO, READ_FIELD } from "./fill_form_page.ts";
import { assertOptionsMatched, type OptionMatch } from "./select_option.ts";
import { hitTestedPoint } from "./targeting.ts";

/**
 * fill_form's element-level steps beside the dispatch: where a checkbox or radio takes its click, which
 * options a <select> value names, which radio of a group a string names, and reading a field back.
 */

const OPTION_SAMPLE = 25;
export const TEXT_CAP = 80;

/**
 * Where to click a checkbox or radio: its own hit-tested centre, or, when a styled form hides or covers
 * the input itself (the common custom checkbox), its first label that takes the click instead.
 */
export async function togglePoint(
  page: PageTarget,
  target: ElementTarget,
): Promise<{ x: number; y: number }> {
  try {
    return await hitTestedPoint(page, target, "fill_form");
  } catch (err) {
    const hidden = err instanceof ToolError &&
      (err.code === "fill_form_intercepted" || err.code === "element_not_visible");
    if (!hidden) throw err;
    const { result } = await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: FIRST_LABEL,
    });
    if (!result.objectId) throw err;
    const { node } = await page.send("DOM.describeNode", { objectId: result.objectId });
    return await hitTestedPoint(
      page,
      { objectId: result.objectId, backendNodeId: node.backendNodeId },
      "fill_form",
    )
      .catch(() => Promise.reject(err));
  }
}

/** The option indexes to choose, or the select_option errors for a missing or disabled option. */
export async function matchOptions(
  page: PageTarget,
  target: ElementTarget,
  wanted: string[],
): Promise<number[]> {
  const match = (await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: MATCH_OPTIONS,
    arguments: [{ value: wanted }, { value: OPTION_SAMPLE }, { value: TEXT_CAP }],
    returnByValue: true,
  })).result.value as OptionMatch;
  assertOptionsMatched(page, target, match, undefined);
  return match.indexes;
}

export interface ReadBack {
  value?: string;
  selected?: string[];
  checked?: boolean;
}

export async function readField(page: PageTarget, target: ElementTarget): Promise<ReadBack | undefined> {
  try {
    const { result } = await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: READ_FIELD,
      arguments: [{ value: TEXT_CAP }],
      returnByValue: true,
    });
    return result.value as ReadBack;
  } catch {
    return undefined;
  }
}

/**
 * The radio a string names: in the target radio's group (same name, same form), or among the radios
 * inside a target group (fieldset, role radiogroup), by value, then by label text. The pick is
 * targeted as the original was, with a ref of its own.
 */
export async function pickRadio(
  session: BrowserSession,
  page: PageTarget,
  group: ElementTarget,
  wanted: string,
): Promise<ElementTarget> {
  const { result } = await page.send("Runtime.callFunctionOn", {
    objectId: group.objectId,
    functionDeclaration: PICK_RADIO,
    arguments: [{ value: wanted }, { value: TEXT_CAP }],
  });
  if (result.subtype === "array" || !result.objectId || result.subtype === "null") {
    const choices = result.objectId
      ? (await page.send("Runtime.callFunctionOn", {
        objectId: result.objectId,
        functionDeclaration: "function() { return this; }",
        returnByValue: true,
      })).result.value as Array<{ value: string; label: string }>
      : [];
    throw new ToolError({
      code: "option_not_found",
      message: `No radio button with value or label ${
        JSON.stringify(wanted.slice(0, 60))
      } in this group (${choices.length} radios).`,
      retry: "never",
      recovery:
        "Choose from details.available_options by value or label, or target the radio itself with true.",
      affected: { page_id: page.id, ref: group.ref },
      details: { missing: [wanted.slice(0, 60)], available_options: choices.slice(0, OPTION_SAMPLE) },
    });
  }
  const { node } = await page.send("DOM.describeNode", { objectId: result.objectId });
  return {
    kind: "element",
    page,
    backendNodeId: node.backendNodeId,
    objectId: result.objectId,
    ref: encodeRef({
      session: session.ordinal,
      page: page.ordinal,
      generation: page.generation,
      node: node.backendNodeId,
    }),
    via: group.via,
  };
}
