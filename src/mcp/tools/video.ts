import { z } from "zod";
import { frameBytes } from "../../capture/frames.ts";
import { ToolError } from "../../errors.ts";
import { ensureFfmpegAvailable } from "../../temporal/ffmpeg.ts";
import { prepareRangeYielding } from "../../temporal/prepare.ts";
import { ms } from "../../temporal/range.ts";
import { renderSlate } from "../../temporal/render/slate.ts";
import { selectionFor } from "../../temporal/artifacts.ts";
import { encodeVideo, videoManifest } from "../../temporal/video.ts";
import { planVideo } from "../../temporal/video_plan.ts";
import { decodeJpeg } from "../../vision/jpeg_decode.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { artifactEnv, rangeFields, rangeOf, spanOf } from "./temporal_args.ts";
import { rangeText } from "./temporal_region.ts";

export const videoTools = [
  defineTool({
    name: "generate_temporal_video",
    capability: "temporal-video",
    output: OUTPUT_SCHEMAS.generate_temporal_video,
    description:
      "Bounded MP4/H.264 clip (no audio) of a range: real_time keeps recorded timing; model_optimized holds meaningful states. Gaps become slates.",
    input: z.strictObject({
      ...rangeFields,
      policy: z.enum(["real_time", "model_optimized"]).optional().describe("Default model_optimized"),
      fps: z.number().int().min(1).max(60).optional().describe(
        "Output frame rate; default 30 real_time, 10 model_optimized",
      ),
      speed: z.number().int().min(1).max(64).optional().describe("real_time only: integer speed-up"),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const video = app.temporal.video;
      if (!video.available) {
        throw new ToolError({
          code: "encoder_unavailable",
          message: `No qualified ffmpeg: ${video.reason}`,
          retry: "after_recovery",
          recovery:
            "Install ffmpeg with an H.264 encoder (or set KROMETRAIL_FFMPEG), then restart the server.",
        });
      }
      const range = await rangeOf(app, args);
      const policy = args.policy ?? "model_optimized";
      const env = artifactEnv(app, range);
      // One visual epoch per clip: frames of different sizes are never stretched together.
      const prepared = await prepareRangeYielding(env.db, range, env.ops, env.cache, { epochs: "anchor" });
      const analysis = prepared.analyses[0];
      if (!analysis) {
        throw new ToolError({
          code: "range_not_captured",
          message: `No frames of page ${range.page_id} fall in the range.`,
          retry: "never",
          recovery: "Choose a range after the page's first frame.",
          affected: { session_id: range.session_id, page_id: range.page_id },
        });
      }
      const selected = new Set(selectionFor(prepared, analysis, 12).map((s) => s.frame_id));
      const epoch = analysis.epoch;
      const plan = planVideo({
        frames: epoch.frames.map((f) => ({
          frame_id: f.frame_id,
          session_time_ns: f.session_time_ns,
          selected: selected.has(f.frame_id),
        })),
        gaps: range.gaps.map((g) => ({
          start_ns: g.start_ns,
          end_ns: g.end_ns ?? range.end_ns,
          kind: g.kind,
        })),
        range: { start_ns: Math.max(range.start_ns, epoch.start_ns), end_ns: range.end_ns },
        policy,
        ...(args.fps !== undefined ? { fps: args.fps } : {}),
        ...(args.speed !== undefined ? { speed: args.speed } : {}),
      });
      await ensureFfmpegAvailable(video);
      const target = await app.store.reserveEvidence("videos", "mp4");
      const result = await encodeVideo(
        plan,
        {
          width: epoch.width,
          height: epoch.height,
          decode: (id) => {
            const bytes = frameBytes(env.db, range.session_id, id);
            if (!bytes) throw new Error(`frame ${id} is no longer retained`);
            return decodeJpeg(bytes);
          },
        },
        renderSlate,
        video,
        target.path,
      );
      // ffmpeg wrote the file itself: it is judged against the share now, and removed if refused.
      await app.store.adoptEvidence("videos", target.path, spanOf(range));
      const manifest = {
        artifact_id: target.uri.slice(target.uri.lastIndexOf("/") + 1).replace(/\.mp4$/, ""),
        artifact_kind: "temporal_video",
        evidence_class: "source_derived",
        session_id: range.session_id,
        page_id: range.page_id,
        capture_configuration: env.captureConfig(range.session_id),
        resolved_range: range,
        epoch: {
          index: epoch.index,
          count: prepared.epochs.length,
          width: epoch.width,
          height: epoch.height,
        },
        output_uri: target.uri,
        ...videoManifest(plan, result),
      };
      const manifestUri =
        (await env.write("json", new TextEncoder().encode(JSON.stringify(manifest, null, 1)))).uri;
      const gaps = plan.intervals.filter((iv) => iv.kind === "gap").length;
      return output(
        [
          rangeText(range),
          `${policy} video ${target.uri}: ${
            ms(result.duration_ms * 1e6)
          } ms, ${result.width}x${result.height}, ${result.frame_count} frames at ${result.fps} fps, ${result.encoder}, ${result.bytes} bytes, ${gaps} gap slate(s).`,
          plan.timing_statement,
          `manifest ${manifestUri}`,
        ].join("\n"),
        {
          range,
          uri: target.uri,
          manifest_uri: manifestUri,
          media_type: result.media_type,
          policy,
          duration_ms: result.duration_ms,
          width: result.width,
          height: result.height,
          frame_count: result.frame_count,
          fps: result.fps,
          bytes: result.bytes,
          encoder: result.encoder,
          ffmpeg_build: result.ffmpeg_build,
          output_hash: `sha256:${result.sha256}`,
          gap_slates: gaps,
        },
      );
    },
  }),
];
