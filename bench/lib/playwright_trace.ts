/**
 * The Playwright side of the capture benchmark: playwright-core from bench/peers records the page with
 * `context.tracing.start({ screenshots: true })` in its own Node process, which is measured from /proc like
 * the krometrail server; then the trace zip is read back for its screencast frames.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { CHROME_ARGS, CHROMIUM } from "./chromium.ts";
import { intervals, type PageStats, pageWindow, type Report } from "./capture_report.ts";
import { jpegSize } from "../../src/vision/jpeg_size.ts";
import { installPeers, PEERS_DIR } from "./peers.ts";
import { descendants, reap, rssKb, sample, type Stat, usage, watchRss } from "./proc_sampling.ts";
import { mb } from "./table.ts";
import { withTimeout } from "./wait.ts";
import { zipEntries, zipRead } from "./zip_reader.ts";

const PLAYWRIGHT_CORE = join(PEERS_DIR, "node_modules/playwright-core/index.mjs");

export interface PlaywrightTraceOptions {
  url: string;
  /** Length of the measured window. */
  seconds: number;
  viewport: { width: number; height: number };
  /** Bounds every step of the child process, so the run always ends. */
  stepTimeoutMs: number;
}

/**
 * The Playwright side runs in its own Node process (playwright-core from bench/peers), driven over
 * stdin/stdout JSON lines, so its RSS and CPU can be read from /proc like the krometrail server's.
 */
const PLAYWRIGHT_CHILD = `
import { createInterface } from "node:readline";
const env = process.env;
const send = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
const { chromium } = await import(env.BENCH_PLAYWRIGHT_CORE);
const version = JSON.parse(await (await import("node:fs/promises")).readFile(
  new URL("./package.json", env.BENCH_PLAYWRIGHT_CORE), "utf8")).version;
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;
let browser;
try {
  send({ event: "loaded", version });
  await next();
  browser = await chromium.launch({
    executablePath: env.BENCH_CHROMIUM,
    args: JSON.parse(env.BENCH_CHROME_ARGS),
    headless: true,
  });
  const context = await browser.newContext({ viewport: JSON.parse(env.BENCH_VIEWPORT) });
  await context.tracing.start({ screenshots: true, snapshots: false });
  const page = await context.newPage();
  await page.goto(env.BENCH_URL);
  send({ event: "ready", stats: await page.evaluate(() => window.benchStats()) });
  await next();
  send({ event: "stats", stats: await page.evaluate(() => window.benchStats()) });
  await next();
  const t0 = performance.now();
  await context.tracing.stop({ path: env.BENCH_TRACE });
  send({ event: "stopped", ms: performance.now() - t0 });
  await context.close();
} catch (err) {
  send({ event: "error", message: String(err && err.stack || err) });
} finally {
  await browser?.close().catch(() => {});
  process.exit(0);
}
`;

/** One JSON line from the child; it waits for a "go" line on stdin between steps. */
interface ChildMessage {
  event: "loaded" | "ready" | "stats" | "stopped" | "error";
  version?: string;
  stats?: PageStats;
  ms?: number;
  message?: string;
}

/** Records `url` with Playwright tracing for `seconds`; failures end up in `report.error`, never thrown. */
export async function runPlaywrightTrace(
  { url, seconds, viewport, stepTimeoutMs }: PlaywrightTraceOptions,
): Promise<Report> {
  const report: Report = {
    name: "Playwright tracing",
    process: "Node driver process (playwright-core: main thread + libuv/V8 threads)",
    notes: [],
  };
  const tmp = await Deno.makeTempDir({ prefix: "krometrail-bench-capture-pw-" });
  const tracePath = join(tmp, "trace.zip");
  let child: Deno.ChildProcess | undefined;
  let tree = new Map<number, Stat>();
  let stderr = "";
  try {
    await ensurePlaywrightCore();
    child = new Deno.Command("node", {
      args: ["--input-type=module", "-e", PLAYWRIGHT_CHILD],
      cwd: tmp,
      env: {
        TMPDIR: tmp,
        BENCH_PLAYWRIGHT_CORE: pathToFileURL(PLAYWRIGHT_CORE).href,
        BENCH_CHROMIUM: CHROMIUM,
        BENCH_CHROME_ARGS: JSON.stringify(CHROME_ARGS),
        BENCH_VIEWPORT: JSON.stringify(viewport),
        BENCH_URL: url,
        BENCH_TRACE: tracePath,
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const proc = child;
    const pid = proc.pid;
    (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of proc.stderr) stderr = (stderr + decoder.decode(chunk)).slice(-2_000);
    })().catch(() => {});
    const lines = proc.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(lineSplitter())[
      Symbol.asyncIterator
    ]();
    const stdin = proc.stdin.getWriter();
    const expect = async (event: ChildMessage["event"]): Promise<ChildMessage> => {
      const r = await withTimeout(lines.next(), stepTimeoutMs, `Playwright step "${event}"`);
      if (r.done) throw new Error(`the Playwright process exited before "${event}"`);
      const m = JSON.parse(r.value) as ChildMessage;
      if (m.event === "error") throw new Error(`Playwright: ${m.message}`);
      if (m.event !== event) {
        throw new Error(`expected "${event}" from the Playwright process, got ${r.value}`);
      }
      return m;
    };
    const go = () => stdin.write(new TextEncoder().encode("go\n"));

    report.version = (await expect("loaded")).version;
    const idleRss = rssKb(pid);
    await go();
    const ready = await expect("ready");
    const start = sample(pid);
    const trail = await watchRss(pid, seconds * 1000);
    const end = sample(pid);
    tree = end.tree;
    report.usage = usage(pid, start, end, trail);
    await go();
    const stats = await expect("stats");
    if (ready.stats && stats.stats) report.page = pageWindow(ready.stats, stats.stats);
    await go();
    report.stopMs = (await expect("stopped")).ms;
    await stdin.close().catch(() => {});
    const status = await withTimeout(proc.status, stepTimeoutMs, "Playwright process exit").catch(() => {
      proc.kill("SIGKILL");
      return undefined;
    });
    if (status && !status.success) report.notes.push(`the Playwright process exited with ${status.code}`);
    if (idleRss !== undefined) {
      report.notes.push(`RSS after loading playwright-core, before launch: ${mb(idleRss)}`);
    }
    await readTrace(tracePath, report);
  } catch (err) {
    report.error = `${err instanceof Error ? err.message : String(err)}${
      stderr.trim() ? `\n${stderr.trim()}` : ""
    }`;
  } finally {
    if (child) {
      for (const [p, st] of descendants(child.pid)) tree.set(p, st);
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
      await child.status.catch(() => {});
    }
    const killed = await reap(tree);
    if (killed.length > 0) {
      report.notes.push(`still running 2 s after close, killed: ${killed.join(", ")}`);
    }
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return report;
}

/** Splits a text stream into its non-empty lines. */
function lineSplitter(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) if (p.trim()) controller.enqueue(p);
    },
    flush(controller) {
      if (rest.trim()) controller.enqueue(rest);
    },
  });
}

