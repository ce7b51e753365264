/**
 * Artifact generation: one prepared epoch in, one picture plus its provenance manifest out, both
 * written as evidence resources. Storyboard, composite, difference map, motion history and region
 * filmstrip share selection, labels and manifest construction here; drawing lives in render/.
 */
import type { DatabaseSync } from "node:sqlite";
import type { FrameRow } from "../capture/frames.ts";
import type { Rect, RgbaImage } from "../vision/image.ts";
import { ANALYSIS_ALGORITHM_VERSION, type EpochAnalysis, type JpegScale, type PixelOps } from "./analysis.ts";
import { type ArtifactKind, type ArtifactManifest, checkPopulations, sha256Hex } from "./manifest.ts";
import type { Prepared, TemporalCache } from "./prepare.ts";
import { ms } from "./range.ts";
import {
  anchorName,
  gapBetween,
  labelsFor,
  markersAt,
  selectionFor,
  subtitle,
  warningsOf,
} from "./artifact_text.ts";
import { renderDiffMap } from "./render/diff_map.ts";
import { contextWindow, cropScale, renderFilmstrip } from "./render/filmstrip.ts";
import { signedMs } from "./render/layout.ts";
import { renderMotionHistory } from "./render/motion_history.ts";
import { renderStoryboard, storyboardColumns, type StoryTile } from "./render/storyboard.ts";
import type { Selected } from "./selection.ts";
import { throwIfCancelled } from "../browser/call_signal.ts";

export const ARTIFACT_ALGORITHM_VERSION = "krometrail-artifacts/1";

export interface ArtifactEnv {
  db: DatabaseSync;
  ops: PixelOps;
  cache: TemporalCache;
  encodePng(img: RgbaImage): Uint8Array;
  write(ext: "png" | "json", bytes: Uint8Array): Promise<{ uri: string }>;
  captureConfig(sessionId: string): { every_nth_frame: number; focus: string };
}

export interface RegionSpec {
  rect: Rect;
  /** viewport | source (how the caller declared it) */
  space: "viewport" | "source";
  /** coordinates | frame_region | ref | mask */
  source: "coordinates" | "frame_region" | "ref" | "mask";
  mask?: Rect[];
  description: string;
}

export interface Artifact {
  kind: ArtifactKind;
  uri: string;
  manifest_uri: string;
  manifest: ArtifactManifest;
  png: Uint8Array;
  width: number;
  height: number;
  /** Tile facts for text responses. */
  tiles: Array<{
    frame_id: number;
    uri: string;
    offset_ms: number;
    session_time_ms: number;
    reasons: string[];
    /** The tile's label in plain words, as drawn. */
    label?: string;
  }>;
}

export interface GenerateOptions {
  max_tiles: number;
}

/** Picks the JPEG decode scale that still gives at least `width` pixels across. */
export function renderScale(sourceWidth: number, width: number): JpegScale {
  for (const s of [8, 4, 2] as const) if (sourceWidth / s >= width) return s;
  return 1;
}

function decodeFor(env: ArtifactEnv, frame: FrameRow, width: number): RgbaImage {
  const scale = renderScale(frame.width, width);
  return env.cache.frame(frame, scale, () => env.ops.decode(frame, scale));
}

async function finish(
  env: ArtifactEnv,
  p: Prepared,
  a: EpochAnalysis,
  kind: ArtifactKind,
  image: RgbaImage,
  selected: number[],
  extra: {
    algorithm: string;
    time_direction: ArtifactManifest["time_direction"];
    parameters: Record<string, unknown>;
    annotations: unknown[];
    region?: ArtifactManifest["region"];
    tiles?: Artifact["tiles"];
  },
): Promise<Artifact> {
  const png = env.encodePng(image);
  const hash = await sha256Hex(png);
  // The last safe point before files are written: a picture and its manifest are written as a pair.
  throwIfCancelled();
  const written = await env.write("png", png);
  const r = p.range;
  const manifest: ArtifactManifest = {
    artifact_id: written.uri.slice(written.uri.lastIndexOf("/") + 1).replace(/\.png$/, ""),
    artifact_kind: kind,
    evidence_class: "source_derived",
    algorithm: extra.algorithm,
    algorithm_version: `${ARTIFACT_ALGORITHM_VERSION}; ${ANALYSIS_ALGORITHM_VERSION}`,
    session_id: r.session_id,
    page_id: r.page_id,
    capture_configuration: env.captureConfig(r.session_id),
    range: {
      start_ns: r.start_ns,
      end_ns: r.end_ns,
      start_ms: r.start_ms,
      end_ms: r.end_ms,
      anchor: r.anchor,
      requested: r.requested,
    },
    epoch: {
      index: a.epoch.index,
      count: p.epochs.length,
      width: a.epoch.width,
      height: a.epoch.height,
      viewport: a.epoch.viewport,
    },
    time_direction: extra.time_direction,
    source_frame_ids: a.epoch.frames.map((f) => f.frame_id),
    analyzed_frame_ids: a.measures.map((m) => m.frame.frame_id),
    selected_frame_ids: selected,
    omitted_frame_count: a.epoch.frames.length - a.measures.length,
    ...(a.sampling ? { sampling: a.sampling } : {}),
    markers: p.markers.map((m) => ({ at_ns: m.at_ns, label: m.label, kind: m.kind })),
    gaps: r.gaps,
    ...(extra.region ? { region: extra.region } : {}),
    normalization: {
      decode: "baseline JPEG to sRGB (BT.601 full-range YCbCr)",
      analysis_scale: a.scale,
      analysis_size: { width: a.analysis_width, height: a.analysis_height },
      resize: "area average",
      alpha: "opaque source",
      frame_time: "Chrome's paint timestamp on the session clock (plus the range's smallest receipt latency)",
      ...(p.earlier_document_frames > 0
        ? { earlier_document_frames_left_out: p.earlier_document_frames }
        : {}),
    },
    parameters: { noise_floor: a.noise_floor, ...extra.parameters },
    output_dimensions: { width: image.width, height: image.height },
    media_type: "image/png",
    output_hash: `sha256:${hash}`,
    output_uri: written.uri,
    annotations: extra.annotations,
  };
  checkPopulations(manifest);
  const manifestWritten = await env.write(
    "json",
    new TextEncoder().encode(JSON.stringify(manifest, null, 1)),
  );
  return {
    kind,
    uri: written.uri,
    manifest_uri: manifestWritten.uri,
    manifest,
    png,
    width: image.width,
    height: image.height,
    tiles: extra.tiles ?? [],
  };
}

