/**
 * Everything an artifact needs before drawing: the range's frames split into epochs, the epochs
 * chosen (the anchor's, or all), their analyses (cached: a bundle, then a difference map of the
 * same range, analyse once), and the markers that fall inside the range.
 */
import { runSteps, runStepsYielding, type Steps } from "./steps.ts";
import type { DatabaseSync } from "node:sqlite";
import type { FrameRow } from "../capture/frames.ts";
import type { Rect, RgbaImage } from "../vision/image.ts";
import { analyzeEpochSteps, type EpochAnalysis, type JpegScale, type PixelOps } from "./analysis.ts";
import {
  documentStartNs,
  type Epoch,
  epochAt,
  loadRangeFrames,
  sinceDocument,
  splitEpochs,
} from "./frames.ts";
import type { ResolvedRange } from "./range.ts";

export interface Marker {
  at_ns: number;
  label: string;
  kind: "interaction" | "navigation" | "marker" | "layout_shift" | "emulation";
}

/** The emulation a range ran under, from the page's `emulation` events (each carries the whole state). */
export interface RangeEmulation {
  /** The state in words at the range's start and end; "none" when nothing was emulated. */
  at_start: string;
  at_end: string;
  /** Changes inside the range, in order, as their events word them. */
  changes: Array<{ at_ns: number; text: string }>;
}

export interface Prepared {
  range: ResolvedRange;
  epochs: Epoch[];
  /** The epochs artifact work covers. */
  chosen: Epoch[];
  analyses: EpochAnalysis[];
  markers: Marker[];
  /** Absent when the page was never emulated up to the range's end. */
  emulation?: RangeEmulation;
  truncated: boolean;
  /** Frames of a document before the range's own (or about:blank) left out. */
  earlier_document_frames: number;
}

export interface PrepareOptions {
  epochs: "anchor" | "all";
  noise_floor?: number;
  crop?: Rect;
  mask?: Rect[];
}

/** Decoded frames and analyses live here between requests, bounded in entries. */
export class TemporalCache {
  readonly #analyses = new Map<string, EpochAnalysis>();
  readonly #frames = new Map<string, RgbaImage>();
  readonly results = new Map<string, unknown>();

  constructor(readonly maxAnalyses = 16, readonly maxFrames = 48, readonly maxResults = 32) {}

