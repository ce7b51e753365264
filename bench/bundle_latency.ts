/**
 * Debug-bundle latency (issue 17, point 3): how soon `temporal_debug_bundle {interaction_id}` answers
 * after the settle window it waits for closes, and what the first artifact request of a fresh process
 * costs beside a warm one. It prints, never asserts.
 *
 * Per iteration: navigate to fixtures/site/save_banner.html, click Save (an error banner replaced by a
 * success banner ~100 ms later), then call the bundle 1.5 s after the click returned (the window has
 * closed) and, in a second series, 0.5 s after (the call waits for the window to close). The window end is
 * the result's `range.requested.end_ns`, on the session clock; the session clock is mapped onto this
 * process's clock with `browser_status {detail: expanded}` (its `session_time_ms`, the midpoint of the
 * shortest of several round trips).
 *
 *   deno run --frozen -A bench/bundle_latency.ts [--iterations N] [--fresh K]
 */
import { serveStatic, type StaticServer } from "../src/demo/static_server.ts";
import { type ServerHandle, startServer, structured, textOf } from "../tests/e2e/harness.ts";
import { argsOrExit } from "./lib/args.ts";
import { formatTable, int } from "./lib/table.ts";
import { sleep } from "./lib/wait.ts";

/** 1.5 s: the window (action end + 1 s) has closed; 0.5 s: the call waits for it to close. */
const CALL_DELAYS_MS = [1_500, 500];
const TARGET_MS = 300;

function parse(args: string[]): { iterations: number; fresh: number } {
  const out = { iterations: 10, fresh: 3 };
  for (let i = 0; i < args.length; i++) {
    const value = Number(args[i + 1]);
    if (args[i] === "--iterations" && value >= 1) out.iterations = value, i++;
    else if (args[i] === "--fresh" && value >= 0) out.fresh = value, i++;
    else throw new Error(`unknown argument ${args[i]} (--iterations N, --fresh K)`);
  }
  return out;
}

const median = (xs: number[]) => pct(xs, 50);
/** Nearest rank. */
function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)];
}

async function call(server: ServerHandle, name: string, args: Record<string, unknown>) {
  const r = await server.call(name, args);
  if (r.isError) throw new Error(`${name} failed: ${textOf(r).slice(0, 400)}`);
  return r;
}

/** Session time minus local time (ms), from the shortest of a few status round trips. */
async function clockOffset(server: ServerHandle): Promise<number> {
  let best = { rtt: Infinity, offset: 0 };
  for (let i = 0; i < 7; i++) {
    const t0 = performance.now();
    const s = structured(await call(server, "browser_status", { detail: "expanded" }));
    const t1 = performance.now();
    if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: (s.session_time_ms as number) - (t0 + t1) / 2 };
  }
  return best.offset;
}

interface Sample {
  /** The bundle call's round trip. */
  roundTrip: number;
  /** Window end relative to the call's start (negative: it had closed before the call). */
  endFromCall: number;
  /** Answer relative to the window end. */
  answerAfterEnd: number;
  /** Answer relative to the later of the call and the window end: what the bundle itself added. */
  answerAfterClose: number;
}

async function oneBundle(
  server: ServerHandle,
  site: StaticServer,
  offset: number,
  delayMs = CALL_DELAYS_MS[0],
): Promise<Sample> {
  await call(server, "navigate_page", { url: `${site.origin}/save_banner.html` });
  await sleep(300);
  const clicked = structured(await call(server, "click", { locator: { role: "button", name: "Save" } }));
  const clickedAt = performance.now();
  const interaction = (clicked.interaction_id ?? (clicked.interaction as { id?: string } | undefined)?.id) as
    | string
    | undefined;
  if (!interaction) throw new Error(`no interaction_id in ${JSON.stringify(clicked).slice(0, 300)}`);
  await sleep(clickedAt + delayMs - performance.now());
  const t0 = performance.now();
  const result = await call(server, "temporal_debug_bundle", { interaction_id: interaction });
  const t1 = performance.now();
  const range = structured(result).range as { requested: { end_ns: number } };
  const endLocal = range.requested.end_ns / 1e6 - offset;
  return {
    roundTrip: t1 - t0,
    endFromCall: endLocal - t0,
    answerAfterEnd: t1 - endLocal,
    answerAfterClose: t1 - Math.max(t0, endLocal),
  };
}

