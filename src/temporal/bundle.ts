/**
 * The temporal debug bundle, the primary investigation entry point: a concise header of
 * measurements, the before/during/after composite, the storyboard and the difference map, capture
 * quality, and the browser events nearest the major visual changes, all traceable to source frames.
 */
import { nextTurn } from "./steps.ts";
import { type EventView, queryEvents } from "../capture/events_query.ts";
import { type EmulationView, emulationView, eventsNearChanges, layoutShiftLine } from "./bundle_events.ts";
import type { EpochAnalysis } from "./analysis.ts";
import { type ChangeRegion, changeRegions } from "./change_regions.ts";
import { anchorWords, emulationLine } from "./artifact_text.ts";
import { type Artifact, type ArtifactEnv, composite, differenceMap, storyboard } from "./artifacts.ts";
import { type Prepared, prepareRangeYielding } from "./prepare.ts";
import { ms, type ResolvedRange } from "./range.ts";
import { plainMs, signedMs } from "./render/layout.ts";
import type { SelectionReason } from "./selection.ts";
import { throwIfCancelled } from "../browser/call_signal.ts";
import { describeTransients, regionTimelines, type Transients, type TransientView } from "./transients.ts";

// Their home was this file; importers keep working.
export { eventsNearChanges, isFavicon } from "./bundle_events.ts";
export type { EmulationView } from "./bundle_events.ts";

export type Detail = "concise" | "expanded" | "full";

export const EVENT_LIMITS: Record<Detail, number> = { concise: 5, expanded: 12, full: 40 };
export const ID_LIMITS: Record<Detail, number> = { concise: 12, expanded: 48, full: 200 };

const MAJOR: SelectionReason[] = [
  "first_change",
  "peak_change",
  "trend_change",
  "turning_point",
  "change_peak",
];

export interface RangeMeasurements {
  frame_count: number;
  analyzed_frame_count: number;
  median_interval_ms: number | null;
  max_interval_ms: number | null;
  observed_fps: number | null;
  first_change_offset_ms: number | null;
  peak_baseline:
    | { offset_ms: number; frame_id: number; changed_proportion: number; mean_abs_diff: number }
    | null;
  peak_step: {
    offset_ms: number;
    frame_id: number;
    changed_proportion: number;
    mean_abs_diff: number;
    mean_luma_diff: number;
    mean_color_diff: number;
    perceptual_distance: number;
  } | null;
  max_perceptual_distance: number;
  change_bounds: { x: number; y: number; width: number; height: number } | null;
  changed_area_peak_proportion: number;
  /** Clusters of change, largest first (at most CHANGE_REGION_LIMIT), with the exact count left out. */
  change_regions: ChangeRegion[];
  change_regions_omitted: number;
}

export const CHANGE_REGION_LIMIT = 8;

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Index of the first measure whose change counts: the frame on screen at an action's dispatch, else 0. */
export function countedFrom(a: EpochAnalysis): number {
  if (!a.from_anchor) return 0;
  return Math.max(0, a.measures.findIndex((m) => m.frame.frame_id === a.baseline.frame_id));
}

