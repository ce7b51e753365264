import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { elementOnly, readBack } from "./element_action.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import { addLine, addWarning, type Observation } from "./observation.ts";
import { describeElementSource, pageForTarget, resolveTarget, type TargetSpec } from "./targeting.ts";

/**
 * select_option: choosing options of a native <select> the way a user's choice does (selection,
 * then input and change), with errors that point custom dropdowns, datalists and checkboxes to the
 * action that does work for them.
 */

export type OptionChoice =
  | { by: "value"; values: string[] }
  | { by: "label"; values: string[] }
  | { by: "index"; values: number[] };

/** At most this many options are listed when a requested one is missing. */
const OPTION_SAMPLE = 25;
const OPTION_TEXT_CAP = 80;

const SELECT_KIND = `function() {
  const tag = this.tagName ? this.tagName.toLowerCase() : "";
  return {
    tag,
    type: tag === "input" ? (this.type || "text").toLowerCase() : undefined,
    list: tag === "input" && !!this.getAttribute("list"),
    role: this.getAttribute ? this.getAttribute("role") : null,
    multiple: tag === "select" && this.multiple,
    disabled: !!this.disabled || (this.matches && this.matches(":disabled")),
    options: tag === "select" ? this.options.length : 0,
  };
}`;

/** Finds the requested options; on a miss returns a bounded sample of what exists. */
const MATCH_OPTIONS = `function(by, wanted, sampleCap, textCap) {
  const norm = (s) => String(s).replace(/\\s+/g, " ").trim();
  const opts = [...this.options];
  const show = (o) => ({
    index: o.index,
    value: o.value.slice(0, textCap),
    label: norm(o.label).slice(0, textCap),
    ...(o.disabled ? { disabled: true } : {}),
  });
  const indexes = [];
  const missing = [];
  for (const w of wanted) {
    let hit = -1;
    if (by === "index") hit = Number.isInteger(w) && w >= 0 && w < opts.length ? w : -1;
    else if (by === "value") hit = opts.findIndex((o) => o.value === w);
    else hit = opts.findIndex((o) => norm(o.label) === norm(w));
    if (hit < 0) missing.push(w);
    else if (!indexes.includes(hit)) indexes.push(hit);
  }
  const disabled = indexes.filter((i) => opts[i].disabled || (opts[i].parentElement && opts[i].parentElement.tagName === "OPTGROUP" && opts[i].parentElement.disabled));
  return {
    indexes,
    missing,
    disabled: disabled.map((i) => show(opts[i])),
    sample: missing.length ? opts.slice(0, sampleCap).map(show) : [],
    total: opts.length,
  };
}`;

/** Selects exactly the given options, then fires input and change as a user's choice does. */
const APPLY_OPTIONS = `function(indexes) {
  const opts = [...this.options];
  if (this.multiple) for (const o of opts) o.selected = indexes.includes(o.index);
  else this.selectedIndex = indexes[0];
  this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
}`;

const READ_SELECTED = `function(textCap) {
  return [...this.selectedOptions].map((o) => ({
    index: o.index,
    value: o.value.slice(0, textCap),
    label: o.label.replace(/\\s+/g, " ").trim().slice(0, textCap),
  }));
}`;

