/**
 * Page-state benchmark (issue 13): the cost of DOM recording on a click, DOM bytes per second of page
 * activity, read_dom_at latency 5 s / 60 s / 10 min into a recording, and bisect over windows — each
 * beside its target or its peer's published figure, in one table. Real servers over stdio, real
 * Chromium. It reports; it never asserts. Progress goes to stderr, the table to stdout, a JSON summary
 * to .bench-out/.
 *
 *   deno task bench:pagestate [--clicks=30] [--activity-s=12] [--depth-s=600] [--reads=7] [--bisects=3]
 *     [--parts=click,bytes,depth]
 */
import { join } from "node:path";
import { serveStatic } from "../src/demo/static_server.ts";
import { REPO_ROOT } from "../tests/e2e/harness.ts";
import { argsOrExit } from "./lib/args.ts";
import {
  type BisectSample,
  bytesPerSecond,
  type BytesResult,
  clickRoundTrip,
  depthRun,
  type DepthSample,
  windowName,
} from "./lib/pagestate_parts.ts";
import { BenchServer } from "./lib/pagestate_server.ts";
import { dec, formatTable, int } from "./lib/table.ts";

interface Options {
  clicks: number;
  activityS: number;
  depthS: number;
  reads: number;
  bisects: number;
  /** Which measurements run (all by default): a quick re-run of one part. */
  parts: Set<Part>;
}

const PARTS = ["click", "bytes", "depth"] as const;
type Part = typeof PARTS[number];
const isPart = (p: string): p is Part => (PARTS as readonly string[]).includes(p);

function parse(args: string[]): Options {
  const o: Options = { clicks: 30, activityS: 12, depthS: 600, reads: 7, bisects: 3, parts: new Set(PARTS) };
  const keys: Record<string, Exclude<keyof Options, "parts">> = {
    "--clicks": "clicks",
    "--activity-s": "activityS",
    "--depth-s": "depthS",
    "--reads": "reads",
    "--bisects": "bisects",
  };
  for (const a of args) {
    const [flag, value = ""] = a.split("=");
    if (flag === "--parts") {
      const list = value.split(",");
      const bad = list.find((p) => !isPart(p));
      if (bad !== undefined) throw new Error(`--parts: unknown part "${bad}"; known: ${PARTS.join(", ")}`);
      o.parts = new Set(list.filter(isPart));
      continue;
    }
    const key = keys[flag];
    const n = Number(value);
    if (!key || !Number.isFinite(n) || n <= 0) {
      throw new Error(
        `unknown or bad argument ${a}; known: ${Object.keys(keys).join(", ")} (=N > 0), --parts=${
          PARTS.join(",")
        }`,
      );
    }
    o[key] = n;
  }
  if (o.depthS <= 60) throw new Error("--depth-s must be past 60 (the 5 s and 60 s depths come first)");
  return o;
}

const opts = argsOrExit(parse);
const TRACES_RAW_PER_S = "4–5 KiB/s raw JSON (Traces, small checkout page)";
const verdict = (ok: boolean) => ok ? "PASS" : "MISS";
const kibs = (bytes: number) => `${dec(bytes / 1024, 2)} KiB/s`;
const msPair = (a: number, b: number) => `${int(a)} / ${int(b)} ms`;

function clickRows(r: Awaited<ReturnType<typeof clickRoundTrip>>): string[][] {
  const slower = (a: number, b: number) => (a / b - 1) * 100;
  const med = slower(r.recording.median, r.not_recording.median);
  const p90 = slower(r.recording.p90, r.not_recording.p90);
  return [
    [
      `click round trip, heavy.html, record_dom false (n=${r.not_recording.n}) median / p90`,
      msPair(r.not_recording.median, r.not_recording.p90),
      "(the baseline)",
      "",
    ],
    [
      `click round trip, heavy.html, record_dom true (n=${r.recording.n}) median / p90`,
      msPair(r.recording.median, r.recording.p90),
      `≤ 10% slower: ${med >= 0 ? "+" : ""}${dec(med)}% median, ${p90 >= 0 ? "+" : ""}${dec(p90)}% p90`,
      verdict(med <= 10),
    ],
  ];
}

function bytesRows(pages: BytesResult[]): string[][] {
  return pages.map((p) => [
    `DOM bytes/s, ${p.page} (${dec(p.seconds)} s, ${int(p.events)} events, ${p.checkpoints} checkpoints)`,
    `${kibs(p.stored_per_s)} stored, ${kibs(p.raw_per_s)} raw`,
    p.page === "checkout.html" ? `peer: ${TRACES_RAW_PER_S}` : "(peer figure is for a checkout page)",
    p.page === "checkout.html" ? (p.raw_per_s <= 5 * 1024 ? "at or under peer" : "over peer") : "",
  ]);
}

