/**
 * compare_web_captures beyond the pure comparison: reads the two captures (inline, an evidence resource,
 * or a capture file), and for each changed screenshot draws the visual difference of the two steps as an
 * evidence resource, so "changed" comes with where.
 */
import { ToolError } from "../errors.ts";
import { EVIDENCE_SCHEME, type InstanceStore } from "../store/instance.ts";
import type { ScenarioCapture, ScreenshotArtifact } from "./capture.ts";
import { parseCapture } from "./capture_schema.ts";
import { compareCaptures, type ComparisonResult } from "./compare.ts";
import type { NormalizationRule } from "./normalize.ts";
import { visualDifference } from "./visual_diff.ts";

export type CaptureRef = string | Record<string, unknown>;

/** A capture file past this is not a capture this tool wrote (64 steps of full-page PNGs fit easily). */
const CAPTURE_FILE_LIMIT_BYTES = 256 * 1024 * 1024;

async function readRef(store: InstanceStore, ref: CaptureRef, side: "before" | "after"): Promise<unknown> {
  if (typeof ref !== "string") {
    // capture_browser_scenario's structuredContent passed back as it came: the capture plus its capture_uri.
    const { capture_uri: _, ...capture } = ref;
    return capture;
  }
  const argument = side;
  let text: string;
  if (ref.startsWith(EVIDENCE_SCHEME)) {
    const { bytes } = await store.readEvidence(ref.slice(EVIDENCE_SCHEME.length));
    text = new TextDecoder().decode(bytes);
  } else {
    let size: number;
    try {
      size = (await Deno.stat(ref)).size;
    } catch {
      throw new ToolError({
        code: "capture_not_found",
        message: `${side}: no capture resource or file at ${JSON.stringify(ref.slice(0, 200))}.`,
        retry: "never",
        recovery:
          "Pass the capture_uri capture_browser_scenario returned (this process), a capture file path, or the capture object itself.",
        affected: { argument },
      });
    }
    if (size > CAPTURE_FILE_LIMIT_BYTES) {
      throw new ToolError({
        code: "resource_limit_exceeded",
        message: `${side}: the capture file is ${size} bytes, over the limit of ${CAPTURE_FILE_LIMIT_BYTES}.`,
        retry: "never",
        recovery: "Pass a capture file written by capture_browser_scenario or the CLI.",
        affected: { argument },
      });
    }
    text = await Deno.readTextFile(ref);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ToolError({
      code: "invalid_capture",
      message: `${side}: ${JSON.stringify(ref.slice(0, 200))} is not JSON.`,
      retry: "never",
      recovery:
        "Pass a capture written by capture_browser_scenario (its capture_uri or the CLI's stdout saved to a file).",
      affected: { argument },
    });
  }
}

async function screenshotBytes(
  store: InstanceStore,
  shot: ScreenshotArtifact,
): Promise<Uint8Array | undefined> {
  if (shot.data_base64) return Uint8Array.from(atob(shot.data_base64), (c) => c.charCodeAt(0));
  if (shot.uri.startsWith(EVIDENCE_SCHEME) && store.evidenceExists(shot.uri)) {
    return (await store.readEvidence(shot.uri.slice(EVIDENCE_SCHEME.length))).bytes;
  }
  return undefined;
}

function stepShot(capture: ScenarioCapture, index: number): ScreenshotArtifact | undefined {
  const s = capture.steps[index]?.artifacts.screenshot;
  return s?.state === "captured" ? s.value : undefined;
}

export interface VisualDifferenceRecord {
  uri: string;
  changed_proportion: number;
  changed_pixels: number;
  bounds: { x: number; y: number; width: number; height: number } | null;
  size_mismatch?: unknown;
}

export async function compareCaptureRefs(
  store: InstanceStore,
  before: CaptureRef,
  after: CaptureRef,
  rules: NormalizationRule[],
): Promise<ComparisonResult> {
  const a = parseCapture(await readRef(store, before, "before"), "before");
  const b = parseCapture(await readRef(store, after, "after"), "after");
  const result = compareCaptures(a, b, rules);
  for (const step of result.steps) {
    const diff = step.artifact_diffs.find((d) => d.artifact === "screenshot" && d.status === "changed");
    if (!diff) continue;
    const shotA = stepShot(a, step.before_step_index);
    const shotB = stepShot(b, step.after_step_index);
    const bytesA = shotA && await screenshotBytes(store, shotA);
    const bytesB = shotB && await screenshotBytes(store, shotB);
    if (!bytesA || !bytesB) {
      diff.visual_difference = {
        unavailable: "the screenshot bytes are in neither capture nor this process's evidence",
      };
      continue;
    }
    const scale = Number(
      (b.environment as { viewport?: { device_scale_factor?: unknown } }).viewport?.device_scale_factor ?? 1,
    );
    const v = visualDifference(bytesA, bytesB, {
      device_scale_factor: Number.isFinite(scale) && scale > 0 ? scale : 1,
    });
    const file = await store.writeEvidence("differences", "png", v.png);
    const record: VisualDifferenceRecord = {
      uri: file.uri,
      changed_proportion: v.changed_proportion,
      changed_pixels: v.changed_pixels,
      bounds: v.bounds,
      ...("size_mismatch" in v && v.size_mismatch ? { size_mismatch: v.size_mismatch } : {}),
    };
    diff.visual_difference = record;
  }
  return result;
}
