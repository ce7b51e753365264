/**
 * A scenario action as the control-layer call that performs it: the same tools, targeting, input and
 * observation as an agent's own calls, so a scenario step behaves exactly as the tool would. check and
 * uncheck have no tool of their own: they read the box first and click only when it differs.
 */
import type { Scenario } from "./schema.ts";

export type ScenarioAction = Scenario["actions"][number];
type ScenarioTarget = { locator?: Record<string, unknown>; selector?: string };

/** What a step runs: one tool call, or a check/uncheck of the target. */
export type StepCall =
  | { kind: "tool"; tool: string; args: Record<string, unknown> }
  | { kind: "toggle"; want: boolean; target: ScenarioTarget };

export interface Resolvers {
  /** A declared value with its secret resolved (the live value, never stored). */
  value(v: unknown): string;
  /** A URL spec with its secret query entries resolved. */
  url(u: unknown): string;
}

/** Scenario steps keep their observations lean: no inline images; evidence comes from the capture plan. */
const QUIET = { inline_images: false } as const;

function targetOf(a: ScenarioTarget): ScenarioTarget {
  return a.locator !== undefined
    ? { locator: a.locator }
    : a.selector !== undefined
    ? { selector: a.selector }
    : {};
}

/** `commit` and `domcontentloaded` return at commit; our navigation has two modes (load / none). */
function navigationWait(waitUntil: string | undefined): "load" | "none" {
  return waitUntil === "load" || waitUntil === undefined ? "load" : "none";
}

export function stepCall(action: ScenarioAction, resolve: Resolvers): StepCall {
  switch (action.action) {
    case "goto":
      return {
        kind: "tool",
        tool: "navigate_page",
        args: { url: resolve.url(action.url), wait_until: navigationWait(action.wait_until), ...QUIET },
      };
    case "click":
      return {
        kind: "tool",
        tool: "click",
        args: { ...targetOf(action), button: action.button, click_count: action.click_count, ...QUIET },
      };
    case "fill":
      return {
        kind: "tool",
        tool: "fill",
        args: { ...targetOf(action), value: resolve.value(action.value), ...QUIET },
      };
    case "press":
      return { kind: "tool", tool: "press_keys", args: { ...targetOf(action), keys: action.keys, ...QUIET } };
    case "select_option":
      return {
        kind: "tool",
        tool: "select_option",
        args: { ...targetOf(action), value: resolve.value(action.value), ...QUIET },
      };
    case "check":
    case "uncheck":
      return { kind: "toggle", want: action.action === "check", target: targetOf(action) };
    case "hover":
      return { kind: "tool", tool: "hover", args: { ...targetOf(action), ...QUIET } };
    case "wait_for":
      return { kind: "tool", tool: "wait", args: { ...targetOf(action), state: action.state } };
    case "scroll":
      return {
        kind: "tool",
        tool: "scroll",
        args: {
          ...targetOf(action),
          ...(action.dx !== undefined ? { dx: action.dx } : {}),
          ...(action.dy !== undefined ? { dy: action.dy } : {}),
          ...QUIET,
        },
      };
    case "upload":
      return {
        kind: "tool",
        tool: "upload_files",
        args: { ...targetOf(action), paths: action.files, ...QUIET },
      };
  }
}
