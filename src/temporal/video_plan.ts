/**
 * Presentation plans for temporal video (pure, no I/O): which image is on screen for how many
 * output frames, mapped back to session time and ordered source frames. Deterministic for
 * identical input. Timing is quantized to whole output frames at a constant `fps`.
 */
import { limitExceeded, ToolError } from "../errors.ts";

export type PresentationPolicy = "real_time" | "model_optimized";

export const VIDEO_PLAN_ALGORITHM = "video_plan/1";

export interface PlanFrame {
  frame_id: number;
  session_time_ns: number;
  /** Change-aware selection from the caller; model_optimized holds these. */
  selected: boolean;
}

export interface PlanGap {
  start_ns: number;
  end_ns: number;
  kind: string;
}

/** Output bounds, and the model_optimized holds (a selected frame: its recorded duration clamped to min..max). */
export interface VideoPlanLimits {
  max_duration_ms: number; // output duration
  max_presentation_frames: number; // output (encoded) frames
  max_source_items: number; // input frames plus gaps
  min_hold_ms: number;
  max_hold_ms: number;
  max_unselected_run_ms: number; // a run of unselected frames is time-compressed to at most this
  gap_hold_ms: number; // model_optimized gap slate
}

export const DEFAULT_VIDEO_PLAN_LIMITS: Readonly<VideoPlanLimits> = Object.freeze({
  max_duration_ms: 60_000,
  max_presentation_frames: 1_800,
  max_source_items: 20_000,
  min_hold_ms: 500,
  max_hold_ms: 1_000,
  max_unselected_run_ms: 1_000,
  gap_hold_ms: 1_000,
});

export const DEFAULT_FPS: Readonly<Record<PresentationPolicy, number>> = Object.freeze({
  real_time: 30,
  model_optimized: 10,
});

export interface VideoPlanInput {
  frames: readonly PlanFrame[];
  gaps: readonly PlanGap[];
  range: { start_ns: number; end_ns: number };
  policy: PresentationPolicy;
  /** Constant output frame rate (integer 1..60); defaults per policy. */
  fps?: number;
  /** real_time only: integer speed-up (1..64), recorded in the plan. Default 1. */
  speed?: number;
  limits?: Partial<VideoPlanLimits>;
}

export interface IntervalBase {
  /** First output frame index and count: exact; pts_ms/duration_ms derive from them. */
  start_frame: number;
  frame_count: number;
  pts_ms: number;
  duration_ms: number;
  /** The session-time span this interval stands for; consecutive spans tile the timeline. */
  session_start_ns: number;
  session_end_ns: number;
  /** Ordered source frames whose session span this interval covers (shown or not). */
  source_frame_ids: number[];
}

export interface FramePresentation extends IntervalBase {
  kind: "frame";
  /** The image shown. */
  frame_id: number;
  frame_session_time_ns: number;
  selected: boolean;
}

export interface GapPresentation extends IntervalBase {
  kind: "gap";
  /** Kinds of the declared gap(s), joined with "+" when overlapping gaps merged. */
  gap_kind: string;
  /** The declared gap, clipped to the range; the slate runs until the next observed frame. */
  gap_start_ns: number;
  gap_end_ns: number;
}

export type PresentationInterval = FramePresentation | GapPresentation;

export interface VideoPlan {
  algorithm: string;
  policy: PresentationPolicy;
  fps: number;
  speed: number;
  range: { start_ns: number; end_ns: number };
  /** Presentation starts at the first observation; the uncaptured lead-in is not shown. */
  presented_start_ns: number;
  lead_in_ns: number;
  intervals: PresentationInterval[];
  total_frames: number;
  duration_ms: number;
  source_frame_ids: number[];
  presented_frame_ids: number[];
  omitted_frame_count: number;
  gap_count: number;
  timing_statement: string;
  limits: VideoPlanLimits;
}

function invalid(argument: string, message: string): ToolError {
  return new ToolError({
    code: "invalid_argument",
    message,
    retry: "never",
    recovery: `Correct ${argument} and call again.`,
    affected: { argument },
  });
}

function checkInt(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(name, `${name} must be an integer from ${min} to ${max}; got ${value}.`);
  }
  return value;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** A span of session time before frame counts are assigned. */
type Segment =
  | { kind: "frame"; s: number; e: number; frame: PlanFrame; ids: number[] }
  | { kind: "gap"; s: number; e: number; gap: PlanGap; ids: number[] };

