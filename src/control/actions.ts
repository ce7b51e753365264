import { phase } from "../phase_timing.ts";
import { SELECT_ALL } from "./fill_form_page.ts";
import {
  dispatchChord,
  dispatchClick,
  type Modifier,
  type MouseButton,
  parseChord,
} from "../browser/input.ts";
import { ToolError } from "../errors.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import { pageForTarget, type ResolvedTarget, resolveTarget, type TargetSpec } from "./targeting.ts";
import { pointOf } from "./pointer.ts";
import type { ElementTarget } from "./element_action.ts";
import type { PageTarget } from "../browser/targets.ts";
import { hitText, inspectPoint, namedNode, type PointHit, settleHit } from "./hit.ts";
import type { Observation } from "./observation.ts";
import { noteHttpStatus } from "./navigation.ts";
import { hitNote, nothingChanged, type Postconditions } from "./postconditions.ts";

export interface ClickOptions {
  button: MouseButton;
  click_count: number;
  modifiers: Modifier[];
}

export async function click(env: ActionEnv, spec: TargetSpec, opts: ClickOptions, pageId?: string) {
  const startedMs = env.session.now();
  const page = usablePage(pageForTarget(env.session, spec, pageId));
  await phase("ensure_visible", () => env.session.ensureVisible(page));
  const target = await phase("resolve_target", () => resolveTarget(env.session, spec, page.id));
  const point = await phase("point_of", () => pointOf(page, target, "click"));
  // What the pointer lands on: always named for x/y; for a disabled element, to say nothing changed.
  const hit = target.kind === "point" || point.disabled
    ? await inspectPoint(page, point.x, point.y)
    : undefined;
  const params = {
    target: target.kind === "element" ? { ref: target.ref, via: target.via } : point,
    ...opts,
  };
  const observation = await interact(
    env,
    page,
    "click",
    params,
    async () => {
      await dispatchClick(page, point.x, point.y, {
        button: opts.button,
        clickCount: opts.click_count,
        modifiers: opts.modifiers,
      });
    },
    startedMs,
    target.kind === "element" ? { backendNodeId: target.backendNodeId } : undefined,
  );
  observation.structured.target = target.kind === "element" ? { ref: target.ref, via: target.via } : point;
  if (hit) await reportHit(page, observation, hit);
  await phase("http_status", () => noteHttpStatus(page, observation));
  return observation;
}

/** Adds the hit and, when the click probably missed what was meant, the one conservative note. */
async function reportHit(page: PageTarget, observation: Observation, hit: PointHit): Promise<void> {
  const pc = observation.structured.postconditions as Postconditions | undefined;
  if (!pc) return;
  const mutations = hit.watching ? await settleHit(page) : undefined;
  pc.hit = hit.hit;
  const note = pc.note ? undefined : hitNote(hit.hit, hit.kind, nothingChanged(pc, mutations));
  if (note) pc.note = note;
  const facts = `hit ${hitText(hit.hit)}${note ? `; note: ${note}` : ""}`;
  const lines = observation.text.split("\n");
  const at = lines.findIndex((l) => l.startsWith("postconditions: "));
  if (at >= 0) lines[at] += `; ${facts}`;
  else lines.push(`postconditions: ${facts}`);
  observation.text = lines.join("\n");
}

const FIELD_KIND = `function() {
  const el = this;
  const tag = el.tagName ? el.tagName.toLowerCase() : "";
  const disabled = !!el.disabled || el.getAttribute?.("aria-disabled") === "true";
  const readonly = !!el.readOnly || el.getAttribute?.("aria-readonly") === "true";
  if (tag === "select") return { kind: "select", disabled, readonly };
  if (tag === "textarea") return { kind: "text", disabled, readonly };
  if (tag === "input") {
    const t = (el.type || "text").toLowerCase();
    if (["checkbox", "radio"].includes(t)) return { kind: "toggle", disabled, readonly };
    if (t === "file") return { kind: "file", disabled, readonly };
    if (["button", "submit", "reset", "image", "hidden"].includes(t)) return { kind: "other", disabled, readonly };
    if (["date", "time", "datetime-local", "month", "week", "color", "range"].includes(t)) return { kind: "native", disabled, readonly };
    return { kind: "text", disabled, readonly };
  }
  if (el.isContentEditable) return { kind: "editable", disabled, readonly };
  return { kind: "other", disabled, readonly };
}`;