export function measure(a: EpochAnalysis, anchorNs: number): RangeMeasurements {
  const steps = a.measures.filter((m) => m.step && !m.step.across_gap);
  const intervals = steps.map((m) => m.step?.interval_ms ?? 0);
  const med = median(intervals);
  const firstChange = a.measures.find((m) =>
    m.frame.session_time_ns > anchorNs && (m.step?.changed_proportion ?? 0) > 0
  );
  // An action's peaks are its own: frames before the one on screen at dispatch do not compete.
  const counted = a.measures.slice(countedFrom(a));
  const countedSteps = counted.slice(1).filter((m) => m.step && !m.step.across_gap);
  let peakB = counted[0];
  for (const m of counted) {
    if (m.baseline.changed_proportion > peakB.baseline.changed_proportion) peakB = m;
  }
  let peakS = countedSteps[0];
  for (const m of countedSteps) {
    if ((m.step?.changed_proportion ?? 0) > (peakS?.step?.changed_proportion ?? 0)) peakS = m;
  }
  const regions = changeRegions(a.change, a.scale, a.crop ?? { x: 0, y: 0 });
  return {
    frame_count: a.epoch.frames.length,
    analyzed_frame_count: a.measures.length,
    median_interval_ms: med,
    max_interval_ms: intervals.length ? Math.max(...intervals) : null,
    observed_fps: med ? Math.round(1000 / med * 10) / 10 : null,
    first_change_offset_ms: firstChange ? firstChange.offset_ms : null,
    peak_baseline: peakB && peakB.baseline.changed_proportion > 0
      ? {
        offset_ms: peakB.offset_ms,
        frame_id: peakB.frame.frame_id,
        changed_proportion: round4(peakB.baseline.changed_proportion),
        mean_abs_diff: round4(peakB.baseline.mean_abs_diff),
      }
      : null,
    peak_step: peakS?.step && peakS.step.changed_proportion > 0
      ? {
        offset_ms: peakS.offset_ms,
        frame_id: peakS.frame.frame_id,
        changed_proportion: round4(peakS.step.changed_proportion),
        mean_abs_diff: round4(peakS.step.mean_abs_diff),
        mean_luma_diff: round4(peakS.step.mean_luma_diff),
        mean_color_diff: round4(peakS.step.mean_color_diff),
        perceptual_distance: round4(peakS.step.perceptual_distance),
      }
      : null,
    max_perceptual_distance: round4(
      Math.max(0, ...countedSteps.map((m) => m.step?.perceptual_distance ?? 0)),
    ),
    change_bounds: a.change_bounds,
    changed_area_peak_proportion: round4(
      Math.max(0, ...counted.map((m) => m.baseline.changed_proportion)),
    ),
    change_regions: regions.slice(0, CHANGE_REGION_LIMIT),
    change_regions_omitted: Math.max(0, regions.length - CHANGE_REGION_LIMIT),
  };
}

function round4(v: number): number {
  return Math.round(v * 1e4) / 1e4;
}

export interface BundleResult {
  prepared: Prepared;
  analysis: EpochAnalysis;
  measurements: RangeMeasurements & Transients & { transient_states_omitted: number };
  storyboard: Artifact;
  composite: Artifact;
  difference_map: Artifact;
  events: Array<EventView & { nearest_change_ms: number | null }>;
  events_total: number;
  header: string;
  /** What the range ran under (absent when the page was never emulated up to its end). */
  emulation?: EmulationView;
}

export interface BundleOptions {
  epochs: "anchor" | "all";
  max_tiles: number;
  noise_floor?: number;
  detail: Detail;
}

/** Transient states listed in structured content, and in the concise text. */
export const TRANSIENT_LIMIT = 12;
const TRANSIENT_TEXT_LIMIT = 6;

function area(r: { x: number; y: number; width: number; height: number }): string {
  return `${Math.round(r.x)},${Math.round(r.y)} ${Math.round(r.width)}×${Math.round(r.height)}`;
}

export function transientLine(t: TransientView): string {
  if (t.looks_final) {
    return `- ${area(t.bounds)} already looked ${t.looks_final === "nearly" ? "nearly " : ""}as it ends at ${
      signedMs(t.appeared_ms)
    }, then changed again at ${signedMs(t.replaced_ms)}`;
  }
  const what = t.colour ? `${/^[aeiou]/.test(t.colour) ? "an" : "a"} ${t.colour} area` : "an area";
  return `- ${what} at ${area(t.bounds)} appeared at ${signedMs(t.appeared_ms)} and was replaced at ${
    signedMs(t.replaced_ms)
  } (${plainMs(t.duration_ms)} on screen)`;
}