/** Session-time timeline: frame spans and gap slates, clipped to the range, in order. */
function buildTimeline(input: VideoPlanInput): { segments: Segment[]; sourceIds: number[] } {
  const { start_ns: rs, end_ns: re } = input.range;
  const sorted = [...input.frames].sort((a, b) =>
    a.session_time_ns - b.session_time_ns || a.frame_id - b.frame_id
  );
  const before = sorted.filter((f) => f.session_time_ns < rs);
  const carry = before.length > 0 ? before[before.length - 1] : undefined;
  const inRange = sorted.filter((f) => f.session_time_ns >= rs && f.session_time_ns < re);
  // A gap after the carried-in frame makes the screen at range start unknown: no carry-in.
  const lower = carry ? carry.session_time_ns : rs;
  const kept = input.gaps
    .filter((g) => g.end_ns >= lower && g.start_ns < re && (g.end_ns > g.start_ns || g.start_ns >= lower))
    .map((g) => {
      const start_ns = Math.max(g.start_ns, rs);
      return { ...g, start_ns, end_ns: Math.min(Math.max(g.end_ns, start_ns), re) };
    })
    .sort((a, b) =>
      a.start_ns - b.start_ns || a.end_ns - b.end_ns || (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0)
    );
  const useCarry = carry !== undefined && !input.gaps.some((g) => g.end_ns >= lower && g.start_ns < rs);
  const frames: Array<{ frame: PlanFrame; time: number }> = [
    ...(useCarry && carry ? [{ frame: carry, time: rs }] : []),
    ...inRange.map((frame) => ({ frame, time: frame.session_time_ns })),
  ];
  // Overlapping or touching gaps merge into one slate.
  const merged: PlanGap[] = [];
  for (const g of kept) {
    const last = merged[merged.length - 1];
    if (last && g.start_ns <= last.end_ns) {
      last.end_ns = Math.max(last.end_ns, g.end_ns);
      const kinds = new Set([...last.kind.split("+"), g.kind]);
      last.kind = [...kinds].sort().join("+");
    } else merged.push({ ...g });
  }

  const segments: Segment[] = [];
  let fi = 0;
  const frameSeg = (limit: number) => {
    const f = frames[fi];
    const next = fi + 1 < frames.length ? frames[fi + 1].time : re;
    segments.push({ kind: "frame", s: f.time, e: Math.min(next, limit), frame: f.frame, ids: [] });
    fi++;
  };
  for (let gi = 0; gi < merged.length; gi++) {
    const g = merged[gi];
    while (fi < frames.length && frames[fi].time < g.start_ns) frameSeg(g.start_ns);
    const inside: number[] = [];
    while (fi < frames.length && frames[fi].time < g.end_ns) inside.push(frames[fi++].frame.frame_id);
    // Until a frame is observed again the screen is unknown: the slate lasts until then.
    const nextFrame = fi < frames.length ? frames[fi].time : re;
    const nextGap = gi + 1 < merged.length ? merged[gi + 1].start_ns : re;
    segments.push({ kind: "gap", s: g.start_ns, e: Math.min(nextFrame, nextGap), gap: g, ids: inside });
  }
  while (fi < frames.length) frameSeg(re);
  const sourceIds = frames.map((f) => f.frame.frame_id);
  return { segments, sourceIds };
}

/** real_time: each segment's frames are its quantized session span; gaps get at least one frame. */
function realTimeCounts(segments: Segment[], t0: number, fps: number, speed: number): number[] {
  const b = (t: number) => Math.round(((t - t0) * fps) / (speed * 1e9));
  let cursor = 0;
  return segments.map((seg) => {
    const start = Math.max(cursor, b(seg.s));
    const end = Math.max(b(seg.e), start + (seg.kind === "gap" ? 1 : 0));
    cursor = end;
    return end - start;
  });
}

