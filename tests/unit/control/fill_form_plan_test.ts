import { assert, assertEquals } from "../../assert.ts";
import { type FieldInfo, isRefusal, planField } from "../../../src/control/fill_form_plan.ts";

const field = (kind: FieldInfo["kind"], type: string, extra: Partial<FieldInfo> = {}): FieldInfo => ({
  kind,
  type,
  disabled: false,
  readonly: false,
  multiple: false,
  described: `input#${type}`,
  ...extra,
});

function refusal(info: FieldInfo, value: string | boolean | string[]): string {
  const plan = planField(info, value);
  assert(isRefusal(plan), `refused: ${JSON.stringify(plan)}`);
  return plan.code;
}

Deno.test("fill_form plan: text-like fields are typed, native inputs set, both from strings only", () => {
  assertEquals(planField(field("text", "email"), "a@b.test"), { op: "type", text: "a@b.test" });
  assertEquals(planField(field("text", "textarea"), ""), { op: "type", text: "" });
  assertEquals(planField(field("editable", "div"), "hi"), { op: "type", text: "hi" });
  assertEquals(planField(field("native", "date"), "2026-03-14"), { op: "set_value", text: "2026-03-14" });
  assertEquals(planField(field("native", "date"), ""), { op: "set_value", text: "" }, "empty clears");
  assertEquals(planField(field("native", "color"), "#1A2b3c"), { op: "set_value", text: "#1A2b3c" });
  assertEquals(planField(field("text", "number"), "-1.5"), { op: "type", text: "-1.5" });
  assertEquals(refusal(field("text", "text"), true), "invalid_field_value");
  assertEquals(refusal(field("text", "text"), ["a"]), "invalid_field_value");
});

Deno.test("fill_form plan: native formats are checked before anything is dispatched", () => {
  for (
    const [type, bad] of [
      ["date", "04/12/1990"],
      ["date", "1990-4-12"],
      ["time", "9:30"],
      ["datetime-local", "2026-03-14 09:30"],
      ["month", "2026/03"],
      ["week", "2026-11"],
      ["color", "red"],
      ["color", ""],
      ["range", "lots"],
    ]
  ) {
    const plan = planField(field("native", type), bad);
    assert(isRefusal(plan), `${type} ${bad}`);
    assertEquals(plan.code, "invalid_field_value");
    assert(plan.recovery.includes("e.g."), `the format is named: ${plan.recovery}`);
  }
  assertEquals(refusal(field("text", "number"), "12abc"), "invalid_field_value");
  assertEquals(planField(field("native", "time"), "09:30:15"), { op: "set_value", text: "09:30:15" });
  assertEquals(planField(field("native", "week"), "2026-W11"), { op: "set_value", text: "2026-W11" });
});

Deno.test("fill_form plan: checkboxes and radios click only when the state differs", () => {
  const box = (checked: boolean) => field("checkbox", "checkbox", { checked });
  assertEquals(planField(box(false), true), { op: "toggle", checked: true, click: true });
  assertEquals(planField(box(true), true), { op: "toggle", checked: true, click: false });
  assertEquals(planField(box(true), false), { op: "toggle", checked: false, click: true });
  assertEquals(
    planField(box(false), "TRUE"),
    { op: "toggle", checked: true, click: true },
    "string booleans",
  );
  assertEquals(refusal(box(false), "yes"), "invalid_field_value");
  const radio = (checked: boolean) => field("radio", "radio", { checked });
  assertEquals(planField(radio(false), true), { op: "toggle", checked: true, click: true });
  assertEquals(planField(radio(true), true), { op: "toggle", checked: true, click: false });
  assertEquals(planField(radio(false), false), { op: "toggle", checked: false, click: false });
  assertEquals(refusal(radio(true), false), "invalid_field_value", "a radio cannot be unselected");
});

Deno.test("fill_form plan: selects take one option, several only when multiple", () => {
  assertEquals(planField(field("select", "select"), "fr"), { op: "select", wanted: ["fr"] });
  assertEquals(planField(field("select", "select"), ["fr"]), { op: "select", wanted: ["fr"] });
  assertEquals(refusal(field("select", "select"), ["ca", "fr"]), "invalid_field_value");
  assertEquals(planField(field("select", "select", { multiple: true }), ["ca", "fr"]), {
    op: "select",
    wanted: ["ca", "fr"],
  });
  assertEquals(refusal(field("select", "select"), true), "invalid_field_value");
});

Deno.test("fill_form plan: disabled, read-only, file and other targets are refused as not editable", () => {
  assertEquals(refusal(field("text", "text", { disabled: true }), "x"), "not_editable");
  assertEquals(refusal(field("text", "text", { readonly: true }), "x"), "not_editable");
  assertEquals(
    refusal(field("checkbox", "checkbox", { disabled: true, checked: false }), true),
    "not_editable",
  );
  assertEquals(refusal(field("file", "file"), "x"), "not_editable");
  assertEquals(refusal(field("other", "submit"), "x"), "not_editable");
  const plan = planField(field("text", "text", { disabled: true }), "x");
  assert(isRefusal(plan) && plan.retry === "after_recovery", "a disabled field may be enabled later");
});
