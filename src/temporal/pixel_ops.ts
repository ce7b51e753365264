/**
 * Binds analysis to real pixels: differences, perceptual distance and change accumulation through
 * the WASM kernels, and frames from wherever the caller decodes them (stored JPEG frames in
 * production; synthetic images in tests and benchmarks).
 */
import type { DatabaseSync } from "node:sqlite";
import { frameBytes } from "../capture/frames.ts";
import { ToolError } from "../errors.ts";
import { ChangeAccumulator } from "../vision/change_accumulator.ts";
import { decodeJpeg } from "../vision/jpeg_decode.ts";
import { diffImages, perceptualDistance } from "../vision/pixels.ts";
import type { PixelOps } from "./analysis.ts";

/** The kernel-backed operations around a frame decoder. */
export function kernelOps(decode: PixelOps["decode"]): PixelOps {
  return {
    decode,
    diff(a, b, noiseFloor, mask) {
      const d = diffImages(a, b, { noiseFloor, ...(mask ? { mask } : {}) });
      return {
        changed_pixels: d.changedPixels,
        changed_proportion: d.changedProportion,
        bounds: d.bounds,
        mean_abs_diff: d.meanAbsDiff,
        mean_luma_diff: d.meanLumaDiff,
        mean_color_diff: d.meanColorDiff,
      };
    },
    perceptual: perceptualDistance,
    accumulator(width, height) {
      const acc = new ChangeAccumulator(width, height);
      return {
        add: (mask, t) => acc.add(mask, t),
        result: () => {
          const r = acc.result();
          acc.dispose();
          return r;
        },
      };
    },
  };
}

/** Stored frames of the index, decoded at the requested JPEG scale. */
export function pixelOps(db: DatabaseSync): PixelOps {
  return kernelOps((frame, scale) => {
    const bytes = frameBytes(db, frame.session_id, frame.frame_id);
    if (!bytes) {
      throw new ToolError({
        code: "frame_not_found",
        message: `Frame ${frame.frame_id} of session ${frame.session_id} is no longer retained.`,
        retry: "never",
        recovery: "Resolve the range again; evicted frames cannot be analyzed.",
        affected: { session_id: frame.session_id },
      });
    }
    return decodeJpeg(bytes, { scale });
  });
}
