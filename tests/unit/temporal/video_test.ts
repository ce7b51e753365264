/** Real ffmpeg (and ffprobe) at /usr/bin: qualification, encoding, and failure modes. */
import { join } from "node:path";
import { assert, assertEquals, assertRejects } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import { type QualifiedFfmpeg, qualifyFfmpeg, sanitizeDiagnostics } from "../../../src/temporal/ffmpeg.ts";
import { type GapPresentation, planVideo, type VideoPlan } from "../../../src/temporal/video_plan.ts";
import {
  encodeVideo,
  type FrameSource,
  gapSlateLines,
  outputSize,
  videoManifest,
} from "../../../src/temporal/video.ts";

const MS = 1_000_000;

let qualified: Promise<QualifiedFfmpeg> | undefined;
/** One real qualification shared by the tests (it runs real test encodes). */
function ffmpeg(): Promise<QualifiedFfmpeg> {
  qualified ??= qualifyFfmpeg().then((q) => {
    if (!q.available) throw new Error(`ffmpeg did not qualify: ${q.reason}`);
    return q;
  });
  return qualified;
}

/** Solid colour per frame id: a trivial stand-in for the JPEG decoder. */
function solidSource(width: number, height: number): FrameSource & { decoded: number[] } {
  const decoded: number[] = [];
  return {
    width,
    height,
    decoded,
    decode(id: number): RgbaImage {
      decoded.push(id);
      return createImage(width, height, [(id * 53) % 256, (id * 97) % 256, (id * 31) % 256]);
    },
  };
}

const graySlate = (w: number, h: number, _lines: string[]) => createImage(w, h, [128, 128, 128]);

interface Probe {
  streams: Array<
    { codec_type: string; codec_name: string; width?: number; height?: number; pix_fmt?: string }
  >;
  format: { format_name: string; duration: string };
}

