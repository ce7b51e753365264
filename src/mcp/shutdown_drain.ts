/**
 * The shutdown drain (spec: "MCP protocol and discovery"): cleanup steps run in order against one
 * application deadline. A step that has not finished when it passes, and every step after it, is
 * reported as incomplete rather than waited for; a step that fails is logged and the drain goes on. A
 * step with its own budget that overruns it is left behind (incomplete) so the steps after it still run.
 */
import { logger } from "../log.ts";

const log = logger("main");

/** Shutdown drains request and browser cleanup against one deadline (spec: 30 s). */
export const SHUTDOWN_DEADLINE_MS = 30_000;

export interface DrainStep {
  /** Short name for the report: "requests", "browser", "recorder". */
  name: string;
  run: () => Promise<unknown> | unknown;
  /** At most this long of the deadline; past it the step is incomplete and the drain moves on. */
  budgetMs?: number;
}

export interface DrainReport {
  complete: boolean;
  /** Steps that finished (failed ones included: they ended). */
  finished: string[];
  /** Steps that failed, with a short reason. */
  failed: Array<{ step: string; error: string }>;
  /** Steps left behind past their budget, the step running when the deadline passed, the steps never started. */
  incomplete: string[];
  elapsed_ms: number;
}

/** Runs `steps` in order until they all ended or `deadlineMs` passed; says which did not finish. */
export async function drain(steps: DrainStep[], deadlineMs = SHUTDOWN_DEADLINE_MS): Promise<DrainReport> {
  const started = performance.now();
  const finished: string[] = [];
  const failed: DrainReport["failed"] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), deadlineMs);
  });
  const incomplete: string[] = [];
  let next = 0;
  try {
    for (; next < steps.length; next++) {
      const step = steps[next];
      const ran = Promise.resolve().then(step.run).then(
        () => "done" as const,
        (err) => {
          failed.push({ step: step.name, error: String((err as Error)?.message ?? err).slice(0, 200) });
          return "done" as const;
        },
      );
      let budgetTimer: ReturnType<typeof setTimeout> | undefined;
      const overrun = step.budgetMs === undefined ? undefined : new Promise<"overrun">((resolve) => {
        budgetTimer = setTimeout(() => resolve("overrun"), step.budgetMs);
      });
      const outcome = await Promise.race([ran, expired, ...(overrun ? [overrun] : [])]);
      clearTimeout(budgetTimer);
      if (outcome === "expired") break;
      if (outcome === "overrun") incomplete.push(step.name);
      else finished.push(step.name);
    }
  } finally {
    clearTimeout(timer);
  }
  incomplete.push(...steps.slice(next).map((s) => s.name));
  const report = {
    complete: incomplete.length === 0,
    finished,
    failed,
    incomplete,
    elapsed_ms: Math.round(performance.now() - started),
  };
  for (const f of failed) log.warn("shutdown step {step} failed: {error}", f);
  if (!report.complete) {
    // Plain text (no placeholders, which would quote the list): the line operators grep for.
    log.warn(
      `cleanup incomplete: ${
        incomplete.join(", ")
      } did not finish within the ${deadlineMs} ms shutdown deadline`,
    );
  }
  return report;
}
