import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

interface Filled {
  index: number;
  interaction_id: string;
  kind: string;
  target: { ref: string; via: string };
  checked?: boolean;
  clicked?: boolean;
  selected?: string[];
  value_length?: number;
}

/** Every file under the data dir's evidence/screenshots folders (the observation screenshots). */
async function screenshots(dir: string): Promise<number> {
  let count = 0;
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) count += await screenshots(path);
    else if (entry.isFile && dir.endsWith("screenshots")) count++;
  }
  return count;
}

async function formValues(server: ServerHandle): Promise<Record<string, unknown>> {
  return structured(await server.call("evaluate_page", { expression: "formValues()" })).value as Record<
    string,
    unknown
  >;
}

Deno.test({
  name: "fill_form: five field kinds in one call, one interaction per field, one observation",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/forms/signup.html` });
      const shotsBefore = await screenshots(server.dataDir);

      const result = await server.call("fill_form", {
        fields: [
          { locator: { label: "Full name" }, value: "Ada Lovelace" },
          { selector: "#country", value: "France" },
          { selector: "#news", value: true },
          { locator: { role: "radio", name: "Pro" }, value: true },
          { selector: "#birthday", value: "1990-04-12" },
          { selector: "#terms", value: "true" },
          { selector: "#notes", value: "line one\nline two" },
          { selector: "#remember", value: true },
        ],
      });
      assert(!result.isError, textOf(result));
      const out = structured(result);
      assertEquals(out.status, "ok");
      const fields = out.fields as Filled[];
      assertEquals(fields.map((f) => f.kind), [
        "text",
        "select",
        "checkbox",
        "radio",
        "date",
        "checkbox",
        "textarea",
        "checkbox",
      ]);
      const ids = fields.map((f) => f.interaction_id);
      assertEquals(new Set(ids).size, fields.length, `one interaction per field: ${ids}`);
      assertEquals(out.interaction_id, ids[ids.length - 1], "the observation is the last field's");
      assertEquals(fields[1].selected, ["France"]);
      assertEquals([fields[2].checked, fields[2].clicked], [true, true]);
      assertEquals([fields[3].checked, fields[3].clicked], [true, true]);
      assertEquals([fields[5].checked, fields[5].clicked], [true, false], "already checked: no click");
      assertEquals(fields[0].value_length, "Ada Lovelace".length);

      // One observation: one screenshot written, one snapshot in the result.
      assert(out.screenshot, "the final observation has a screenshot");
      assert(out.snapshot, "the final observation has a snapshot");
      assertEquals(await screenshots(server.dataDir) - shotsBefore, 1, "one screenshot for the whole form");

      // The page saw every value, through the events a user's edit fires.
      assertEquals(await formValues(server), {
        name: "Ada Lovelace",
        email: "",
        country: "fr",
        news: true,
        terms: true,
        remember: true,
        plan: "pro",
        birthday: "1990-04-12",
        notes: "line one\nline two",
      });
      const seen = structured(await server.call("evaluate_page", { expression: "seen" })).value as Array<
        { type: string; id: string; trusted: boolean }
      >;
      for (const id of ["name", "country", "news", "plan-pro", "birthday", "notes"]) {
        assert(
          seen.some((e) => e.id === id && e.type === "input"),
          `input event on #${id}: ${JSON.stringify(seen)}`,
        );
      }
      assert(
        seen.some((e) => e.id === "news" && e.type === "change" && e.trusted),
        "the checkbox was clicked",
      );
      assert(!seen.some((e) => e.id === "terms"), "the already-checked box was left alone");
      assert(
        seen.some((e) => e.id === "remember" && e.type === "change" && e.trusted),
        "the clipped checkbox was toggled through its label",
      );

      // Each field's interaction is on the timeline as its own anchor.
      for (const id of ids) {
        const events = await server.call("query_browser_events", { interaction_id: id, max_events: 1 });
        assert(!events.isError, `${id} is a recorded interaction: ${textOf(events)}`);
      }

      // Unchecking clicks only the boxes that differ; a string picks a radio of a group by value or label.
      const again = structured(
        await server.call("fill_form", {
          fields: [
            { selector: "#news", value: false },
            { selector: "#terms", value: false },
            { selector: "#plan-pro", value: true },
            { locator: { role: "group", name: "Plan" }, value: "Basic" },
            { selector: "#plan-basic", value: "pro" },
          ],
        }),
      );
      const refilled = again.fields as Filled[];
      assertEquals(
        refilled.map((f) => [f.checked, f.clicked]),
        [[false, true], [false, true], [true, false], [true, true], [true, true]],
      );
      assert(refilled[3].target.ref !== refilled[4].target.ref, "each pick names the radio it selected");
      const values = await formValues(server);
      assertEquals([values.news, values.terms, values.plan], [false, false, "pro"]);
    }, { browser: {} }),
});

