import { dispatchChord, dispatchClick, parseChord } from "../browser/input.ts";
import type { PageTarget } from "../browser/targets.ts";
import { storedUrl } from "../browser/url_redaction.ts";
import { asToolError, ToolError } from "../errors.ts";
import type { ActionRequests } from "./action_requests.ts";
import { elementOnly, type ElementTarget } from "./element_action.ts";
import {
  type FieldInfo,
  type FieldPlan,
  type FieldValue,
  isBooleanText,
  isRefusal,
  planField,
} from "./fill_form_plan.ts";
import { APPLY_OPTIONS, FIELD_INFO, SELECT_ALL, SET_NATIVE_VALUE } from "./fill_form_page.ts";
import { matchOptions, pickRadio, type ReadBack, readField, togglePoint } from "./fill_form_field.ts";
import { type ActionEnv, anchoredFailure, usablePage } from "./interaction.ts";
import {
  type ActionContext,
  addLine,
  beginAction,
  type InteractionRecord,
  type Observation,
  observe,
} from "./observation.ts";
import { pageForTarget, releaseTargeting, resolveTarget, type TargetSpec } from "./targeting.ts";
import { interactionRow } from "./timeline.ts";

/**
 * fill_form: several fields in one call. Each field is its own interaction record (its own
 * interaction_id on the timeline, persisted as soon as it is done); the observation (settle,
 * screenshot, snapshot) is taken once, after the last field, on the last field's record. A field that
 * fails stops the form there: the fields before it stay filled and recorded, and the error names it.
 */

export const MAX_FORM_FIELDS = 50;

export interface FormField {
  spec: TargetSpec;
  value: FieldValue;
}

export interface FilledField {
  index: number;
  interaction_id: string;
  /** The input type (text, email, date, checkbox, …) or select / textarea / contenteditable. */
  kind: string;
  target: { ref: string; via: string };
  /** Text-like fields: the length of the value typed (values are not echoed). */
  value_length?: number;
  selected?: string[];
  checked?: boolean;
  /** Checkbox and radio: whether a click was needed (false when it already had that state). */
  clicked?: boolean;
  warnings?: string[];
}

interface Step {
  ctx: ActionContext;
  filled: FilledField;
}

export async function fillForm(env: ActionEnv, fields: FormField[], pageId?: string): Promise<Observation> {
  if (fields.length === 0 || fields.length > MAX_FORM_FIELDS) {
    throw new ToolError({
      code: "invalid_arguments",
      message: `fill_form takes 1 to ${MAX_FORM_FIELDS} fields; ${fields.length} were given.`,
      retry: "never",
      recovery: `Split the form into calls of at most ${MAX_FORM_FIELDS} fields.`,
      affected: { argument: "fields" },
      details: { actual: fields.length, limit: MAX_FORM_FIELDS },
    });
  }
  const formStartedMs = env.session.now();
  const filled: FilledField[] = [];
  let page: PageTarget | undefined;
  // One request watch for the whole form, armed at the first dispatch: the final settle waits for
  // requests any field started.
  let requests: ActionRequests | undefined;
  let before: ActionContext["before"] | undefined;
  let last: Step | undefined;
  try {
    for (const [index, field] of fields.entries()) {
      const step = await fillOne(env, field, index, page?.id ?? pageId, filled).catch((err: unknown) => {
        throw stopped(err, index, fields.length, filled, page?.id);
      });
      page = step.ctx.page;
      if (!requests) {
        requests = step.ctx.requests;
        before = step.ctx.before;
      } else step.ctx.requests.stop();
      filled.push(step.filled);
      if (index < fields.length - 1) {
        env.persist?.(interactionRow(step.ctx.record));
        clearActive(env, step.ctx.record);
      } else last = step;
    }
    if (!last || !page || !requests || !before) throw new Error("fill_form finished without a field");
    // The observation covers the whole form: its navigation and new pages count from the first field.
    last.ctx.requests = requests;
    last.ctx.before = before;
    const observation = await observe(last.ctx, {
      store: env.store,
      detail: env.detail,
      inlineImage: env.inlineImage,
      frames: env.frames,
    });
    env.persist?.(interactionRow(storable(last.ctx.record)));
    releaseTargeting(page);
    return formObservation(observation, filled, env.session.now() - formStartedMs);
  } finally {
    requests?.stop();
    if (last) clearActive(env, last.ctx.record);
  }
}

