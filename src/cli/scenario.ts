/**
 * `krometrail capture-browser-scenario INPUT_JSON` and `krometrail compare-web-captures A B`: the MCP
 * tools' work for a terminal or a script. Results go to stdout as JSON, progress to stderr.
 *
 * Exit codes (README "Scenarios"):
 *   0  capture: every step completed · compare: unchanged
 *   1  capture: a step failed (the capture is still printed) · compare: changed
 *   2  invalid input: unreadable JSON or a scenario/capture the contract rejects; nothing ran
 *   3  compare: unknown (missing evidence or an alignment failure prevents an unchanged claim)
 *   4  the operation could not run (no browser, a secret's variable unset, I/O)
 */
import { join } from "node:path";
import { asToolError, ToolError } from "../errors.ts";
import type { AppContext } from "../mcp/context.ts";
import { scenarioHost } from "../mcp/tools/scenario.ts";
import { compareCaptureRefs } from "../scenario/compare_run.ts";
import { normalizationRulesSchema } from "../scenario/normalize.ts";
import { runScenario } from "../scenario/run.ts";
import { validateScenario } from "../scenario/schema.ts";
import { EVIDENCE_SCHEME } from "../store/instance.ts";

export const EXIT = { ok: 0, differs: 1, invalid: 2, unknown: 3, failed: 4 } as const;

const INVALID_CODES = new Set(["invalid_scenario", "invalid_capture", "invalid_json", "capture_not_found"]);

function printJson(value: unknown): void {
  // One write: stdout may be a pipe the reader closes early.
  Deno.stdout.writeSync(new TextEncoder().encode(JSON.stringify(value, null, 2) + "\n"));
}

function fail(err: unknown): number {
  const e = asToolError(err);
  printJson({ error: e.toJSON() });
  console.error(`krometrail: ${e.code}: ${e.message}${e.recovery ? `\n  ${e.recovery}` : ""}`);
  return INVALID_CODES.has(e.code) ? EXIT.invalid : EXIT.failed;
}

/** INPUT_JSON is inline JSON when it starts with `{` or `[`, else a file path. */
async function readJsonArg(arg: string, what: string): Promise<unknown> {
  const inline = /^\s*[[{]/.test(arg);
  let text = arg;
  if (!inline) {
    try {
      text = await Deno.readTextFile(arg);
    } catch (err) {
      throw new ToolError({
        code: "invalid_json",
        message: `${what}: cannot read ${JSON.stringify(arg.slice(0, 200))}: ${(err as Error).message}.`,
        retry: "never",
        recovery: `Pass ${what} as inline JSON or the path of a JSON file.`,
      });
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ToolError({
      code: "invalid_json",
      message: `${what} is not JSON: ${(err as Error).message}.`,
      retry: "never",
      recovery: `Pass ${what} as inline JSON or the path of a JSON file.`,
    });
  }
}

function flagValue(args: string[], name: string): { value?: string; rest: string[] } {
  const rest: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === name && i + 1 < args.length) value = args[++i];
    else if (args[i].startsWith(`${name}=`)) value = args[i].slice(name.length + 1);
    else rest.push(args[i]);
  }
  return { value, rest };
}

export async function captureScenarioCommand(app: AppContext, args: string[]): Promise<number> {
  if (args.length !== 1) {
    console.error("usage: krometrail capture-browser-scenario INPUT_JSON   (inline JSON or a file path)");
    return EXIT.invalid;
  }
  try {
    const scenario = validateScenario(await readJsonArg(args[0], "INPUT_JSON"));
    const capture = await runScenario(scenarioHost(app, (line) => console.error(line)), scenario);
    printJson(capture);
    const failed = capture.steps.find((s) => s.status !== "completed");
    if (failed) console.error(`step ${failed.step_id} ${failed.status}: ${failed.error?.message ?? ""}`);
    return failed ? EXIT.differs : EXIT.ok;
  } catch (err) {
    return fail(err);
  }
}

export async function compareCapturesCommand(app: AppContext, argv: string[]): Promise<number> {
  const rulesFlag = flagValue(argv, "--rules");
  const outFlag = flagValue(rulesFlag.rest, "--out");
  const args = outFlag.rest;
  if (args.length !== 2) {
    console.error("usage: krometrail compare-web-captures A B [--rules RULES_JSON] [--out DIR]");
    return EXIT.invalid;
  }
  try {
    const rules = rulesFlag.value === undefined
      ? []
      : normalizationRulesSchema.parse(await readJsonArg(rulesFlag.value, "--rules"));
    const result = await compareCaptureRefs(app.store, args[0], args[1], rules);
    // Difference images leave this process's evidence for a folder that outlives it.
    const outDir = outFlag.value ?? await Deno.makeTempDir({ prefix: "krometrail-compare-" });
    await Deno.mkdir(outDir, { recursive: true });
    for (const step of result.steps) {
      for (const d of step.artifact_diffs) {
        const v = (d as { visual_difference?: { uri?: string; path?: string } }).visual_difference;
        if (!v?.uri) continue;
        const { bytes } = await app.store.readEvidence(v.uri.slice(EVIDENCE_SCHEME.length));
        const path = join(outDir, `${step.step_id.replace(/[^A-Za-z0-9._-]/g, "_")}-difference.png`);
        await Deno.writeFile(path, bytes);
        v.path = path;
      }
    }
    printJson(result);
    console.error(`comparison: ${result.overall_status} (normalization ${result.normalization.sha256})`);
    return result.overall_status === "unchanged"
      ? EXIT.ok
      : result.overall_status === "changed"
      ? EXIT.differs
      : EXIT.unknown;
  } catch (err) {
    if (err instanceof Error && err.name === "ZodError") {
      return fail(
        new ToolError({
          code: "invalid_json",
          message: `--rules: ${err.message.slice(0, 300)}`,
          retry: "never",
          recovery: "Pass rules as [{rule_id, artifacts, match, replacement}].",
        }),
      );
    }
    return fail(err);
  }
}
