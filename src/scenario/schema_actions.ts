/**
 * The scenario's fixed action vocabulary. Each action has a unique step_id; a target is a locator or a
 * CSS selector, exactly one. No action takes a timeout: deadlines are provider-owned.
 */
import { isAbsolute } from "node:path";
import { z } from "zod";
import { parseChord } from "../browser/input.ts";
import { checkTarget, id, LIMITS, ruleIssue, targetFields, urlSpec, value } from "./schema_values.ts";

export const ACTION_KINDS = [
  "goto",
  "click",
  "fill",
  "press",
  "select_option",
  "check",
  "uncheck",
  "hover",
  "wait_for",
  "scroll",
  "upload",
] as const;
export type ActionKind = typeof ACTION_KINDS[number];

const step = { step_id: id };
const delta = z.number().min(-100_000).max(100_000).optional();

/** A target action: locator or selector, exactly one. */
function targeted<S extends z.core.$ZodLooseShape>(shape: S) {
  return z.strictObject({ ...step, ...targetFields, ...shape }).superRefine((a, ctx) =>
    checkTarget(a, ctx, true)
  );
}

const keys = z.string().min(1).max(100).superRefine((chord, ctx) => {
  try {
    parseChord(chord);
  } catch (err) {
    ruleIssue(ctx, "invalid_keys", err instanceof Error ? err.message : "not a key chord");
  }
});

const uploadPath = z.string().min(1).max(LIMITS.path).refine(
  (p) => isAbsolute(p) && !p.includes("\0"),
  "expected an absolute file path",
);

/**
 * The public reference's names for two fields (`destination` for goto's url, `key` for press's keys) are
 * read as ours, so a request written to that contract runs unchanged; given both, the extra one is refused.
 */
export function withAliases(input: unknown, aliases: Record<string, string>): unknown {
  if (!input || typeof input !== "object" || Array.isArray(input)) return input;
  const out: Record<string, unknown> = { ...input as Record<string, unknown> };
  for (const [alias, name] of Object.entries(aliases)) {
    if (alias in out && !(name in out)) {
      out[name] = out[alias];
      delete out[alias];
    }
  }
  return out;
}

const ACTION_ALIASES: Record<string, Record<string, string>> = {
  goto: { destination: "url" },
  press: { key: "keys" },
};

const actionUnion = z.discriminatedUnion("action", [
  z.strictObject({
    ...step,
    action: z.literal("goto"),
    url: urlSpec,
    wait_until: z.enum(["commit", "domcontentloaded", "load"]).default("load"),
  }),
  targeted({
    action: z.literal("click"),
    button: z.enum(["left", "middle", "right"]).default("left"),
    click_count: z.int().min(1).max(3).default(1),
  }),
  targeted({ action: z.literal("fill"), value }),
  z.strictObject({ ...step, ...targetFields, action: z.literal("press"), keys })
    .superRefine((a, ctx) => checkTarget(a, ctx, false)),
  targeted({ action: z.literal("select_option"), value }),
  targeted({ action: z.literal("check") }),
  targeted({ action: z.literal("uncheck") }),
  targeted({ action: z.literal("hover") }),
  targeted({
    action: z.literal("wait_for"),
    state: z.enum(["attached", "detached", "visible", "hidden"]).default("visible"),
  }),
  z.strictObject({ ...step, ...targetFields, action: z.literal("scroll"), dx: delta, dy: delta })
    .superRefine((a, ctx) => {
      checkTarget(a, ctx, false);
      if (a.locator === undefined && a.selector === undefined && a.dx === undefined && a.dy === undefined) {
        ruleIssue(
          ctx,
          "scroll_needs_target_or_delta",
          "scroll needs a target (locator or selector), dx or dy",
        );
      }
    }),
  targeted({ action: z.literal("upload"), files: z.array(uploadPath).min(1).max(20) }),
], {
  error: (issue) => {
    if (issue.code !== "invalid_union") return undefined;
    const input = issue.input;
    const tag = input && typeof input === "object" && "action" in input ? input.action : undefined;
    const vocabulary = ACTION_KINDS.join(", ");
    if (tag === undefined) return `every action needs an action tag: one of ${vocabulary}`;
    return `unknown action ${JSON.stringify(tag)?.slice(0, 100)}; the vocabulary is ${vocabulary}`;
  },
});
export const action = z.preprocess((input) => {
  const tag = input && typeof input === "object" ? (input as { action?: unknown }).action : undefined;
  const aliases = typeof tag === "string" ? ACTION_ALIASES[tag] : undefined;
  return aliases ? withAliases(input, aliases) : input;
}, actionUnion);
export type ScenarioAction = z.output<typeof action>;