/** model_optimized: hold selected frames and gaps; compress runs of unselected frames. */
function modelOptimizedCounts(segments: Segment[], fps: number, limits: VideoPlanLimits): number[] {
  const framesFor = (ms: number) => Math.ceil((ms * fps) / 1000 - 1e-9);
  const counts: number[] = new Array(segments.length).fill(0);
  let i = 0;
  while (i < segments.length) {
    const seg = segments[i];
    if (seg.kind === "gap") {
      counts[i++] = Math.max(1, framesFor(limits.gap_hold_ms));
    } else if (seg.frame.selected) {
      const recorded = (seg.e - seg.s) / 1e6;
      const hold = Math.min(Math.max(recorded, limits.min_hold_ms), limits.max_hold_ms);
      counts[i++] = Math.max(1, framesFor(hold));
    } else {
      let j = i;
      while (j < segments.length) {
        const s = segments[j];
        if (s.kind !== "frame" || s.frame.selected) break;
        j++;
      }
      const total = segments.slice(i, j).reduce((sum, s) => sum + (s.e - s.s), 0) / 1e6;
      const factor = total > 0 ? Math.min(total, limits.max_unselected_run_ms) / total : 0;
      let cum = 0;
      let prev = 0;
      for (let k = i; k < j; k++) {
        cum += (segments[k].e - segments[k].s) / 1e6;
        const boundary = Math.round((cum * factor * fps) / 1000);
        counts[k] = boundary - prev;
        prev = boundary;
      }
      i = j;
    }
  }
  return counts;
}

function toInterval(seg: Segment, base: IntervalBase): PresentationInterval {
  if (seg.kind === "gap") {
    return {
      kind: "gap",
      gap_kind: seg.gap.kind,
      gap_start_ns: seg.gap.start_ns,
      gap_end_ns: seg.gap.end_ns,
      ...base,
    };
  }
  const { frame_id, session_time_ns, selected } = seg.frame;
  return { kind: "frame", frame_id, frame_session_time_ns: session_time_ns, selected, ...base };
}

function timingStatement(policy: PresentationPolicy, fps: number, speed: number, l: VideoPlanLimits): string {
  const frameMs = round3(1000 / fps);
  const fast = speed > 1 ? ` at ${speed}x speed` : "";
  return policy === "real_time"
    ? `Real time${fast}: each frame is shown from its session time until the next observation, quantized ` +
      `to whole ${frameMs} ms output frames by cumulative rounding (drift ≤ half a frame, plus one frame per ` +
      `gap shorter than a frame); a capture gap is a slate until capture resumes.`
    : `Model optimized: held durations do not reflect recorded durations. Selected frames are held ` +
      `${l.min_hold_ms}-${l.max_hold_ms} ms, runs of unselected frames are compressed to at most ` +
      `${l.max_unselected_run_ms} ms, each capture gap is a ${l.gap_hold_ms} ms slate, all in whole ` +
      `${frameMs} ms output frames. The interval mapping gives the session times.`;
}

export function resolveVideoPlanLimits(partial?: Partial<VideoPlanLimits>): VideoPlanLimits {
  const limits = { ...DEFAULT_VIDEO_PLAN_LIMITS, ...(partial ?? {}) };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isFinite(value) || value < 0) throw invalid(`limits.${key}`, `limits.${key} must be ≥ 0.`);
  }
  if (limits.max_hold_ms < limits.min_hold_ms) {
    throw invalid("limits.max_hold_ms", "max_hold_ms must be ≥ min_hold_ms.");
  }
  return limits;
}

