/**
 * The control bench's devtools section: get_network_request and emulate round trips through krometrail
 * and chrome-devtools-mcp on one page that fetched a JSON (bench/lib/devtools_site/). Finding the
 * request's id is untimed (ours: query_browser_events; theirs: list_network_requests); only the detail
 * calls and the emulation toggles are timed. It compares; it never asserts timings.
 */
import type { Client } from "@modelcontextprotocol/client";
import { fileURLToPath } from "node:url";
import { formatTable, int } from "./table.ts";
import { sleep } from "./wait.ts";

export const DEVTOOLS_SITE = fileURLToPath(new URL("./devtools_site/", import.meta.url));
const FIND_DEADLINE_MS = 10_000;
/** The calls take milliseconds: more iterations than the control flow's, so a busy box's noise evens out. */
export const DEVTOOLS_ITERATIONS = 40;

export interface BenchCall {
  name: string;
  args: Record<string, unknown>;
}
export interface BenchResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}
type Caller = (c: BenchCall) => Promise<BenchResult>;

/** How one system expresses the devtools round trips. */
export interface DevtoolsFlow {
  /**
   * The call that reads one request's detail with its body, once the fixture's JSON fetch is found
   * (untimed), and where the system has one, the same read without the body.
   */
  findRequest(call: Caller): Promise<{ get: BenchCall; metadata?: BenchCall } | undefined>;
  /** Turns throttling (slow 3G, CPU 4×) on or clears it. */
  emulate(on: boolean): BenchCall;
}

export interface DevtoolsReport {
  ms: Record<string, number[]>;
  chars: Record<string, number>;
  structuredChars: Record<string, number>;
  error?: string;
}

const textOf = (r: BenchResult) => r.content.map((c) => c.type === "text" ? c.text ?? "" : "").join("\n");

/** Polls `find` until it gives a value, for at most FIND_DEADLINE_MS. */
async function poll<T>(find: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = performance.now() + FIND_DEADLINE_MS;
  while (performance.now() < deadline) {
    const found = await find();
    if (found !== undefined) return found;
    await sleep(100);
  }
  throw new Error(`${what} not found within ${FIND_DEADLINE_MS} ms`);
}

export const krometrailDevtools: DevtoolsFlow = {
  findRequest: async (call) => {
    const id = await poll(async () => {
      const r = await call({ name: "query_browser_events", args: { kinds: ["request"], max_events: 100 } });
      const events = (r.structuredContent?.events ?? []) as Array<{ data?: Record<string, unknown> | null }>;
      const hit = events.find((e) =>
        e.data?.resource_type === "Fetch" && typeof e.data.request_id === "string"
      );
      return hit?.data?.request_id as string | undefined;
    }, "the JSON fetch in query_browser_events");
    // The peer returns the body inline; ours is asked for its summary, the comparable reading.
    return {
      get: { name: "get_network_request", args: { request_id: id, body: "summary" } },
      metadata: { name: "get_network_request", args: { request_id: id } },
    };
  },
  emulate: (on) => ({
    name: "emulate",
    args: on ? { network: "slow_3g", cpu_slowdown: 4 } : { clear: true },
  }),
};

export function devtoolsMcpFlow(pageId: number): DevtoolsFlow {
  return {
    findRequest: async (call) => {
      const reqid = await poll(async () => {
        const r = await call({
          name: "list_network_requests",
          args: { pageId, resourceTypes: ["fetch"] },
        });
        return textOf(r).match(/reqid=(\d+) GET \S*data\.json/)?.[1];
      }, "the JSON fetch in list_network_requests");
      return { get: { name: "get_network_request", args: { pageId, reqid: Number(reqid) } } };
    },
    // Each of its emulate calls replaces every setting: omitting them clears.
    emulate: (on) => ({
      name: "emulate",
      args: on ? { pageId, networkConditions: "Slow 3G", cpuThrottlingRate: 4 } : { pageId },
    }),
  };
}

/**
 * Navigates to the fixture (untimed), then `iterations` timed detail reads and as many on/off
 * emulation pairs, each after one untimed warm-up.
 */
export async function runDevtools(
  client: Client,
  flow: DevtoolsFlow,
  navigate: BenchCall,
  iterations: number,
  timeoutMs: number,
): Promise<DevtoolsReport> {
  const report: DevtoolsReport = { ms: {}, chars: {}, structuredChars: {} };
  const raw: Caller = async (c) =>
    await client.callTool({ name: c.name, arguments: c.args }, { timeout: timeoutMs }) as BenchResult;
  const timed = async (label: string, c: BenchCall, counted: boolean) => {
    const t0 = performance.now();
    const result = await raw(c);
    const ms = performance.now() - t0;
    if (result.isError) throw new Error(`${label} (${c.name}) failed: ${textOf(result).slice(0, 400)}`);
    if (counted) (report.ms[label] ??= []).push(ms);
    report.chars[label] = textOf(result).length;
    report.structuredChars[label] = result.structuredContent
      ? JSON.stringify(result.structuredContent).length
      : 0;
  };
  try {
    const navigated = await raw(navigate);
    if (navigated.isError) throw new Error(`navigate failed: ${textOf(navigated).slice(0, 400)}`);
    const found = await flow.findRequest(raw);
    if (!found) throw new Error("no request to read");
    for (let i = 0; i <= iterations; i++) {
      await timed("get_network_request", found.get, i > 0);
      if (found.metadata) await timed("get_network_request, no body", found.metadata, i > 0);
    }
    for (let i = 0; i <= iterations; i++) {
      await timed("emulate: throttle", flow.emulate(true), i > 0);
      await timed("emulate: clear", flow.emulate(false), i > 0);
    }
  } catch (err) {
    report.error = err instanceof Error ? err.message : String(err);
  }
  return report;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Median ms of each round trip side by side, the ratio theirs / ours (≥ 1: not slower), and sizes. */
export function devtoolsTable(ours: DevtoolsReport | undefined, theirs: DevtoolsReport | undefined): string {
  const labels = [...new Set([...Object.keys(ours?.ms ?? {}), ...Object.keys(theirs?.ms ?? {})])];
  const rows: string[][] = [["", "krometrail", "chrome-devtools-mcp", "theirs / ours", "target"]];
  for (const label of labels) {
    const a = ours?.ms[label]?.length ? median(ours.ms[label]) : undefined;
    const b = theirs?.ms[label]?.length ? median(theirs.ms[label]) : undefined;
    const ratio = a && b ? b / a : undefined;
    rows.push([
      `${label} ms, median`,
      a === undefined ? "—" : a.toFixed(1),
      b === undefined ? "—" : b.toFixed(1),
      ratio === undefined ? "—" : `${ratio.toFixed(2)}×`,
      ratio === undefined ? "n/a" : ratio >= 1 ? "PASS (not slower)" : "MISS (slower)",
    ]);
  }
  for (const label of labels) {
    const cell = (r: DevtoolsReport | undefined) => {
      if (r?.chars[label] === undefined) return "—";
      const s = r.structuredChars[label];
      return `${int(r.chars[label])}${s ? ` (+${int(s)} structured)` : ""}`;
    };
    rows.push([`${label} result chars`, cell(ours), cell(theirs), "", ""]);
  }
  return formatTable(rows);
}
