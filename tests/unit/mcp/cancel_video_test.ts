/** A cancelled call's video encode (real ffmpeg): the child is stopped and no file is left behind. */
import { assert, assertEquals } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { runInCall } from "../../../src/browser/call_signal.ts";
import { createImage } from "../../../src/vision/image.ts";
import { qualifyFfmpeg } from "../../../src/temporal/ffmpeg.ts";
import { planVideo } from "../../../src/temporal/video_plan.ts";
import { encodeVideo } from "../../../src/temporal/video.ts";
import { ffmpegEncoders } from "../../proc_children.ts";

/** This process's ffmpeg children that read frames from stdin. */
const encoders = () => ffmpegEncoders(Deno.pid);

const MS = 1_000_000;

Deno.test("a cancelled encode stops ffmpeg, discards the fed frames and leaves no file", async () => {
  const q = await qualifyFfmpeg();
  if (!q.available) throw new Error(`ffmpeg did not qualify: ${q.reason}`);
  const dir = await Deno.makeTempDir({ prefix: "krometrail-cancel-video-" });
  try {
    // 20 s of 1280x720 frames at 30 fps: far longer to encode than the test waits.
    const plan = planVideo({
      frames: Array.from({ length: 200 }, (_, i) => ({
        frame_id: i + 1,
        session_time_ns: i * 100 * MS,
        selected: i % 10 === 0,
      })),
      gaps: [],
      range: { start_ns: 0, end_ns: 20_000 * MS },
      policy: "real_time",
      fps: 30,
    });
    let decoded = 0;
    const source = {
      width: 1280,
      height: 720,
      decode: (id: number) => {
        decoded++;
        return createImage(1280, 720, [(id * 53) % 256, (id * 97) % 256, (id * 31) % 256]);
      },
    };
    const controller = new AbortController();
    const reason = new ToolError({ code: "call_cancelled", message: "cancelled", retry: "safe" });
    const encoding = runInCall(
      controller.signal,
      () => encodeVideo(plan, source, (w, h) => createImage(w, h), q, `${dir}/out.mp4`),
    ).then(() => undefined, (err) => err);
    for (let i = 0; i < 400 && (await encoders()).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    assert((await encoders()).length > 0, "ffmpeg is encoding");
    await new Promise((r) => setTimeout(r, 200));
    const abortedAt = performance.now();
    controller.abort(reason);
    const err = await encoding;
    const settledMs = performance.now() - abortedAt;
    assert(err === reason, `rejected with the call's reason: ${err}`);
    assert(settledMs < 1_000, `settled ${Math.round(settledMs)} ms after the abort`);
    assertEquals(await encoders(), [], "ffmpeg has exited");
    const left: string[] = [];
    for await (const e of Deno.readDir(dir)) left.push(e.name);
    assertEquals(left, [], "no output or partial file");
    assert(
      decoded < plan.intervals.length,
      `feeding stopped (${decoded} of ${plan.intervals.length} decoded)`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
