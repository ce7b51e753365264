/**
 * Capture benchmark: fixtures/site/animation.html (a dashboard that repaints the whole viewport on every
 * animation frame) recorded for N seconds by krometrail and by Playwright tracing
 * (`context.tracing.start({ screenshots: true })`), printed side by side with the targets from the issue.
 * It compares; it never asserts. See bench/README.md.
 *
 * This file is the orchestration: arguments, the krometrail run, the comparison table and the targets.
 * The /proc readings, the Playwright run and its trace reader live in bench/lib/.
 *
 *   deno run --frozen -A bench/capture.ts [--seconds 60] [--only krometrail|playwright] [--page flash.html]
 *
 * `--page` records another fixture instead (flash.html: one full-viewport flash every 500 ms), to see
 * the same figures when Chromium is not saturating the machine.
 */
import { argsOrExit } from "./lib/args.ts";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import type { CaptureStatus } from "../src/capture/recorder.ts";
import { serveStatic } from "../src/demo/static_server.ts";
import { type ServerHandle, startServer, type ToolResult } from "../tests/e2e/harness.ts";
import { intervals, type PageStats, pageWindow, type Report } from "./lib/capture_report.ts";
import { type AckFloor, measureAckFloor } from "./lib/ack_floor.ts";
import { CHROMIUM } from "./lib/chromium.ts";
import { runPlaywrightTrace } from "./lib/playwright_trace.ts";
import * as proc from "./lib/proc_sampling.ts";
import { dec, formatTable, int, kb, mb } from "./lib/table.ts";
import { withTimeout } from "./lib/wait.ts";

const VIEWPORT = { width: 1280, height: 720 };
/** Every tool call and every step of the Playwright child is bounded, so the script always ends. */
const STEP_TIMEOUT_MS = 60_000;

// Targets from the issue (informational).
const ACK_P99_TARGET_MS = 5;
const RSS_FLAT_FACTOR = 1.2;
const BYTES_PER_FRAME_TARGET = 15 * 1024;

// --- arguments -----------------------------------------------------------------------------------

function parseArgs(args: string[]): { seconds: number; only?: "krometrail" | "playwright"; page: string } {
  let seconds = 60;
  let page = "animation.html";
  let only: "krometrail" | "playwright" | undefined;
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split("=", 2);
    const value = () => inline ?? args[++i];
    if (flag === "--seconds") {
      seconds = Number(value());
      if (!Number.isFinite(seconds) || seconds <= 0) throw new Error("--seconds needs a positive number");
    } else if (flag === "--only") {
      const v = value();
      if (v !== "krometrail" && v !== "playwright") throw new Error("--only is krometrail or playwright");
      only = v;
    } else if (flag === "--page") {
      page = value();
      if (!/^[a-z_]+\.html$/.test(page)) throw new Error("--page names a fixture page, e.g. flash.html");
    } else {
      throw new Error(
        `unknown argument ${args[i]} (use --seconds N, --only krometrail|playwright, --page P)`,
      );
    }
  }
  return { seconds, only, page };
}

// --- krometrail ----------------------------------------------------------------------------------

const textOf = (r: ToolResult) => r.content.map((c) => c.type === "text" ? c.text ?? "" : "").join("\n");

function serverPid(server: ServerHandle): number {
  const t = server.client.transport;
  const pid = t instanceof StdioClientTransport ? t.pid : null;
  if (pid) return pid;
  // Fallback: the server is the deno process whose environment names this run's data dir.
  const found = proc.pidWithEnvEntry(`KROMETRAIL_DATA_DIR=${server.dataDir}`);
  if (found !== undefined) return found;
  throw new Error("could not find the server's pid");
}

async function call(server: ServerHandle, name: string, args: Record<string, unknown> = {}) {
  const r = await withTimeout(server.call(name, args), STEP_TIMEOUT_MS, name);
  if (r.isError) throw new Error(`${name} failed: ${textOf(r).slice(0, 400)}`);
  return r.structuredContent ?? {};
}

interface FrameRowLike {
  page_id: string;
  ordinal: number;
  session_time_ms: number;
  width: number;
  height: number;
}