function readRows(reads: DepthSample[]): string[][] {
  return reads.map((r) => [
    `read_dom_at ${windowName(r.depth_s)} into the busy recording, asked ${
      r.asked === "live" ? "live at that depth" : `after ${windowName(opts.depthS)}`
    } (n=${r.round_trip.n}) median / max; first`,
    `${msPair(r.round_trip.median, r.round_trip.max)}; first ${int(r.round_trip.first)} ms`,
    "≤ 150 ms at any depth (MCP round trip)",
    verdict(r.round_trip.max <= 150),
  ]);
}

function bisectRows(samples: BisectSample[]): string[][] {
  return samples.map((b) => [
    `bisect, ${b.label} (n=${b.round_trip.n}) median / max; first`,
    [
      `${msPair(b.round_trip.median, b.round_trip.max)}; first ${int(b.round_trip.first)} ms`,
      `${int(b.probes)} probes, ${int(b.events_scanned)} events, ${b.transitions} transitions`,
      `handler ${int(b.server_elapsed.median)} ms median, first ${int(b.server_elapsed.first)} ms`,
    ].join("; "),
    "≤ 300 ms; peer: Traces ~1.2 s for 10 probes",
    verdict(b.round_trip.max <= 300),
  ]);
}

const site = serveStatic();
const tmp = await Deno.makeTempDir({ prefix: "krometrail-bench-pagestate-" });
const servers: BenchServer[] = [];
const startedAt = new Date().toISOString();
try {
  const on = await BenchServer.start("record_dom true", tmp);
  servers.push(on);
  let clicks: Awaited<ReturnType<typeof clickRoundTrip>> | undefined;
  if (opts.parts.has("click")) {
    const off = await BenchServer.start("record_dom false", tmp);
    servers.push(off);
    console.error(`[pagestate] click round trip: ${opts.clicks} clicks each, interleaved`);
    await on.startBrowser(true);
    await off.startBrowser(false);
    clicks = await clickRoundTrip(on, off, `${site.origin}/heavy.html`, opts.clicks);
    await on.stopBrowser();
    await off.close();
    servers.splice(servers.indexOf(off), 1);
  }
  let bytes: Awaited<ReturnType<typeof bytesPerSecond>> | undefined;
  if (opts.parts.has("bytes")) {
    console.error("[pagestate] DOM bytes per second on the fixtures (and bisect on checkout)");
    bytes = await bytesPerSecond(on, site.origin, opts.activityS, opts.bisects);
  }
  let depth: Awaited<ReturnType<typeof depthRun>> | undefined;
  if (opts.parts.has("depth")) {
    console.error(`[pagestate] busy page recorded for ${windowName(opts.depthS)}: read_dom_at and bisect`);
    depth = await depthRun(on, site.origin, [5, 60, opts.depthS], opts.reads, opts.bisects);
  }
  const allBytes = [...bytes?.pages ?? [], ...depth ? [depth.bytes] : []];
  const allBisects = [...bytes?.checkoutBisects ?? [], ...depth?.bisects ?? []];

  const rows: string[][] = [
    ["figure", "measured", "target or peer", ""],
    ...clicks ? clickRows(clicks) : [],
    ...bytesRows(allBytes),
    ...readRows(depth?.reads ?? []),
    ...bisectRows(allBisects),
  ];
  console.log(`\nPage-state benchmark (krometrail ${on.handle.client.getServerVersion()?.version ?? "?"})\n`);
  console.log(formatTable(rows));
  console.log(
    "\nstored = compressed DOM segment bytes (dom_chunks lengths in the index); raw = the same events as JSON.",
  );

  const outDir = join(REPO_ROOT, ".bench-out");
  await Deno.mkdir(outDir, { recursive: true });
  const out = join(outDir, `pagestate-${startedAt.replace(/[:.]/g, "-")}.json`);
  await Deno.writeTextFile(
    out,
    JSON.stringify(
      {
        started_at: startedAt,
        options: { ...opts, parts: [...opts.parts] },
        click: clicks ?? null,
        bytes: allBytes,
        read_dom_at: depth?.reads ?? [],
        bisect: allBisects,
      },
      null,
      2,
    ) + "\n",
  );
  console.log(`\nJSON summary: ${out}`);
} finally {
  for (const s of servers) await s.close().catch(() => {});
  await site.close();
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
}
