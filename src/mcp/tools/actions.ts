import { z } from "zod";
import { click, fill, pressKeys } from "../../control/actions.ts";
import { handleDialog } from "../../control/dialogs.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { observationOutput } from "../response.ts";
import { detail, inlineImages, pageId, targetFields } from "../schemas.ts";
import { actionEnv } from "./action_env.ts";

const observed = {
  page_id: pageId.optional(),
  detail: detail.optional(),
  inline_images: inlineImages.optional(),
};
const chord = z.string().min(1).max(64);

export const actionTools = [
  defineTool({
    name: "click",
    capability: "control",
    output: OUTPUT_SCHEMAS.click,
    description: "Click an element or x/y.",
    input: z.strictObject({
      ...targetFields,
      button: z.enum(["left", "right", "middle"]).optional(),
      click_count: z.number().int().min(1).max(3).optional(),
      modifiers: z.array(z.enum(["Alt", "Control", "Meta", "Shift"])).max(4).optional(),
      ...observed,
    }),
    handler: async (args, app) =>
      observationOutput(
        await click(actionEnv(app, args), args, {
          button: args.button ?? "left",
          click_count: args.click_count ?? 1,
          modifiers: args.modifiers ?? [],
        }, args.page_id),
      ),
  }),
  defineTool({
    name: "fill",
    capability: "control",
    output: OUTPUT_SCHEMAS.fill,
    description: "Replace a field's value (text, textarea, contenteditable, date/time).",
    input: z.strictObject({
      ref: targetFields.ref,
      locator: targetFields.locator,
      selector: targetFields.selector,
      value: z.string().max(100_000),
      ...observed,
    }),
    handler: async (args, app) =>
      observationOutput(await fill(actionEnv(app, args), args, args.value, args.page_id)),
  }),
  defineTool({
    name: "press_keys",
    capability: "control",
    output: OUTPUT_SCHEMAS.press_keys,
    description:
      'Press keys or chords in order, e.g. "Enter" or ["Control+a", "Delete"]; a target is focused first.',
    input: z.strictObject({
      keys: z.union([chord, z.array(chord).min(1).max(50)]),
      ref: targetFields.ref,
      locator: targetFields.locator,
      selector: targetFields.selector,
      ...observed,
    }),
    handler: async (args, app) => {
      const keys = typeof args.keys === "string" ? [args.keys] : args.keys;
      const hasTarget = args.ref !== undefined || args.locator !== undefined || args.selector !== undefined;
      const spec = hasTarget ? { ref: args.ref, locator: args.locator, selector: args.selector } : undefined;
      return observationOutput(await pressKeys(actionEnv(app, args), keys, spec, args.page_id));
    },
  }),
  defineTool({
    name: "handle_dialog",
    capability: "control",
    output: OUTPUT_SCHEMAS.handle_dialog,
    description:
      "Accept or dismiss the open alert/confirm/prompt/beforeunload dialog; prompt_text answers a prompt.",
    input: z.strictObject({
      action: z.enum(["accept", "dismiss"]),
      prompt_text: z.string().max(10_000).optional(),
      ...observed,
    }),
    handler: async (args, app) =>
      observationOutput(
        await handleDialog(actionEnv(app, args), args.action === "accept", args.prompt_text, args.page_id),
      ),
  }),
];
