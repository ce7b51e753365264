/**
 * fill_form's pure decision: given what a field is (read from the page) and the value asked for,
 * what to do to it, or why the value cannot go there. No browser: unit-tested on its own.
 */

export type FieldValue = string | boolean | string[];

/** What the page says about a target element (FIELD_INFO in fill_form_page.ts). */
export interface FieldInfo {
  kind: "text" | "editable" | "native" | "select" | "checkbox" | "radio" | "file" | "other";
  /** The input's type (date, email, …), the tag otherwise. */
  type: string;
  disabled: boolean;
  readonly: boolean;
  multiple: boolean;
  checked?: boolean;
  /** A short description of the element (tag#id "text"), for errors. */
  described: string;
  /** A container (fieldset, role radiogroup): how many radios it holds. */
  radios?: number;
}

export type FieldPlan =
  | { op: "type"; text: string }
  | { op: "set_value"; text: string }
  | { op: "select"; wanted: string[] }
  | { op: "toggle"; checked: boolean; click: boolean };

export interface PlanRefusal {
  code: "not_editable" | "invalid_field_value";
  message: string;
  recovery: string;
  retry: "never" | "after_recovery";
}

/** Formats Chrome accepts for the value of each native input type (HTML's value sanitization). */
const NATIVE_FORMATS: Record<string, { re: RegExp; example: string }> = {
  date: { re: /^\d{4}-\d{2}-\d{2}$/, example: "YYYY-MM-DD, e.g. 2026-03-14" },
  time: { re: /^\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/, example: "HH:MM or HH:MM:SS, e.g. 09:30" },
  "datetime-local": {
    re: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/,
    example: "YYYY-MM-DDTHH:MM, e.g. 2026-03-14T09:30",
  },
  month: { re: /^\d{4}-\d{2}$/, example: "YYYY-MM, e.g. 2026-03" },
  week: { re: /^\d{4}-W\d{2}$/, example: "YYYY-Www, e.g. 2026-W11" },
  color: { re: /^#[0-9a-fA-F]{6}$/, example: "#rrggbb, e.g. #1a2b3c" },
  range: { re: /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i, example: "a number, e.g. 40" },
  number: { re: /^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i, example: "a number, e.g. 42 or -1.5" },
};

const ADVICE: Record<string, string> = {
  file: "Use upload_files for file inputs.",
  other: "Target an input, textarea, <select>, checkbox, radio or contenteditable element.",
};

function describe(value: FieldValue): string {
  if (typeof value === "boolean") return `the boolean ${value}`;
  if (Array.isArray(value)) return `a list of ${value.length}`;
  return "a string";
}

export function isBooleanText(value: string): boolean {
  return /^(true|false)$/i.test(value.trim());
}

/** A checkbox or radio also takes the strings "true" and "false", as the peers' form tools send them. */
function asBoolean(value: FieldValue): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && isBooleanText(value)) return value.trim().toLowerCase() === "true";
  return undefined;
}

function mismatch(info: FieldInfo, value: FieldValue, wants: string): PlanRefusal {
  return {
    code: "invalid_field_value",
    message: `The field is ${info.described} (${info.type}), which takes ${wants}, but the value is ${
      describe(value)
    }.`,
    recovery: `Give this field ${wants}, or target the field the value is meant for.`,
    retry: "never",
  };
}

export function planField(info: FieldInfo, value: FieldValue): FieldPlan | PlanRefusal {
  if (info.kind === "file" || info.kind === "other") {
    return {
      code: "not_editable",
      message: `The target is ${info.described}, which fill_form cannot fill (${info.kind}).`,
      recovery: ADVICE[info.kind],
      retry: "never",
    };
  }
  if (info.disabled || (info.readonly && info.kind !== "checkbox" && info.kind !== "radio")) {
    return {
      code: "not_editable",
      message: `The field ${info.described} is ${info.disabled ? "disabled" : "read-only"}.`,
      recovery: "Wait until the page enables the field (or enable it through its own flow), then retry.",
      retry: "after_recovery",
    };
  }
  switch (info.kind) {
    case "checkbox":
    case "radio": {
      const want = asBoolean(value);
      if (want === undefined) {
        return mismatch(
          info,
          value,
          info.kind === "radio" ? "true, or a radio's value or label" : "true or false",
        );
      }
      if (info.kind === "radio" && !want && info.checked) {
        return {
          code: "invalid_field_value",
          message: `The radio button ${info.described} is selected; a radio cannot be unselected by itself.`,
          recovery: "Select another radio button of the same group (value true) instead.",
          retry: "never",
        };
      }
      return { op: "toggle", checked: want, click: info.checked !== want };
    }
    case "select": {
      if (typeof value === "boolean") return mismatch(info, value, "an option's value or label");
      const wanted = Array.isArray(value) ? value : [value];
      if (wanted.length === 0) return mismatch(info, value, "at least one option");
      if (wanted.length > 1 && !info.multiple) {
        return mismatch(info, value, "one option (only <select multiple> takes several)");
      }
      return { op: "select", wanted };
    }
    case "native":
    case "text":
    case "editable": {
      if (typeof value !== "string") return mismatch(info, value, "a string");
      const format = NATIVE_FORMATS[info.type];
      // An empty value clears the field, except where the type has no empty value.
      const clearable = value === "" && info.type !== "color" && info.type !== "range";
      if (format && !clearable && !format.re.test(value)) {
        return {
          code: "invalid_field_value",
          message: `The ${info.type} field ${info.described} takes ${format.example}; ${
            JSON.stringify(value.slice(0, 40))
          } is not in that format.`,
          recovery: `Give the value as ${format.example}.`,
          retry: "never",
        };
      }
      return info.kind === "native" ? { op: "set_value", text: value } : { op: "type", text: value };
    }
  }
}

export function isRefusal(plan: FieldPlan | PlanRefusal): plan is PlanRefusal {
  return "code" in plan;
}
