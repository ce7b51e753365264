import { z } from "zod";
import { recordPageDom } from "../../pagestate/recorder.ts";
import { prepareDomRecording } from "../../pagestate/recorder.ts";
import { type ScenarioCapture, withoutScreenshotData } from "../../scenario/capture.ts";
import { type CaptureRef, compareCaptureRefs } from "../../scenario/compare_run.ts";
import type { ComparisonResult } from "../../scenario/compare.ts";
import { NORMALIZABLE_KINDS, normalizationRulesSchema } from "../../scenario/normalize.ts";
import { runScenario, type ScenarioHost, type ToolResult } from "../../scenario/run.ts";
import { scenarioSchema, validateScenario } from "../../scenario/schema.ts";
import { asToolError, ToolError } from "../../errors.ts";
import { logger } from "../../log.ts";
import type { AppContext } from "../context.ts";
import { defineTool, invalidArguments, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output, type ToolOutput } from "../response.ts";
import { advertiseAs } from "../schema_compact.ts";
import { actionTools } from "./actions.ts";
import { interactionTools } from "./interactions.ts";
import { pageTools } from "./pages.ts";
import { waitTool } from "./flow.ts";

const log = logger("scenario");

/** The control tools a scenario step may run: the same definitions an agent calls. */
const STEP_TOOLS = new Map<string, Tool>(
  [...actionTools, ...interactionTools, ...pageTools, waitTool].map((t) => [t.name, t]),
);

function toolResult(out: ToolOutput): ToolResult {
  if (!out.isError) return { ok: true, structured: out.structured };
  const e = (out.structured.error ?? {}) as {
    code?: string;
    message?: string;
    recovery?: string;
    affected?: { interaction_id?: string };
  };
  return {
    ok: false,
    error: {
      code: e.code ?? "internal_error",
      message: e.message ?? "the step failed",
      ...(e.recovery ? { recovery: e.recovery } : {}),
    },
    ...(e.affected?.interaction_id ? { interaction_id: e.affected.interaction_id } : {}),
  };
}

/** The app as the scenario runner sees it: the session is opened and recorded exactly as start_browser does. */
export function scenarioHost(app: AppContext, progress: (line: string) => void = () => {}): ScenarioHost {
  return {
    browsers: app.browsers,
    recorder: app.recorder,
    store: app.store,
    prepareSession: (s) => prepareDomRecording(s),
    attachCapture: (s) => {
      app.recorder.attach(s);
      recordPageDom(s, (m) => app.recorder.send(m));
    },
    runTool: async (name, args) => {
      const tool = STEP_TOOLS.get(name);
      if (!tool) return { ok: false, error: { code: "internal_error", message: `no step tool ${name}` } };
      return toolResult(await tool.run(args, app));
    },
    env: (name) => Deno.env.get(name),
    progress: (line) => {
      log.debug("{line}", { line });
      progress(line);
    },
  };
}

const short = (sha: string) => sha.slice(0, 12);

function captureText(c: ScenarioCapture, uri: string): string {
  const failed = c.steps.filter((s) => s.status === "failed");
  const skipped = c.steps.filter((s) => s.status === "skipped").length;
  const head =
    `Captured scenario: ${c.steps.length} steps (${c.scenario.action_count} actions) in ${c.duration_ms} ms` +
    (failed.length > 0
      ? `; step ${failed[0].step_id} failed (${failed[0].error?.code})`
      : "; every step completed") +
    (skipped > 0 ? `, ${skipped} skipped` : "") +
    `. ${c.completeness.status}${
      c.completeness.equality_eligible ? "" : " (not eligible for an unchanged claim)"
    }.`;
  const lines = c.steps.map((s) => {
    const shot = s.artifacts.screenshot.state === "captured"
      ? ` screenshot ${short(s.artifacts.screenshot.value.sha256)}`
      : "";
    const err = s.error ? ` — ${s.error.code}: ${s.error.message}` : "";
    return `#${s.step_index} ${s.step_id} ${s.action} ${s.status} ${s.elapsed_ms} ms` +
      (s.interaction_id ? ` ${s.interaction_id}` : "") + shot + err;
  });
  return [
    head,
    ...lines,
    `events: ${c.events.retained}${
      c.events.dropped > 0 ? ` (+${c.events.dropped} dropped)` : ""
    }; session ${c.session_id}`,
    `capture: ${uri} (compare with compare_web_captures)`,
  ].join("\n");
}

