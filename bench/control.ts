/**
 * Control-path benchmark: the same flow on fixtures/site/heavy.html (navigate, snapshot, click, fill)
 * through krometrail, @playwright/mcp and chrome-devtools-mcp, printed side by side; then the devtools
 * round trips (get_network_request, emulate) of krometrail beside chrome-devtools-mcp (lib/devtools_bench.ts).
 * It compares; it never asserts timings. See bench/README.md.
 */
import type { Client } from "@modelcontextprotocol/client";
import { serveStatic } from "../src/demo/static_server.ts";
import { startServer } from "../tests/e2e/harness.ts";
import { CHROMIUM } from "./lib/chromium.ts";
import { installPeers } from "./lib/peers.ts";
import {
  CALL_TIMEOUT_MS,
  connectDevtools,
  connectPlaywright,
  DEVTOOLS_BIN,
  PLAYWRIGHT_BIN,
} from "./lib/peer_clients.ts";
import { type Report, table, targets, type ToolStats } from "./lib/control_report.ts";
import { breakdownTables, PhaseLog } from "./lib/breakdown.ts";
import {
  DEVTOOLS_ITERATIONS,
  DEVTOOLS_SITE,
  type DevtoolsFlow,
  devtoolsMcpFlow,
  devtoolsTable,
  krometrailDevtools,
  runDevtools,
} from "./lib/devtools_bench.ts";

const ITERATIONS = 12;

/**
 * The breakdown of where krometrail's time goes inside each call (lib/breakdown.ts) is printed after the
 * table; `--breakdown` asks for it explicitly, `--no-breakdown` leaves it out (and the server untimed).
 * `--only NAME[,NAME]`: run only these systems (e.g. `--only krometrail` while tuning; the targets
 * that compare with a peer then print n/a).
 */
const BREAKDOWN = !Deno.args.includes("--no-breakdown");
const onlyArg = Deno.args.indexOf("--only");
const ONLY = onlyArg >= 0 ? (Deno.args[onlyArg + 1] ?? "").split(",").filter(Boolean) : undefined;

interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}
interface Call {
  name: string;
  args: Record<string, unknown>;
}
interface Refs {
  button: string;
  textbox: string;
}

/** How one system expresses the flow; refs come from parsing its own snapshot. */
interface Flow {
  navigate(url: string): Call;
  snapshot(): Call;
  refs(snapshot: ToolResult): Refs;
  click(ref: string): Call;
  fill(ref: string, value: string): Call;
  /** chrome-devtools-mcp only: its default click, without the snapshot that makes it an observation. */
  bareClick?(ref: string): Call;
}

interface Session {
  client: Client;
  /** npm package version for peers; krometrail's comes from serverInfo. */
  version?: string;
  flow: Flow;
  /** The devtools round trips, for the systems compared there (krometrail, chrome-devtools-mcp). */
  devtools?: DevtoolsFlow;
  /** krometrail, unless --no-breakdown: the server's per-call phase log. */
  phases?: PhaseLog;
  close(): Promise<void>;
}

const textOf = (r: ToolResult) => r.content.map((c) => c.type === "text" ? c.text ?? "" : "").join("\n");

function match(text: string, re: RegExp, what: string): string {
  const m = text.match(re);
  if (!m?.[1]) throw new Error(`no ${what} in snapshot: ${text.slice(0, 400)}`);
  return m[1];
}

// --- systems -------------------------------------------------------------------------------------

async function startKrometrail(tmp: string): Promise<Session> {
  const phases = BREAKDOWN ? new PhaseLog(`${tmp}/phases.jsonl`) : undefined;
  const server = await startServer({
    env: {
      KROMETRAIL_CHROME: CHROMIUM,
      TMPDIR: tmp,
      ...(phases ? { KROMETRAIL_PHASE_TIMINGS: phases.path } : {}),
    },
  });
  try {
    const started = await server.call("start_browser", { headless: true, temporary: true });
    if (started.isError) throw new Error(`start_browser failed: ${textOf(started).slice(0, 400)}`);
  } catch (err) {
    await server.close();
    throw err;
  }
  const refOf = (r: ToolResult, role: string, name: string) => {
    const targets = (r.structuredContent?.targets ?? []) as Array<
      { ref: string; role: string; name: string }
    >;
    const hit = targets.find((t) => t.role === role && t.name === name);
    if (!hit) throw new Error(`no ${role} "${name}" in snapshot targets`);
    return hit.ref;
  };
  return {
    client: server.client,
    flow: {
      navigate: (url) => ({ name: "navigate_page", args: { url } }),
      snapshot: () => ({ name: "snapshot_page", args: {} }),
      refs: (r) => ({ button: refOf(r, "button", "Apply filter"), textbox: refOf(r, "textbox", "Filter") }),
      click: (ref) => ({ name: "click", args: { ref } }),
      fill: (ref, value) => ({ name: "fill", args: { ref, value } }),
    },
    devtools: krometrailDevtools,
    phases,
    async close() {
      await server.call("stop_browser").catch(() => {});
      await server.close();
    },
  };
}