  analysis(key: string, make: () => EpochAnalysis): EpochAnalysis {
    return remember(this.#analyses, key, this.maxAnalyses, make);
  }

  /** An analysis made step by step: looked up first, remembered once made. */
  *analysisSteps(key: string, make: () => Steps<EpochAnalysis>): Steps<EpochAnalysis> {
    const hit = this.#analyses.get(key);
    if (hit) return this.analysis(key, () => hit);
    const made = yield* make();
    return this.analysis(key, () => made);
  }

  frame(frame: FrameRow, scale: JpegScale, decode: () => RgbaImage): RgbaImage {
    return remember(this.#frames, `${frame.session_id}/${frame.frame_id}@${scale}`, this.maxFrames, decode);
  }

  result<T>(key: string, value?: T): T | undefined {
    if (value !== undefined) {
      this.results.delete(key);
      this.results.set(key, value);
      while (this.results.size > this.maxResults) {
        const oldest = this.results.keys().next().value;
        if (oldest === undefined) break;
        this.results.delete(oldest);
      }
      return value;
    }
    const hit = this.results.get(key) as T | undefined;
    if (hit !== undefined) {
      this.results.delete(key);
      this.results.set(key, hit);
    }
    return hit;
  }

  forgetSession(sessionId: string): void {
    for (const map of [this.#analyses, this.#frames, this.results] as Map<string, unknown>[]) {
      for (const key of map.keys()) if (key.includes(sessionId)) map.delete(key);
    }
  }
}

function remember<T>(map: Map<string, T>, key: string, limit: number, make: () => T): T {
  const hit = map.get(key);
  if (hit !== undefined) {
    map.delete(key);
    map.set(key, hit);
    return hit;
  }
  const value = make();
  map.set(key, value);
  while (map.size > limit) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) break;
    map.delete(oldest);
  }
  return value;
}

const MOMENT_LABEL = 80;
const CHANGES_KEPT = 8;

function emulationSummary(row: { text: string | null; data: string | null } | undefined): string {
  if (!row) return "none";
  try {
    const summary = (JSON.parse(row.data ?? "{}") as { summary?: unknown }).summary;
    if (typeof summary === "string") return summary;
  } catch { /* the text below */ }
  return (row.text ?? "unknown").replace(/^emulation: /, "");
}

/** The emulation in force at the range's start and end, and each change between. */
export function emulationIn(db: DatabaseSync, range: ResolvedRange): RangeEmulation | undefined {
  const start = Math.round(range.start_ns);
  const end = Math.round(range.end_ns);
  const latest = (at: number) =>
    db.prepare(
      `SELECT text, data FROM events WHERE session_id = ? AND page_id = ? AND kind = 'emulation'
       AND at_ns <= ? ORDER BY at_ns DESC, id DESC LIMIT 1`,
    ).get(range.session_id, range.page_id, at) as { text: string | null; data: string | null } | undefined;
  const last = latest(end);
  if (!last) return undefined;
  const changes = db.prepare(
    `SELECT at_ns, text FROM events WHERE session_id = ? AND page_id = ? AND kind = 'emulation'
     AND at_ns > ? AND at_ns <= ? ORDER BY at_ns, id LIMIT ?`,
  ).all(range.session_id, range.page_id, start, end, CHANGES_KEPT) as Array<
    { at_ns: number; text: string | null }
  >;
  return {
    at_start: emulationSummary(latest(start)),
    at_end: emulationSummary(last),
    changes: changes.map((c) => ({
      at_ns: c.at_ns,
      text: (c.text ?? "emulation").replace(/^emulation: /, ""),
    })),
  };
}

export function markersIn(db: DatabaseSync, range: ResolvedRange): Marker[] {
  const interactions = db.prepare(
    `SELECT id, operation, coalesce(dispatched_ns, started_ns) AS at_ns FROM interactions
     WHERE session_id = ? AND page_id = ? AND coalesce(dispatched_ns, started_ns) BETWEEN ? AND ? ORDER BY at_ns`,
  ).all(range.session_id, range.page_id, Math.round(range.start_ns), Math.round(range.end_ns)) as Array<
    { id: string; operation: string; at_ns: number }
  >;
  const navigations = db.prepare(
    `SELECT id, at_ns FROM events WHERE session_id = ? AND page_id = ? AND kind = 'navigation'
     AND at_ns BETWEEN ? AND ? ORDER BY at_ns`,
  ).all(range.session_id, range.page_id, Math.round(range.start_ns), Math.round(range.end_ns)) as Array<
    { id: number; at_ns: number }
  >;
  // A layout shift and an emulation change are moments a storyboard should show (and name).
  const moments = db.prepare(
    `SELECT kind, text, at_ns FROM events WHERE session_id = ? AND page_id = ?
     AND kind IN ('layout_shift', 'emulation') AND at_ns BETWEEN ? AND ? ORDER BY at_ns`,
  ).all(range.session_id, range.page_id, Math.round(range.start_ns), Math.round(range.end_ns)) as Array<
    { kind: "layout_shift" | "emulation"; text: string | null; at_ns: number }
  >;
  const markers = db.prepare(
    "SELECT id, label, at_ns FROM markers WHERE session_id = ? AND at_ns BETWEEN ? AND ? ORDER BY at_ns",
  ).all(range.session_id, Math.round(range.start_ns), Math.round(range.end_ns)) as Array<
    { id: string; label: string | null; at_ns: number }
  >;
  return [
    ...interactions.map((i) => ({
      at_ns: i.at_ns,
      label: `${i.operation} ${i.id}`,
      kind: "interaction" as const,
    })),
    ...navigations.map((n) => ({ at_ns: n.at_ns, label: `navigation ${n.id}`, kind: "navigation" as const })),
    ...markers.map((m) => ({ at_ns: m.at_ns, label: m.label ?? m.id, kind: "marker" as const })),
    ...moments.map((e) => ({
      at_ns: e.at_ns,
      label: (e.text ?? e.kind.replace("_", " ")).slice(0, MOMENT_LABEL),
      kind: e.kind,
    })),
  ].sort((a, b) => a.at_ns - b.at_ns || a.label.localeCompare(b.label));
}

export function prepareRange(
  db: DatabaseSync,
  range: ResolvedRange,
  ops: PixelOps,
  cache: TemporalCache,
  options: PrepareOptions,
): Prepared {
  return runSteps(prepareRangeSteps(db, range, ops, cache, options));
}

/** prepareRange for a tool: it lets the event loop in between frames (steps.ts). */
export function prepareRangeYielding(
  db: DatabaseSync,
  range: ResolvedRange,
  ops: PixelOps,
  cache: TemporalCache,
  options: PrepareOptions,
): Promise<Prepared> {
  return runStepsYielding(prepareRangeSteps(db, range, ops, cache, options));
}

function* prepareRangeSteps(
  db: DatabaseSync,
  range: ResolvedRange,
  ops: PixelOps,
  cache: TemporalCache,
  options: PrepareOptions,
): Steps<Prepared> {
  const loaded = loadRangeFrames(db, range);
  const painted = loaded.leading ? [loaded.leading, ...loaded.inside] : loaded.inside;
  // The range's document is the one committed when it starts; a frame on screen then from an earlier
  // document (or about:blank, still shown until the new one paints) opens no story of this one.
  const documentNs = documentStartNs(db, range, range.start_ns);
  const own = documentNs === undefined
    ? { frames: painted, dropped: 0 }
    : sinceDocument(painted, documentNs, range.anchor.at_ns);
  const epochs = splitEpochs(own.frames);
  const anchorEpoch = epochAt(epochs, range.anchor.at_ns);
  const chosen = options.epochs === "all" ? epochs : anchorEpoch ? [anchorEpoch] : [];
  const gaps = range.gaps.map((g) => ({ start_ns: g.start_ns, end_ns: g.end_ns }));
  const analyses: EpochAnalysis[] = [];
  for (const epoch of chosen) {
    const key = [
      range.session_id,
      range.page_id,
      Math.round(range.start_ns),
      Math.round(range.end_ns),
      Math.round(range.anchor.at_ns),
      epoch.frames[0].frame_id,
      epoch.frames[epoch.frames.length - 1].frame_id,
      options.noise_floor ?? "",
      options.crop ? `${options.crop.x},${options.crop.y},${options.crop.width},${options.crop.height}` : "",
      options.mask ? JSON.stringify(options.mask) : "",
      range.anchor.kind,
    ].join("|");
    analyses.push(
      yield* cache.analysisSteps(key, () =>
        analyzeEpochSteps({
          epoch,
          start_ns: range.start_ns,
          end_ns: range.end_ns,
          anchor_ns: range.anchor.at_ns,
          gaps,
          noise_floor: options.noise_floor,
          crop: options.crop,
          mask: options.mask,
          measure_from_anchor: fromAnchor(range),
        }, {
          ...ops,
          decode: (frame, scale) => cache.frame(frame, scale, () => ops.decode(frame, scale)),
        })),
    );
  }
  return {
    range,
    epochs,
    chosen,
    analyses,
    markers: markersIn(db, range),
    emulation: emulationIn(db, range),
    truncated: loaded.truncated,
    earlier_document_frames: own.dropped,
  };
}

/** An action's range measures change from the frame on screen at its dispatch. */
export function fromAnchor(range: ResolvedRange): boolean {
  return range.anchor.kind === "interaction" || range.anchor.kind === "latest_interaction";
}
