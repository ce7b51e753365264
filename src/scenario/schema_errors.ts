/**
 * Scenario validation failures as rules and paths: zod's issues flattened (a union's one informative
 * branch instead of a bare "Invalid input", one issue per unknown key) and each named by its rule.
 */
import type { z } from "zod";

type Issue = z.core.$ZodIssue;

export interface ScenarioIssue {
  /** The path joined by "." ("actions.2.locator"), or "(scenario)" for the request itself. */
  path: string;
  rule: string;
  problem: string;
}

const PROBLEM_LIMIT = 400;
const PROVIDER_OWNED_FIELDS = new Set(["timeout_ms", "timeout", "limits", "deadline_ms", "deadline"]);

/** A union branch that failed only because the input was not its type says nothing useful. */
function typeMismatchOnly(branch: readonly Issue[]): boolean {
  return branch.length === 1 && branch[0]?.code === "invalid_type" && branch[0].path.length === 0;
}

/** The branches of a failed union that got past the type check, when it is not a discriminator miss. */
function informativeBranches(issue: Issue): Issue[][] | undefined {
  if (issue.code !== "invalid_union" || issue.discriminator !== undefined) return undefined;
  return issue.errors.filter((b) => !typeMismatchOnly(b));
}

/** The rule a zod issue stands for: its own `params.rule`, or the name of the built-in failure. */
export function ruleOf(issue: Issue): string {
  if (issue.code === "custom" && typeof issue.params?.rule === "string") return issue.params.rule;
  if (issue.code === "unrecognized_keys") return "unknown_field";
  if (issue.code === "invalid_union") {
    if (issue.discriminator === "action" || issue.path[issue.path.length - 1] === "action") {
      return "unknown_action";
    }
    const branches = informativeBranches(issue);
    const only = branches?.length === 1 ? branches[0]?.[0] : undefined;
    if (only) return ruleOf(only);
  }
  return "invalid_value";
}

function pathText(path: readonly PropertyKey[]): string {
  return path.length > 0 ? path.map(String).join(".") : "(scenario)";
}

/**
 * zod's issues with each failed union replaced by the issues of its one informative branch (paths made
 * whole), so a string-or-object field reports "url_userinfo at start_url" rather than "Invalid input".
 */
export function flattenIssues(issues: readonly Issue[], prefix: readonly PropertyKey[] = []): Issue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    const branches = informativeBranches(issue);
    if (branches && branches.length === 1 && branches[0]) return flattenIssues(branches[0], path);
    return [{ ...issue, path }];
  });
}

function describe(issue: Issue): ScenarioIssue[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => {
      const why = PROVIDER_OWNED_FIELDS.has(key) ? " (deadlines and limits are provider-owned)" : "";
      return {
        path: pathText([...issue.path, key]),
        rule: "unknown_field",
        problem: `unknown field ${key}${why}`,
      };
    });
  }
  if (issue.code === "invalid_union" && informativeBranches(issue)?.length === 0) {
    const expected = issue.errors.map((b) => b[0]?.code === "invalid_type" ? b[0].expected : "other");
    return [{
      path: pathText(issue.path),
      rule: "invalid_value",
      problem: `expected ${[...new Set(expected)].join(" or ")}`,
    }];
  }
  return [{
    path: pathText(issue.path),
    rule: ruleOf(issue),
    problem: issue.message.slice(0, PROBLEM_LIMIT),
  }];
}

/** zod's issues as scenario issues, in order: unions flattened, one issue per unknown key. */
export function scenarioIssues(issues: readonly Issue[]): ScenarioIssue[] {
  return flattenIssues(issues).flatMap(describe);
}