/** Chooses options of a native <select> by value, label or index (several for a multi-select). */
export async function selectOption(
  env: ActionEnv,
  spec: TargetSpec,
  choice: OptionChoice,
  pageId?: string,
): Promise<Observation> {
  const startedMs = env.session.now();
  const page = usablePage(pageForTarget(env.session, spec, pageId));
  const target = elementOnly(await resolveTarget(env.session, spec, page.id), "select_option", "<select>");
  const kind = (await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: SELECT_KIND,
    returnByValue: true,
  })).result.value as {
    tag: string;
    type?: string;
    list: boolean;
    role: string | null;
    multiple: boolean;
    disabled: boolean;
    options: number;
  };
  if (kind.tag !== "select") {
    const described = (await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: describeElementSource,
      returnByValue: true,
    })).result.value;
    const custom = kind.role === "combobox" || kind.role === "listbox";
    throw new ToolError({
      code: "not_a_select",
      message: `select_option works on native <select> elements; the target is ${
        String(described).slice(0, 120)
      }.`,
      retry: "never",
      recovery: kind.list
        ? "This is a text input with a datalist: use fill with the option's text."
        : kind.type === "checkbox" || kind.type === "radio"
        ? "Use click to change a checkbox or radio button."
        : custom
        ? "This is a custom listbox: click it to open the list, then click the option (role option) by ref."
        : "Target the <select> itself (role combobox or listbox in snapshot_page); for a custom dropdown, click to open it, then click the option.",
      affected: { page_id: page.id, ref: target.ref },
    });
  }
  if (kind.disabled) {
    throw new ToolError({
      code: "not_editable",
      message: "The <select> is disabled.",
      retry: "after_recovery",
      recovery: "Wait until the field is enabled (or enable it through the page's own flow), then retry.",
      affected: { page_id: page.id, ref: target.ref },
    });
  }
  if (choice.values.length > 1 && !kind.multiple) {
    throw new ToolError({
      code: "invalid_arguments",
      message: `This <select> takes one option, but ${choice.values.length} were given.`,
      retry: "never",
      recovery: `Pass a single ${choice.by}; only <select multiple> accepts several.`,
      affected: { argument: choice.by, ref: target.ref },
    });
  }
  const match = (await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: MATCH_OPTIONS,
    arguments: [
      { value: choice.by },
      { value: choice.values },
      { value: OPTION_SAMPLE },
      { value: OPTION_TEXT_CAP },
    ],
    returnByValue: true,
  })).result.value as OptionMatch;
  assertOptionsMatched(page, target, match, choice.by);
  const shownTarget = { ref: target.ref, via: target.via };
  const params = { target: shownTarget, by: choice.by, option_indexes: match.indexes };
  const observation = await interact(env, page, "select_option", params, async () => {
    await page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: target.backendNodeId }).catch(() => {});
    // A change handler may open a dialog: sendInput returns when it opens instead of waiting on the
    // blocked renderer until the deadline.
    await page.sendInput("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: APPLY_OPTIONS,
      arguments: [{ value: match.indexes }],
    });
  }, startedMs);
  observation.structured.target = shownTarget;
  if (!page.dialog) {
    // The interaction released the targeting handles; read back through a fresh one.
    const selected = await readBack(page, target.backendNodeId, READ_SELECTED, [OPTION_TEXT_CAP]) as
      | Array<{ index: number; value: string; label: string }>
      | undefined;
    if (selected) {
      observation.structured.selected = selected;
      addLine(
        observation,
        `selected: ${selected.map((o) => JSON.stringify(o.label)).join(", ") || "(none)"}`,
      );
      const got = selected.map((o) => o.index).sort((a, b) => a - b).join(",");
      if (got !== [...match.indexes].sort((a, b) => a - b).join(",")) {
        addWarning(
          observation,
          "selection_differs: the page changed the selection after the choice (script)",
        );
      }
    }
  }
  return observation;
}

/** What an in-page option match found (select_option's MATCH_OPTIONS and fill_form's). */
export interface OptionMatch {
  indexes: number[];
  missing: Array<string | number>;
  disabled: Array<Record<string, unknown>>;
  sample: unknown[];
  total: number;
}

/**
 * The errors for options that are missing or disabled, shared by select_option and fill_form; `by` names
 * the argument the values came from (value, label, index), undefined for "value or label".
 */
export function assertOptionsMatched(
  page: PageTarget,
  target: { ref?: string },
  match: OptionMatch,
  by: string | undefined,
): void {
  const how = by ?? "value or label";
  if (match.missing.length > 0) {
    const shown = match.missing.slice(0, 5).map((m) =>
      JSON.stringify(typeof m === "string" ? m.slice(0, 60) : m)
    );
    throw new ToolError({
      code: "option_not_found",
      message: `No option with ${how} ${shown.join(", ")} in this <select> (${match.total} options).`,
      retry: "never",
      recovery: `Choose from details.available_options (by ${by ? "value, label or 0-based index" : how})${
        match.total > match.sample.length
          ? "; the list is a sample, snapshot_page expanded shows the rest"
          : ""
      }.`,
      affected: { page_id: page.id, ref: target.ref, ...(by ? { argument: by } : {}) },
      details: {
        ...(by ? { by } : {}),
        missing: match.missing.slice(0, 5),
        available_options: match.sample,
        total_options: match.total,
        omitted_options: Math.max(0, match.total - match.sample.length),
      },
    });
  }
  if (match.disabled.length > 0) {
    throw new ToolError({
      code: "option_disabled",
      message: `The option ${JSON.stringify(match.disabled[0].label)} is disabled and cannot be chosen.`,
      retry: "after_recovery",
      recovery: "Choose an enabled option, or wait until the page enables it.",
      affected: { page_id: page.id, ref: target.ref, ...(by ? { argument: by } : {}) },
      details: { disabled_options: match.disabled },
    });
  }
}
