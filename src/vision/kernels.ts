import { decodeJpegLuma, type LumaImage } from "./jpeg_dc.ts";
import { compareLuma, lumaSignature } from "./luma_change.ts";

export type { LumaImage };

export interface ChangeBounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The cheap per-frame measurements capture stores; artifacts build on them later. */
export interface FrameMeasure {
  width: number;
  height: number;
  luma: LumaImage;
  /** Against the previous frame of the same target; absent for the first frame. */
  changed_proportion?: number;
  change_bounds?: ChangeBounds;
  mean_abs_diff?: number;
  signature: Uint8Array;
}

/**
 * Measures one JPEG frame from its DC coefficients (a 1/8-scale luminance image) without a full
 * decode. Throws when the image cannot be read; callers store the frame without measurements.
 * The WASM kernels replace the internals later behind this same function.
 */
export function measureFrame(jpeg: Uint8Array, previous: LumaImage | undefined): FrameMeasure {
  const luma = decodeJpegLuma(jpeg);
  const signature = lumaSignature(luma);
  if (!previous) return { width: luma.width, height: luma.height, luma, signature };
  const change = compareLuma(previous, luma);
  return {
    width: luma.width,
    height: luma.height,
    luma,
    changed_proportion: change.changedProportion,
    ...(change.bounds ? { change_bounds: change.bounds } : {}),
    mean_abs_diff: change.meanAbsDiff,
    signature,
  };
}