export function planVideo(input: VideoPlanInput): VideoPlan {
  const limits = resolveVideoPlanLimits(input.limits);
  const policy = input.policy;
  if (policy !== "real_time" && policy !== "model_optimized") {
    throw invalid("policy", `policy must be "real_time" or "model_optimized"; got ${String(policy)}.`);
  }
  const fps = checkInt("fps", input.fps ?? DEFAULT_FPS[policy], 1, 60);
  const speed = checkInt("speed", input.speed ?? 1, 1, 64);
  if (speed !== 1 && policy !== "real_time") {
    throw invalid("speed", "speed applies only to policy real_time.");
  }
  const { start_ns: rs, end_ns: re } = input.range;
  if (!Number.isFinite(rs) || !Number.isFinite(re) || re <= rs) {
    throw invalid("range", "range.end_ns must be a number greater than range.start_ns.");
  }
  const items = input.frames.length + input.gaps.length;
  if (items > limits.max_source_items) {
    throw limitExceeded(
      "video source frames plus gaps",
      items,
      limits.max_source_items,
      "Narrow the range so fewer source frames fall in it.",
    );
  }
  const seen = new Set<number>();
  for (const f of input.frames) {
    if (!Number.isSafeInteger(f.frame_id) || !Number.isFinite(f.session_time_ns)) {
      throw invalid("frames", "every frame needs an integer frame_id and a finite session_time_ns.");
    }
    if (seen.has(f.frame_id)) throw invalid("frames", `frame_id ${f.frame_id} appears twice.`);
    seen.add(f.frame_id);
  }
  if (input.gaps.some((g) => !Number.isFinite(g.start_ns) || !Number.isFinite(g.end_ns))) {
    throw invalid("gaps", "every gap needs finite start_ns and end_ns.");
  }

  const { segments, sourceIds } = buildTimeline(input);
  if (segments.length === 0) {
    throw new ToolError({
      code: "no_source_frames",
      message: "The range holds no retained source frames and no capture gaps; there is nothing to present.",
      retry: "never",
      recovery: "Resolve a range that contains retained frames (see list_source_frames).",
      details: { range: input.range },
    });
  }
  const t0 = segments[0].s;
  if (policy === "real_time") {
    const outMs = (re - t0) / 1e6 / speed;
    if (outMs > limits.max_duration_ms) {
      const need = Math.ceil(outMs / limits.max_duration_ms);
      throw limitExceeded(
        "real_time video duration (resolved range ÷ speed, ms)",
        round3(outMs),
        limits.max_duration_ms,
        `Narrow the range to at most ${limits.max_duration_ms * speed} ms, pass speed ${
          need <= 64 ? `≥ ${need * speed}` : "(up to 64)"
        }, or use policy model_optimized.`,
      );
    }
  }
  const counts = policy === "real_time"
    ? realTimeCounts(segments, t0, fps, speed)
    : modelOptimizedCounts(segments, fps, limits);
  // A very short range still shows its latest state for one frame.
  if (counts.reduce((a, b) => a + b, 0) === 0) counts[counts.length - 1] = 1;

  // Zero-frame segments fold into their neighbour so every session span stays mapped.
  const intervals: PresentationInterval[] = [];
  let frame = 0;
  let pendingIds: number[] = [];
  let pendingStart: number | undefined;
  segments.forEach((seg, i) => {
    const ownIds = seg.kind === "frame" ? [seg.frame.frame_id, ...seg.ids] : seg.ids;
    const count = counts[i];
    if (count === 0) {
      const last = intervals[intervals.length - 1];
      if (last) {
        last.session_end_ns = seg.e;
        last.source_frame_ids.push(...ownIds);
      } else {
        pendingIds.push(...ownIds);
        pendingStart ??= seg.s;
      }
      return;
    }
    const base: IntervalBase = {
      start_frame: frame,
      frame_count: count,
      pts_ms: round3((frame * 1000) / fps),
      duration_ms: round3((count * 1000) / fps),
      session_start_ns: pendingStart ?? seg.s,
      session_end_ns: seg.e,
      source_frame_ids: [...pendingIds, ...ownIds],
    };
    pendingIds = [];
    pendingStart = undefined;
    frame += count;
    intervals.push(toInterval(seg, base));
  });

  const totalMs = round3((frame * 1000) / fps);
  if (frame > limits.max_presentation_frames) {
    throw limitExceeded(
      "video presentation frame count",
      frame,
      limits.max_presentation_frames,
      "Narrow the range, lower fps, or select fewer frames to hold.",
    );
  }
  if (policy === "model_optimized" && totalMs > limits.max_duration_ms) {
    throw limitExceeded(
      "model_optimized video duration (ms)",
      totalMs,
      limits.max_duration_ms,
      "Select fewer frames to hold, or narrow the range.",
    );
  }
  const presented = intervals.flatMap((iv) => (iv.kind === "frame" ? [iv.frame_id] : []));
  const presentedIds = [...new Set(presented)];
  return {
    algorithm: VIDEO_PLAN_ALGORITHM,
    policy,
    fps,
    speed,
    range: { start_ns: rs, end_ns: re },
    presented_start_ns: t0,
    lead_in_ns: t0 - rs,
    intervals,
    total_frames: frame,
    duration_ms: totalMs,
    source_frame_ids: sourceIds,
    presented_frame_ids: presentedIds,
    omitted_frame_count: sourceIds.length - presentedIds.length,
    gap_count: intervals.filter((iv) => iv.kind === "gap").length,
    timing_statement: timingStatement(policy, fps, speed, limits),
    limits,
  };
}