async function probe(path: string): Promise<Probe> {
  const out = await new Deno.Command("ffprobe", {
    args: ["-v", "error", "-show_streams", "-show_format", "-of", "json", path],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

function shortPlan(policy: "real_time" | "model_optimized"): VideoPlan {
  return planVideo({
    frames: [0, 100, 200, 300, 600, 700].map((t, i) => ({
      frame_id: i + 1,
      session_time_ns: t * MS,
      selected: i % 2 === 0,
    })),
    gaps: [{ start_ns: 400 * MS, end_ns: 550 * MS, kind: "visibility" }],
    range: { start_ns: 0, end_ns: 1_000 * MS },
    policy,
  });
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-video-test-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function listDir(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("qualification finds a working H.264 encoder", async () => {
  const q = await ffmpeg();
  assert(q.path.startsWith("/"), q.path);
  assert(q.build.startsWith("ffmpeg version"), q.build);
  assert(!q.build.includes("Copyright"));
  assert(["libx264", "libopenh264"].includes(q.encoder), q.encoder);
  assert(q.encoderArgs.length > 0);
});

Deno.test("qualification of a bogus path fails with a reason free of the path", async () => {
  const bogus = join(Deno.cwd(), "no-such-dir-7f3a", "ffmpeg-missing");
  const q = await qualifyFfmpeg({ path: bogus });
  assert(!q.available);
  assert(q.reason.length > 0);
  assert(!q.reason.includes("no-such-dir-7f3a") && !q.reason.includes(Deno.cwd()), q.reason);
  assertEquals(
    sanitizeDiagnostics(`Error opening '${bogus}': No such file`),
    "Error opening '<path>': No such file",
  );
});

Deno.test("real_time encode: one h264 stream, no audio, mp4, duration within a frame of the plan", async () => {
  const q = await ffmpeg();
  await withDir(async (dir) => {
    const plan = shortPlan("real_time");
    const out = join(dir, "clip.mp4");
    // Odd source size: the output must still be even.
    const result = await encodeVideo(plan, solidSource(161, 91), graySlate, q, out);
    const info = await probe(out);
    assertEquals(info.streams.length, 1);
    assertEquals(info.streams.filter((s) => s.codec_type === "audio").length, 0);
    const [video] = info.streams;
    assertEquals([video.codec_type, video.codec_name, video.pix_fmt], ["video", "h264", "yuv420p"]);
    assertEquals([video.width, video.height], [160, 90]);
    assertEquals([result.width, result.height], [160, 90]);
    assert(/mp4|mov/.test(info.format.format_name), info.format.format_name);
    const duration = Number(info.format.duration) * 1000;
    assert(Math.abs(duration - plan.duration_ms) <= 1000 / plan.fps, `${duration} vs ${plan.duration_ms}`);
    assertEquals(result.duration_ms, plan.duration_ms);
    assertEquals(result.media_type, "video/mp4");
    const bytes = await Deno.readFile(out);
    assertEquals(result.bytes, bytes.length);
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    assertEquals(result.sha256, Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""));
    assert(
      result.parameters.ffmpeg_args.includes("+faststart") && result.parameters.ffmpeg_args.includes("-an"),
    );
    assert(!result.parameters.ffmpeg_args.some((a) => a.includes(dir)), "no paths in the recorded args");
    assertEquals(await listDir(dir), ["clip.mp4"], "no temp files left");
    const manifest = videoManifest(plan, result);
    assertEquals(manifest.output_hash, `sha256:${result.sha256}`);
    assertEquals(manifest.visible_gaps.length, 1);
  });
});

Deno.test("model_optimized encode is byte-identical for identical input, scaled within max_edge", async () => {
  const q = await ffmpeg();
  await withDir(async (dir) => {
    const plan = shortPlan("model_optimized");
    const src = solidSource(320, 180);
    const slateLines: string[][] = [];
    const slate = (w: number, h: number, lines: string[]) => {
      slateLines.push(lines);
      return graySlate(w, h, lines);
    };
    const a = await encodeVideo(plan, src, slate, q, join(dir, "a.mp4"), { max_edge: 160 });
    const b = await encodeVideo(plan, src, slate, q, join(dir, "b.mp4"), { max_edge: 160 });
    assertEquals(a.sha256, b.sha256);
    const [video] = (await probe(join(dir, "a.mp4"))).streams;
    assertEquals([video.width, video.height], [160, 90]);
    assertEquals(slateLines[0][0], "CAPTURE GAP");
    const gap = plan.intervals.find((iv): iv is GapPresentation => iv.kind === "gap");
    assert(gap, "the plan has a gap");
    assertEquals(slateLines[0], gapSlateLines(gap, plan));
    assertEquals(slateLines[0][1], "150 ms not captured (visibility)");
    // Each interval's image is decoded once, however long it is held.
    assertEquals(src.decoded.length, 2 * plan.intervals.filter((iv) => iv.kind === "frame").length);
  });
});

Deno.test("a vanished or changed ffmpeg fails with encoder_unavailable and a recovery", async () => {
  const q = await ffmpeg();
  await withDir(async (dir) => {
    // The qualified executable (reached through a link, as PATH entries often are) disappears.
    const link = join(dir, "ffmpeg");
    await Deno.symlink(q.path, link);
    const linked: QualifiedFfmpeg = { ...q, path: link };
    await Deno.remove(link);
    const out = join(dir, "gone.mp4");
    const err = await assertRejects(
      () => encodeVideo(shortPlan("real_time"), solidSource(64, 64), graySlate, linked, out),
      ToolError,
    ) as ToolError;
    assertEquals(err.code, "encoder_unavailable");
    assertEquals(err.retry, "after_recovery");
    assert(err.recovery?.includes("restart"), err.recovery);
    assert(!err.message.includes(dir), err.message);
    const changed = await assertRejects(
      () =>
        encodeVideo(shortPlan("real_time"), solidSource(64, 64), graySlate, { ...q, build: "ffmpeg 0" }, out),
      ToolError,
    ) as ToolError;
    assertEquals(changed.code, "encoder_unavailable");
    assertEquals(await listDir(dir), []);
  });
});

Deno.test("limits and mismatches fail cleanly: no process, no partial file", async () => {
  const q = await ffmpeg();
  await withDir(async (dir) => {
    const out = join(dir, "x.mp4");
    const plan = shortPlan("real_time");
    const deadline = await assertRejects(
      () => encodeVideo(plan, solidSource(320, 240), graySlate, q, out, { deadline_ms: 1 }),
      ToolError,
    ) as ToolError;
    assertEquals(deadline.details?.subject, "video encode wall-clock time (ms)");
    const bytes = await assertRejects(
      () => encodeVideo(plan, solidSource(320, 240), graySlate, q, out, { max_output_bytes: 2_000 }),
      ToolError,
    ) as ToolError;
    assertEquals([bytes.code, bytes.details?.subject], ["resource_limit_exceeded", "encoded video bytes"]);
    const frames = await assertRejects(
      () => encodeVideo(plan, solidSource(64, 64), graySlate, q, out, { max_presentation_frames: 5 }),
      ToolError,
    ) as ToolError;
    assertEquals(frames.details?.limit, 5);
    const mixed: FrameSource = {
      width: 64,
      height: 64,
      decode: (id) => createImage(id < 3 ? 64 : 80, 64),
    };
    const mismatch = await assertRejects(
      () => encodeVideo(plan, mixed, graySlate, q, out),
      ToolError,
    ) as ToolError;
    assertEquals(mismatch.code, "frame_size_mismatch");
    assertEquals(await listDir(dir), []);
  });
});

Deno.test("outputSize keeps aspect, even dimensions, never upscales", () => {
  assertEquals(outputSize(2560, 1440, 1280), { width: 1280, height: 720 });
  assertEquals(outputSize(1281, 721, 1280), { width: 1280, height: 720 });
  assertEquals(outputSize(800, 1200, 1280), { width: 800, height: 1200 });
  assertEquals(outputSize(3, 1, 1280), { width: 2, height: 2 });
});