/**
 * Scrolled into view if needed, focused, its content selected: one round trip before the typing. Says
 * whether focus landed (an inert or otherwise unfocusable field is left to DOM.focus to refuse).
 */
const PREPARE_TYPING = `function() {
  if (typeof this.scrollIntoViewIfNeeded === "function") this.scrollIntoViewIfNeeded(true);
  else this.scrollIntoView({ block: "center", inline: "center" });
  this.focus({ preventScroll: true });
  if (this.getRootNode().activeElement !== this) return false;
  if (typeof this.select === "function") { this.select(); return true; }
  const range = document.createRange();
  range.selectNodeContents(this);
  const sel = getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return true;
}`;

const SET_NATIVE_VALUE = `function(value) {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  setter.call(this, value);
  this.dispatchEvent(new Event("input", { bubbles: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
  return this.value;
}`;

const FILL_ADVICE: Record<string, string> = {
  select: "Use select_option for <select> elements.",
  toggle: "Use click to change a checkbox or radio button.",
  file: "Use upload_files for file inputs.",
  other: "Target a text input, textarea or contenteditable element.",
};

interface FieldKind {
  kind: string;
  disabled: boolean;
  readonly: boolean;
}

async function fieldKind(page: PageTarget, objectId: string): Promise<FieldKind> {
  const { result } = await page.send("Runtime.callFunctionOn", {
    objectId,
    functionDeclaration: FIELD_KIND,
    returnByValue: true,
  });
  return result.value as FieldKind;
}

/** Says what the match is (role and name), so a button matched by mistake is named as one. */
async function notEditable(
  page: PageTarget,
  target: ElementTarget,
  field: FieldKind,
  noMatch?: string,
): Promise<ToolError> {
  const matched = await namedNode(page, target.backendNodeId);
  const what = matched
    ? `${matched.role}${matched.name ? ` ${JSON.stringify(matched.name)}` : ""}`
    : "an element";
  return new ToolError({
    code: "not_editable",
    message: noMatch
      ? `${noMatch} The element showing that text is ${what}, which is not a fillable field (${field.kind}).`
      : field.disabled
      ? `The field (${what}) is disabled.`
      : field.readonly
      ? `The field (${what}) is read-only.`
      : `fill matched ${what}, which is not a fillable field (${field.kind}).`,
    retry: field.disabled || field.readonly ? "after_recovery" : "never",
    recovery: FILL_ADVICE[field.kind] ?? "Wait until the field is enabled, then retry.",
    affected: { page_id: page.id, ref: target.ref },
    ...(matched ? { details: { matched } } : {}),
  });
}

/**
 * Resolves fill's target. A label or role+name locator that matches no field, while exactly one
 * element shows that text (typically a button), reports that element rather than a bare no-match.
 */
async function resolveFillTarget(
  env: ActionEnv,
  spec: TargetSpec,
  page: PageTarget,
): Promise<ResolvedTarget> {
  try {
    return await resolveTarget(env.session, spec, page.id);
  } catch (err) {
    const key = spec.locator?.label ?? (spec.locator?.role !== undefined ? spec.locator.name : undefined);
    if (!(err instanceof ToolError) || err.code !== "locator_no_match" || !key) throw err;
    const shown = await resolveTarget(
      env.session,
      { locator: { text: key, exact: spec.locator?.exact } },
      page.id,
    )
      .catch(() => undefined);
    if (shown?.kind !== "element") throw err;
    const field = await fieldKind(page, shown.objectId);
    if (!FILL_ADVICE[field.kind]) throw err;
    throw await notEditable(page, shown, field, err.message);
  }
}

