/**
 * Scenario benchmark (issue 14): one 10-step scenario on fixtures/site/scenario_app.html through
 * `capture_browser_scenario`, beside the same steps as individual MCP tool calls (start_browser,
 * set_viewport, navigate_page, the actions, a take_screenshot wherever the scenario captures one,
 * stop_browser). Both go through a real MCP client over stdio to the real server and real Chromium;
 * runs alternate so drift hits both sides alike. Target: the scenario's median wall time ≤ 1.2× the
 * median sum of the calls. It reports; it never asserts. Progress goes to stderr, the table to stdout,
 * a JSON summary to .bench-out/.
 *
 *   deno task bench:scenario [--runs=5] [--warmup=1]
 */
import { join } from "node:path";
import { serveStatic } from "../src/demo/static_server.ts";
import { REPO_ROOT } from "../tests/e2e/harness.ts";
import { argsOrExit } from "./lib/args.ts";
import { BenchServer } from "./lib/pagestate_server.ts";
import { summarize } from "./lib/pagestate_stats.ts";
import { dec, formatTable, int } from "./lib/table.ts";

interface Options {
  runs: number;
  warmup: number;
}

function parse(args: string[]): Options {
  const o: Options = { runs: 5, warmup: 1 };
  for (const a of args) {
    const [flag, value = ""] = a.split("=");
    const n = Number(value);
    if (flag === "--runs" && Number.isInteger(n) && n >= 1) o.runs = n;
    else if (flag === "--warmup" && Number.isInteger(n) && n >= 0) o.warmup = n;
    else throw new Error(`unknown or bad argument ${a}; known: --runs=N (≥ 1), --warmup=N (≥ 0)`);
  }
  return o;
}

const TARGET_RATIO = 1.2;
const VIEWPORT = { width: 1280, height: 720 };

type Locator = Record<string, string>;
interface Step {
  step_id: string;
  action: "fill" | "click" | "check" | "uncheck" | "hover";
  locator: Locator;
  value?: string;
}

/** Ten steps an agent would take on the order form; each changes what is on screen but hover. */
const STEPS: Step[] = [
  { step_id: "fill-name", action: "fill", locator: { label: "Name" }, value: "Ada Lovelace" },
  { step_id: "add-item", action: "click", locator: { role: "button", name: "Add item" } },
  { step_id: "add-another", action: "click", locator: { role: "button", name: "Add item" } },
  { step_id: "gift-wrap", action: "check", locator: { label: "Gift wrap" } },
  { step_id: "apply-coupon", action: "click", locator: { role: "button", name: "Apply coupon" } },
  { step_id: "dismiss", action: "click", locator: { role: "button", name: "Dismiss" } },
  { step_id: "hover-review", action: "hover", locator: { test_id: "review" } },
  { step_id: "unwrap", action: "uncheck", locator: { label: "Gift wrap" } },
  { step_id: "rename", action: "fill", locator: { label: "Name" }, value: "Grace Hopper" },
  { step_id: "review", action: "click", locator: { test_id: "review" } },
];

function scenarioRequest(url: string): Record<string, unknown> {
  return {
    browser: { mode: "launch", headless: true },
    start_url: url,
    environment: { viewport: { ...VIEWPORT, device_scale_factor: 1 } },
    actions: STEPS.map((s) => ({
      step_id: s.step_id,
      action: s.action,
      locator: s.locator,
      ...(s.value !== undefined ? { value: s.value } : {}),
    })),
    capture: { after_each_step: ["screenshot"], at_end: ["url"], events: [] },
  };
}

/**
 * The step as an agent's own tool call. check/uncheck become a click: the agent knows the box's state
 * from the step before, where the scenario reads it first (part of what it costs).
 */
function stepCall(s: Step): { name: string; args: Record<string, unknown> } {
  const quiet = { inline_images: false };
  switch (s.action) {
    case "fill":
      return { name: "fill", args: { locator: s.locator, value: s.value, ...quiet } };
    case "hover":
      return { name: "hover", args: { locator: s.locator, ...quiet } };
    default:
      return { name: "click", args: { locator: s.locator, ...quiet } };
  }
}

async function sha256(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();
}