async function fieldInfo(page: PageTarget, target: ElementTarget): Promise<FieldInfo> {
  return (await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: FIELD_INFO,
    returnByValue: true,
  })).result.value as FieldInfo;
}

function clearActive(env: ActionEnv, record: InteractionRecord): void {
  if (env.session.activeInteractionId === record.interaction_id) env.session.activeInteractionId = undefined;
}

/** Resolves, checks and fills one field inside its own interaction record (not observed). */
async function fillOne(
  env: ActionEnv,
  field: FormField,
  index: number,
  pageId: string | undefined,
  filled: FilledField[],
): Promise<Step> {
  const startedMs = env.session.now();
  // Every field acts on one page: a ref of another page fails as a ref/page mismatch.
  const page = usablePage(pageForTarget(env.session, field.spec, pageId));
  try {
    let target = elementOnly(await resolveTarget(env.session, field.spec, page.id), "fill_form", "field");
    let info = await fieldInfo(page, target);
    let value = field.value;
    // A string for a radio (or a group of radios) names the radio to select, by value or label.
    if (
      typeof value === "string" && !isBooleanText(value) && (info.kind === "radio" || (info.radios ?? 0) > 0)
    ) {
      target = await pickRadio(env.session, page, target, value);
      info = await fieldInfo(page, target);
      value = true;
    }
    const plan = planField(info, value);
    if (isRefusal(plan)) {
      throw new ToolError({
        code: plan.code,
        message: plan.message,
        retry: plan.retry,
        recovery: plan.recovery,
        affected: { page_id: page.id, ref: target.ref },
        details: { kind: info.kind, type: info.type },
      });
    }
    const optionIndexes = plan.op === "select" ? await matchOptions(page, target, plan.wanted) : undefined;
    let point: { x: number; y: number } | undefined;
    if (plan.op === "toggle" && plan.click) {
      await env.session.ensureVisible(page);
      point = await togglePoint(page, target);
    }
    const shown = { ref: target.ref, via: target.via };
    const ctx = beginAction(env.session, page, "fill_form", {
      field: index,
      kind: info.type,
      target: shown,
      ...(plan.op === "type" || plan.op === "set_value" ? { value_length: plan.text.length } : {}),
      ...(optionIndexes ? { option_indexes: optionIndexes } : {}),
      ...(plan.op === "toggle" ? { checked: plan.checked, clicked: plan.click } : {}),
    });
    ctx.record.started_ms = startedMs;
    env.session.activeInteractionId = ctx.record.interaction_id;
    if (filled.length === 0) ctx.requests.arm();
    try {
      await dispatch(page, target, plan, optionIndexes, point);
      ctx.record.dispatched_ms = env.session.now();
    } catch (err) {
      const failure = asToolError(err);
      ctx.record.outcome = "failed";
      ctx.record.error_code = failure.code;
      ctx.record.completed_ms = env.session.now();
      env.persist?.(interactionRow(ctx.record));
      clearActive(env, ctx.record);
      ctx.requests.stop();
      throw anchoredFailure(failure, page.id, ctx.record.interaction_id);
    }
    const after = page.dialog ? undefined : await readField(page, target);
    ctx.record.completed_ms = env.session.now();
    return { ctx, filled: filledField(index, ctx.record.interaction_id, info, shown, plan, after) };
  } finally {
    releaseTargeting(page);
  }
}

async function dispatch(
  page: PageTarget,
  target: ElementTarget,
  plan: FieldPlan,
  optionIndexes: number[] | undefined,
  point: { x: number; y: number } | undefined,
): Promise<void> {
  // A handler may open a dialog (alert on change, on focus): sendInput returns when one opens instead of
  // waiting on the blocked renderer, and true stops the rest of this field's dispatch.
  const on = (functionDeclaration: string, args: unknown[] = []) =>
    page.sendInput("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration,
      arguments: args.map((value) => ({ value })),
    });
  const scroll = () =>
    page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: target.backendNodeId }).catch(() => {});
  switch (plan.op) {
    case "toggle":
      if (point) {
        await dispatchClick(page, point.x, point.y, { button: "left", clickCount: 1, modifiers: [] });
      }
      return;
    case "select":
      await scroll();
      await on(APPLY_OPTIONS, [optionIndexes ?? []]);
      return;
    case "set_value":
      await scroll();
      await on(SET_NATIVE_VALUE, [plan.text]);
      return;
    case "type":
      // As fill types: focus, select what is there, insert the text (or delete for an empty value).
      await scroll();
      if (await page.sendInput("DOM.focus", { backendNodeId: target.backendNodeId })) return;
      if (await on(SELECT_ALL)) return;
      if (plan.text.length === 0) await dispatchChord(page, parseChord("Delete"));
      else await page.sendInput("Input.insertText", { text: plan.text });
      return;
  }
}

