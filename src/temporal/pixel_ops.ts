/**
 * Binds analysis to real pixels: stored JPEG frames through the decoder, differences, perceptual
 * distance and change accumulation through the WASM kernels.
 */
import type { DatabaseSync } from "node:sqlite";
import { frameBytes } from "../capture/frames.ts";
import { ToolError } from "../errors.ts";
import { decodeJpeg } from "../vision/jpeg_decode.ts";
import { ChangeAccumulator, diffImages, perceptualDistance } from "../vision/pixels.ts";
import type { PixelOps } from "./analysis.ts";

export function pixelOps(db: DatabaseSync): PixelOps {
  return {
    decode(frame, scale) {
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
    },
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
