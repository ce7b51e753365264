/**
 * The four measurements of bench/pagestate.ts, each against real servers over stdio in real Chromium:
 * click round trip with and without DOM recording, DOM-recording bytes per second on the fixtures,
 * read_dom_at latency by depth into a long recording, and bisect over windows.
 */
import { sleep } from "./wait.ts";
import type { BenchServer, DomTotals, Timed } from "./pagestate_server.ts";
import { summarize, type Summary } from "./pagestate_stats.ts";

const log = (msg: string) => console.error(`[pagestate] ${msg}`);

// --- 1. click round trip -------------------------------------------------------------------------

export interface ClickResult {
  recording: Summary;
  not_recording: Summary;
}

/** Interleaved clicks on heavy.html's button on two servers, one recording the DOM and one not. */
export async function clickRoundTrip(
  on: BenchServer,
  off: BenchServer,
  url: string,
  clicks: number,
): Promise<ClickResult> {
  for (const s of [on, off]) {
    await s.call("navigate_page", { url });
    await s.call("fill", { selector: "#filter", value: "archived" });
  }
  await sleep(500);
  const click = (s: BenchServer) => s.call("click", { selector: "#apply" }).then((r) => r.ms);
  for (let i = 0; i < 3; i++) { // warm-up, not counted
    await click(on);
    await click(off);
  }
  const onMs: number[] = [];
  const offMs: number[] = [];
  for (let i = 0; i < clicks; i++) {
    // Alternate which goes first so neither always follows the other's tail work.
    const order: Array<[BenchServer, number[]]> = i % 2
      ? [[off, offMs], [on, onMs]]
      : [[on, onMs], [off, offMs]];
    for (const [s, into] of order) {
      into.push(await click(s));
      await sleep(60);
    }
    if ((i + 1) % 10 === 0) log(`click ${i + 1}/${clicks}`);
  }
  return { recording: summarize(onMs), not_recording: summarize(offMs) };
}

// --- 2. bytes per second -------------------------------------------------------------------------

export interface BytesResult extends DomTotals {
  page: string;
  seconds: number;
  stored_per_s: number;
  raw_per_s: number;
}

export interface BisectSample {
  label: string;
  round_trip: Summary;
  probes: number;
  events_scanned: number;
  /** The handler's own elapsed_ms of each call (the rest of the round trip is outside the handler). */
  server_elapsed: Summary;
  transitions: number;
  window_ms: number;
}

type Driver = (s: BenchServer, until: number) => Promise<void>;

/** Keeps doing `step` (then a pause) until the activity window ends. */
const loop = (step: (s: BenchServer, i: number) => Promise<unknown>, pauseMs: number): Driver => {
  return async (s, until) => {
    for (let i = 0; performance.now() < until; i++) {
      await step(s, i);
      await sleep(pauseMs);
    }
  };
};

const TABLE_QUERIES = ["ada", "late", "", "grace", "paid", "knuth", "", "refunded"];

export const DRIVERS: Record<string, Driver> = {
  "heavy.html": loop(async (s, i) => {
    await s.call("fill", { selector: "#filter", value: `row ${i}` });
    await s.call("click", { selector: "#apply" });
  }, 400),
  "table300.html": loop(
    (s, i) => s.call("fill", { selector: "#filter", value: TABLE_QUERIES[i % TABLE_QUERIES.length] }),
    500,
  ),
  "utility_soup.html": loop(
    (s, i) => s.call("fill", { selector: `[name=field-${33 + 4 * (i % 9)}]`, value: `value ${i}` }),
    500,
  ),
};

/**
 * One fresh recording session per page: navigate, drive the page for `activityS`, stop, and read
 * the session's DOM chunks from the index. checkout.html goes through its triggers and, before its
 * browser stops, is bisected (its samples are returned beside the bytes).
 */
export async function bytesPerSecond(
  s: BenchServer,
  origin: string,
  activityS: number,
  bisectCalls: number,
): Promise<{ pages: BytesResult[]; checkoutBisects: BisectSample[] }> {
  const pages: BytesResult[] = [];
  let checkoutBisects: BisectSample[] = [];
  for (const page of ["checkout.html", "heavy.html", "table300.html", "utility_soup.html"]) {
    log(`bytes: ${page}, ${activityS} s of activity`);
    const sessionId = await s.startBrowser(true);
    const t0 = performance.now();
    await s.call("navigate_page", { url: `${origin}/${page}` });
    const until = t0 + activityS * 1_000;
    if (page === "checkout.html") {
      const loadClick = await driveCheckout(s);
      await sleep(until - performance.now());
      checkoutBisects = await checkoutBisect(s, loadClick, bisectCalls);
    } else {
      const driver = DRIVERS[page];
      await driver(s, until);
      await sleep(until - performance.now());
    }
    const seconds = (performance.now() - t0) / 1_000;
    await s.stopBrowser();
    await sleep(300); // the worker commits index rows in 100 ms batches
    const totals = await s.domTotals(sessionId);
    pages.push({
      page,
      seconds,
      ...totals,
      stored_per_s: totals.stored_bytes / seconds,
      raw_per_s: totals.raw_bytes / seconds,
    });
  }
  return { pages, checkoutBisects };
}

/** checkout.html's triggers in turn; the interaction id of the click that empties the province list. */
async function driveCheckout(s: BenchServer): Promise<string> {
  await sleep(300);
  await s.call("fill", { selector: "#email", value: "bench@example.org" });
  await s.call("fill", { selector: "#password", value: "bench-Pa55word" });
  const clicked = await s.call("click", { selector: "#load-provinces" });
  await sleep(1_200);
  await s.call("click", { selector: "#flip" });
  await sleep(700);
  await s.call("click", { selector: "#show-promo" });
  await s.call("click", { selector: "#covered-pay" }).catch(() => undefined); // intercepted: the overlay
  return String(clicked.structured.interaction_id);
}