/** A fresh server: connect, its first tool call, the first bundle, then a second (warm) one. */
async function freshProcess(site: StaticServer) {
  const c0 = performance.now();
  const server = await startServer();
  const connected = performance.now();
  try {
    await call(server, "browser_status", {});
    const firstCall = performance.now() - connected;
    await call(server, "start_browser", { headless: true, temporary: true });
    const offset = await clockOffset(server);
    const cold = await oneBundle(server, site, offset);
    const warm = await oneBundle(server, site, offset);
    return { connect: connected - c0, firstCall, cold, warm };
  } finally {
    await server.close();
  }
}

function report(delay: number, samples: Sample[]): void {
  const rows = [[
    "iteration",
    "round trip ms",
    "window end from call ms",
    "answer after end ms",
    "after close ms",
  ]];
  const cells = (s: Sample) =>
    [s.roundTrip, s.endFromCall, s.answerAfterEnd, s.answerAfterClose].map((v) => int(v));
  samples.forEach((s, i) => rows.push([`${i + 1}`, ...cells(s)]));
  const at = (p: number): Sample => {
    const col = (f: (s: Sample) => number) => pct(samples.map(f), p);
    return {
      roundTrip: col((s) => s.roundTrip),
      endFromCall: col((s) => s.endFromCall),
      answerAfterEnd: col((s) => s.answerAfterEnd),
      answerAfterClose: col((s) => s.answerAfterClose),
    };
  };
  rows.push(["median", ...cells(at(50))], ["p90", ...cells(at(90))]);
  console.log(`\ntemporal_debug_bundle {interaction_id}, called ${delay} ms after the click returned\n`);
  console.log(formatTable(rows));
  const verdict = (v: number) => `${v <= TARGET_MS ? "PASS" : "MISS"} (${int(v)} ms)`;
  console.log(
    `answer ≤ ${TARGET_MS} ms after the window closes: median ${verdict(at(50).answerAfterEnd)}, p90 ${
      verdict(at(90).answerAfterEnd)
    }`,
  );
  console.log(
    `answer ≤ ${TARGET_MS} ms after the window closed or the call came, whichever is later: median ${
      verdict(at(50).answerAfterClose)
    }, p90 ${verdict(at(90).answerAfterClose)}`,
  );
}

async function main() {
  const opts = argsOrExit(parse);
  const site = serveStatic();
  try {
    const server = await startServer();
    const series = new Map<number, Sample[]>(CALL_DELAYS_MS.map((d) => [d, []]));
    try {
      await call(server, "start_browser", { headless: true, temporary: true });
      const offset = await clockOffset(server);
      await oneBundle(server, site, offset); // warm-up, not counted
      for (let i = 0; i < opts.iterations; i++) {
        for (const d of CALL_DELAYS_MS) series.get(d)?.push(await oneBundle(server, site, offset, d));
      }
    } finally {
      await server.close();
    }
    for (const [delay, samples] of series) report(delay, samples);

    if (opts.fresh > 0) {
      const fresh: Array<Awaited<ReturnType<typeof freshProcess>>> = [];
      for (let i = 0; i < opts.fresh; i++) fresh.push(await freshProcess(site));
      const frows = [[
        "fresh process",
        "connect ms",
        "first tool call ms",
        "first bundle ms",
        "second bundle ms",
        "cold extra ms",
      ]];
      fresh.forEach((f, i) =>
        frows.push([
          `${i + 1}`,
          int(f.connect),
          int(f.firstCall),
          int(f.cold.roundTrip),
          int(f.warm.roundTrip),
          int(f.cold.roundTrip - f.warm.roundTrip),
        ])
      );
      const fcol = (g: (f: (typeof fresh)[number]) => number) => median(fresh.map(g));
      frows.push([
        "median",
        int(fcol((f) => f.connect)),
        int(fcol((f) => f.firstCall)),
        int(fcol((f) => f.cold.roundTrip)),
        int(fcol((f) => f.warm.roundTrip)),
        int(fcol((f) => f.cold.roundTrip - f.warm.roundTrip)),
      ]);
      console.log("\nCold start: the first bundle of a fresh process beside its second\n");
      console.log(formatTable(frows));
    }
  } finally {
    await site.close();
  }
}

if (import.meta.main) await main();
