import { z } from "zod";
import type { RowMessage } from "../../capture/messages.ts";
import { ToolError } from "../../errors.ts";
import type { AppContext } from "../context.ts";
import { defineTool, invalidArguments, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { advertiseAs } from "../schema_compact.ts";
import type { ImagePart, ToolOutput } from "../response.ts";
import { actionTools } from "./actions.ts";
import { downloadTools } from "./downloads.ts";
import { formTools } from "./forms.ts";
import { inspectTools } from "./inspect.ts";
import { interactionTools } from "./interactions.ts";
import { pageTools } from "./pages.ts";
import { viewportTools } from "./viewport.ts";
import { StepWatch, watchedApp } from "./batch_watch.ts";

const MAX_STEPS = 50;
const DEFAULT_DEADLINE_MS = 60_000;
/**
 * After the deadline passes mid-step, how long the batch lets a dispatched step finish its
 * post-action observation, so its evidence is kept rather than abandoned.
 */
const DISPATCHED_GRACE_MS = 3_000;

type StepStatus = "ok" | "failed" | "skipped" | "timed_out";
/**
 * How far the step got: not_started (never called), started (running, no interaction begun),
 * dispatched (its interaction began: input may have reached the page), completed (it returned).
 */
type StepPhase = "not_started" | "started" | "dispatched" | "completed";

interface StepResult {
  index: number;
  tool: string;
  status: StepStatus;
  phase: StepPhase;
  elapsed_ms: number;
  interaction_id?: string;
  error?: { code: string; message: string };
  summary?: string;
  screenshot?: unknown;
}

interface Planned {
  index: number;
  tool: Tool;
  args: Record<string, unknown>;
}

let batchCounter = 0;

/**
 * The batch's own view of the app: interaction rows its steps persist carry the batch id (the
 * spec's parent batch identifier), without the step tools knowing they run in a batch.
 */
function batchScoped(app: AppContext, batchId: string): AppContext {
  const recorder = new Proxy(app.recorder, {
    get(target, key) {
      if (key === "send") {
        return (m: RowMessage) =>
          target.send(m.type === "interaction" ? { ...m, row: { ...m.row, batch_id: batchId } } : m);
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { ...app, recorder };
}

function stepError(out: ToolOutput): ToolError {
  const e = (out.structured.error ?? {}) as {
    code?: string;
    message?: string;
    retry?: "safe" | "never" | "after_recovery";
    recovery?: string;
    affected?: Record<string, string>;
  };
  return new ToolError({
    code: e.code ?? "internal_error",
    message: e.message ?? (out.text.split("\n")[0] || "the step failed"),
    retry: e.retry ?? "after_recovery",
    recovery: e.recovery,
    affected: e.affected,
  });
}

function anchorOf(out: ToolOutput): string | undefined {
  const s = out.structured;
  if (typeof s.interaction_id === "string") return s.interaction_id;
  const affected = (s.error as { affected?: { interaction_id?: unknown } } | undefined)?.affected;
  return typeof affected?.interaction_id === "string" ? affected.interaction_id : undefined;
}

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

interface Failure {
  index: number;
  tool: string;
  error: ToolError;
}

interface Run {
  steps: StepResult[];
  observation?: { index: number; out: ToolOutput };
  /** Why the batch stopped early (a failure without continue_on_error, or the deadline). */
  stop?: Failure & { timedOut: boolean };
  /** The first failure a continue_on_error batch ran past. */
  failure?: Failure;
}

/** Tools whose effect on the page is an interaction (they return the live observation). */
const interacts = (tool: Tool) => "interaction_id" in tool.output.shape;

/** Says exactly how far the step got when the deadline expired, so the caller knows what ran. */
function deadlineError(p: Planned, deadlineMs: number, phase: StepPhase, anchor?: string): ToolError {
  const step = `steps[${p.index}] (${p.tool.name})`;
  const base = `The batch deadline of ${deadlineMs} ms expired`;
  const message = phase === "not_started"
    ? `${base} before ${step} started.`
    : anchor && phase === "completed"
    ? `${base} during ${step} after it dispatched (${anchor}); it then completed within the ${DISPATCHED_GRACE_MS} ms grace and its result is kept.`
    : anchor
    ? `${base} during ${step} after it dispatched (${anchor}); its observation had not finished within the ${DISPATCHED_GRACE_MS} ms grace.`
    : interacts(p.tool)
    ? `${base} before ${step} dispatched; it was stopped before dispatching any input.`
    : p.tool.annotations?.readOnlyHint
    ? `${base} while ${step} was running; it only reads the page, so nothing was changed.`
    : `${base} while ${step} was running; it records no interaction, so what it had already sent to the page may have taken effect.`;
  return new ToolError({
    code: "batch_deadline_exceeded",
    message,
    retry: "after_recovery",
    recovery:
      "Check the page (snapshot_page) before re-running the remaining steps; raise deadline_ms if the steps are legitimately slow.",
    ...(anchor ? { affected: { interaction_id: anchor } } : {}),
    details: { deadline_ms: deadlineMs, phase },
  });
}

async function runSteps(
  app: AppContext,
  plan: Planned[],
  opts: { continueOnError: boolean; deadlineMs: number; screenshots: boolean },
): Promise<Run> {
  const run: Run = { steps: [] };
  const deadlineAt = performance.now() + opts.deadlineMs;
  const record = (
    p: Planned,
    started: number,
    status: StepStatus,
    phase: StepPhase,
    out?: ToolOutput,
    error?: ToolError,
  ) => {
    const result: StepResult = {
      index: p.index,
      tool: p.tool.name,
      status,
      phase,
      elapsed_ms: Math.round(performance.now() - started),
    };
    if (out) {
      const anchor = anchorOf(out);
      if (anchor) result.interaction_id = anchor;
      result.summary = out.text.split("\n")[0].slice(0, 200);
      if (out.structured.interaction_id !== undefined && !out.isError) {
        run.observation = { index: p.index, out };
      }
      if (opts.screenshots && out.structured.screenshot) result.screenshot = out.structured.screenshot;
    }
    if (error) result.error = { code: error.code, message: error.message };
    run.steps.push(result);
    return result;
  };
  for (const p of plan) {
    if (run.stop) {
      run.steps.push({
        index: p.index,
        tool: p.tool.name,
        status: "skipped",
        phase: "not_started",
        elapsed_ms: 0,
      });
      continue;
    }
    const started = performance.now();
    const remaining = deadlineAt - started;
    const watch = new StepWatch();
    const running = remaining > 0
      ? p.tool.run(p.args, watchedApp(app, watch, () => deadlineError(p, opts.deadlineMs, "started")))
      : undefined;
    const out = running ? await Promise.race([running, later(remaining, undefined)]) : undefined;
    if (out && !out.isError) {
      record(p, started, "ok", "completed", out);
      continue;
    }
    if (out) {
      const failure = { index: p.index, tool: p.tool.name, error: stepError(out) };
      record(p, started, "failed", "completed", out, failure.error);
      if (!opts.continueOnError) run.stop = { ...failure, timedOut: false };
      else run.failure ??= failure;
      continue;
    }
    // The deadline passed. A step that began its interaction (whether or not that interaction is
    // still open) keeps its anchor and, within a short grace, its result; one that had not is
    // stopped before it can dispatch, so "not dispatched" stays true after the batch returns.
    const anchor = watch.anchor;
    if (!running) {
      const error = deadlineError(p, opts.deadlineMs, "not_started");
      record(p, started, "failed", "not_started", undefined, error);
      run.stop = { index: p.index, tool: p.tool.name, error, timedOut: true };
      continue;
    }
    if (anchor) {
      const late = await Promise.race([running, later(DISPATCHED_GRACE_MS, undefined)]);
      const phase = late ? "completed" : "dispatched";
      const error = deadlineError(p, opts.deadlineMs, phase, anchor);
      record(p, started, "timed_out", phase, late, error).interaction_id ??= anchor;
      run.stop = { index: p.index, tool: p.tool.name, error, timedOut: true };
    } else {
      watch.stop();
      const error = deadlineError(p, opts.deadlineMs, "started");
      record(p, started, "failed", "started", undefined, error);
      run.stop = { index: p.index, tool: p.tool.name, error, timedOut: true };
    }
    // A step still running finishes on its own bounds; its result is not awaited.
    running.catch(() => {});
  }
  return run;
}

function present(run: Run, batchId: string): ToolOutput {
  const failure = run.stop ?? run.failure;
  const status = run.stop ? (run.stop.timedOut ? "timed_out" : "failed") : run.failure ? "degraded" : "ok";
  const error = failure && new ToolError({
    code: failure.error.code,
    message: failure.error.code === "batch_deadline_exceeded"
      ? failure.error.message
      : `steps[${failure.index}] (${failure.tool}) failed: ${failure.error.message}`,
    retry: failure.error.retry,
    recovery: failure.error.recovery,
    affected: failure.error.affected,
    details: {
      ...(failure.error.code === "batch_deadline_exceeded" ? failure.error.details : {}),
      step_index: failure.index,
      tool: failure.tool,
      cause: failure.error.message,
    },
  });
  const obs = run.observation;
  const lines = [
    error
      ? `batch ${status} at steps[${failure.index}] (${failure.tool}): ${error.code}: ${failure.error.message}`
      : `batch ok: ${run.steps.length} steps`,
  ];
  if (error?.recovery) lines.push(`Recovery: ${error.recovery}`);
  for (const s of run.steps) {
    lines.push(
      `[${s.index}] ${s.tool} ${s.status}${
        s.status === "timed_out" || s.phase === "started" ? ` (${s.phase})` : ""
      }${s.interaction_id ? ` (${s.interaction_id})` : ""} ${s.elapsed_ms} ms${
        s.error ? `: ${s.error.code}` : ""
      }`,
    );
  }
  if (obs) lines.push(`final observation from steps[${obs.index}]:`, obs.out.text);
  const images: ImagePart[] | undefined = obs?.out.images;
  return {
    text: lines.join("\n"),
    structured: {
      status,
      batch_id: batchId,
      steps: run.steps,
      ...(error ? { error: error.toJSON() } : {}),
      ...(obs ? { observation_step: obs.index, observation: obs.out.structured } : {}),
    },
    ...(images && images.length > 0 ? { images } : {}),
    ...(status === "failed" || status === "timed_out" ? { isError: true } : {}),
  };
}

function invalidStep(index: number, tool: string, error: z.ZodError): ToolError {
  const inner = invalidArguments(tool, error);
  const argument = (inner.affected?.argument ?? "(arguments)").replace("(arguments)", "");
  return new ToolError({
    code: inner.code,
    message:
      `steps[${index}] (${tool}) has invalid arguments: ${inner.message} Nothing in the batch was run.`,
    retry: "never",
    recovery:
      `Fix steps[${index}].args to match the ${tool} input schema from tools/list, then resubmit the batch.`,
    affected: { argument: `steps.${index}.args${argument ? "." + argument : ""}` },
    details: { step_index: index, tool, ...inner.details },
  });
}

/** batch over the control tools; `extra` adds tools defined beside it (wait). */
export function batchTool(extra: Tool[]): Tool {
  const stepTools = [
    ...pageTools,
    ...inspectTools,
    ...actionTools,
    ...formTools,
    ...interactionTools,
    ...viewportTools,
    ...downloadTools,
    ...extra,
  ].filter((t) => t.capability === "control");
  const byName = new Map(stepTools.map((t) => [t.name, t]));
  const names = [...byName.keys()] as [string, ...string[]];
  return defineTool({
    name: "batch",
    capability: "control",
    output: OUTPUT_SCHEMAS.batch,
    description:
      "Run control tools in order as steps {tool, args}, all validated first; stops at the first failure unless continue_on_error. Returns each step's status, elapsed_ms and interaction, and the last step's observation (screenshots: true: every step's).",
    input: z.strictObject({
      // Advertised as one line naming the tools a step may run (the enum's values, without its JSON).
      steps: advertiseAs(
        z.array(z.strictObject({
          tool: z.enum(names),
          args: z.record(z.string(), z.unknown()).optional(),
        })).min(1).max(MAX_STEPS),
        { type: "array", description: `[{tool, args?}]; tool: ${names.join(", ")}` },
      ),
      continue_on_error: z.boolean().optional(),
      deadline_ms: z.number().int().min(100).max(300_000).describe("Default 60000").optional(),
      screenshots: z.boolean().optional(),
    }),
    handler: async (args, app) => {
      const plan: Planned[] = args.steps.map((step, index) => {
        const tool = byName.get(step.tool);
        if (!tool) throw new Error(`unreachable: ${step.tool} passed the step enum`);
        const stepArgs = step.args ?? {};
        const parsed = tool.input.safeParse(stepArgs);
        if (!parsed.success) throw invalidStep(index, tool.name, parsed.error);
        return { index, tool, args: stepArgs };
      });
      const session = app.browsers.require();
      const batchId = `s${session.ordinal}-b${++batchCounter}`;
      const run = await runSteps(batchScoped(app, batchId), plan, {
        continueOnError: args.continue_on_error ?? false,
        deadlineMs: args.deadline_ms ?? DEFAULT_DEADLINE_MS,
        screenshots: args.screenshots ?? false,
      });
      return present(run, batchId);
    },
  });
}