async function checkoutBisect(s: BenchServer, loadClick: string, calls: number): Promise<BisectSample[]> {
  return [
    await bisectSample(s, "checkout: #submit disabled, the load click's window", calls, {
      interaction_id: loadClick,
      selector: "#submit",
      predicate: { kind: "propertyEquals", property: "disabled", equals: true },
    }),
    await bisectSample(s, "checkout: #flipper data-state, whole recording", calls, {
      selector: "#flipper",
      predicate: { kind: "attributeEquals", name: "data-state", equals: "off" },
    }),
  ];
}

export async function bisectSample(
  s: BenchServer,
  label: string,
  calls: number,
  args: Record<string, unknown>,
): Promise<BisectSample> {
  const ms: number[] = [];
  const server: number[] = [];
  let last: Timed | undefined;
  for (let i = 0; i < calls; i++) {
    last = await s.call("bisect", args);
    ms.push(last.ms);
    server.push(Number(last.structured.elapsed_ms));
  }
  const st = last?.structured ?? {};
  const w = st.window as { from_ms: number; to_ms: number } | undefined;
  return {
    label,
    round_trip: summarize(ms),
    probes: Number(st.probes),
    events_scanned: Number(st.events_scanned),
    server_elapsed: summarize(server),
    transitions: Array.isArray(st.transitions) ? st.transitions.length : NaN,
    window_ms: w ? w.to_ms - w.from_ms : NaN,
  };
}

// --- 3 and 4. depth into a long recording --------------------------------------------------------

export interface DepthSample {
  depth_s: number;
  /** "live": asked as the recording reached that depth; "end": asked once the whole recording was made. */
  asked: "live" | "end";
  round_trip: Summary;
  /** Lines of the last answer's legible DOM (what the agent got back). */
  lines: number;
}

export interface DepthResult {
  reads: DepthSample[];
  bisects: BisectSample[];
  bytes: BytesResult;
}

/**
 * busy_dom.html recorded for `depths`' last depth (+ a little): at each depth, `calls` read_dom_at
 * calls at instants that depth into the recording, and bisect over the window so far (60 s and up);
 * at the end the shallow depths are read again from the finished recording.
 */
export async function depthRun(
  s: BenchServer,
  origin: string,
  depths: number[],
  calls: number,
  bisectCalls: number,
): Promise<DepthResult> {
  const sessionId = await s.startBrowser(true);
  const t0 = performance.now();
  await s.call("navigate_page", { url: `${origin}/busy_dom.html` });
  const startMs = await recordingStart(s, sessionId);
  log(`busy page recording from session ${startMs.toFixed(0)} ms`);
  const reads: DepthSample[] = [];
  const bisects: BisectSample[] = [];
  const submitDisabled = {
    selector: "#submit",
    predicate: { kind: "propertyEquals", property: "disabled", equals: true },
  };
  for (const depth of depths) {
    // One second past the depth, so the instant's batches have reached the index.
    await waitWithProgress(t0 + (depth + 1) * 1_000, `depth ${depth} s`);
    reads.push(await readsAt(s, startMs, depth, calls, "live"));
    if (depth >= 60) {
      bisects.push(
        await bisectSample(s, `busy: #submit disabled over the first ${windowName(depth)}`, bisectCalls, {
          range: { start_ms: Math.round(startMs), end_ms: Math.round(startMs + depth * 1_000) },
          ...submitDisabled,
        }),
      );
    }
  }
  for (const depth of depths.slice(0, -1)) reads.push(await readsAt(s, startMs, depth, calls, "end"));
  const seconds = (performance.now() - t0) / 1_000;
  await s.stopBrowser();
  await sleep(300);
  const totals = await s.domTotals(sessionId);
  return {
    reads,
    bisects,
    bytes: {
      page: "busy_dom.html",
      seconds,
      ...totals,
      stored_per_s: totals.stored_bytes / seconds,
      raw_per_s: totals.raw_bytes / seconds,
    },
  };
}

export const windowName = (s: number) => s >= 60 && s % 60 === 0 ? `${s / 60} min` : `${s} s`;

async function readsAt(
  s: BenchServer,
  startMs: number,
  depth: number,
  calls: number,
  asked: "live" | "end",
): Promise<DepthSample> {
  const ms: number[] = [];
  let lines = 0;
  for (let i = 0; i < calls; i++) {
    // Instants 130 ms apart: each call seeks somewhere new, as an agent stepping through time would.
    const r = await s.call("read_dom_at", { at_ms: Math.round(startMs + depth * 1_000 - 130 * i) });
    ms.push(r.ms);
    lines = String(r.structured.dom ?? "").split("\n").length;
  }
  log(`read_dom_at at ${depth} s (${asked}): median ${summarize(ms).median.toFixed(0)} ms`);
  return { depth_s: depth, asked, round_trip: summarize(ms), lines };
}

/** The session time of the page's first DOM chunk, once the index has it. */
async function recordingStart(s: BenchServer, sessionId: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const t = await s.domTotals(sessionId);
    if (t.first_ms !== undefined) return t.first_ms;
    await sleep(100);
  }
  throw new Error("the busy page's recording never reached the index");
}

async function waitWithProgress(untilMs: number, what: string): Promise<void> {
  let lastReport = 0;
  while (performance.now() < untilMs) {
    const left = (untilMs - performance.now()) / 1_000;
    if (performance.now() - lastReport >= 30_000) {
      log(`recording the busy page: ${left.toFixed(0)} s until ${what}`);
      lastReport = performance.now();
    }
    await sleep(Math.min(1_000, untilMs - performance.now()));
  }
}
