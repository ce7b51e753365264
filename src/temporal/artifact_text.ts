/**
 * The words artifacts carry: the anchor's name, subtitles and warnings, gap and marker notes between
 * tiles, the frame selection for a prepared epoch, and each tile's label in plain words.
 */
import type { EpochAnalysis } from "./analysis.ts";
import type { Marker, Prepared } from "./prepare.ts";
import { ms, type ResolvedRange } from "./range.ts";
import { plainMs, signedMs } from "./render/layout.ts";
import { type LabelContext, plainLabel, type Selected, selectFrames } from "./selection.ts";

export function anchorName(range: ResolvedRange): string {
  const a = range.anchor;
  if (a.kind === "interaction" || a.kind === "latest_interaction") return `interaction ${a.id}`;
  if (a.kind === "navigation") return `navigation ${a.id}`;
  if (a.kind === "marker") return `marker ${a.id}`;
  if (a.kind === "frames") return `frames ${a.id}`;
  return "range start";
}

function epochNote(p: Prepared, a: EpochAnalysis): string {
  return p.epochs.length > 1
    ? `epoch ${a.epoch.index + 1} of ${p.epochs.length} (${a.epoch.width}x${a.epoch.height})`
    : `${a.epoch.width}x${a.epoch.height}`;
}

/**
 * What the range ran under, when the page was emulated up to its end: the state throughout, or the
 * state at each end and the changes between (offsets from the anchor). Undefined when never emulated
 * or when the range ran under none throughout.
 */
export function emulationLine(p: Prepared): string | undefined {
  const e = p.emulation;
  if (!e) return undefined;
  if (e.changes.length === 0) return e.at_end === "none" ? undefined : `under emulation: ${e.at_end}`;
  const at = p.range.anchor.at_ns;
  const changes = e.changes.map((c) => `${signedMs(ms(c.at_ns - at))} ${c.text}`).join("; ");
  return `emulation: ${e.at_start} at start; changed ${changes}; ${e.at_end} at end`;
}

export function subtitle(p: Prepared, a: EpochAnalysis): string[] {
  const r = p.range;
  const at = r.anchor.at_ns;
  const emulation = emulationLine(p);
  return [
    `${anchorName(r)} on page ${r.page_id} | ${signedMs(ms(r.start_ns - at))} to ${
      signedMs(ms(r.end_ns - at))
    } (${plainMs(r.duration_ms)}) | ${epochNote(p, a)}`,
    `${a.epoch.frames.length} source frames, ${a.measures.length} analyzed${
      a.sampling ? " (sampled)" : ""
    } | noise floor ${a.noise_floor}`,
    ...(emulation ? [emulation] : []),
  ];
}

export function warningsOf(p: Prepared): string[] {
  const out = p.range.gaps.map((g) =>
    `capture gap (${g.kind}) ${plainMs(ms(g.start_ns))}${
      g.end_ns === null ? " onward" : ` to ${plainMs(ms(g.end_ns))}`
    }: not seen`
  );
  if (!p.range.complete && p.range.warnings.some((w) => w.code === "partially_captured")) {
    out.push("range only partly captured; see warnings");
  }
  return out.slice(0, 4);
}

export function gapBetween(p: Prepared, fromNs: number, toNs: number) {
  const gaps = p.range.gaps.filter((g) => g.start_ns <= toNs && (g.end_ns ?? Infinity) >= fromNs);
  if (gaps.length === 0) return undefined;
  const durations = gaps.map((g) => (g.end_ns === null ? null : ms(g.end_ns - g.start_ns)));
  return {
    duration_ms: durations.includes(null) ? null : durations.reduce((a, b) => (a ?? 0) + (b ?? 0), 0),
    kinds: [...new Set(gaps.map((g) => g.kind))],
  };
}

export function markersAt(markers: Marker[], fromNs: number, toNs: number): string[] {
  return markers.filter((m) => m.at_ns > fromNs && m.at_ns <= toNs).map((m) => m.label);
}

export function selectionFor(p: Prepared, a: EpochAnalysis, maxTiles: number): Selected[] {
  return selectFrames({
    measures: a.measures,
    anchor_ns: p.range.anchor.at_ns,
    gaps: p.range.gaps.map((g) => ({ start_ns: g.start_ns, end_ns: g.end_ns })),
    markers: p.markers,
    max_tiles: maxTiles,
    from_anchor: a.from_anchor,
  });
}

/** Quiet time before the range's end after which its final frame is called settled. */
export const SETTLED_QUIET_MS = 250;

/** The anchor as a tile label names it: the action's operation, "navigation", "marker", or none. */
export function anchorWords(p: Prepared): string | undefined {
  const a = p.range.anchor;
  if (a.kind === "interaction" || a.kind === "latest_interaction") {
    const own = p.markers.find((m) => m.kind === "interaction" && m.label.endsWith(` ${a.id}`));
    return own ? own.label.slice(0, own.label.indexOf(" ")).replaceAll("_", " ") : "action";
  }
  if (a.kind === "navigation" || a.kind === "marker") return a.kind;
  return undefined;
}

/** Each selected tile's label in plain words. */
export function labelsFor(p: Prepared, a: EpochAnalysis, selected: Selected[]): string[] {
  const last = a.measures[a.measures.length - 1];
  const settled = p.range.end_ns - last.frame.session_time_ns >= SETTLED_QUIET_MS * 1e6;
  const base: Omit<LabelContext, "like_final"> = { anchor: anchorWords(p), settled };
  return selected.map((s) => {
    const m = a.measures[s.index];
    return plainLabel(s.reasons, { ...base, like_final: m.to_final.changed_proportion === 0 });
  });
}
