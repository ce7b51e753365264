/**
 * The worst case for artifact generation: 2 s of 60 fps 1920×1080 JPEG frames (ffmpeg's testsrc2,
 * which moves across the whole frame every frame) run in-process through the same analysis,
 * selection and rendering code the MCP tools use, with nothing cached. Recorded sessions at this
 * size deliver fewer frames on a 2-core machine; this fixes the count at 120.
 */
import type { FrameRow } from "../../src/capture/frames.ts";
import { type ArtifactEnv, differenceMap, storyboard } from "../../src/temporal/artifacts.ts";
import { analyzeEpoch } from "../../src/temporal/analysis.ts";
import { splitEpochs } from "../../src/temporal/frames.ts";
import { type Prepared, TemporalCache } from "../../src/temporal/prepare.ts";
import type { ResolvedRange } from "../../src/temporal/range.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import { kernelOps } from "../../src/temporal/pixel_ops.ts";
import { encodePng } from "../../src/vision/png.ts";

const FRAMES = 120;

function splitMjpeg(stream: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = -1;
  for (let i = 0; i + 1 < stream.length; i++) {
    if (stream[i] !== 0xff) continue;
    if (stream[i + 1] === 0xd8 && start < 0) start = i;
    if (stream[i + 1] === 0xd9 && start >= 0) {
      out.push(stream.slice(start, i + 2));
      start = -1;
    }
  }
  return out;
}

export function syntheticFrames(): Uint8Array[] {
  const out = new Deno.Command("ffmpeg", {
    args: [
      ...[
        "-loglevel",
        "error",
        "-f",
        "lavfi",
        "-i",
        "testsrc2=s=1920x1080:r=60",
        "-frames:v",
        String(FRAMES),
      ],
      ...["-q:v", "8", "-pix_fmt", "yuvj420p", "-f", "image2pipe", "-c:v", "mjpeg", "-"],
    ],
    stdout: "piped",
  }).outputSync();
  if (!out.success) throw new Error("ffmpeg could not produce the synthetic frames");
  return splitMjpeg(out.stdout);
}

/** Milliseconds for storyboard + difference map over the frames, all caches cold. */
export async function timeSyntheticArtifacts(jpegs: Uint8Array[]): Promise<{ frames: number; ms: number }> {
  const rows: FrameRow[] = jpegs.map((_, i) => ({
    frame_id: i + 1,
    session_id: "bench",
    page_id: "p1",
    ordinal: i + 1,
    session_time_ns: i * 16_666_667,
    session_time_ms: i * 16.667,
    chrome_timestamp: null,
    format: "jpeg",
    width: 1920,
    height: 1080,
    viewport: { width: 1920, height: 1080, device_scale: 1 },
    changed_proportion: null,
    change_bounds: null,
    warnings: [],
    uri: `krometrail://evidence/frames/bench/${i + 1}.jpg`,
  }));
  const dir = await Deno.makeTempDir({ prefix: "krometrail-bench-synthetic-" });
  let seq = 0;
  const env: ArtifactEnv = {
    // Artifact rendering never queries the index; prepareRange (not used here) would.
    db: undefined as unknown as ArtifactEnv["db"],
    ops: kernelOps((frame, scale) => decodeJpeg(jpegs[frame.frame_id - 1], { scale })),
    cache: new TemporalCache(),
    encodePng,
    write: async (ext, bytes) => {
      const name = `${++seq}.${ext}`;
      await Deno.writeFile(`${dir}/${name}`, bytes);
      return { uri: `krometrail://evidence/artifacts/${name}` };
    },
    captureConfig: () => ({ every_nth_frame: 1, focus: "foreground" }),
  };
  const endNs = rows[rows.length - 1].session_time_ns;
  const range: ResolvedRange = {
    resolved: true,
    session_id: "bench",
    page_id: "p1",
    start_ns: 0,
    end_ns: endNs,
    start_ms: 0,
    end_ms: endNs / 1e6,
    duration_ms: endNs / 1e6,
    anchor: { kind: "session_time", at_ns: 0, at_ms: 0 },
    requested: { start_ns: 0, end_ns: endNs },
    complete: true,
    warnings: [],
    gaps: [],
  };
  try {
    const t0 = performance.now();
    const epochs = splitEpochs(rows);
    const analysis = analyzeEpoch({
      epoch: epochs[0],
      start_ns: 0,
      end_ns: endNs,
      anchor_ns: 0,
      gaps: [],
    }, env.ops);
    const prepared: Prepared = {
      range,
      epochs,
      chosen: epochs,
      analyses: [analysis],
      markers: [],
      truncated: false,
      earlier_document_frames: 0,
    };
    await storyboard(env, prepared, analysis, { max_tiles: 8 });
    await differenceMap(env, prepared, analysis);
    return { frames: rows.length, ms: performance.now() - t0 };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