/** The header's words for states that appeared and vanished, and regions that changed more than once. */
function transientText(m: BundleResult["measurements"], since: string): string[] {
  const states = m.transient_states.slice(0, TRANSIENT_TEXT_LIMIT);
  const more = m.transient_states.length - states.length + m.transient_states_omitted;
  if (states.length === 0 && m.repeated_changes.length === 0) {
    return ["- transient states: none (each changed region changed once and stayed)"];
  }
  return [
    `Transient states (shown, then replaced; ms from ${since}):`,
    ...states.map(transientLine),
    ...(more > 0 ? [`- and ${more} more (structured content: transient_states)`] : []),
    ...m.repeated_changes.slice(0, 4).map((r) =>
      `- ${area(r.bounds)} changed ${r.changes} times between ${signedMs(r.first_change_ms)} and ${
        signedMs(r.last_change_ms)
      }`
    ),
  ];
}

function headerText(
  p: Prepared,
  a: EpochAnalysis,
  m: BundleResult["measurements"],
  events: EventView[],
): string {
  const eventsTotal = events.length;
  const emulation = emulationLine(p);
  const shifts = layoutShiftLine(events, p.range.anchor.at_ns);
  const r = p.range;
  const at = r.anchor.at_ns;
  const op = anchorWords(p);
  const since = a.from_anchor ? `the ${op ?? "action"} dispatch` : `the ${anchorPhrase(r)}`;
  const who = r.anchor.id
    ? `${r.anchor.kind.replace("_", " ")} ${r.anchor.id}`
    : r.anchor.kind.replace("_", " ");
  const lines = [
    `Observed page ${r.page_id} from ${signedMs(ms(r.start_ns - at))} to ${
      signedMs(ms(r.end_ns - at))
    } around ${who}.`,
    "Capture:",
    `- ${m.frame_count} source frames in ${
      p.epochs.length > 1 ? `epoch ${a.epoch.index + 1} of ${p.epochs.length}` : "one epoch"
    } (${a.epoch.width}x${a.epoch.height}), ${m.analyzed_frame_count} analyzed${
      a.sampling ? " (sampled)" : ""
    }`,
    `- median observed cadence: ${
      m.median_interval_ms === null ? "n/a" : `${plainMs(m.median_interval_ms)} (~${m.observed_fps} fps)`
    }`,
    `- ${r.gaps.length} declared gap${r.gaps.length === 1 ? "" : "s"}${
      r.complete ? "" : "; range partly captured"
    }`,
    ...(p.earlier_document_frames > 0
      ? [
        `- ${p.earlier_document_frames} frame(s) of the previous document left out: the range opens on this one`,
      ]
      : []),
    a.from_anchor
      ? `Visual measurements (change since the frame on screen at ${since}):`
      : "Visual measurements:",
    `- first detected change: ${
      m.first_change_offset_ms === null ? "none" : signedMs(m.first_change_offset_ms)
    }`,
    `- greatest difference from before: ${
      m.peak_baseline
        ? `${signedMs(m.peak_baseline.offset_ms)} (frame #${m.peak_baseline.frame_id}, ${
          (m.peak_baseline.changed_proportion * 100).toFixed(1)
        }% of the frame)`
        : "none"
    }`,
    `- change bounds: ${
      m.change_bounds
        ? `x ${Math.round(m.change_bounds.x)}, y ${Math.round(m.change_bounds.y)}, ${
          Math.round(m.change_bounds.width)
        }x${Math.round(m.change_bounds.height)} px`
        : "no change"
    }`,
    `- change concentrated in ${m.change_regions.length + m.change_regions_omitted} region(s)${
      m.change_regions.length
        ? `; largest x ${Math.round(m.change_regions[0].bounds.x)}, y ${
          Math.round(m.change_regions[0].bounds.y)
        }, ${Math.round(m.change_regions[0].bounds.width)}x${
          Math.round(m.change_regions[0].bounds.height)
        } px (${Math.round(m.change_regions[0].share * 100)}% of change)`
        : ""
    }`,
    ...transientText(m, since),
    `- browser events in range: ${eventsTotal}`,
    ...(shifts ? [shifts] : []),
    ...(emulation ? [`- ${emulation}`] : []),
    "These are visual measurements, not a diagnosis.",
  ];
  return lines.join("\n");
}

