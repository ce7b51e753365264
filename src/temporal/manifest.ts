/**
 * Artifact provenance (spec "Artifact Provenance"): enough to reproduce an artifact while its
 * source frames are retained. Three frame populations are kept apart: every frame of the epoch
 * (source), those that contributed (analyzed), and those the picture shows or references
 * (selected). A manifest whose counts disagree is refused when it is built.
 */
import type { Rect } from "../vision/image.ts";
import type { Sampling } from "./analysis.ts";
import type { GapSpan, RangeAnchor } from "./range.ts";

export type ArtifactKind =
  | "storyboard"
  | "difference_map"
  | "region_filmstrip"
  | "motion_history"
  | "composite"
  | "temporal_video";

export interface ArtifactManifest {
  artifact_id: string;
  artifact_kind: ArtifactKind;
  evidence_class: "source_derived";
  algorithm: string;
  algorithm_version: string;
  session_id: string;
  page_id: string;
  capture_configuration: { every_nth_frame: number; focus: string };
  range: {
    start_ns: number;
    end_ns: number;
    start_ms: number;
    end_ms: number;
    anchor: RangeAnchor & { at_ms: number };
    requested: { start_ns: number; end_ns: number };
  };
  epoch: {
    index: number;
    count: number;
    width: number;
    height: number;
    viewport: { width: number; height: number; device_scale: number };
  };
  time_direction: "left_to_right" | "early_to_late_palette" | "faint_to_strong" | "presentation_order";
  source_frame_ids: number[];
  analyzed_frame_ids: number[];
  selected_frame_ids: number[];
  /** source − analyzed: frames that contributed nothing. */
  omitted_frame_count: number;
  sampling?: Sampling;
  markers: Array<{ at_ns: number; label: string; kind: string }>;
  gaps: GapSpan[];
  region?: { rect: Rect; window: Rect; space: string; source: string; mask?: Rect[] };
  normalization: Record<string, unknown>;
  parameters: Record<string, unknown>;
  output_dimensions: { width: number; height: number };
  media_type: string;
  output_hash: string;
  output_uri: string;
  /** Per-tile or per-interval facts the picture's labels were drawn from. */
  annotations: unknown[];
}

/** Refuses manifests whose populations or sampling disclosure disagree. */
export function checkPopulations(
  m: Pick<
    ArtifactManifest,
    "source_frame_ids" | "analyzed_frame_ids" | "selected_frame_ids" | "omitted_frame_count" | "sampling"
  >,
): void {
  const source = new Set(m.source_frame_ids);
  const analyzed = new Set(m.analyzed_frame_ids);
  const fail = (why: string) => {
    throw new Error(`inconsistent artifact manifest: ${why}`);
  };
  if (source.size !== m.source_frame_ids.length) fail("duplicate source frame ids");
  for (const id of analyzed) if (!source.has(id)) fail(`analyzed frame ${id} is not a source frame`);
  for (const id of m.selected_frame_ids) if (!analyzed.has(id)) fail(`selected frame ${id} was not analyzed`);
  if (m.omitted_frame_count !== source.size - analyzed.size) {
    fail(`omitted ${m.omitted_frame_count} ≠ source ${source.size} − analyzed ${analyzed.size}`);
  }
  const sampled = analyzed.size < source.size;
  if (sampled !== (m.sampling !== undefined)) fail("sampling block present exactly when frames were dropped");
  if (
    m.sampling &&
    (m.sampling.source_frame_count !== source.size || m.sampling.analyzed_frame_count !== analyzed.size)
  ) {
    fail("sampling counts disagree with the frame populations");
  }
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** A bounded head of an identifier list with the exact number left out. */
export function headSlice<T>(items: T[], limit: number): { items: T[]; omitted: number } {
  return { items: items.slice(0, limit), omitted: Math.max(0, items.length - limit) };
}