export async function fill(env: ActionEnv, spec: TargetSpec, value: string, pageId?: string) {
  const startedMs = env.session.now();
  const page = usablePage(pageForTarget(env.session, spec, pageId));
  const target = await phase("resolve_target", () => resolveFillTarget(env, spec, page));
  if (target.kind !== "element") {
    throw new ToolError({
      code: "invalid_target",
      message: "fill needs an element (ref, locator or selector), not coordinates.",
      retry: "never",
      recovery: 'Pass the field\'s ref from snapshot_page, or a locator like {"label": "Email"}.',
    });
  }
  const field = await phase("field_kind", () => fieldKind(page, target.objectId));
  if (FILL_ADVICE[field.kind] || field.disabled || field.readonly) {
    throw await notEditable(page, target, field);
  }
  const params = { target: { ref: target.ref, via: target.via }, value_length: value.length };
  // Read back inside dispatch: the element handle is released once the interaction completes.
  let readBack: { result: { value?: unknown } } | undefined;
  const checkValue = field.kind === "text" || field.kind === "native";
  const readValue = () =>
    page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: "function() { return this.value; }",
      returnByValue: true,
    }).catch(() => undefined);
  const observation = await interact(
    env,
    page,
    "fill",
    params,
    async () => {
      if (field.kind === "native") {
        await page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: target.backendNodeId }).catch(
          () => {},
        );
        // An input/change handler may open a dialog: sendInput returns when it opens.
        await page.sendInput("Runtime.callFunctionOn", {
          objectId: target.objectId,
          functionDeclaration: SET_NATIVE_VALUE,
          arguments: [{ value }],
        });
        if (checkValue && !page.dialog) readBack = await readValue();
        return;
      }
      const prepared = await page.send("Runtime.callFunctionOn", {
        objectId: target.objectId,
        functionDeclaration: PREPARE_TYPING,
        returnByValue: true,
      });
      // Not focusable after all: DOM.focus says why, as the tool always has.
      if (prepared.result.value !== true) {
        await page.send("DOM.focus", { backendNodeId: target.backendNodeId });
        await page.send("Runtime.callFunctionOn", {
          objectId: target.objectId,
          functionDeclaration: SELECT_ALL,
        });
      }
      if (value.length === 0) await dispatchChord(page, parseChord("Delete"));
      else await page.sendInput("Input.insertText", { text: value });
      if (checkValue && !page.dialog) readBack = await readValue();
    },
    startedMs,
    { backendNodeId: target.backendNodeId },
  );
  const held = (readBack as { result: { value?: unknown } } | undefined)?.result.value;
  if (readBack !== undefined && held !== value) {
    const warnings = (observation.structured.warnings as string[] | undefined) ?? [];
    warnings.push(
      "value_differs: the field holds a different value than requested (maxlength, mask or script)",
    );
    observation.structured.warnings = warnings;
  }
  observation.structured.target = { ref: target.ref, via: target.via };
  return observation;
}

export async function pressKeys(
  env: ActionEnv,
  keys: string[],
  spec: TargetSpec | undefined,
  pageId?: string,
) {
  const startedMs = env.session.now();
  const chords = keys.map(parseChord);
  const page = usablePage(spec ? pageForTarget(env.session, spec, pageId) : env.session.page(pageId));
  const target = spec ? await resolveTarget(env.session, spec, page.id) : undefined;
  if (target && target.kind !== "element") {
    throw new ToolError({
      code: "invalid_target",
      message: "press_keys focuses an element (ref, locator or selector), not coordinates.",
      retry: "never",
      recovery: "Omit the target to type into the focused element, or pass a ref.",
    });
  }
  const params = { keys, ...(target ? { target: { ref: target.ref, via: target.via } } : {}) };
  const observation = await interact(env, page, "press_keys", params, async () => {
    if (target) await page.send("DOM.focus", { backendNodeId: target.backendNodeId });
    for (const chord of chords) await dispatchChord(page, chord);
  }, startedMs);
  await noteHttpStatus(page, observation);
  return observation;
}
