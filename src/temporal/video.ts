/**
 * Encodes a presentation plan into a bounded MP4/H.264 clip: raw RGBA frames go to ffmpeg's
 * stdin at a constant frame rate, each image repeated for its interval's frame count (so holds
 * are exact multiples of 1/fps). ffmpeg scales to the bounded even output size. The process never
 * outlives the call, and partial output never survives a failure.
 */
import { sha256Hex } from "./manifest.ts";
import { limitExceeded, ToolError } from "../errors.ts";
import type { RgbaImage } from "../vision/image.ts";
import {
  buildEncodeArgs,
  encoderUnavailable,
  ensureFfmpegAvailable,
  type QualifiedFfmpeg,
  sanitizeDiagnostics,
} from "./ffmpeg.ts";
import type { GapPresentation, VideoPlan } from "./video_plan.ts";
import { currentCallSignal } from "../browser/call_signal.ts";

export const VIDEO_ENCODE_ALGORITHM = "video_encode/1";
/** How long a cancelled encode's ffmpeg gets to exit on SIGTERM before SIGKILL. */
const TERM_GRACE_MS = 200;

export interface FrameSource {
  /** Pixels of one source frame; every frame of one video has the source's size. */
  decode(frame_id: number): RgbaImage | Promise<RgbaImage>;
  width: number;
  height: number;
}

export type SlateRenderer = (width: number, height: number, lines: string[]) => RgbaImage;

export interface VideoEncodeLimits {
  /** Longest output edge in pixels (never upscaled). */
  max_edge: number;
  max_output_bytes: number;
  max_presentation_frames: number;
  /** Source frame area ceiling (raw bytes per frame = 4 × this). */
  max_source_pixels: number;
  /** Wall-clock deadline for the whole encode; ffmpeg is killed when it passes. */
  deadline_ms: number;
  /** ffmpeg encoder and filter threads. */
  threads: number;
}

export const DEFAULT_VIDEO_ENCODE_LIMITS: Readonly<VideoEncodeLimits> = Object.freeze({
  max_edge: 1280,
  max_output_bytes: 64 * 1024 * 1024,
  max_presentation_frames: 1_800,
  max_source_pixels: 4096 * 4096,
  deadline_ms: 60_000,
  threads: Math.max(1, Math.min(2, navigator.hardwareConcurrency || 1)),
});

export interface VideoEncodingParameters {
  container: "mp4";
  codec: "h264";
  encoder: string;
  encoder_args: string[];
  pix_fmt: "yuv420p";
  fps: number;
  input: { format: "rawvideo"; pix_fmt: "rgba"; width: number; height: number };
  scale_filter: string;
  threads: number;
  movflags: "+faststart";
  audio: "none";
  max_output_bytes: number;
  deadline_ms: number;
  /** The complete command line, with the output path replaced by "<output>". */
  ffmpeg_args: string[];
  frame_rounding: string;
}

export interface VideoResult {
  path: string;
  bytes: number;
  sha256: string;
  duration_ms: number;
  width: number;
  height: number;
  frame_count: number;
  fps: number;
  parameters: VideoEncodingParameters;
  ffmpeg_build: string;
  encoder: string;
  media_type: "video/mp4";
  encode_ms: number;
}

/** Largest even size within `maxEdge` on the longest side, keeping aspect; never upscales. */
export function outputSize(
  width: number,
  height: number,
  maxEdge: number,
): { width: number; height: number } {
  const scale = Math.min(1, maxEdge / Math.max(width, height));
  const even = (v: number) => Math.max(2, 2 * Math.floor(Math.round(v * scale) / 2));
  return { width: even(width), height: even(height) };
}

const seconds = (ns: number) => `${(ns / 1e9).toFixed(3)} s`;

/** The text of a gap slate: what was lost, for how long, and where in session time. */
export function gapSlateLines(gap: GapPresentation, plan: Pick<VideoPlan, "policy">): string[] {
  const lostMs = Math.round((gap.gap_end_ns - gap.gap_start_ns) / 1e6);
  return [
    "CAPTURE GAP",
    `${lostMs} ms not captured (${gap.gap_kind})`,
    `session ${seconds(gap.gap_start_ns)} - ${seconds(gap.gap_end_ns)}`,
    plan.policy === "real_time"
      ? `no frames until ${seconds(gap.session_end_ns)}`
      : `slate held ${gap.duration_ms} ms (not to scale)`,
  ];
}

function sizeMismatch(what: string, got: RgbaImage, width: number, height: number): ToolError {
  return new ToolError({
    code: "frame_size_mismatch",
    message: `${what} is ${got.width}x${got.height} but this video is ${width}x${height}; ` +
      "frames of different visual epochs are never stretched together.",
    retry: "never",
    recovery: "Request the video for a single visual epoch (one viewport size) of the range.",
  });
}

