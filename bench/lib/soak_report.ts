/**
 * The soak benchmark's report: the table over time, the issue's four targets (compared, never
 * asserted) and the two plot panels, all derived from the samples and the final capture status.
 */
import { SEGMENT_MAX_BYTES } from "../../src/store/format.ts";
import type { AckFloor } from "./ack_floor.ts";
import type { Panel } from "./soak_plot.ts";
import { evictedFrames } from "./soak_status.ts";
import { dec, formatTable, int } from "./table.ts";

export const MB = 1_000_000;
const MIB = 1024 * 1024;
const RSS_FLAT = 0.10;
const ACK_VS_FLOOR = 1.25;
/** "Minute five", and the length of "the last five minutes". */
const RSS_REFERENCE_S = 300;

export interface Sample {
  t: number;
  diskBytes?: number;
  diskAllocated?: number;
  dataDirBytes?: number;
  shareBytes?: number;
  instances?: number;
  statusUsed?: number;
  pinned?: number;
  reclaimed?: number;
  blocked?: string;
  rssKb?: number;
  workerHeap?: number;
  workerCpu?: number;
  received?: number;
  stored?: number;
  dropped?: number;
  overBudget?: number;
  gaps?: number;
  retainedFrames?: number;
  oldestMs?: number;
  p50?: number;
  p99?: number;
  pageFps?: number;
  error?: string;
}

export const mbOf = (b: number | undefined) => b === undefined ? "—" : dec(b / MB);
const num = (v: unknown) => typeof v === "number" ? v : undefined;

export function sampleTable(samples: Sample[]): string {
  const rows = [[
    "t s",
    "disk MB",
    "status used MB",
    "share MB / N",
    "pinned MB",
    "reclaimed MB",
    "RSS MiB",
    "worker CPU s",
    "recv",
    "stored",
    "dropped",
    "over budget",
    "gaps",
    "retained",
    "oldest s",
    "ack p50/p99 ms",
    "page fps",
  ]];
  for (const s of samples) {
    rows.push([
      dec(s.t, 0),
      mbOf(s.diskBytes),
      mbOf(s.statusUsed),
      `${mbOf(s.shareBytes)} / ${s.instances ?? "—"}`,
      mbOf(s.pinned),
      mbOf(s.reclaimed),
      s.rssKb === undefined ? "—" : dec(s.rssKb / 1024),
      dec(s.workerCpu, 1),
      int(s.received),
      int(s.stored),
      int(s.dropped),
      int(s.overBudget),
      int(s.gaps),
      int(s.retainedFrames),
      s.oldestMs === undefined ? "—" : dec(s.oldestMs / 1000, 0),
      s.p50 === undefined ? "—" : `${dec(s.p50, 2)} / ${dec(s.p99, 2)}`,
      dec(s.pageFps, 1),
    ]);
  }
  return formatTable(rows);
}

const word = (ok: boolean | undefined) => ok === undefined ? "n/a " : ok ? "PASS" : "MISS";

/** Every received frame is stored, or counted as dropped/rejected/over budget with a gap declaring it. */
function frameLoss(final: Record<string, unknown>): string {
  const parts: Array<[string, number | undefined]> = [
    ["stored", num(final.frames_stored)],
    ["dropped", num(final.frames_dropped)],
    ["rejected", num(final.frames_rejected)],
    ["over budget", num(final.frames_over_budget)],
  ];
  const received = num(final.frames_received);
  let missing = received === undefined ? undefined : received - parts.reduce((a, [, v]) => a + (v ?? 0), 0);
  let eq = `received ${int(received)} = ${parts.map(([k, v]) => `${k} ${int(v)}`).join(" + ")}`;
  const evicted = evictedFrames(final);
  if (missing !== undefined && missing > 0 && evicted.length > 0) {
    // Then frames_stored counts what is retained: evicted frames were stored, and later reclaimed.
    missing -= evicted.reduce((a, [, v]) => a + v, 0);
    eq += ` + ${evicted.map(([k, v]) => `${k} ${int(v)}`).join(" + ")}`;
  }
  const declared = parts.slice(1).reduce((a, [, v]) => a + (v ?? 0), 0);
  const gaps = num(final.gaps) ?? 0;
  const ok = missing === undefined ? undefined : missing === 0 && (declared === 0 || gaps > 0);
  return `${word(ok)}  zero undeclared frame loss: ${eq}; unaccounted ${int(missing)}; ` +
    `${int(gaps)} gap(s) declare ${int(declared)} unstored frame(s)`;
}

