import { z } from "zod";
import { describeCondition, ELEMENT_STATES, type WaitCondition, waitFor } from "../../control/wait.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { locator, pageId, ref, selector } from "../schemas.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { batchTool } from "./batch.ts";

const WAIT_LIMIT_MS = 60_000;
/** A semantic wait reads the main document's full tree, so frame or scope narrowing does not apply. */
const SEMANTIC_KEYS = new Set(["role", "name", "label", "text", "test_id", "exact"]);

const waitInput = z.strictObject({
  time_ms: z.number().int().min(0).max(WAIT_LIMIT_MS).optional(),
  text: z.string().min(1).max(1_000).optional(),
  gone: z.boolean().optional(),
  ref: ref.optional(),
  locator: locator.optional(),
  selector: selector.optional(),
  state: z.enum(ELEMENT_STATES).optional(),
  present: z.boolean().optional(),
  navigation: z.literal(true).optional(),
  url_includes: z.string().min(1).max(2_000).optional(),
  condition: z.string().min(1).max(10_000).optional(),
  network_quiet_ms: z.number().int().min(50).max(30_000).optional(),
  timeout_ms: z.number().int().min(100).max(WAIT_LIMIT_MS).optional(),
  page_id: pageId.optional(),
}).superRefine((a, ctx) => {
  const fail = (message: string, path: string) => ctx.addIssue({ code: "custom", message, path: [path] });
  const targets = [a.ref, a.locator, a.selector].filter((v) => v !== undefined).length;
  const kinds = [
    a.time_ms !== undefined,
    a.text !== undefined,
    a.state !== undefined,
    a.locator !== undefined && a.state === undefined,
    a.navigation !== undefined || a.url_includes !== undefined,
    a.condition !== undefined,
    a.network_quiet_ms !== undefined,
  ].filter(Boolean).length;
  if (kinds !== 1) {
    fail(
      `give exactly one condition (time_ms, text, state with a target, locator, navigation/url_includes, condition or network_quiet_ms); got ${kinds}`,
      "(arguments)",
    );
  }
  if (a.gone !== undefined && a.text === undefined) fail("gone applies only to text", "gone");
  if (a.present !== undefined && (a.locator === undefined || a.state !== undefined)) {
    fail("present applies only to a locator wait without state", "present");
  }
  const extra = a.locator && a.state === undefined
    ? Object.keys(a.locator).filter((k) => !SEMANTIC_KEYS.has(k))
    : [];
  if (extra.length > 0) {
    fail(`a semantic wait reads the whole main document; drop ${extra.join(", ")}`, "locator");
  }
  if (a.state !== undefined && targets !== 1) {
    fail("state needs exactly one of ref, locator, selector", "state");
  }
  if (a.state === undefined && (a.ref !== undefined || a.selector !== undefined)) {
    fail("a ref or selector needs a state to wait for", "state");
  }
});

function conditionOf(a: z.output<typeof waitInput>): WaitCondition {
  if (a.time_ms !== undefined) return { kind: "time", ms: a.time_ms };
  if (a.text !== undefined) return { kind: "text", text: a.text, gone: a.gone ?? false };
  if (a.state !== undefined) {
    return {
      kind: "element",
      state: a.state,
      target: { ref: a.ref, locator: a.locator, selector: a.selector },
    };
  }
  if (a.locator !== undefined) return { kind: "locator", locator: a.locator, present: a.present ?? true };
  if (a.condition !== undefined) return { kind: "condition", expression: a.condition };
  if (a.network_quiet_ms !== undefined) return { kind: "network_quiet", quietMs: a.network_quiet_ms };
  return { kind: "navigation", urlIncludes: a.url_includes };
}

/** The condition as asked, bounded: long texts and expressions are clipped in the echo. */
function echo(a: z.output<typeof waitInput>, c: WaitCondition): Record<string, unknown> {
  const clip = (v: string | undefined) => (v === undefined ? undefined : v.slice(0, 200));
  return {
    kind: c.kind,
    ...(a.time_ms !== undefined ? { time_ms: a.time_ms } : {}),
    ...(a.text !== undefined ? { text: clip(a.text), gone: a.gone ?? false } : {}),
    ...(a.state !== undefined ? { state: a.state } : {}),
    ...(c.kind === "locator" ? { present: c.present } : {}),
    ...(a.url_includes !== undefined ? { url_includes: clip(a.url_includes) } : {}),
    ...(a.condition !== undefined ? { condition: clip(a.condition) } : {}),
    ...(a.network_quiet_ms !== undefined ? { network_quiet_ms: a.network_quiet_ms } : {}),
  };
}

export const waitTool = defineTool({
  name: "wait",
  capability: "control",
  output: OUTPUT_SCHEMAS.wait,
  description:
    "Wait for one condition: time_ms; text (gone: true: until absent); a target's state; locator + present (whole accessibility tree; returns the count); a navigation after the call (url_includes); a truthy JS condition; or network_quiet_ms. Past timeout_ms (default 10000): wait_timeout.",
  input: waitInput,
  annotations: { readOnlyHint: true },
  handler: async (args, app) => {
    // time_ms is the whole wait; a timeout beside it was never consulted.
    if (args.time_ms !== undefined && args.timeout_ms !== undefined) {
      throw conflictingArguments(
        "time_ms",
        "timeout_ms",
        "time_ms waits exactly that long, and timeout_ms bounds a condition wait.",
        "Drop timeout_ms for a fixed wait, or wait for a condition with timeout_ms.",
      );
    }
    const condition = conditionOf(args);
    const r = await waitFor(app.browsers.require(), condition, args.timeout_ms ?? 10_000, args.page_id);
    return output(
      `Satisfied after ${r.elapsed_ms} ms: ${
        describeCondition(condition)
      } on ${r.page_id} ${r.url}\nobserved ${JSON.stringify(r.observed)}`,
      { status: "satisfied", condition: echo(args, condition), ...r },
    );
  },
});

/** wait, and batch over every other control tool (batch.ts holds the step registry). */
export const flowTools: Tool[] = [waitTool, batchTool([waitTool])];