function comparisonText(r: ComparisonResult): string {
  const changed = r.steps.filter((s) => s.status === "changed");
  const unknown = r.steps.filter((s) => s.status === "unknown");
  const lines = [
    `Comparison: ${r.overall_status}. ${r.steps.length} aligned steps: ${changed.length} changed, ${unknown.length} unknown, ${
      r.steps.length - changed.length - unknown.length
    } unchanged. Alignment ${r.alignment.status}${
      r.alignment.failures.length > 0 ? ` (${r.alignment.failures.map((f) => f.code).join(", ")})` : ""
    }. Normalization sha256 ${r.normalization.sha256}.`,
  ];
  for (const s of [...changed, ...unknown]) {
    const arts = s.artifact_diffs.map((d) => {
      const v = (d as {
        visual_difference?: {
          uri?: string;
          bounds?: { x: number; y: number; width: number; height: number } | null;
        };
      })
        .visual_difference;
      const where = v?.bounds ? ` at ${v.bounds.x},${v.bounds.y} ${v.bounds.width}×${v.bounds.height}` : "";
      return `${d.artifact} ${d.status}${where}${v?.uri ? ` ${v.uri}` : ""}`;
    });
    lines.push(`${s.step_id}: ${s.status} — ${arts.join("; ")}`);
  }
  return lines.join("\n");
}

/**
 * tools/list shows each scenario field as its one-line help (the full schema is ~15 KB of JSON Schema;
 * README "Scenarios" and docs/tools.md carry it); validation still uses the whole zod schema.
 */
const ARRAY_FIELDS = new Set(["allowed_origins", "actions", "secrets"]);
for (const [key, field] of Object.entries(scenarioSchema.shape)) {
  const description = (field as { description?: string }).description;
  if (description === undefined) continue;
  advertiseAs(field, {
    ...(key === "start_url" ? {} : { type: ARRAY_FIELDS.has(key) ? "array" : "object" }),
    ...(key === "allowed_origins" ? { items: { type: "string" } } : {}),
    // Quotes around the literal values cost two characters each in JSON and say nothing here.
    description: description.replaceAll('"', ""),
  });
}

const captureRef = z.union([
  z.string().min(1).max(4_096),
  z.looseObject({}),
]).describe("A capture_uri, a capture file path, or the capture object");

export const scenarioTools: Tool[] = [
  defineTool({
    name: "capture_browser_scenario",
    capability: "scenario",
    output: OUTPUT_SCHEMAS.capture_browser_scenario,
    description:
      "Run a declared scenario (browser, start_url, actions by step_id, capture) as a recorded session; returns " +
      "per-step evidence. Compare two with compare_web_captures.",
    input: scenarioSchema,
    // invalid_arguments like every tool, worded as the CLI's invalid_scenario: each problem by path and rule.
    invalidInput: (raw, error) => {
      try {
        validateScenario(raw);
      } catch (err) {
        const e = asToolError(err);
        return new ToolError({
          code: "invalid_arguments",
          message: `Invalid arguments for capture_browser_scenario: ${e.message}`,
          retry: "never",
          recovery: e.recovery,
          affected: e.affected,
          details: e.details,
        });
      }
      return invalidArguments("capture_browser_scenario", error);
    },
    handler: async (args, app) => {
      const capture = await runScenario(scenarioHost(app), args);
      const file = await app.store.writeEvidence(
        "scenarios",
        "json",
        new TextEncoder().encode(JSON.stringify(capture)),
      );
      return output(captureText(capture, file.uri), {
        ...withoutScreenshotData(capture),
        capture_uri: file.uri,
      });
    },
  }),
  defineTool({
    name: "compare_web_captures",
    capability: "scenario",
    output: OUTPUT_SCHEMAS.compare_web_captures,
    description:
      "Compare two scenario captures step by step (by step_id): changed, unchanged or unknown per step, with a " +
      "normalization digest and a difference image per changed screenshot.",
    input: z.strictObject({
      before: captureRef,
      after: captureRef,
      rules: advertiseAs(normalizationRulesSchema.describe("Normalization rules applied to both captures"), {
        type: "array",
        description: `[{rule_id, artifacts: [${
          NORMALIZABLE_KINDS.join("|")
        }], match (a literal), replacement}]`,
      }).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const result = await compareCaptureRefs(
        app.store,
        args.before as CaptureRef,
        args.after as CaptureRef,
        args.rules ?? [],
      );
      return output(comparisonText(result), result as unknown as Record<string, unknown>);
    },
  }),
];
