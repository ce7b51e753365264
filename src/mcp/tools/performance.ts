import { z } from "zod";
import { navigableUrl, navigation } from "../../control/navigation.ts";
import { usablePage } from "../../control/interaction.ts";
import {
  activeTrace,
  startTrace,
  stopTrace,
  type TraceRun,
  traceToStop,
} from "../../devtools/performance.ts";
import { reportTrace } from "../../devtools/performance_report.ts";
import { ToolError } from "../../errors.ts";
import type { AppContext } from "../context.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output, type ToolOutput } from "../response.ts";
import { pageId } from "../schemas.ts";
import { actionEnv } from "./action_env.ts";

/** Load wait of reload/navigate (deadlines.ts mirrors it). */
export const PERF_TIMEOUT_MS = 15_000;
/**
 * After load, the trace keeps recording this long (default) so late work lands in it: a banner a few
 * hundred ms after load, a long task from a timer.
 */
export const PERF_SETTLE_MS = 2_000;
export const PERF_SETTLE_MAX_MS = 10_000;

function urlArgument(mode: string, url: string | undefined): void {
  if (mode === "navigate" && url === undefined) {
    throw new ToolError({
      code: "invalid_arguments",
      message: 'measure_performance mode "navigate" needs url.',
      retry: "never",
      recovery:
        'Pass url (absolute, e.g. http://127.0.0.1:3000/), or use mode "reload" to measure the current page.',
      affected: { argument: "url" },
    });
  }
  if (mode !== "navigate" && url !== undefined) {
    throw new ToolError({
      code: "invalid_arguments",
      message: `measure_performance takes url only with mode "navigate" (got mode "${mode}").`,
      retry: "never",
      recovery: 'Use mode "navigate" with url, or drop url.',
      affected: { argument: "url" },
    });
  }
}

async function finish(app: AppContext, run: TraceRun, settleMs?: number): Promise<ToolOutput> {
  const session = app.browsers.require();
  const stopped = await stopTrace(session, run);
  const report = await reportTrace(
    session,
    run,
    stopped,
    (gz) => app.store.writeEvidence("traces", "json.gz", gz),
    { settle_ms: settleMs },
  );
  return output(report.text, report.structured);
}

export const performanceTools: Tool[] = [
  defineTool({
    name: "measure_performance",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.measure_performance,
    description:
      "Trace a page with Chrome's trace engine: mode reload or navigate (url) measures a load; start, act, stop measures an interaction. Reports LCP and its element, CLS with each shift's sources, INP phases, long tasks and insights (shifts, long tasks also as timeline events); the raw trace is a resource.",
    input: z.strictObject({
      mode: z.enum(["reload", "navigate", "start", "stop"]),
      url: z.string().max(8192).optional().describe("navigate only"),
      page_id: pageId.optional(),
      timeout_ms: z.number().int().min(1_000).max(60_000).optional().describe(
        `Load timeout; default ${PERF_TIMEOUT_MS}`,
      ),
      settle_ms: z.number().int().min(0).max(PERF_SETTLE_MAX_MS).optional().describe(
        `Traced after load; default ${PERF_SETTLE_MS}`,
      ),
    }),
    handler: async (args, app) => {
      urlArgument(args.mode, args.url);
      const session = app.browsers.require();
      if (args.mode === "stop") {
        const run = traceToStop(session);
        if (args.page_id !== undefined && args.page_id !== run.page.id) {
          throw new ToolError({
            code: "trace_on_other_page",
            message: `The recording trace is on page ${run.page.id}, not ${args.page_id}.`,
            retry: "after_recovery",
            recovery: `Stop it with page_id "${run.page.id}" or without page_id.`,
            affected: { page_id: run.page.id },
          });
        }
        return await finish(app, run);
      }
      if (args.mode === "navigate" && args.url !== undefined) navigableUrl(args.url, app.config);
      const page = usablePage(session.page(args.page_id));
      const run = await startTrace(session, page, args.mode);
      if (args.mode === "start") {
        return output(
          `tracing ${page.id}: act on the page, then measure_performance {mode: "stop"} to analyze (LCP, CLS, INP, long tasks)`,
          { status: "recording", mode: "start", page_id: page.id, started_at_ms: run.startedAtMs },
        );
      }
      const settleMs = args.settle_ms ?? PERF_SETTLE_MS;
      try {
        const env = actionEnv(app, { detail: "concise", inline_images: false });
        const timeoutMs = args.timeout_ms ?? PERF_TIMEOUT_MS;
        const obs = args.mode === "navigate"
          ? await navigation(env, "navigate", {
            url: navigableUrl(args.url ?? "", app.config),
            timeoutMs,
            waitUntil: "load",
          }, page.id)
          : await navigation(env, "reload", { timeoutMs, waitUntil: "load" }, page.id);
        await new Promise((r) => setTimeout(r, settleMs));
        const out = await finish(app, run, settleMs);
        const interactionId = obs.structured.interaction_id;
        if (typeof interactionId === "string") {
          out.structured.interaction_id = interactionId;
          out.text += `\n${
            args.mode === "reload" ? "reload_page" : "navigate_page"
          } interaction ${interactionId}`;
        }
        return out;
      } catch (err) {
        // A failed load still ends the trace, so the next measurement can start.
        if (activeTrace(session) === run) await stopTrace(session, run).catch(() => {});
        throw err;
      }
    },
  }),
];