function usageTarget(samples: Sample[], share: number, shareSource: string): string {
  const measured = samples.filter((s) => s.diskBytes !== undefined);
  let peak: Sample | undefined;
  for (const s of measured) if (!peak || (s.diskBytes ?? 0) > (peak.diskBytes ?? 0)) peak = s;
  // The share can change during a run (instances come and go); each sample is judged by its own.
  const over = measured.filter((s) => (s.diskBytes ?? 0) > (s.shareBytes ?? share) + SEGMENT_MAX_BYTES);
  return `${word(measured.length ? over.length === 0 : undefined)}  usage never above share + one segment ` +
    `(${mbOf(share)} MB + ${dec(SEGMENT_MAX_BYTES / MIB)} MiB = ${mbOf(share + SEGMENT_MAX_BYTES)} MB; ` +
    `share from ${shareSource}): peak ${mbOf(peak?.diskBytes)} MB at ${dec(peak?.t, 0)} s; ` +
    `${over.length} of ${measured.length} samples over`;
}

function rssTarget(samples: Sample[], every: number): string {
  const withRss = samples.filter((s) => s.rssKb !== undefined);
  const duration = withRss.at(-1)?.t ?? 0;
  // A run shorter than ten minutes is judged the same way over its halves, and says so.
  const refT = Math.min(RSS_REFERENCE_S, duration / 2);
  const ref = withRss.find((s) => s.t >= refT - every / 2);
  const after = ref ? withRss.filter((s) => s.t >= Math.max(ref.t, duration - RSS_REFERENCE_S)) : [];
  const refKb = ref?.rssKb ?? 1;
  const worst = after.reduce((a, s) => Math.max(a, Math.abs((s.rssKb ?? 0) / refKb - 1)), 0);
  const kbs = after.map((s) => s.rssKb ?? 0);
  // Growth is what a leak looks like; a drop (memory given back) also breaks "within 10%", so both show.
  const growth = kbs.length ? Math.max(...kbs) / refKb - 1 : 0;
  const drop = kbs.length ? 1 - Math.min(...kbs) / refKb : 0;
  const scaled = refT < RSS_REFERENCE_S
    ? ` (run shorter than 10 min: reference at ${dec(refT, 0)} s, the half)`
    : "";
  return `${word(ref && after.length > 1 ? worst <= RSS_FLAT : undefined)}  server RSS in the last five ` +
    `minutes within ${RSS_FLAT * 100}% of minute five${scaled}: reference ${
      ref ? dec(refKb / 1024) : "—"
    } MiB at ${dec(ref?.t, 0)} s, range ${kbs.length ? dec(Math.min(...kbs) / 1024) : "—"}–${
      kbs.length ? dec(Math.max(...kbs) / 1024) : "—"
    } MiB (growth at most +${dec(growth * 100)}%, drop at most −${dec(drop * 100)}%), worst ${
      dec(worst * 100)
    }% over ${after.length} samples`;
}

/**
 * One line: the server's RSS at the last sample after `minutes`, beside the first sample's and the peak,
 * e.g. "server RSS after 10 min: 171.2 MiB (start 150.3 MiB, peak 180.0 MiB at 420 s; 61 samples)".
 */
