/**
 * The in-page halves of fill_form: reading what a field is, matching and applying <select> options,
 * setting a native input's value and reading each field back. Called with Runtime.callFunctionOn on
 * the field's element.
 */

import { describeElementSource } from "./targeting.ts";

/** What a field is (FieldInfo in fill_form_plan.ts). A role=checkbox/radio/switch reads aria-checked. */
export const FIELD_INFO = `function() {
  const el = this;
  const tag = el.tagName ? el.tagName.toLowerCase() : "";
  const type = tag === "input" ? (el.type || "text").toLowerCase() : tag;
  const role = el.getAttribute ? el.getAttribute("role") : null;
  const aria = el.getAttribute ? el.getAttribute("aria-checked") : null;
  let kind = "other";
  let checked;
  if (tag === "select") kind = "select";
  else if (tag === "textarea") kind = "text";
  else if (tag === "input") {
    if (type === "checkbox" || type === "radio") { kind = type; checked = el.checked; }
    else if (type === "file") kind = "file";
    else if (["button", "submit", "reset", "image", "hidden"].includes(type)) kind = "other";
    else if (["date", "time", "datetime-local", "month", "week", "color", "range"].includes(type)) kind = "native";
    else kind = "text";
  } else if (aria !== null && ["checkbox", "switch", "menuitemcheckbox", "radio", "menuitemradio"].includes(role)) {
    kind = role.endsWith("radio") ? "radio" : "checkbox";
    checked = aria === "true";
  } else if (el.isContentEditable) kind = "editable";
  const radios = kind === "other" && el.querySelectorAll ? el.querySelectorAll("input[type=radio], [role=radio]").length : 0;
  return {
    kind,
    type: aria !== null && role && kind !== "other" && tag !== "input" ? role : type,
    disabled: !!el.disabled || !!(el.matches && el.matches(":disabled")) || el.getAttribute?.("aria-disabled") === "true",
    readonly: !!el.readOnly || el.getAttribute?.("aria-readonly") === "true",
    multiple: tag === "select" && !!el.multiple,
    ...(checked === undefined ? {} : { checked }),
    ...(radios > 0 ? { radios } : {}),
    described: (${describeElementSource}).call(el),
  };
}`;

export const SELECT_ALL = `function() {
  if (typeof this.select === "function") { this.select(); return; }
  const range = document.createRange();
  range.selectNodeContents(this);
  const sel = getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}`;

/** Sets a date/time/color/range value the way the browser's own picker commits it. */
export const SET_NATIVE_VALUE = `function(value) {
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  setter.call(this, value);
  this.dispatchEvent(new Event("input", { bubbles: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
}`;

/** Finds each wanted option by value, then by label; on a miss returns a bounded sample of what exists. */
export const MATCH_OPTIONS = `function(wanted, sampleCap, textCap) {
  const norm = (s) => String(s).replace(/\\s+/g, " ").trim();
  const opts = [...this.options];
  const show = (o) => ({ index: o.index, value: o.value.slice(0, textCap), label: norm(o.label).slice(0, textCap) });
  const indexes = [];
  const missing = [];
  const disabled = [];
  for (const w of wanted) {
    let hit = opts.findIndex((o) => o.value === w);
    if (hit < 0) hit = opts.findIndex((o) => norm(o.label) === norm(w));
    if (hit < 0) { missing.push(w); continue; }
    const o = opts[hit];
    if (o.disabled || (o.parentElement && o.parentElement.tagName === "OPTGROUP" && o.parentElement.disabled)) {
      disabled.push(show(o));
    } else if (!indexes.includes(hit)) indexes.push(hit);
  }
  return { indexes, missing, disabled, sample: missing.length ? opts.slice(0, sampleCap).map(show) : [], total: opts.length };
}`;

/** Selects exactly the given options, then fires input and change as a user's choice does. */
export const APPLY_OPTIONS = `function(indexes) {
  if (this.multiple) for (const o of this.options) o.selected = indexes.includes(o.index);
  else this.selectedIndex = indexes[0];
  this.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
  this.dispatchEvent(new Event("change", { bubbles: true }));
}`;

/** The field's state after the fill: a value, the selected labels, or whether it is checked. */
export const READ_FIELD = `function(textCap) {
  const el = this;
  if (el.tagName === "SELECT") {
    return { selected: [...el.selectedOptions].map((o) => o.label.replace(/\\s+/g, " ").trim().slice(0, textCap)) };
  }
  if (el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "radio")) return { checked: el.checked };
  const aria = el.getAttribute ? el.getAttribute("aria-checked") : null;
  if (aria !== null && el.tagName !== "INPUT") return { checked: aria === "true" };
  if ("value" in el && typeof el.value === "string") return { value: el.value };
  return { value: el.innerText };
}`;

/** The first label of a control with a box to click (null when none): it toggles the control. */
export const FIRST_LABEL = `function() {
  for (const l of this.labels || []) if (l.getClientRects().length > 0) return l;
  return null;
}`;

/**
 * The radio of a group a string names (its value, then its label text), or, when none does, the
 * group's choices as an array. `this` is a radio (its group: same name, same form) or a container.
 */
export const PICK_RADIO = `function(wanted, textCap) {
  const norm = (s) => String(s || "").replace(/\\s+/g, " ").trim();
  let radios;
  if (this.tagName === "INPUT" && this.type === "radio") {
    const root = this.form || this.getRootNode();
    radios = this.name
      ? [...root.querySelectorAll("input[type=radio]")].filter((r) => r.name === this.name && r.form === this.form)
      : [this];
  } else radios = [...this.querySelectorAll("input[type=radio], [role=radio]")];
  const labelOf = (r) => r.labels && r.labels.length
    ? norm([...r.labels].map((l) => l.innerText).join(" "))
    : norm(r.getAttribute("aria-label") || r.innerText);
  const hit = radios.find((r) => r.tagName === "INPUT" && r.value === wanted) ||
    radios.find((r) => labelOf(r) === norm(wanted));
  return hit || radios.map((r) => ({ value: String(r.value || "").slice(0, textCap), label: labelOf(r).slice(0, textCap) }));
}`;
