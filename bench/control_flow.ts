/**
 * Control-surface benchmark: one scripted 40-action flow over the fixtures (a form with date, select,
 * checkbox, styled file input, drag and hover; an overlay that intercepts clicks and a canvas; alert,
 * confirm and prompt dialogs; a download; a popup; a same-origin form page) through krometrail and, where
 * they have an equivalent tool, @playwright/mcp and chrome-devtools-mcp (the steps are in
 * lib/flow_steps.ts). Prints each system's completion rate, explicit-failure rate and median action
 * latency, then each system's memory right after its flow: the MCP server process's RSS and the PSS of the
 * Chromium processes it started (lib/proc_memory.ts). It never asserts.
 *
 *   deno run --frozen -A bench/control_flow.ts
 */
import type { Client } from "@modelcontextprotocol/client";
import { serveStatic } from "../src/demo/static_server.ts";
import { startServer } from "../tests/e2e/harness.ts";
import { CHROMIUM } from "./lib/chromium.ts";
import { type CallSpec, type Ctx, type Result, type Step, steps, textOf } from "./lib/flow_steps.ts";
import {
  connectDevtools,
  connectPlaywright,
  DEVTOOLS_BIN,
  type PeerConnection,
  PLAYWRIGHT_BIN,
} from "./lib/peer_clients.ts";
import { installPeers } from "./lib/peers.ts";
import { type Memory, MEMORY_NOTE, memoryOf, memoryRows } from "./lib/proc_memory.ts";
import { descendants, reap, type Stat } from "./lib/proc_sampling.ts";
import { formatTable, int } from "./lib/table.ts";

interface Outcome {
  label: string;
  ms: number;
  ok: boolean;
  /** A failure that said so (isError with a message), as opposed to a silent or crashed call. */
  explicit: boolean;
  detail?: string;
}

/** One system's run: its outcomes and its memory after the flow, or why it was not measured. */
interface Run {
  name: string;
  /** The row label in the results table. */
  row: string;
  outcomes: Outcome[];
  memory?: Memory;
  error?: string;
  /** Processes still running 2 s after it closed, killed. */
  killed?: string[];
}

/** The file each system uploads; the peers only read files inside their workspace, so each gets a copy. */
async function uploadFile(dir: string): Promise<string> {
  const path = `${dir}/upload.txt`;
  await Deno.writeTextFile(path, "benchmark upload\n");
  return path;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  return await client.callTool({ name, arguments: args }, { timeout: 30_000 }) as Result;
}

async function runSystem(
  client: Client,
  flow: Step[],
  pick: (s: Step) => CallSpec[] | undefined,
): Promise<Outcome[]> {
  const ctx: Ctx = { last: new Map() };
  const out: Outcome[] = [];
  for (const step of flow) {
    const specs = pick(step);
    if (!specs) continue;
    const t0 = performance.now();
    let ok = true;
    let explicit = true;
    let detail: string | undefined;
    for (const spec of specs) {
      try {
        const c = typeof spec === "function" ? spec(ctx) : spec;
        const r = await call(client, c.name, c.args);
        ctx.last.set(c.name, r);
        const code = (r.structuredContent?.error as { code?: string } | undefined)?.code;
        if (step.expect) {
          ok = r.isError === true && (code === undefined || code === step.expect);
          // A success where an error is due is silent, not an explicit failure.
          if (!r.isError) explicit = false;
          if (!ok) detail = `expected ${step.expect}, got ${r.isError ? code ?? "an error" : "success"}`;
        } else if (r.isError) {
          ok = false;
          explicit = textOf(r).length > 0;
          detail = `${code ?? ""} ${textOf(r).slice(0, 140)}`.trim();
        }
      } catch (err) {
        ok = false;
        explicit = false;
        detail = err instanceof Error ? err.message.slice(0, 140) : String(err);
      }
      if (!ok) break;
    }
    out.push({ label: step.label, ms: performance.now() - t0, ok, explicit, ...(detail ? { detail } : {}) });
  }
  return out;
}

/** Memory right after the flow; `undefined` without a pid. */
const memoryAfter = (pid: number | null) => pid ? memoryOf(pid) : undefined;

async function runKrometrail(flow: Step[]): Promise<Run> {
  const run: Run = { name: "krometrail", row: "krometrail", outcomes: [] };
  console.error("running krometrail …");
  const server = await startServer({ env: { KROMETRAIL_CHROME: CHROMIUM } });
  try {
    await server.call("start_browser", { headless: true, temporary: true });
    run.outcomes = await runSystem(server.client, flow, (s) => [s.krometrail]);
    run.memory = memoryAfter(server.pid);
    await server.call("stop_browser");
  } finally {
    await server.close();
  }
  return run;
}

/**
 * A peer: connects it in its own temp dir, builds its flow (`prepare` may read what it needs first,
 * untimed), runs it, reads its memory, closes it and kills what it left running.
 */