export function rssSummary(samples: Sample[], minutes: number): string {
  const withRss = samples.filter((s) => s.rssKb !== undefined);
  const first = withRss[0];
  const last = withRss.at(-1);
  if (!first || !last) return `server RSS after ${dec(minutes, 0)} min: not measured`;
  const peak = withRss.reduce((a, s) => (s.rssKb ?? 0) > (a.rssKb ?? 0) ? s : a);
  const mib = (s: Sample) => `${dec((s.rssKb ?? NaN) / 1024)} MiB`;
  return `server RSS after ${dec(minutes, minutes % 1 ? 1 : 0)} min: ${mib(last)} (start ${mib(first)}, ` +
    `peak ${mib(peak)} at ${dec(peak.t, 0)} s; last sample at ${
      dec(last.t, 0)
    } s, ${withRss.length} samples)`;
}

function ackTarget(
  final: Record<string, unknown>,
  samples: Sample[],
  floor: AckFloor | undefined,
  floorSource: string | undefined,
): string {
  const ack = final.ack_latency_ms as { p99?: number; samples?: number } | undefined;
  const p99 = ack?.p99 ?? samples.at(-1)?.p99;
  const ratio = p99 !== undefined && floor ? p99 / floor.p99 : undefined;
  return `${
    word(ratio === undefined ? undefined : ratio <= ACK_VS_FLOOR)
  }  ack p99 within ${ACK_VS_FLOOR}× ` +
    `of the floor: ${dec(p99, 2)} ms (the recorder's last ${int(ack?.samples)} acks) vs floor${
      floorSource ? ` (${floorSource})` : ""
    } ${dec(floor?.p99, 2)} ms = ${dec(ratio, 2)}×`;
}

export interface TargetInput {
  samples: Sample[];
  final: Record<string, unknown>;
  floor?: AckFloor;
  /** Where the floor was measured, for the target's line. */
  floorSource?: string;
  share: number;
  shareSource: string;
  every: number;
}

export function soakTargets(i: TargetInput): string[] {
  return [
    frameLoss(i.final),
    usageTarget(i.samples, i.share, i.shareSource),
    rssTarget(i.samples, i.every),
    ackTarget(i.final, i.samples, i.floor, i.floorSource),
  ];
}

/** Usage against the share and the share plus one open segment; RSS (and the worker heap if reported). */
export function soakPanels(samples: Sample[], share: number): Panel[] {
  const pts = (f: (s: Sample) => number | undefined) =>
    samples.map((s): [number, number] => [s.t, f(s) ?? NaN]).filter(([, v]) => Number.isFinite(v));
  const shareLine = pts((s) => (s.shareBytes ?? share) / MB);
  const over = (b: number | undefined, unit: number) => b === undefined ? undefined : b / unit;
  return [
    {
      title: "instance disk usage",
      unit: "MB",
      series: [
        { label: "disk", color: [31, 119, 180], points: pts((s) => over(s.diskBytes, MB)) },
        ...(samples.some((s) => s.statusUsed !== undefined)
          ? [{
            label: "status",
            color: [44, 160, 44] as const,
            points: pts((s) => over(s.statusUsed, MB)),
          }]
          : []),
        { label: "share", color: [120, 120, 120], points: shareLine, dashed: true },
        {
          label: "share+segment",
          color: [214, 39, 40],
          points: shareLine.map(([t, v]) => [t, v + SEGMENT_MAX_BYTES / MB]),
          dashed: true,
        },
      ],
    },
    {
      title: "server RSS",
      unit: "MiB",
      series: [
        { label: "process", color: [255, 127, 14], points: pts((s) => over(s.rssKb, 1024)) },
        ...(samples.some((s) => s.workerHeap !== undefined)
          ? [{
            label: "worker heap",
            color: [148, 103, 189] as const,
            points: pts((s) => over(s.workerHeap, MIB)),
          }]
          : []),
      ],
    },
  ];
}