Deno.test({
  name: "fill_form: a failing field stops the form, names its index and keeps what was filled",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/forms/signup.html` });

      const disabledOption = await server.call("fill_form", {
        fields: [
          { selector: "#email", value: "ada@example.test" },
          { selector: "#country", value: "Japan" },
          { selector: "#name", value: "never typed" },
        ],
      });
      assertEquals(errorCode(disabledOption), "option_disabled");
      const error = structured(disabledOption).error as {
        message: string;
        affected: { argument: string };
        details: {
          field_index: number;
          filled: Array<{ index: number; interaction_id: string }>;
          not_attempted: number;
        };
      };
      assertEquals(error.details.field_index, 1);
      assertEquals(error.affected.argument, "fields.1");
      assertEquals(error.details.filled.map((f) => f.index), [0]);
      assertEquals(error.details.not_attempted, 1);
      assert(error.message.includes("field 1"), error.message);
      const filledId = error.details.filled[0].interaction_id;
      const recorded = await server.call("query_browser_events", { interaction_id: filledId, max_events: 1 });
      assert(!recorded.isError, `the filled field's interaction stays recorded: ${textOf(recorded)}`);
      const values = await formValues(server);
      assertEquals([values.email, values.name, values.country], ["ada@example.test", "", ""]);

      // A field whose change opens a dialog: the next field cannot act, and says so.
      const blocked = await server.call("fill_form", {
        fields: [{ selector: "#contact", value: "Email" }, { selector: "#name", value: "x" }],
      });
      assertEquals(errorCode(blocked), "dialog_open");
      const blockedError = structured(blocked).error as {
        details: { field_index: number; filled: unknown[] };
      };
      assertEquals([blockedError.details.field_index, blockedError.details.filled.length], [1, 1]);
      assert(!(await server.call("handle_dialog", { action: "accept" })).isError, "the dialog is handled");

      const cases: Array<[Record<string, unknown>, string]> = [
        [{ selector: "#referral", value: "X1" }, "not_editable"],
        [{ selector: "#name", value: true }, "invalid_field_value"],
        [{ selector: "#birthday", value: "04/12/1990" }, "invalid_field_value"],
        [{ selector: "#plan-basic", value: false }, "invalid_field_value"],
        [{ selector: "#plan-basic", value: "Enterprise" }, "option_not_found"],
        [{ selector: "#country", value: ["ca", "fr"] }, "invalid_field_value"],
        [{ selector: "#nothing-here", value: "x" }, "selector_no_match"],
        [{ selector: "#submit", value: "x" }, "not_editable"],
      ];
      for (const [field, code] of cases) {
        const r = await server.call("fill_form", { fields: [field] });
        assertEquals(errorCode(r), code, `${JSON.stringify(field)}: ${textOf(r)}`);
      }
      const bad = await server.call("fill_form", { fields: [{ value: "x" }] });
      assertEquals(errorCode(bad), "invalid_target");
      const tooMany = await server.call("fill_form", {
        fields: Array.from({ length: 51 }, () => ({ selector: "#name", value: "x" })),
      });
      assertEquals(errorCode(tooMany), "invalid_arguments");
      assert(textOf(tooMany).includes("50"), textOf(tooMany));
    }, { browser: {} }),
});