async function startPlaywright(tmp: string): Promise<Session> {
  const { client, version } = await connectPlaywright(tmp);
  return {
    client,
    version, // serverInfo reports playwright-core's version instead
    flow: {
      navigate: (url) => ({ name: "browser_navigate", args: { url } }),
      snapshot: () => ({ name: "browser_snapshot", args: {} }),
      refs: (r) => ({
        button: match(textOf(r), /button "Apply filter" \[ref=([^\]]+)\]/, "Apply filter button"),
        textbox: match(textOf(r), /textbox "Filter" \[ref=([^\]]+)\]/, "Filter textbox"),
      }),
      click: (ref) => ({ name: "browser_click", args: { element: "Apply filter button", target: ref } }),
      fill: (ref, text) => ({ name: "browser_type", args: { element: "Filter textbox", target: ref, text } }),
    },
    async close() {
      await client.callTool({ name: "browser_close", arguments: {} }).catch(() => {});
      await client.close();
    },
  };
}

async function startDevtools(tmp: string): Promise<Session> {
  const { client, version } = await connectDevtools(tmp);
  let pageId: number;
  try {
    // Page-scoped tools require a pageId by default; the first page's is read once, untimed.
    const pages = await client.callTool({ name: "list_pages", arguments: {} }) as ToolResult;
    pageId = Number(match(textOf(pages), /^(\d+):/m, "page id in list_pages"));
  } catch (err) {
    await client.close().catch(() => {});
    throw err;
  }
  return {
    client,
    version,
    flow: {
      navigate: (url) => ({ name: "navigate_page", args: { pageId, type: "url", url } }),
      snapshot: () => ({ name: "take_snapshot", args: { pageId } }),
      refs: (r) => ({
        button: match(textOf(r), /uid=(\S+) button "Apply filter"/, "Apply filter button"),
        textbox: match(textOf(r), /uid=(\S+) textbox "Filter"/, "Filter textbox"),
      }),
      // includeSnapshot makes click/fill return an observation, like the other two systems.
      click: (uid) => ({ name: "click", args: { pageId, uid, includeSnapshot: true } }),
      fill: (uid, value) => ({ name: "fill", args: { pageId, uid, value, includeSnapshot: true } }),
      bareClick: (uid) => ({ name: "click", args: { pageId, uid } }),
    },
    devtools: devtoolsMcpFlow(pageId),
    close: () => client.close(),
  };
}

const SYSTEMS: Array<{ name: string; start: (tmp: string) => Promise<Session> }> = [
  { name: "krometrail", start: startKrometrail },
  { name: "@playwright/mcp", start: startPlaywright },
  { name: "chrome-devtools-mcp", start: startDevtools },
];

// --- measurement ---------------------------------------------------------------------------------

function toolStats(tools: Array<{ name: string }>): ToolStats {
  const total = JSON.stringify(tools).length;
  const top = tools.map((t) => ({ name: t.name, chars: JSON.stringify(t).length }))
    .reduce((a, b) => (b.chars > a.chars ? b : a), { name: "-", chars: 0 });
  return {
    count: tools.length,
    total,
    mean: tools.length ? total / tools.length : 0,
    max: top.chars,
    maxName: top.name,
  };
}

async function runFlow(session: Session, url: string, report: Report): Promise<void> {
  const call = async (label: string, c: Call, counted: boolean): Promise<ToolResult> => {
    const t0 = performance.now();
    const result = await session.client.callTool({ name: c.name, arguments: c.args }, {
      timeout: CALL_TIMEOUT_MS,
    }) as ToolResult;
    const ms = performance.now() - t0;
    if (result.isError) throw new Error(`${label} (${c.name}) failed: ${textOf(result).slice(0, 400)}`);
    if (counted) (report.ms[label] ??= []).push(ms);
    report.chars[label] = textOf(result).length;
    report.structuredChars[label] = result.structuredContent
      ? JSON.stringify(result.structuredContent).length
      : 0;
    return result;
  };
  const { flow } = session;
  for (let i = 0; i <= ITERATIONS; i++) {
    const counted = i > 0; // iteration 0 is the warm-up
    await call("navigate", flow.navigate(url), counted);
    const refs = flow.refs(await call("snapshot", flow.snapshot(), counted));
    await call("click", flow.click(refs.button), counted);
    if (flow.bareClick) await call("click, no observation", flow.bareClick(refs.button), counted);
    await call("fill", flow.fill(refs.textbox, `query ${i}`), counted);
    if (i === 0) session.phases?.reset();
  }
}