async function runPeer(
  run: Run,
  connect: (tmp: string) => Promise<PeerConnection>,
  prepare: (client: Client, tmp: string) => Promise<Step[]>,
  pick: (s: Step) => CallSpec[] | undefined,
  close: (client: Client) => Promise<void>,
): Promise<Run> {
  const tmp = await Deno.makeTempDir({ prefix: "krometrail-bench-flow-peer-" });
  try {
    console.error(`running ${run.name} …`);
    const { client, pid } = await connect(tmp);
    let tree = new Map<number, Stat>();
    try {
      run.outcomes = await runSystem(client, await prepare(client, tmp), pick);
      run.memory = memoryAfter(pid);
      if (pid) tree = descendants(pid);
    } finally {
      await close(client).catch(() => {});
      await client.close().catch(() => {});
      run.killed = await reap(tree);
    }
  } catch (err) {
    run.error = err instanceof Error ? err.message.split("\n")[0] : String(err);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return run;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
}

function summary(name: string, outcomes: Outcome[]): string[] {
  const ok = outcomes.filter((o) => o.ok).length;
  const failed = outcomes.filter((o) => !o.ok);
  return [
    name,
    `${outcomes.length}`,
    `${ok} (${Math.round((ok / Math.max(1, outcomes.length)) * 100)}%)`,
    `${failed.filter((o) => o.explicit).length}/${failed.length}`,
    `${int(median(outcomes.map((o) => o.ms)))} ms`,
  ];
}

const site = serveStatic();
const kromoDir = await Deno.makeTempDir({ prefix: "krometrail-bench-flow-" });
try {
  const flow = steps(site.origin, await uploadFile(kromoDir));
  const runs: Run[] = [await runKrometrail(flow)];

  const present = await Promise.all(
    [PLAYWRIGHT_BIN, DEVTOOLS_BIN].map((p) => Deno.stat(p).then(() => true, () => false)),
  );
  const installError = present.every(Boolean) ? undefined : await installPeers();
  runs.push(
    await runPeer(
      { name: "@playwright/mcp", row: "@playwright/mcp (equivalent tools only)", outcomes: [] },
      // Coordinate tools (mouse wheel, click at x/y) are opt-in there: --caps vision.
      (tmp) => connectPlaywright(tmp, ["--caps", "vision"]),
      async (_client, tmp) => steps(site.origin, await uploadFile(tmp)),
      (s) => s.playwright,
      async (client) => void await call(client, "browser_close", {}),
    ),
    await runPeer(
      { name: "chrome-devtools-mcp", row: "chrome-devtools-mcp (equivalent tools only)", outcomes: [] },
      connectDevtools,
      async (client, tmp) => {
        // Its page-scoped tools name a pageId: the first page's is read once, untimed.
        const pages = textOf(await call(client, "list_pages", {}));
        const pageId = Number(pages.match(/(\d+): /)?.[1] ?? 1);
        return steps(site.origin, await uploadFile(tmp), pageId);
      },
      (s) => s.devtools,
      async () => {},
    ),
  );

  console.log(
    `\nControl flow benchmark: ${flow.length} actions over the fixtures (CSS selectors for krometrail and ` +
      "Playwright; snapshot uids for chrome-devtools-mcp)\n",
  );
  const rows = [["system", "actions", "completed", "explicit failures", "median action"]];
  for (const r of runs) if (r.outcomes.length > 0) rows.push(summary(r.row, r.outcomes));
  console.log(formatTable(rows));
  const kromo = runs[0].outcomes;
  const kromoOk = kromo.filter((o) => o.ok).length / Math.max(1, kromo.length);
  console.log(
    `\nTarget: ≥ 95% of actions complete and every failure explicit — krometrail ${
      kromoOk >= 0.95 && kromo.every((o) => o.ok || o.explicit) ? "PASS" : "MISS"
    } (${Math.round(kromoOk * 100)}%)`,
  );
  const labels = new Set(flow.map((s) => s.label));
  for (const r of runs.slice(1)) {
    if (r.outcomes.length === 0) continue;
    const ran = new Set(r.outcomes.map((o) => o.label));
    const left = [...labels].filter((l) => !ran.has(l));
    console.log(`${r.name} has no equivalent for (left out of its row): ${left.join(", ") || "none"}`);
  }

  console.log("\nMemory right after each system's flow, before its browser is closed:\n");
  console.log(formatTable(memoryRows(runs.filter((r) => !r.error).map((r) => [r.name, r.memory]))));
  console.log(`\n${MEMORY_NOTE}`);

  for (const r of runs) {
    const failed = r.outcomes.filter((o) => !o.ok);
    if (failed.length) console.log(`\n${r.name} failures:`);
    for (const o of failed) console.log(`  ${o.label}: ${o.detail ?? "failed"}`);
    if (r.killed?.length) {
      console.log(`\n${r.name}: still running 2 s after close, killed: ${r.killed.join(", ")}`);
    }
    if (r.error) console.log(`\n${r.name} not measured: ${installError ?? r.error}`);
  }
} finally {
  await site.close();
  await Deno.remove(kromoDir, { recursive: true }).catch(() => {});
}
