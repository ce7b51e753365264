import { z } from "zod";
import { fillForm, MAX_FORM_FIELDS } from "../../control/fill_form.ts";
import { countTargetForms } from "../../control/targeting.ts";
import { ToolError } from "../../errors.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { observationOutput } from "../response.ts";
import { detail, inlineImages, pageId, targetFields } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";
import { actionEnv } from "./action_env.ts";

const MAX_OPTIONS = 100;
const text = z.string().max(100_000);

const field = z.strictObject({
  ref: targetFields.ref,
  locator: targetFields.locator,
  selector: targetFields.selector,
  value: z.union([text, z.boolean(), z.array(z.string().max(1_000)).min(1).max(MAX_OPTIONS)]).describe(
    "text, or date YYYY-MM-DD (time HH:MM, color #rrggbb); option value or label (array: multiple); true/false for checkbox/radio; a radio group's value or label",
  ),
});

export const formTools: Tool[] = [
  defineTool({
    name: "fill_form",
    capability: "control",
    output: OUTPUT_SCHEMAS.fill_form,
    description:
      `Fill up to ${MAX_FORM_FIELDS} fields in order (text, textarea, select, checkbox, radio, date/time/color): one interaction per field, one observation at the end.`,
    input: z.strictObject({
      fields: advertiseAs(z.array(field).min(1).max(MAX_FORM_FIELDS), {
        type: "array",
        description: "[{ref | locator | selector, value}]; value: text, date YYYY-MM-DD (time HH:MM, color " +
          "#rrggbb), option value or label (array: several), true/false (checkbox, radio) or a radio group's value or label",
      }),
      page_id: pageId.optional(),
      detail: detail.optional(),
      inline_images: inlineImages.optional(),
    }),
    handler: async (args, app) => {
      const fields = args.fields.map((f, index) => {
        const spec = { ref: f.ref, locator: f.locator, selector: f.selector };
        if (countTargetForms(spec) !== 1) {
          throw new ToolError({
            code: "invalid_target",
            message: `fields[${index}] needs exactly one of ref, locator or selector.`,
            retry: "never",
            recovery: "Give each field one target: a ref from snapshot_page, a locator or a CSS selector.",
            affected: { argument: `fields.${index}` },
          });
        }
        return { spec, value: f.value };
      });
      return observationOutput(await fillForm(actionEnv(app, args), fields, args.page_id));
    },
  }),
];
