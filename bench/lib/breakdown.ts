/**
 * The control bench's `--breakdown`: where krometrail's time goes inside each timed call. The server
 * writes one JSON line per tool call to KROMETRAIL_PHASE_TIMINGS (src/phase_timing.ts); this reads the
 * counted iterations' lines and prints, per action, each phase's median start and duration. Phases
 * overlap (the screenshot and the snapshot run side by side), so durations do not add up to the total;
 * the start column shows the order. "client ↔ server" is the client's round trip less the server's own
 * total: stdio, JSON and the SDK on both ends.
 */
import { formatTable } from "./table.ts";

export interface PhaseLine {
  tool: string;
  total_ms: number;
  phases: Array<{ name: string; start: number; ms: number }>;
}

export class PhaseLog {
  constructor(readonly path: string) {}

  /** Forgets what was written so far (the warm-up iteration). */
  reset(): void {
    Deno.writeTextFileSync(this.path, "");
  }

  read(): PhaseLine[] {
    let text = "";
    try {
      text = Deno.readTextFileSync(this.path);
    } catch { /* nothing written */ }
    return text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as PhaseLine);
  }
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const ms = (v: number) => Number.isFinite(v) ? v.toFixed(1) : "—";

/**
 * One table per action. `roundTrips` are the client's timings of the same calls (action label → ms),
 * `tools` maps the action label to the tool name the server logged.
 */
export function breakdownTables(
  lines: PhaseLine[],
  tools: Record<string, string>,
  roundTrips: Record<string, number[]>,
): string {
  const out: string[] = [];
  for (const [action, tool] of Object.entries(tools)) {
    const calls = lines.filter((l) => l.tool === tool);
    if (calls.length === 0) continue;
    const total = median(calls.map((c) => c.total_ms));
    const trip = median(roundTrips[action] ?? []);
    // A phase that runs more than once in a call (two rendezvous) is summed within the call.
    const names = [...new Set(calls.flatMap((c) => c.phases.map((p) => p.name)))];
    const rows = names.map((name) => {
      const per = calls.map((c) => c.phases.filter((p) => p.name === name));
      const present = per.filter((p) => p.length > 0);
      return {
        name,
        start: median(present.map((p) => p[0].start)),
        dur: median(present.map((p) => p.reduce((a, b) => a + b.ms, 0))),
        seen: present.length,
      };
    }).sort((a, b) => a.start - b.start);
    const table: string[][] = [["phase", "start ms", "duration ms", "calls"]];
    for (const r of rows) table.push([r.name, ms(r.start), ms(r.dur), `${r.seen}/${calls.length}`]);
    table.push(["server total", "0.0", ms(total), `${calls.length}`]);
    table.push(["client ↔ server (round trip − server total)", "", ms(trip - total), ""]);
    out.push(`${action} (${tool}), medians over ${calls.length} calls; round trip ${ms(trip)} ms`);
    out.push(formatTable(table));
    out.push("");
  }
  return out.join("\n");
}