/** What each tile shows, for the manifest's annotations and the text response. */
function tileFacts(a: EpochAnalysis, selected: Selected[], labels: string[]): Artifact["tiles"] {
  return selected.map((s, k) => ({
    frame_id: s.frame_id,
    offset_ms: a.measures[s.index].offset_ms,
    session_time_ms: a.measures[s.index].frame.session_time_ms,
    uri: a.measures[s.index].frame.uri,
    reasons: s.reasons,
    label: labels[k],
  }));
}

function tilesFrom(
  p: Prepared,
  a: EpochAnalysis,
  selected: Selected[],
  env: ArtifactEnv,
  width: number,
  labels: string[],
) {
  return selected.map((s, k): StoryTile => {
    const m = a.measures[s.index];
    const prev = k > 0 ? a.measures[selected[k - 1].index].frame.session_time_ns : undefined;
    const gap = prev === undefined ? undefined : gapBetween(p, prev, m.frame.session_time_ns);
    return {
      image: decodeFor(env, m.frame, width),
      frame_id: m.frame.frame_id,
      session_time_ms: m.frame.session_time_ms,
      offset_ms: m.offset_ms,
      labels: [labels[k]],
      markers: prev === undefined ? [] : markersAt(p.markers, prev, m.frame.session_time_ns),
      ...(gap ? { gap_before: gap } : {}),
    };
  });
}

export async function storyboard(env: ArtifactEnv, p: Prepared, a: EpochAnalysis, opts: GenerateOptions) {
  const selected = selectionFor(p, a, opts.max_tiles);
  const labels = labelsFor(p, a, selected);
  const tileWidth = storyboardColumns(selected.length) >= 4 ? 360 : 400;
  const tiles = tilesFrom(p, a, selected, env, tileWidth, labels);
  const image = renderStoryboard({
    title: `STORYBOARD  ${anchorName(p.range)}`,
    subtitle: subtitle(p, a),
    warnings: warningsOf(p),
    tiles,
    tile_width: tileWidth,
  });
  const facts = tileFacts(a, selected, labels);
  return await finish(env, p, a, "storyboard", image, selected.map((s) => s.frame_id), {
    algorithm: "anchors + trend changes + change peaks + farthest-point novelty",
    time_direction: "left_to_right",
    parameters: { max_tiles: opts.max_tiles, tile_width: tileWidth },
    annotations: facts,
    tiles: facts,
  });
}

/** Before/during/after: the frame before the anchor, the one furthest from it, the final one. */
export async function composite(env: ArtifactEnv, p: Prepared, a: EpochAnalysis) {
  const full = selectionFor(p, a, 12);
  const before = full.find((s) => s.reasons.includes("before")) ?? full[0];
  const peak = full.find((s) => s.reasons.includes("peak_change")) ??
    full.find((s) => s.index !== before.index && s.index !== full[full.length - 1].index) ?? before;
  const after = full[full.length - 1];
  const chosen = [before, peak, after].filter((s, i, all) => all.findIndex((o) => o.index === s.index) === i);
  const names = ["BEFORE", "DURING (max difference from before)", "AFTER"];
  const tiles = tilesFrom(p, a, chosen, env, 480, chosen.map(() => "")).map((t, i) => ({
    ...t,
    labels: [chosen.length === 3 ? names[i] : i === 0 ? names[0] : names[2]],
  }));
  const image = renderStoryboard({
    title: `BEFORE / DURING / AFTER  ${anchorName(p.range)}`,
    subtitle: [...subtitle(p, a), "DURING is the source frame with the greatest difference from BEFORE."],
    warnings: warningsOf(p),
    tiles,
    tile_width: 480,
  });
  const facts = chosen.map((s, i) => ({
    frame_id: s.frame_id,
    offset_ms: a.measures[s.index].offset_ms,
    session_time_ms: a.measures[s.index].frame.session_time_ms,
    uri: a.measures[s.index].frame.uri,
    reasons: [tiles[i].labels[0].split(" ")[0].toLowerCase()],
  }));
  return await finish(env, p, a, "composite", image, chosen.map((s) => s.frame_id), {
    algorithm:
      "before = last frame at or before anchor; during = max baseline difference; after = final frame",
    time_direction: "left_to_right",
    parameters: { tile_width: 480 },
    annotations: facts,
    tiles: facts,
  });
}

