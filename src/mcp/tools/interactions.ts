import { z } from "zod";
import { type OptionChoice, selectOption } from "../../control/select_option.ts";
import { UPLOAD_MAX_FILES, uploadFiles } from "../../control/upload_files.ts";
import { drag } from "../../control/drag.ts";
import { hover } from "../../control/pointer.ts";
import { scroll } from "../../control/scroll.ts";
import { ToolError } from "../../errors.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { advertiseAs } from "../schema_compact.ts";
import { observationOutput } from "../response.ts";
import {
  coordinate,
  detail,
  inlineImages,
  locator,
  pageId,
  ref,
  selector,
  targetFields,
} from "../schemas.ts";
import { actionEnv } from "./action_env.ts";

const observed = {
  page_id: pageId.optional(),
  detail: detail.optional(),
  inline_images: inlineImages.optional(),
};
const elementFields = {
  ref: targetFields.ref,
  locator: targetFields.locator,
  selector: targetFields.selector,
};
const scrollDelta = z.number().min(-100_000).max(100_000);
const optionText = z.string().max(1_000);
const OPTION_LIMIT = 64;

/** A target given as its own object (drag's destination): the same forms as the top-level target. */
const targetObject = z.strictObject({
  ref: ref.optional(),
  locator: locator.optional(),
  selector: selector.optional(),
  x: coordinate.optional(),
  y: coordinate.optional(),
});

function hasTarget(args: { ref?: unknown; locator?: unknown; selector?: unknown; x?: unknown; y?: unknown }) {
  return [args.ref, args.locator, args.selector, args.x, args.y].some((v) => v !== undefined);
}

function optionChoice(args: {
  value?: string | string[];
  label?: string | string[];
  index?: number | number[];
}): OptionChoice {
  const given = [args.value, args.label, args.index].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new ToolError({
      code: "invalid_arguments",
      message: given === 0
        ? "select_option needs one of value, label or index."
        : "Give only one of value, label or index.",
      retry: "never",
      recovery:
        'For example {"label": "Banana"}, {"value": "b"} or {"index": 2}; arrays for <select multiple>.',
      affected: { argument: "value" },
    });
  }
  const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);
  if (args.value !== undefined) return { by: "value", values: list(args.value) };
  if (args.label !== undefined) return { by: "label", values: list(args.label) };
  return { by: "index", values: list(args.index as number | number[]) };
}

export const interactionTools: Tool[] = [
  defineTool({
    name: "hover",
    capability: "control",
    output: OUTPUT_SCHEMAS.hover,
    description: "Move the mouse to an element's centre (hit-tested like click) or x/y.",
    input: z.strictObject({ ...targetFields, ...observed }),
    handler: async (args, app) => observationOutput(await hover(actionEnv(app, args), args, args.page_id)),
  }),
  defineTool({
    name: "drag",
    capability: "control",
    output: OUTPUT_SCHEMAS.drag,
    description:
      "Drag with real mouse input from a target or x/y to `to`; HTML5 drag-and-drop and pointer sliders both work.",
    input: z.strictObject({
      ...targetFields,
      to: advertiseAs(targetObject.describe("Destination: one of ref, locator, selector, or x and y"), {
        type: "object",
        description: "{ref} | {locator} | {selector} | {x, y}",
      }),
      steps: z.number().int().min(1).max(50).optional().describe(
        "Mouse moves between press and release; default 10",
      ),
      ...observed,
    }),
    handler: async (args, app) => {
      const from = { ref: args.ref, locator: args.locator, selector: args.selector, x: args.x, y: args.y };
      return observationOutput(
        await drag(actionEnv(app, args), from, args.to, { steps: args.steps ?? 10 }, args.page_id),
      );
    },
  }),
  defineTool({
    name: "scroll",
    capability: "control",
    output: OUTPUT_SCHEMAS.scroll,
    description:
      "Scroll by dx/dy CSS px (mouse wheel at the target, x/y or viewport centre), or bring an element into view; reports scroll before/after.",
    input: z.strictObject({
      ...targetFields,
      dx: scrollDelta.optional().describe("CSS px; + is right"),
      dy: scrollDelta.optional().describe("CSS px; + is down"),
      ...observed,
    }),
    handler: async (args, app) => {
      const spec = hasTarget(args)
        ? { ref: args.ref, locator: args.locator, selector: args.selector, x: args.x, y: args.y }
        : undefined;
      // Stale-prone: the post-scroll observation carries one viewport image unless suppressed.
      return observationOutput(
        await scroll(actionEnv(app, args, true), spec, { dx: args.dx, dy: args.dy }, args.page_id),
      );
    },
  }),
  defineTool({
    name: "select_option",
    capability: "control",
    output: OUTPUT_SCHEMAS.select_option,
    description:
      "Choose options of a native <select> by value, label or 0-based index (arrays for multiple); fires input and change.",
    input: z.strictObject({
      ...elementFields,
      value: z.union([optionText, z.array(optionText).min(1).max(OPTION_LIMIT)]).optional(),
      label: z.union([optionText, z.array(optionText).min(1).max(OPTION_LIMIT)]).optional(),
      index: z.union([
        z.number().int().min(0).max(100_000),
        z.array(z.number().int().min(0).max(100_000)).min(1).max(OPTION_LIMIT),
      ]).optional(),
      ...observed,
    }),
    handler: async (args, app) => {
      const choice = optionChoice(args);
      return observationOutput(await selectOption(actionEnv(app, args), args, choice, args.page_id));
    },
  }),
  defineTool({
    name: "upload_files",
    capability: "control",
    output: OUTPUT_SCHEMAS.upload_files,
    description:
      "Set local files on a native file input, or the input a label/button is bound to; paths must be readable files.",
    input: z.strictObject({
      ...elementFields,
      paths: z.array(z.string().min(1).max(4_096)).min(1).max(UPLOAD_MAX_FILES).describe(
        "Absolute; relative ones resolve against KROMETRAIL_UPLOAD_ROOT (refused if unset)",
      ),
      ...observed,
    }),
    handler: async (args, app) =>
      observationOutput(await uploadFiles(actionEnv(app, args), args, args.paths, args.page_id)),
  }),
];