function anchorPhrase(r: ResolvedRange): string {
  return r.anchor.kind === "session_time" || r.anchor.kind === "timestamps" || r.anchor.kind === "frames"
    ? "range start"
    : r.anchor.kind.replace("_", " ");
}

/** Transient states and repeated change of an analysis' change regions, named from its frames. */
function transientsOf(env: ArtifactEnv, a: EpochAnalysis, m: RangeMeasurements) {
  const from = countedFrom(a);
  const timelines = regionTimelines(a, m.change_regions, from);
  const t = describeTransients(a, timelines, (k) => {
    const f = a.measures[k].frame;
    return env.cache.frame(f, a.scale, () => env.ops.decode(f, a.scale));
  }, from);
  return {
    transient_states: t.transient_states.slice(0, TRANSIENT_LIMIT),
    transient_states_omitted: Math.max(0, t.transient_states.length - TRANSIENT_LIMIT),
    repeated_changes: t.repeated_changes,
  };
}

export async function buildBundle(
  env: ArtifactEnv,
  range: ResolvedRange,
  opts: BundleOptions,
): Promise<BundleResult[]> {
  const prepared = await prepareRangeYielding(env.db, range, env.ops, env.cache, {
    epochs: opts.epochs,
    noise_floor: opts.noise_floor,
  });
  const all = queryEvents(env.db, {
    sessionId: range.session_id,
    startNs: range.start_ns,
    endNs: range.end_ns,
    offset: 0,
    limit: 5_000,
  });
  const pageEvents = all.events.filter((e) => e.page_id === null || e.page_id === range.page_id);
  return await bundleResults(env, prepared, pageEvents, opts);
}

/** All three settle (none left writing behind a failed one); the first failure is then thrown. */
async function allSettled<T extends unknown[]>(work: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as T;
}

/** The bundle of a prepared range and its page's events (temporal/warm.ts runs it on a synthetic range). */
export async function bundleResults(
  env: ArtifactEnv,
  prepared: Prepared,
  pageEvents: EventView[],
  opts: BundleOptions,
): Promise<BundleResult[]> {
  const range = prepared.range;
  const out: BundleResult[] = [];
  for (const analysis of prepared.analyses) {
    // Side by side: each one's hashing and writes (through the ingest worker's admission) overlap the
    // next one's drawing instead of adding up. Each starts a turn of the event loop later, so their
    // drawing never runs as one block (screencast acks and cancellations get in between).
    const [board, comp, diff] = await allSettled<[Artifact, Artifact, Artifact]>([
      storyboard(env, prepared, analysis, { max_tiles: opts.max_tiles }),
      nextTurn().then(() => composite(env, prepared, analysis)),
      nextTurn().then(() => nextTurn()).then(() => differenceMap(env, prepared, analysis)),
    ]);
    // Reading transients decodes frames again: a cancelled call stops before that work.
    throwIfCancelled();
    const changeTimes = board.tiles.filter((t) => t.reasons.some((r) => MAJOR.includes(r as SelectionReason)))
      .map((t) => t.session_time_ms * 1e6);
    const near = eventsNearChanges(pageEvents, changeTimes, EVENT_LIMITS[opts.detail]);
    const base = measure(analysis, range.anchor.at_ns);
    const m = { ...base, ...transientsOf(env, analysis, base) };
    out.push({
      prepared,
      analysis,
      measurements: m,
      storyboard: board,
      composite: comp,
      difference_map: diff,
      events: near.events,
      events_total: pageEvents.length,
      header: headerText(prepared, analysis, m, pageEvents),
      ...(prepared.emulation ? { emulation: emulationView(prepared) } : {}),
    });
  }
  return out;
}