/** The fields read from the trace's JSON-lines events (`*.trace` entries). */
interface TraceEvent {
  type?: string;
  method?: string;
  callId?: string;
  startTime?: number;
  endTime?: number;
  timestamp?: number;
  file?: string;
}

/** Fills the report's frame, byte, size and interval figures from the trace zip. */
async function readTrace(path: string, report: Report): Promise<void> {
  const buf = await Deno.readFile(path);
  report.artifactBytes = buf.length;
  const entries = zipEntries(buf);
  const byName = new Map(entries.map((e) => [e.name, e]));
  const events: TraceEvent[] = [];
  for (const e of entries.filter((e) => e.name.endsWith(".trace"))) {
    for (const line of new TextDecoder().decode(await zipRead(buf, e)).split("\n")) {
      if (line.trim()) events.push(JSON.parse(line) as TraceEvent);
    }
  }
  const frames = events.filter((e) => e.type === "screencast-frame");
  const files = new Set(frames.map((f) => f.file ?? ""));
  const jpegs = entries.filter((e) => files.has(e.name));
  const unreferenced = entries.filter((e) => e.name.endsWith(".jpeg") && !files.has(e.name)).length;
  report.framesStored = jpegs.length;
  report.bytesStored = jpegs.reduce((a, e) => a + e.size, 0);
  if (frames.length !== jpegs.length) {
    report.notes.push(
      `${frames.length} screencast-frame events, ${jpegs.length} distinct JPEG resources ` +
        "(frame files are named by millisecond; events in the same millisecond share one file)",
    );
  }
  if (unreferenced > 0) report.notes.push(`${unreferenced} JPEG entries no event refers to`);
  const sizes = new Map<string, number>();
  for (const e of jpegs.slice(0, 20)) {
    const s = jpegSize(await zipRead(buf, e)) ?? "?";
    sizes.set(s, (sizes.get(s) ?? 0) + 1);
  }
  report.jpeg = [...sizes.keys()].join(", ") || "—";
  report.intervals = intervals(frames.map((f) => f.timestamp ?? 0));
  // The window: from the end of the first page.evaluate (window start) to the start of the last one.
  const evals = events.filter((e) => e.type === "before" && e.method === "evaluateExpression");
  const first = evals[0]?.callId;
  const windowStart = events.find((e) => e.type === "after" && e.callId === first)?.endTime;
  const windowEnd = evals.at(-1)?.startTime;
  if (windowStart !== undefined && windowEnd !== undefined && evals.length >= 2) {
    report.framesStoredWindow = new Set(
      frames.filter((f) => (f.timestamp ?? 0) >= windowStart && (f.timestamp ?? 0) <= windowEnd)
        .map((f) => f.file),
    ).size;
  }
  const missing = [...files].filter((f) => !byName.has(f)).length;
  if (missing > 0) report.notes.push(`${missing} screencast-frame events name a file missing from the zip`);
}

/** Installs the pinned peers (as bench/control.ts does) when playwright-core is missing. */
async function ensurePlaywrightCore(): Promise<void> {
  const present = () => Deno.stat(PLAYWRIGHT_CORE).then(() => true, () => false);
  if (await present()) return;
  await installPeers(); // its failure shows as the missing file below
  if (!(await present())) {
    throw new Error("playwright-core is not installed in bench/peers (run: npm ci --prefix bench/peers)");
  }
}