/** Kills leftover processes (e.g. Chromium) whose command line names this run's temp dir. */
async function reapStragglers(tmp: string): Promise<number> {
  const out = await new Deno.Command("pgrep", { args: ["-f", tmp], stdout: "piped" }).output();
  const pids = new TextDecoder().decode(out.stdout).split("\n").map(Number).filter((p) => p > 0);
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* already gone */ }
  }
  return pids.length;
}

async function measure(
  system: { name: string; start: (tmp: string) => Promise<Session> },
  url: string,
  devtoolsUrl: string,
): Promise<Report> {
  const report: Report = { name: system.name, ms: {}, chars: {}, structuredChars: {} };
  const tmp = await Deno.makeTempDir({ prefix: "krometrail-bench-" });
  let session: Session | undefined;
  try {
    session = await system.start(tmp);
    report.version = session.version ?? session.client.getServerVersion()?.version;
    report.tools = toolStats((await session.client.listTools()).tools);
    // A failed flow still leaves the devtools section to measure.
    await runFlow(session, url, report).catch((err) => {
      report.error = err instanceof Error ? err.message : String(err);
    });
    report.phases = session.phases?.read();
    if (session.devtools) {
      const nav = session.flow.navigate(devtoolsUrl);
      report.devtools = await runDevtools(
        session.client,
        session.devtools,
        nav,
        DEVTOOLS_ITERATIONS,
        CALL_TIMEOUT_MS,
      );
    }
  } catch (err) {
    report.error = err instanceof Error ? err.message : String(err);
  } finally {
    await session?.close().catch(() => {});
    const reaped = await reapStragglers(tmp);
    if (reaped > 0) console.error(`${system.name}: killed ${reaped} leftover process(es) after close`);
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return report;
}

// --- main ----------------------------------------------------------------------------------------

async function ensurePeers(): Promise<void> {
  const present = await Promise.all(
    [PLAYWRIGHT_BIN, DEVTOOLS_BIN].map((p) => Deno.stat(p).then(() => true, () => false)),
  );
  if (present.every(Boolean)) return;
  const failure = await installPeers();
  if (failure) console.error(`${failure}; missing peers will be reported.`);
}

const site = serveStatic();
const devtoolsSite = serveStatic(DEVTOOLS_SITE);
try {
  await ensurePeers();
  const url = `${site.origin}/heavy.html`;
  const reports: Report[] = [];
  for (const system of SYSTEMS.filter((s) => !ONLY || ONLY.includes(s.name))) {
    console.error(`running ${system.name} …`);
    reports.push(await measure(system, url, `${devtoolsSite.origin}/index.html`));
  }
  console.log(
    `\nControl benchmark: ${url.replace(site.origin, "")}, ${ITERATIONS} iterations after 1 warm-up\n`,
  );
  console.log(table(reports));
  const ourReport = reports.find((r) => r.name === "krometrail");
  if (ourReport?.phases) {
    console.log("\nBreakdown (krometrail, server-side phases)\n");
    console.log(breakdownTables(ourReport.phases, {
      navigate: "navigate_page",
      snapshot: "snapshot_page",
      click: "click",
      fill: "fill",
    }, ourReport.ms));
  }
  console.log("\nTargets (krometrail; informational, never asserted):");
  for (const t of targets(reports)) console.log(`  ${t}`);
  const failed = reports.filter((r) => r.error);
  if (failed.length) console.log("\nNot measured (or only partly):");
  for (const r of failed) console.log(`  ${r.name}: ${r.error}`);
  const ours = reports.find((r) => r.name === "krometrail")?.devtools;
  const theirs = reports.find((r) => r.name === "chrome-devtools-mcp")?.devtools;
  console.log(
    `\nDevTools round trips: get_network_request of one JSON fetch, emulate slow 3G + CPU 4× then clear; ${DEVTOOLS_ITERATIONS} iterations after 1 warm-up (informational, never asserted)\n`,
  );
  console.log(devtoolsTable(ours, theirs));
  for (const [name, r] of [["krometrail", ours], ["chrome-devtools-mcp", theirs]] as const) {
    if (r?.error) console.log(`  ${name} devtools: ${r.error}`);
  }
} finally {
  await site.close();
  await devtoolsSite.close();
}