interface CallsRun {
  /** Sum of the calls' MCP round trips. */
  sum_ms: number;
  /** First call sent to last answer (the sum plus the client's own gaps). */
  wall_ms: number;
  /** The ten steps alone: each action's round trip plus its screenshot's. */
  steps_ms: number;
  calls: number;
  per_tool_ms: Record<string, number>;
  screenshots: string[];
}

async function runCalls(server: BenchServer, url: string): Promise<CallsRun> {
  const per: Record<string, number> = {};
  const shots: string[] = [];
  let sum = 0;
  let steps = 0;
  let calls = 0;
  const t0 = performance.now();
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await server.call(name, args);
    sum += r.ms;
    calls++;
    per[name] = (per[name] ?? 0) + r.ms;
    return r;
  };
  const screenshot = async () => {
    // Inline, as an agent receives it; the bytes also check both sides saw the same pictures.
    const r = await call("take_screenshot", {});
    const image = r.result.content.find((c) => c.type === "image");
    shots.push(image?.data ? await sha256(Uint8Array.fromBase64(image.data)) : "(not inline)");
  };
  await call("start_browser", { temporary: true, headless: true });
  try {
    await call("set_viewport", { ...VIEWPORT, inline_images: false });
    await call("navigate_page", { url, inline_images: false });
    await screenshot();
    for (const step of STEPS) {
      const c = stepCall(step);
      const before = sum;
      await call(c.name, c.args);
      await screenshot();
      steps += sum - before;
    }
  } finally {
    await call("stop_browser", {});
  }
  return {
    sum_ms: sum,
    wall_ms: performance.now() - t0,
    steps_ms: steps,
    calls,
    per_tool_ms: per,
    screenshots: shots,
  };
}

interface ScenarioRun {
  wall_ms: number;
  /** The capture's own duration_ms (the run inside the server). */
  duration_ms: number | undefined;
  /** The ten steps alone: the sum of their elapsed_ms (action and capture). */
  steps_ms: number;
  steps: number;
  failed: string[];
  screenshots: string[];
}

async function runScenario(server: BenchServer, url: string): Promise<ScenarioRun> {
  const r = await server.call("capture_browser_scenario", scenarioRequest(url));
  const steps = Array.isArray(r.structured.steps) ? r.structured.steps as Record<string, unknown>[] : [];
  const failed = steps.filter((s) => s.status !== "completed").map((s) => `${s.step_id}: ${s.status}`);
  const screenshots = steps.map((s) => {
    const shot = (s.artifacts as Record<string, { state?: string; value?: { sha256?: string } }> | undefined)
      ?.screenshot;
    return shot?.state === "captured" && shot.value?.sha256
      ? shot.value.sha256
      : `(${shot?.state ?? "absent"})`;
  });
  const duration = r.structured.duration_ms;
  const elapsed = steps.slice(1).reduce(
    (t, s) => t + (typeof s.elapsed_ms === "number" ? s.elapsed_ms : 0),
    0,
  );
  return {
    wall_ms: r.ms,
    duration_ms: typeof duration === "number" ? duration : undefined,
    steps_ms: elapsed,
    steps: steps.length,
    failed,
    screenshots,
  };
}