async function readTail(stream: ReadableStream<Uint8Array>, cap: number): Promise<string> {
  let text = "";
  const dec = new TextDecoder();
  for await (const chunk of stream) {
    text = (text + dec.decode(chunk, { stream: true })).slice(-cap);
  }
  return text;
}

/** Encodes `plan` to `outPath` (written atomically: a temp file in the same directory, then renamed). */
export async function encodeVideo(
  plan: VideoPlan,
  source: FrameSource,
  renderSlate: SlateRenderer,
  ffmpeg: QualifiedFfmpeg,
  outPath: string,
  limits: Partial<VideoEncodeLimits> = {},
): Promise<VideoResult> {
  const lim: VideoEncodeLimits = { ...DEFAULT_VIDEO_ENCODE_LIMITS, ...limits };
  const started = performance.now();
  const { width, height } = source;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new ToolError({
      code: "invalid_argument",
      message: "The frame source has no valid size.",
      retry: "never",
    });
  }
  if (width * height > lim.max_source_pixels) {
    throw limitExceeded(
      "video source frame pixels",
      width * height,
      lim.max_source_pixels,
      "Crop or pick a smaller viewport.",
    );
  }
  if (plan.total_frames > lim.max_presentation_frames) {
    throw limitExceeded("video presentation frame count", plan.total_frames, lim.max_presentation_frames);
  }
  if (plan.total_frames < 1) {
    throw limitExceeded("video presentation frame count", 0, 1, "Plan at least one frame.");
  }
  const out = outputSize(width, height, lim.max_edge);
  const threads = Math.max(1, Math.floor(lim.threads));
  await ensureFfmpegAvailable(ffmpeg);
  // A cancelled call (call_signal.ts) ends the encode: ffmpeg is stopped, fed frames are discarded and
  // the partial file removed, so a cancelled video leaves nothing behind.
  const signal = currentCallSignal();
  signal?.throwIfAborted();

  const tmpPath = `${outPath}.partial-${crypto.randomUUID()}`;
  const args = buildEncodeArgs({
    width,
    height,
    fps: plan.fps,
    outWidth: out.width,
    outHeight: out.height,
    encoder: ffmpeg.encoder,
    encoderArgs: ffmpeg.encoderArgs,
    threads,
    maxBytes: lim.max_output_bytes,
    outPath: tmpPath,
  });
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(ffmpeg.path, { args, stdin: "piped", stdout: "null", stderr: "piped" }).spawn();
  } catch (err) {
    throw encoderUnavailable(`ffmpeg could not be started (${err instanceof Error ? err.name : "error"})`);
  }
  const stderr = readTail(child.stderr, 4096);
  let timedOut = false;
  let exited = false;
  const kill = () => {
    if (exited) return;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, Math.max(1, lim.deadline_ms));
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  // SIGTERM lets ffmpeg exit on its own; SIGKILL follows if it has not within the grace.
  let termTimer: ReturnType<typeof setTimeout> | undefined;
  const terminate = () => {
    if (exited) return;
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    termTimer = setTimeout(kill, TERM_GRACE_MS);
  };
  signal?.addEventListener("abort", terminate, { once: true });

  let ok = false;
  try {
    let writeFailed = false;
    let closed = false;
    const writer = child.stdin.getWriter();
    try {
      for (const iv of plan.intervals) {
        if (signal?.aborted) break;
        const image = iv.kind === "frame"
          ? await source.decode(iv.frame_id)
          : renderSlate(width, height, gapSlateLines(iv, plan));
        if (image.width !== width || image.height !== height || image.data.length !== width * height * 4) {
          throw sizeMismatch(
            iv.kind === "frame" ? `frame ${iv.frame_id}` : "the gap slate",
            image,
            width,
            height,
          );
        }
        for (let k = 0; k < iv.frame_count && !writeFailed && !signal?.aborted; k++) {
          // A rejected write means ffmpeg stopped reading (error, size limit, or kill).
          await writer.write(image.data).catch(() => (writeFailed = true));
        }
        if (writeFailed) break;
      }
      if (!writeFailed && !signal?.aborted) closed = await writer.close().then(() => true, () => false);
    } catch (err) {
      kill();
      throw err;
    } finally {
      if (!closed) await writer.abort().catch(() => {});
    }
    const { code } = await status;
    const diagnostics = await stderr;
    signal?.throwIfAborted();
    if (timedOut) {
      throw limitExceeded(
        "video encode wall-clock time (ms)",
        Math.round(performance.now() - started),
        lim.deadline_ms,
        "Narrow the range, lower fps, or lower the output size.",
      );
    }
    if (code !== 0 || writeFailed) {
      let bytes = 0;
      try {
        bytes = (await Deno.stat(tmpPath)).size;
      } catch { /* no output */ }
      if (bytes >= lim.max_output_bytes) {
        throw limitExceeded(
          "encoded video bytes",
          bytes,
          lim.max_output_bytes,
          "Narrow the range or lower the output size.",
        );
      }
      try {
        await Deno.stat(ffmpeg.path);
      } catch {
        throw encoderUnavailable("the qualified ffmpeg executable disappeared during encoding", diagnostics);
      }
      throw new ToolError({
        code: "video_encode_failed",
        message: `ffmpeg failed to encode the video (exit ${code}).`,
        retry: "safe",
        recovery: "Retry once; if it fails again, restart the MCP server to re-qualify FFmpeg.",
        details: { diagnostics: sanitizeDiagnostics(diagnostics) },
      });
    }
    const bytes = await Deno.readFile(tmpPath);
    if (bytes.length >= lim.max_output_bytes) {
      throw limitExceeded(
        "encoded video bytes",
        bytes.length,
        lim.max_output_bytes,
        "Narrow the range or lower the output size.",
      );
    }
    const sha256 = await sha256Hex(bytes);
    signal?.throwIfAborted();
    await Deno.rename(tmpPath, outPath);
    ok = true;
    const fps = plan.fps;
    const scaleFilter = args[args.indexOf("-vf") + 1] ?? "";
    return {
      path: outPath,
      bytes: bytes.length,
      sha256,
      duration_ms: Math.round((plan.total_frames * 1e6) / fps) / 1000,
      width: out.width,
      height: out.height,
      frame_count: plan.total_frames,
      fps,
      parameters: {
        container: "mp4",
        codec: "h264",
        encoder: ffmpeg.encoder,
        encoder_args: [...ffmpeg.encoderArgs],
        pix_fmt: "yuv420p",
        fps,
        input: { format: "rawvideo", pix_fmt: "rgba", width, height },
        scale_filter: scaleFilter,
        threads,
        movflags: "+faststart",
        audio: "none",
        max_output_bytes: lim.max_output_bytes,
        deadline_ms: lim.deadline_ms,
        ffmpeg_args: args.map((a) => (a === tmpPath ? "<output>" : a)),
        frame_rounding: `constant ${fps} fps: every interval lasts a whole number of ${
          Math.round(1e6 / fps) / 1000
        } ms frames (plan start_frame/frame_count are exact; pts_ms/duration_ms are rounded to 1 µs).`,
      },
      ffmpeg_build: ffmpeg.build,
      encoder: ffmpeg.encoder,
      media_type: "video/mp4",
      encode_ms: Math.round(performance.now() - started),
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(termTimer);
    signal?.removeEventListener("abort", terminate);
    kill();
    await status.catch(() => {});
    await stderr.catch(() => "");
    if (!ok) await Deno.remove(tmpPath).catch(() => {});
  }
}

