/** The request-time ffmpeg check of a cancelled call: its child is killed and the call's reason thrown. */
import { assert, assertEquals } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { runInCall } from "../../../src/browser/call_signal.ts";
import { ensureFfmpegAvailable, type QualifiedFfmpeg, runBounded } from "../../../src/temporal/ffmpeg.ts";

/** Whether `pid` is still a process (runBounded reaps its child, so a killed one leaves no entry). */
async function alive(pid: number): Promise<boolean> {
  return await Deno.stat(`/proc/${pid}`).then(() => true, () => false);
}

/** The pid the stand-in ffmpeg wrote when it started, once it has. */
async function startedPid(dir: string): Promise<number | undefined> {
  const text = await Deno.readTextFile(`${dir}/pid`).catch(() => "");
  return /^\d+\n$/.test(text) ? Number(text) : undefined;
}

/** An "ffmpeg" whose -version hangs (a stuck binary on a loaded box); it writes its pid to `dir`/pid. */
async function hangingFfmpeg(dir: string): Promise<QualifiedFfmpeg> {
  const path = `${dir}/ffmpeg`;
  await Deno.writeTextFile(path, `#!/bin/sh\necho $$ > '${dir}/pid'\nexec sleep 30\n`);
  await Deno.chmod(path, 0o755);
  return { available: true, path, build: "ffmpeg version test", encoder: "libx264", encoderArgs: [] };
}

/** Runs `test` in a fresh temporary directory, removed afterwards. */
async function inTempDir(test: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-ffmpeg-check-" });
  try {
    await test(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const reason = () => new ToolError({ code: "call_cancelled", message: "cancelled", retry: "safe" });

Deno.test("a cancelled call's ffmpeg -version check is killed at once and rejects with the call's reason", () =>
  inTempDir(async (dir) => {
    const q = await hangingFfmpeg(dir);
    const controller = new AbortController();
    const why = reason();
    // By default the check listens to the running call's signal (what video requests use).
    const checking = runInCall(controller.signal, () => ensureFfmpegAvailable(q)).then(
      () => undefined,
      (err) => err,
    );
    let pid: number | undefined;
    for (let i = 0; i < 400 && pid === undefined; i++) {
      await new Promise((r) => setTimeout(r, 25));
      pid = await startedPid(dir);
    }
    assert(pid !== undefined && await alive(pid), "the check's child runs");
    const abortedAt = performance.now();
    controller.abort(why);
    const err = await checking;
    const settledMs = performance.now() - abortedAt;
    assert(err === why, `rejected with the call's reason, not encoder_unavailable: ${err}`);
    assert(settledMs < 1_000, `settled ${Math.round(settledMs)} ms after the abort`);
    assertEquals(await alive(pid), false, "the child has exited");
  }));

Deno.test("a check for an already cancelled call spawns nothing", () =>
  inTempDir(async (dir) => {
    const q = await hangingFfmpeg(dir);
    const why = reason();
    const err = await ensureFfmpegAvailable(q, 10_000, AbortSignal.abort(why)).then(
      () => undefined,
      (e) => e,
    );
    assert(err === why, `rejected with the call's reason: ${err}`);
    assertEquals(await startedPid(dir), undefined, "nothing was started");
  }));

Deno.test("runBounded without a signal still kills a child at its own timeout", () =>
  inTempDir(async (dir) => {
    const q = await hangingFfmpeg(dir);
    const started = performance.now();
    const run = await runBounded(q.path, ["-version"], { timeoutMs: 300 });
    assert(run.timedOut, "timed out");
    assert(performance.now() - started < 5_000, "killed, not waited out");
    const pid = await startedPid(dir);
    assert(pid !== undefined, "it had started");
    assertEquals(await alive(pid), false, "the child has exited");
  }));