const opts = argsOrExit(parse);
const verdict = (ok: boolean) => ok ? "PASS" : "MISS";
const ms = (n: number) => `${int(n)} ms`;
const site = serveStatic();
const tmp = await Deno.makeTempDir({ prefix: "krometrail-bench-scenario-" });
const startedAt = new Date().toISOString();
let server: BenchServer | undefined;
try {
  server = await BenchServer.start("scenario", tmp);
  const url = `${site.origin}/scenario_app.html`;
  const scenarios: ScenarioRun[] = [];
  const callRuns: CallsRun[] = [];
  for (let i = 0; i < opts.warmup + opts.runs; i++) {
    const warm = i < opts.warmup;
    // Alternate which side goes first so a slow moment does not always land on the same one.
    const order = i % 2 === 0 ? ["scenario", "calls"] : ["calls", "scenario"];
    for (const side of order) {
      if (side === "scenario") {
        const s = await runScenario(server, url);
        console.error(`[scenario] run ${i + 1}${warm ? " (warm-up)" : ""}: scenario ${int(s.wall_ms)} ms`);
        if (!warm) scenarios.push(s);
      } else {
        const c = await runCalls(server, url);
        console.error(
          `[scenario] run ${i + 1}${warm ? " (warm-up)" : ""}: ${c.calls} calls, sum ${int(c.sum_ms)} ms`,
        );
        if (!warm) callRuns.push(c);
      }
    }
  }
  const med = (xs: number[]) => summarize(xs).median;
  const scen = summarize(scenarios.map((s) => s.wall_ms));
  const sums = summarize(callRuns.map((c) => c.sum_ms));
  const inner = scenarios.flatMap((s) => s.duration_ms === undefined ? [] : [s.duration_ms]);
  const ratio = scen.median / sums.median;
  const last = scenarios[scenarios.length - 1];
  const lastCalls = callRuns[callRuns.length - 1];
  const samePictures = last.screenshots.filter((h, i) => h === lastCalls.screenshots[i]).length;
  const failures = scenarios.flatMap((s) => s.failed);
  const perTool = Object.keys(lastCalls.per_tool_ms).map((name) =>
    `${name} ${int(med(callRuns.map((c) => c.per_tool_ms[name] ?? 0)))}`
  ).join(", ");
  const n = `n=${scen.n}`;
  const shots = STEPS.length + 1;

  const rows: string[][] = [
    [
      "figure (medians unless said)",
      "capture_browser_scenario",
      `${lastCalls.calls} individual calls`,
      "target",
      "",
    ],
    [
      `wall time, ${STEPS.length} steps + initial, a screenshot each (${n}) median / max`,
      `${ms(scen.median)} / ${ms(scen.max)}`,
      `${ms(sums.median)} / ${ms(sums.max)}`,
      "",
      "",
    ],
    [
      "  the steps (each action with its screenshot)",
      ms(med(scenarios.map((s) => s.steps_ms))),
      ms(med(callRuns.map((c) => c.steps_ms))),
      "",
      "",
    ],
    [
      "  the rest (launch, environment, start URL, initial screenshot, cleanup)",
      ms(med(scenarios.map((s) => s.wall_ms - s.steps_ms))),
      ms(med(callRuns.map((c) => c.sum_ms - c.steps_ms))),
      "",
      "",
    ],
    [
      "  inside the server (duration_ms) / first call to last answer",
      inner.length ? ms(med(inner)) : "—",
      ms(med(callRuns.map((c) => c.wall_ms))),
      "",
      "",
    ],
    [
      "scenario / sum of the calls",
      `${dec(ratio, 2)}×`,
      "",
      `≤ ${dec(TARGET_RATIO, 1)}×`,
      verdict(ratio <= TARGET_RATIO && failures.length === 0),
    ],
    [
      "same pictures (screenshot SHA-256 per step, last run of each)",
      `${samePictures} / ${last.screenshots.length}`,
      `${lastCalls.screenshots.length} taken`,
      `${shots} / ${shots}`,
      verdict(samePictures === shots && last.screenshots.length === shots),
    ],
  ];
  if (failures.length > 0) {
    rows.push(["scenario steps not completed", failures.join("; "), "", "none", "MISS"]);
  }
  const version = server.handle.client.getServerVersion()?.version ?? "?";
  console.log(`\nScenario benchmark (krometrail ${version})\n`);
  console.log(formatTable(rows));
  console.log(`\nIndividual calls per tool, median ms of each run's total: ${perTool}.`);

  const outDir = join(REPO_ROOT, ".bench-out");
  await Deno.mkdir(outDir, { recursive: true });
  const out = join(outDir, `scenario-${startedAt.replace(/[:.]/g, "-")}.json`);
  await Deno.writeTextFile(
    out,
    JSON.stringify(
      {
        started_at: startedAt,
        options: opts,
        steps: STEPS.map((s) => s.step_id),
        scenario: { wall_ms: scen, duration_ms: summarize(inner), runs: scenarios },
        calls: { sum_ms: sums, runs: callRuns },
        ratio,
        target_ratio: TARGET_RATIO,
      },
      null,
      2,
    ) + "\n",
  );
  console.log(`\nJSON summary: ${out}`);
} finally {
  await server?.handle.close().catch(() => {});
  await site.close();
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
}