/** animation.html counts its own frames; other pages report size only (0 fps). */
const PAGE_STATS =
  "window.benchStats ? window.benchStats() : ({ frames: 0, long_frames: 0, ms: performance.now(), width: innerWidth, height: innerHeight })";

async function runKrometrail(url: string, seconds: number): Promise<Report> {
  const report: Report = {
    name: "krometrail",
    process: "MCP server (deno: main thread + ingest worker)",
    notes: [],
  };
  const tmp = await Deno.makeTempDir({ prefix: "krometrail-bench-capture-" });
  let server: ServerHandle | undefined;
  let pid: number | undefined;
  let tree = new Map<number, proc.Stat>();
  try {
    server = await withTimeout(
      startServer({ env: { KROMETRAIL_CHROME: CHROMIUM, TMPDIR: tmp } }),
      STEP_TIMEOUT_MS,
      "server start",
    );
    report.version = server.client.getServerVersion()?.version;
    pid = serverPid(server);
    const idleRss = proc.rssKb(pid);
    await call(server, "start_browser", { headless: true, temporary: true });
    await call(server, "navigate_page", { url });
    const page0 = (await call(server, "evaluate_page", { expression: PAGE_STATS }))
      .value as PageStats;
    const status0 = (await call(server, "browser_status", { detail: "expanded" })).capture as CaptureStatus;

    const start = proc.sample(pid);
    const trail = await proc.watchRss(pid, seconds * 1000);
    const end = proc.sample(pid);
    tree = end.tree;
    report.usage = proc.usage(pid, start, end, trail);

    const page1 = (await call(server, "evaluate_page", { expression: PAGE_STATS }))
      .value as PageStats;
    report.page = pageWindow(page0, page1);
    const status1 = (await call(server, "browser_status", { detail: "expanded" })).capture as CaptureStatus;
    report.framesReceivedWindow = status1.frames_received - status0.frames_received;
    report.framesStoredWindow = status1.frames_stored - status0.frames_stored;

    const t0 = performance.now();
    const stopped = await call(server, "stop_browser");
    report.stopMs = performance.now() - t0;
    const capture = stopped.capture as CaptureStatus | undefined;
    if (!capture) {
      throw new Error(`stop_browser returned no capture: ${JSON.stringify(stopped).slice(0, 300)}`);
    }
    if (idleRss !== undefined) report.notes.push(`RSS after connect, before start_browser: ${mb(idleRss)}`);
    report.framesReceived = capture.frames_received;
    report.framesStored = capture.frames_stored;
    report.framesDropped = capture.frames_dropped;
    report.framesRejected = capture.frames_rejected;
    report.gaps = capture.gaps;
    report.ack = capture.ack_latency_ms;
    report.observedFps = capture.observed.fps;
    report.bytesStored = capture.bytes_stored;
    report.artifactBytes = capture.bytes_stored;
    report.acksSuperseded = capture.streams.reduce((a, s) => a + s.acks_superseded, 0);
    for (const s of capture.streams) {
      if (s.terminal) report.notes.push(`stream ${s.page_id} ended: ${s.terminal}`);
    }
    if (capture.persistence_failure) {
      report.notes.push(`persistence failure: ${JSON.stringify(capture.persistence_failure)}`);
    }
    report.notes.push(
      `browser_status at the window's end: received ${status1.frames_received}, stored ${status1.frames_stored}, ` +
        `dropped ${status1.frames_dropped}, gaps ${status1.gaps}; stop_browser flushed ` +
        JSON.stringify(stopped.flushed),
    );
    if (capture.ack_latency_ms.samples < capture.frames_received) {
      report.notes.push(
        `ack latency has ${capture.ack_latency_ms.samples} samples for ${capture.frames_received} frames ` +
          `(the recorder keeps the last 4,096; acks superseded: ${report.acksSuperseded})`,
      );
    }

    // Stored frames, read back through the public tool: JPEG size, ordinals, intervals, gap kinds.
    const sessionId = String(stopped.session_id ?? "");
    const rows: FrameRowLike[] = [];
    let gapKinds: Array<{ kind: string }> = [];
    for (let offset: number | undefined = 0; offset !== undefined;) {
      const listed = await call(server, "list_source_frames", {
        session_id: sessionId,
        offset,
        max_frames: 200,
      });
      rows.push(...(listed.frames as FrameRowLike[]));
      gapKinds = listed.gaps as Array<{ kind: string }>;
      offset = listed.next_offset as number | undefined;
    }
    const sizeOf = (r: FrameRowLike) => `${r.width}×${r.height}`;
    const sizes = new Map<string, number>();
    for (const r of rows) sizes.set(sizeOf(r), (sizes.get(sizeOf(r)) ?? 0) + 1);
    const ranked = [...sizes.entries()].sort((a, b) => b[1] - a[1]);
    report.jpeg = ranked.map(([k, n]) => sizes.size > 1 ? `${k} ×${n}` : k).join(", ") || "—";
    if (ranked.length > 1) {
      const odd = rows.filter((r) => sizeOf(r) !== ranked[0][0]);
      const listed = odd.slice(0, 8).map((r) =>
        `ord ${r.ordinal} ${sizeOf(r)} at ${dec(r.session_time_ms, 0)} ms`
      );
      report.notes.push(
        `${odd.length} stored frame(s) not ${ranked[0][0]}: ${listed.join(", ")}${
          odd.length > 8 ? ", …" : ""
        }`,
      );
    }
    const byPage = new Map<string, number[]>();
    for (const r of rows) byPage.set(r.page_id, [...(byPage.get(r.page_id) ?? []), r.ordinal]);
    report.missingOrdinals = [...byPage.values()].reduce((a, ords) => {
      const max = Math.max(...ords);
      return a + (max - new Set(ords).size);
    }, 0);
    report.intervals = intervals(rows.map((r) => r.session_time_ms));
    const kinds = new Map<string, number>();
    for (const g of gapKinds) kinds.set(g.kind, (kinds.get(g.kind) ?? 0) + 1);
    report.gapKinds = [...kinds.entries()].map(([k, n]) => `${k} ×${n}`).join(", ");
    if (rows.length !== capture.frames_stored) {
      report.notes.push(
        `list_source_frames returned ${rows.length} rows; frames_stored says ${capture.frames_stored}`,
      );
    }
  } catch (err) {
    report.error = err instanceof Error ? err.message : String(err);
  } finally {
    if (pid !== undefined) { for (const [p, st] of proc.descendants(pid)) tree.set(p, st); }
    await server?.close().catch(() => {});
    const killed = await proc.reap(tree);
    if (killed.length > 0) {
      report.notes.push(`still running 2 s after close, killed: ${killed.join(", ")}`);
    }
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  return report;
}

// --- report --------------------------------------------------------------------------------------

const perFrame = (r: Report) =>
  r.bytesStored !== undefined && r.framesStored ? r.bytesStored / r.framesStored : undefined;

/** The comparison: one row per figure, one column per side; "error" where a side measured nothing. */
function table(reports: Report[], seconds: number): string {
  const col = (f: (r: Report) => string) => reports.map((r) => (r.error && !r.usage ? "error" : f(r)));
  const u = (r: Report) => r.usage;
  const rows: string[][] = [
    ["", ...reports.map((r) => `${r.name}${r.version ? ` ${r.version}` : ""}`)],
    ["window, s", ...col((r) => dec(u(r)?.windowSeconds))],
    ["page viewport", ...col((r) => r.page?.viewport ?? "—")],
    [
      "page animation fps / frames > 50 ms",
      ...col((r) => `${dec(r.page?.fps)} / ${int(r.page?.longFrames)}`),
    ],
    [
      "frames received (CDP), whole session",
      ...col((r) => r.framesReceived === undefined ? "n/a" : int(r.framesReceived)),
    ],
    ["frames stored, whole session", ...col((r) => int(r.framesStored))],
    [
      "frames received / stored in window",
      ...col((r) =>
        `${r.framesReceivedWindow === undefined ? "n/a" : int(r.framesReceivedWindow)} / ${
          int(r.framesStoredWindow)
        }`
      ),
    ],
    [
      "stored fps in window",
      ...col((r) =>
        r.framesStoredWindow === undefined
          ? "—"
          : dec(r.framesStoredWindow / (r.usage?.windowSeconds ?? seconds))
      ),
    ],
    ["observed fps (recorder)", ...col((r) => r.observedFps === undefined ? "n/a" : dec(r.observedFps))],
    [
      "dropped / rejected / gaps",
      ...col((r) =>
        r.framesDropped === undefined
          ? "n/a"
          : `${int(r.framesDropped)} / ${int(r.framesRejected)} / ${int(r.gaps)}${
            r.gapKinds ? ` (${r.gapKinds})` : ""
          }`
      ),
    ],
    [
      "missing ordinals in stored frames",
      ...col((r) => r.missingOrdinals === undefined ? "n/a" : int(r.missingOrdinals)),
    ],
    [
      "acks superseded (never answered)",
      ...col((r) => r.acksSuperseded === undefined ? "n/a" : int(r.acksSuperseded)),
    ],
    [
      "ack latency ms p50 / p99 / max (n)",
      ...col((r) =>
        r.ack
          ? `${dec(r.ack.p50, 2)} / ${dec(r.ack.p99, 2)} / ${dec(r.ack.max, 2)} (${int(r.ack.samples)})`
          : "n/a"
      ),
    ],
    ["stored JPEG size", ...col((r) => r.jpeg ?? "—")],
    ["bytes per stored frame", ...col((r) => kb(perFrame(r)))],
    ["bytes stored (JPEG) / artifact", ...col((r) => `${kb(r.bytesStored)} / ${kb(r.artifactBytes)}`)],
    [
      "stored-frame interval max ms / >100 / >250",
      ...col((r) =>
        r.intervals
          ? `${int(r.intervals.max)} / ${int(r.intervals.over100)} / ${int(r.intervals.over250)}`
          : "—"
      ),
    ],
    [
      "RSS start → end (max)",
      ...col((r) =>
        u(r) ? `${mb(u(r)?.rssStartKb ?? 0)} → ${mb(u(r)?.rssEndKb ?? 0)} (${mb(u(r)?.rssMaxKb ?? 0)})` : "—"
      ),
    ],
    ["CPU s: main thread", ...col((r) => dec(u(r)?.mainSeconds, 2))],
    [
      "CPU s: ingest worker",
      ...col((r) => {
        const w = u(r)?.threads.filter((t) => /^worker-\d+$/.test(t.name));
        return w?.length ? dec(w.reduce((a, t) => a + t.seconds, 0), 2) : "n/a";
      }),
    ],
    [
      "CPU s: process total (% of one core)",
      ...col((r) =>
        u(r)
          ? `${dec(u(r)?.totalSeconds, 2)} (${
            dec(((u(r)?.totalSeconds ?? 0) / (u(r)?.windowSeconds ?? 1)) * 100)
          }%)`
          : "—"
      ),
    ],
    [
      "CPU s: Chromium tree (processes)",
      ...col((r) => u(r) ? `${dec(u(r)?.chromiumSeconds, 2)} (${u(r)?.chromiumProcesses})` : "—"),
    ],
    ["stop (flush / tracing.stop) ms", ...col((r) => int(r.stopMs))],
  ];
  return formatTable(rows);
}

function threadLines(r: Report): string[] {
  const u = r.usage;
  if (!u) return [];
  const busiest = u.threads.filter((t) => t.seconds > 0).slice(0, 6);
  const names = [...new Set(u.threads.map((t) => t.name))];
  return [
    `  ${r.name} (${r.process}): main ${dec(u.mainSeconds, 2)} s; busiest other threads: ${
      busiest.map((t) => `${t.name} [${t.tid}] ${dec(t.seconds, 2)} s`).join(", ") || "none"
    }`,
    `    thread names seen: ${names.join(", ")}`,
    `    RSS trail, MiB: ${trailOf(u.rssTrailKb)}`,
  ];
}

/** At most ~12 evenly spaced RSS readings. */
function trailOf(kbs: number[]): string {
  const step = Math.max(1, Math.ceil(kbs.length / 12));
  const picked = kbs.filter((_, i) => i % step === 0 || i === kbs.length - 1);
  return picked.map((k) => dec(k / 1024, 0)).join(" ");
}

const pct = (from: number, to: number) => `${to >= from ? "+" : ""}${dec((to / from - 1) * 100)}%`;

function targets(r: Report): string[] {
  const word = (v: number | undefined, ok: (v: number) => boolean) =>
    v === undefined ? "n/a " : ok(v) ? "PASS" : "MISS";
  const p99 = r.ack?.p99;
  const ack = p99 === undefined ? "n/a (not exposed)" : `${dec(p99, 2)} ms`;
  const u = r.usage;
  const growth = u ? u.rssEndKb / u.rssStartKb : undefined;
  let rss = "n/a";
  if (u) {
    rss = `${mb(u.rssStartKb)} → ${mb(u.rssEndKb)} (${pct(u.rssStartKb, u.rssEndKb)})`;
    // The trail has one reading per second; from 10 s on, warm-up is mostly over.
    const at10 = u.rssTrailKb[Math.round(10_000 / proc.RSS_EVERY_MS)];
    if (u.windowSeconds >= 20 && at10 !== undefined) {
      rss += `; from the 10 s reading: ${mb(at10)} → ${mb(u.rssEndKb)} (${pct(at10, u.rssEndKb)})`;
    }
  }
  const bpf = perFrame(r);
  const flat = Math.round((RSS_FLAT_FACTOR - 1) * 100);
  return [
    `${word(p99, (v) => v <= ACK_P99_TARGET_MS)}  ack latency p99 ≤ ${ACK_P99_TARGET_MS} ms: ${ack}`,
    `${word(growth, (v) => v <= RSS_FLAT_FACTOR)}  RSS flat (end ≤ start +${flat}%): ${rss}`,
    `${word(bpf, (v) => v <= BYTES_PER_FRAME_TARGET)}  bytes per stored frame ≤ 15 KiB: ${kb(bpf)}`,
  ];
}

// --- main ----------------------------------------------------------------------------------------

const { seconds, only, page } = argsOrExit(parseArgs);
const site = serveStatic();
try {
  const url = `${site.origin}/${page}`;
  const load0 = proc.loadAverage();
  const reports: Report[] = [];
  if (only !== "playwright") {
    console.error(`krometrail: recording ${url.replace(site.origin, "")} for ${seconds} s …`);
    reports.push(await runKrometrail(url, seconds));
  }
  let floor: AckFloor | undefined;
  let floorError: string | undefined;
  if (only !== "playwright") {
    console.error(`bare CDP client: acknowledging for ${seconds} s …`);
    floor = await measureAckFloor(url, seconds).catch((err) => {
      floorError = err instanceof Error ? err.message : String(err);
      return undefined;
    });
  }
  if (only !== "krometrail") {
    console.error(`Playwright tracing: recording for ${seconds} s …`);
    reports.push(
      await runPlaywrightTrace({ url, seconds, viewport: VIEWPORT, stepTimeoutMs: STEP_TIMEOUT_MS }),
    );
  }
  console.log(
    `\nCapture benchmark: /${page} (${VIEWPORT.width}×${VIEWPORT.height} requested), ${seconds} s window, ` +
      `${navigator.hardwareConcurrency} CPUs, load average ${load0} before / ${proc.loadAverage()} after\n`,
  );
  console.log(table(reports, seconds));
  if (floor || floorError) {
    console.log(
      floor
        ? `\nAck floor, a bare CDP client on the same page (same socket, no storage or analysis): ` +
          `p50 / p99 / max ${dec(floor.p50, 2)} / ${dec(floor.p99, 2)} / ${dec(floor.max, 2)} ms ` +
          `over ${int(floor.frames)} frames, ${kb(floor.bytesPerFrame)} per frame`
        : `\nAck floor: not measured (${floorError})`,
    );
  }
  console.log("\nThreads (CPU seconds in the window):");
  for (const r of reports) for (const l of threadLines(r)) console.log(l);
  console.log("\nTargets (informational, never asserted):");
  for (const r of reports) {
    console.log(`  ${r.name}:`);
    for (const t of targets(r)) console.log(`    ${t}`);
  }
  const noted = reports.filter((r) => r.notes.length > 0 || r.error);
  if (noted.length > 0) console.log("\nNotes:");
  for (const r of noted) {
    for (const n of r.notes) console.log(`  ${r.name}: ${n}`);
    if (r.error) console.log(`  ${r.name}: NOT (fully) MEASURED: ${r.error}`);
  }
} finally {
  await site.close();
}