function filledField(
  index: number,
  interactionId: string,
  info: FieldInfo,
  target: { ref: string; via: string },
  plan: FieldPlan,
  after: ReadBack | undefined,
): FilledField {
  const out: FilledField = { index, interaction_id: interactionId, kind: info.type, target };
  const warnings: string[] = [];
  if (plan.op === "toggle") {
    out.checked = after?.checked ?? plan.checked;
    out.clicked = plan.click;
    if (after?.checked !== undefined && after.checked !== plan.checked) {
      warnings.push(
        "checked_differs: the control's state is not the one requested (the page changed it back)",
      );
    }
  } else if (plan.op === "select") {
    if (after?.selected) out.selected = after.selected;
  } else {
    out.value_length = plan.text.length;
    if (info.kind !== "editable" && after?.value !== undefined && after.value !== plan.text) {
      warnings.push(
        "value_differs: the field holds a different value than requested (maxlength, mask or script)",
      );
    }
  }
  if (warnings.length > 0) out.warnings = warnings;
  return out;
}

/** The error of the field that stopped the form: its index, and what was filled before it. */
function stopped(
  err: unknown,
  index: number,
  total: number,
  filled: FilledField[],
  pageId: string | undefined,
): ToolError {
  const failure = asToolError(err);
  const done = filled.length === 0
    ? "Nothing was filled."
    : `${index === 1 ? "Field 0 was" : `Fields 0-${index - 1} were`} filled (${
      filled.map((f) => f.interaction_id).join(", ")
    }); ${index === 1 ? "it stays" : "they stay"} filled.`;
  return new ToolError({
    code: failure.code,
    message: `fill_form stopped at field ${index} of ${total}: ${failure.message}`,
    retry: failure.retry,
    recovery: `${failure.recovery ? `${failure.recovery} ` : ""}${done} Retry with fields[${index}] onward.`,
    affected: {
      ...failure.affected,
      ...(pageId && !failure.affected?.page_id ? { page_id: pageId } : {}),
      argument: `fields.${index}`,
    },
    details: {
      ...failure.details,
      field_index: index,
      filled: filled.map((f) => ({ index: f.index, interaction_id: f.interaction_id, kind: f.kind })),
      not_attempted: total - index - 1,
    },
  });
}

/** The stored-URL treatment of the navigation an action reached, in place (as interact does). */
function storable(record: InteractionRecord): InteractionRecord {
  if (record.navigation) record.navigation.url = storedUrl(record.navigation.url).url;
  return record;
}

function formObservation(obs: Observation, filled: FilledField[], elapsedMs: number): Observation {
  obs.structured.fields = filled;
  const first = filled[0]?.interaction_id;
  const lastId = filled[filled.length - 1]?.interaction_id;
  const lines = obs.text.split("\n");
  lines[0] = lines[0].replace(
    /^fill_form (\S+) \(([^)]*)\) in \d+ ms/,
    (_m, status: string) =>
      `fill_form ${status}: ${filled.length} field(s) (${
        first === lastId ? first : `${first}..${lastId}`
      }) in ${Math.round(elapsedMs)} ms`,
  );
  obs.text = lines.join("\n");
  for (const f of [...filled].reverse()) addLine(obs, fieldLine(f));
  return obs;
}

function fieldLine(f: FilledField): string {
  const state = f.checked !== undefined
    ? `${f.checked ? "checked" : "unchecked"}${f.clicked ? "" : " (already)"}`
    : f.selected
    ? `selected ${f.selected.map((s) => JSON.stringify(s)).join(", ") || "(none)"}`
    : `${f.value_length} chars`;
  return `  [${f.index}] ${f.kind} ${f.target.ref} ${f.interaction_id}: ${state}${
    f.warnings ? `; ${f.warnings.join("; ")}` : ""
  }`;
}
