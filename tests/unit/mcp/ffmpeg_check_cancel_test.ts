/** The request-time ffmpeg check of a cancelled call: its child is killed and the call's reason thrown. */
import { assert, assertEquals } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { runInCall } from "../../../src/browser/call_signal.ts";
import { ensureFfmpegAvailable, type QualifiedFfmpeg, runBounded } from "../../../src/temporal/ffmpeg.ts";

/** Pids of this process's children running `sleep` (the stand-in ffmpeg that never answers). */
async function sleepers(): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      const close = stat.lastIndexOf(")");
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (ppid === Deno.pid && stat.slice(stat.indexOf("(") + 1, close) === "sleep") {
        found.push(Number(entry.name));
      }
    } catch { /* it ended while we looked */ }
  }
  return found;
}

/** An "ffmpeg" whose -version hangs (a stuck binary on a loaded box). */
async function hangingFfmpeg(dir: string): Promise<QualifiedFfmpeg> {
  const path = `${dir}/ffmpeg`;
  await Deno.writeTextFile(path, "#!/bin/sh\nexec sleep 30\n");
  await Deno.chmod(path, 0o755);
  return { available: true, path, build: "ffmpeg version test", encoder: "libx264", encoderArgs: [] };
}

const reason = () => new ToolError({ code: "call_cancelled", message: "cancelled", retry: "safe" });

Deno.test("a cancelled call's ffmpeg -version check is killed at once and rejects with the call's reason", async () => {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-ffmpeg-check-" });
  try {
    const q = await hangingFfmpeg(dir);
    const controller = new AbortController();
    const why = reason();
    // By default the check listens to the running call's signal (what video requests use).
    const checking = runInCall(controller.signal, () => ensureFfmpegAvailable(q)).then(
      () => undefined,
      (err) => err,
    );
    for (let i = 0; i < 400 && (await sleepers()).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    assert((await sleepers()).length > 0, "the check's child runs");
    const abortedAt = performance.now();
    controller.abort(why);
    const err = await checking;
    const settledMs = performance.now() - abortedAt;
    assert(err === why, `rejected with the call's reason, not encoder_unavailable: ${err}`);
    assert(settledMs < 1_000, `settled ${Math.round(settledMs)} ms after the abort`);
    assertEquals(await sleepers(), [], "the child has exited");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a check for an already cancelled call spawns nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-ffmpeg-check-" });
  try {
    const q = await hangingFfmpeg(dir);
    const why = reason();
    const err = await ensureFfmpegAvailable(q, 10_000, AbortSignal.abort(why)).then(
      () => undefined,
      (e) => e,
    );
    assert(err === why, `rejected with the call's reason: ${err}`);
    assertEquals(await sleepers(), [], "nothing was started");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runBounded without a signal still kills a child at its own timeout", async () => {
  const started = performance.now();
  const run = await runBounded("sleep", ["30"], { timeoutMs: 100 });
  assert(run.timedOut, "timed out");
  assert(performance.now() - started < 5_000, "killed, not waited out");
  assertEquals(await sleepers(), [], "the child has exited");
});