function timeLabels(p: Prepared) {
  const at = p.range.anchor.at_ns;
  return {
    start_ms: ms(p.range.start_ns - at),
    mid_ms: ms((p.range.start_ns + p.range.end_ns) / 2 - at),
    end_ms: ms(p.range.end_ns - at),
  };
}

export async function differenceMap(env: ArtifactEnv, p: Prepared, a: EpochAnalysis) {
  const reference = a.baseline;
  const image = renderDiffMap({
    title: `DIFFERENCE MAP  ${anchorName(p.range)}`,
    subtitle: subtitle(p, a),
    warnings: warningsOf(p),
    reference: decodeFor(env, reference, 480),
    reference_label: `reference #${reference.frame_id} (${
      signedMs(ms(reference.session_time_ns - p.range.anchor.at_ns))
    })`,
    change: a.change,
    source_width: a.epoch.width,
    source_height: a.epoch.height,
    change_bounds: a.change_bounds,
    time_labels: timeLabels(p),
    panel_width: 480,
  });
  return await finish(env, p, a, "difference_map", image, [reference.frame_id], {
    algorithm: "frame-to-frame max-channel difference over noise floor; count, magnitude-weighted mean time",
    time_direction: "early_to_late_palette",
    parameters: { frequency: "count", repeated_spread: 0.2, panel_width: 480 },
    annotations: [{ change_bounds: a.change_bounds, reference_frame_id: reference.frame_id }],
  });
}

export async function motionHistory(env: ArtifactEnv, p: Prepared, a: EpochAnalysis) {
  const t = timeLabels(p);
  const image = renderMotionHistory({
    title: `MOTION HISTORY  ${anchorName(p.range)}`,
    subtitle: subtitle(p, a),
    warnings: warningsOf(p),
    reference: decodeFor(env, a.final, 960),
    change: a.change,
    source_width: a.epoch.width,
    source_height: a.epoch.height,
    change_bounds: a.change_bounds,
    time_labels: { start_ms: t.start_ms, end_ms: t.end_ms },
    width: Math.min(960, a.epoch.width),
  });
  return await finish(env, p, a, "motion_history", image, [a.final.frame_id], {
    algorithm: "latest change time per pixel over a subdued final frame",
    time_direction: "faint_to_strong",
    parameters: { decay: "linear in relative time", width: Math.min(960, a.epoch.width) },
    annotations: [{ change_bounds: a.change_bounds, reference_frame_id: a.final.frame_id }],
  });
}

export async function regionFilmstrip(
  env: ArtifactEnv,
  p: Prepared,
  a: EpochAnalysis,
  region: RegionSpec,
  opts: GenerateOptions,
) {
  const selected = selectionFor(p, a, opts.max_tiles);
  const labels = labelsFor(p, a, selected);
  const window = contextWindow(region.rect);
  const scale = cropScale(window);
  const needed = Math.ceil(a.epoch.width * Math.min(1, scale));
  const crops = selected.map((s, k) => {
    const m = a.measures[s.index];
    return {
      image: decodeFor(env, m.frame, needed),
      frame_id: m.frame.frame_id,
      session_time_ms: m.frame.session_time_ms,
      offset_ms: m.offset_ms,
      labels: [labels[k]],
    };
  });
  const image = renderFilmstrip({
    title: `REGION FILMSTRIP  ${anchorName(p.range)}`,
    subtitle: [...subtitle(p, a), `region ${region.description}`],
    warnings: warningsOf(p),
    locator: decodeFor(env, a.measures[selected[0]?.index ?? 0].frame, 400),
    region: region.rect,
    window,
    source_width: a.epoch.width,
    source_height: a.epoch.height,
    crops,
    crop_scale: scale,
    locator_width: 400,
  });
  const facts = tileFacts(a, selected, labels);
  return await finish(env, p, a, "region_filmstrip", image, selected.map((s) => s.frame_id), {
    algorithm: "change-aware selection measured inside the region; fixed crop with context margin",
    time_direction: "left_to_right",
    parameters: { max_tiles: opts.max_tiles, crop_scale: scale, tracking: "none (fixed region)" },
    annotations: facts,
    tiles: facts,
    region: {
      rect: region.rect,
      window,
      space: region.space,
      source: region.source,
      ...(region.mask ? { mask: region.mask } : {}),
    },
  });
}

export { anchorWords, labelsFor, selectionFor } from "./artifact_text.ts";
