/**
 * The control bench's report: the side-by-side table and the targets (issue 17 and before), printed as
 * PASS/MISS words, never asserted. A target that compares with a peer prints n/a when that peer did not run.
 */
import type { PhaseLine } from "./breakdown.ts";
import type { DevtoolsReport } from "./devtools_bench.ts";
import { formatTable, int } from "./table.ts";

export interface ToolStats {
  count: number;
  total: number;
  mean: number;
  max: number;
  maxName: string;
}

export interface Report {
  name: string;
  version?: string;
  tools?: ToolStats;
  ms: Record<string, number[]>;
  /** Text-content characters of the last result of each action (structuredContent counted apart). */
  chars: Record<string, number>;
  structuredChars: Record<string, number>;
  error?: string;
  devtools?: DevtoolsReport;
  /** The counted iterations' phase lines (krometrail with --breakdown). */
  phases?: PhaseLine[];
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Nearest-rank 90th percentile. */
function p90(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.ceil(0.9 * s.length) - 1];
}

const medianOf = (r: Report, action: string) => r.ms[action]?.length ? median(r.ms[action]) : undefined;

export function table(reports: Report[]): string {
  const actions = [...new Set(reports.flatMap((r) => Object.keys(r.ms)))];
  const rows: string[][] = [["", ...reports.map((r) => `${r.name}${r.version ? ` ${r.version}` : ""}`)]];
  for (const a of actions) {
    rows.push([
      `${a} ms, median / p90`,
      ...reports.map((r) => {
        const v = r.ms[a];
        return v?.length ? `${int(median(v))} / ${int(p90(v))}` : "—";
      }),
    ]);
  }
  for (const a of actions) {
    rows.push([
      `${a} result chars`,
      ...reports.map((r) => {
        if (r.chars[a] === undefined) return "—";
        const s = r.structuredChars[a];
        return `${int(r.chars[a])}${s ? ` (+${int(s)} structured)` : ""}`;
      }),
    ]);
  }
  rows.push(["tools/list: tools", ...reports.map((r) => int(r.tools?.count))]);
  rows.push(["tools/list: total chars", ...reports.map((r) => int(r.tools?.total))]);
  rows.push(["tools/list: chars per tool, mean", ...reports.map((r) => int(r.tools?.mean))]);
  rows.push([
    "tools/list: chars per tool, max",
    ...reports.map((r) => r.tools ? `${int(r.tools.max)} (${r.tools.maxName})` : "—"),
  ]);
  return formatTable(rows);
}

/** The faster peer's median of an action, and which peer it is. */
function fasterPeer(reports: Report[], action: string): { ms: number; name: string } | undefined {
  return reports.filter((r) => r.name !== "krometrail")
    .map((r) => ({ ms: medianOf(r, action), name: r.name }))
    .filter((p): p is { ms: number; name: string } => p.ms !== undefined)
    .reduce<{ ms: number; name: string } | undefined>((a, b) => (!a || b.ms < a.ms ? b : a), undefined);
}

export function targets(reports: Report[]): string[] {
  const ours = reports.find((r) => r.name === "krometrail") ??
    { name: "", ms: {}, chars: {}, structuredChars: {} };
  const devtools = reports.find((r) => r.name === "chrome-devtools-mcp") ??
    { name: "", ms: {}, chars: {}, structuredChars: {} };
  const click = medianOf(ours, "click");
  const theirs = medianOf(devtools, "click");
  const theirsBare = medianOf(devtools, "click, no observation");
  const ratio = click && theirs ? theirs / click : undefined;
  const bare = click && theirsBare
    ? `; vs its click without observation ${(theirsBare / click).toFixed(2)}×`
    : "";
  const snapshot = ours.chars.snapshot;
  const { mean, max, maxName } = ours.tools ?? {};
  const peersLargest = reports.slice(1).filter((r) => r.tools)
    .map((r) => `${r.name} ${int(r.tools?.max)}`).join(", ");
  // Each row leads: ours ≤ the faster peer's median (issue 17); the ratio is theirs / ours.
  const leads = (["navigate", "snapshot", "fill"] as const).map((action) => {
    const peer = fasterPeer(reports, action);
    const v = medianOf(ours, action);
    const ratio = v !== undefined && peer ? peer.ms / v : undefined;
    return [
      ratio,
      (r: number) => r >= 1,
      `${action} ≤ the faster peer's median: ${int(v)} ms against ${
        peer ? `${peer.name} ${int(peer.ms)} ms` : "—"
      }${ratio !== undefined ? ` (${ratio.toFixed(2)}×)` : ""}`,
    ] as [number | undefined, (v: number) => boolean, string];
  });
  const checks: Array<[number | undefined, (v: number) => boolean, string]> = [
    ...leads,
    [click, (v) => v <= 60, `click round trip with observation ≤ 60 ms median: ${int(click)} ms`],
    [
      ratio,
      (v) => v >= 2,
      `click ≥ 2× faster than chrome-devtools-mcp with snapshot: ${
        ratio === undefined ? "—" : `${ratio.toFixed(2)}×`
      }${bare}`,
    ],
    [snapshot, (v) => v <= 15_000, `concise heavy-page snapshot ≤ 15,000 chars: ${int(snapshot)}`],
    // The issue's figure is "tools/list characters per tool": the catalogue over its tool count.
    [mean, (v) => v <= 600, `≤ 600 schema chars per tool (tools/list chars / tools): ${int(mean)}`],
  ];
  return [
    ...checks.map(([v, ok, text]) => `${v === undefined ? "n/a " : ok(v) ? "PASS" : "MISS"}  ${text}`),
    `info  largest tool: ${int(max)} chars (${maxName})${
      peersLargest ? `; peers' largest: ${peersLargest}` : ""
    }`,
  ];
}
