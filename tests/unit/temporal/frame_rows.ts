import type { FrameRow } from "../../../src/capture/frames.ts";

export const MS = 1_000_000;

/** A stored-frame row as the index would present it, for the pure temporal cores. */
export function frameRow(
  id: number,
  tMs: number,
  width = 64,
  height = 32,
  viewport: FrameRow["viewport"] = { width, height, device_scale: 1 },
): FrameRow {
  return {
    frame_id: id,
    session_id: "s1",
    page_id: "p1",
    ordinal: id,
    session_time_ns: tMs * MS,
    session_time_ms: tMs,
    chrome_timestamp: null,
    format: "jpeg",
    width,
    height,
    viewport,
    changed_proportion: null,
    change_bounds: null,
    warnings: [],
    uri: `krometrail://evidence/frames/s1/${id}.jpg`,
  };
}