/** The video-specific provenance block (spec "Artifact Provenance": video artifacts additionally record…). */
export function videoManifest(plan: VideoPlan, result: VideoResult) {
  return {
    presentation_policy: plan.policy,
    plan_algorithm: plan.algorithm,
    encode_algorithm: VIDEO_ENCODE_ALGORITHM,
    timing_statement: plan.timing_statement,
    fps: plan.fps,
    speed: plan.speed,
    range: plan.range,
    presented_start_ns: plan.presented_start_ns,
    lead_in_ns: plan.lead_in_ns,
    presentation: plan.intervals,
    visible_gaps: plan.intervals.filter((iv) => iv.kind === "gap"),
    source_frame_ids: plan.source_frame_ids,
    presented_frame_ids: plan.presented_frame_ids,
    omitted_frame_count: plan.omitted_frame_count,
    ffmpeg_build: result.ffmpeg_build,
    encoder: result.encoder,
    encoding_parameters: result.parameters,
    container: "mp4" as const,
    media_type: result.media_type,
    audio: "none" as const,
    duration_ms: result.duration_ms,
    output_dimensions: { width: result.width, height: result.height },
    scale: result.width / result.parameters.input.width,
    frame_count: result.frame_count,
    bytes: result.bytes,
    output_hash: `sha256:${result.sha256}`,
    derived_presentation:
      "A video is a derived presentation, not a replacement for this manifest or the source frames; " +
      "capture gaps are shown as slates, never interpolated.",
  };
}
