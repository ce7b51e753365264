/**
 * Qualification of a user-installed ffmpeg (never bundled): find it, read its build line, and
 * run a real tiny MP4/H.264 encode through the same pipeline video.ts uses, within a bounded
 * time. Every message that leaves this module is sanitized (no paths, bounded length).
 */
import { isAbsolute, join, resolve } from "node:path";
import { ToolError } from "../errors.ts";
import { currentCallSignal } from "../browser/call_signal.ts";

export type FfmpegQualification =
  | { available: true; path: string; build: string; encoder: string; encoderArgs: string[] }
  | { available: false; reason: string };

export type QualifiedFfmpeg = Extract<FfmpegQualification, { available: true }>;

interface EncoderCandidate {
  encoder: string;
  args: string[];
  os?: typeof Deno.build.os;
}

/** Preference order. Rate control is per encoder; software encoders first (portable, deterministic). */
export const H264_CANDIDATES: readonly EncoderCandidate[] = Object.freeze([
  { encoder: "libx264", args: ["-preset", "superfast", "-crf", "23", "-profile:v", "high"] },
  { encoder: "libopenh264", args: ["-b:v", "2M"] },
  { encoder: "h264_videotoolbox", args: ["-b:v", "4M"], os: "darwin" },
  { encoder: "h264_mf", args: ["-b:v", "4M"], os: "windows" },
]);

export const DEFAULT_QUALIFY_TIMEOUT_MS = 5_000;
const OUTPUT_CAP_BYTES = 256 * 1024;

/** Replaces anything path-like, strips control characters, and bounds the length. */
export function sanitizeDiagnostics(text: string, maxChars = 600): string {
  const cleaned = text
    .replace(/(^|[\s'"(=:])(?:file:)?(?:~|[A-Za-z]:)?[\\/][^\s'"),;]*/g, "$1<path>")
    .replace(/[^\x20-\x7e\n]/g, " ")
    .replace(/[ \t]+/g, " ")
    .replace(/\n\s*\n+/g, "\n")
    .trim();
  return cleaned.length > maxChars ? `${cleaned.slice(0, maxChars - 1)}…` : cleaned;
}

/** The stable error for "the qualified encoder is gone or changed" (spec: encoder-unavailable). */
export function encoderUnavailable(reason: string, diagnostics?: string): ToolError {
  return new ToolError({
    code: "encoder_unavailable",
    message: `The FFmpeg encoder qualified at startup is no longer usable: ${
      sanitizeDiagnostics(reason, 200)
    }`,
    retry: "after_recovery",
    recovery: "Reinstall FFmpeg (or point KROMETRAIL_FFMPEG at a working ffmpeg), then restart the MCP " +
      "server so it re-qualifies the encoder. Still-image artifacts keep working meanwhile.",
    ...(diagnostics ? { details: { diagnostics: sanitizeDiagnostics(diagnostics) } } : {}),
  });
}

async function readCapped(stream: ReadableStream<Uint8Array>, cap: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Drain past the cap so the child never blocks on a full pipe.
  for await (const chunk of stream) {
    if (size < cap) {
      const part = chunk.subarray(0, cap - size);
      chunks.push(part);
      size += part.length;
    }
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.length;
  }
  return out;
}

export interface BoundedRun {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs `path args` with a hard deadline (SIGKILL), optional stdin bytes, and capped output.
 * Always waits for the process to exit. Throws Deno.errors.NotFound when it cannot spawn.
 * `signal` (a cancelled call): the child is killed too, and once it exited the signal's reason is thrown.
 */
export async function runBounded(
  path: string,
  args: string[],
  opts: { timeoutMs: number; stdin?: Uint8Array[]; signal?: AbortSignal },
): Promise<BoundedRun> {
  opts.signal?.throwIfAborted();
  const child = new Deno.Command(path, {
    args,
    stdin: opts.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, Math.max(1, opts.timeoutMs));
  opts.signal?.addEventListener("abort", kill, { once: true });
  try {
    const stdout = readCapped(child.stdout, OUTPUT_CAP_BYTES);
    const stderr = readCapped(child.stderr, OUTPUT_CAP_BYTES);
    if (opts.stdin) {
      const writer = child.stdin.getWriter();
      try {
        for (const chunk of opts.stdin) await writer.write(chunk);
        await writer.close();
      } catch {
        // The child exited early; its status says why.
        await writer.abort().catch(() => {});
      }
    }
    const [status, out, err] = await Promise.all([child.status, stdout, stderr]);
    opts.signal?.throwIfAborted();
    const dec = new TextDecoder();
    return { code: status.code, stdout: dec.decode(out), stderr: dec.decode(err), timedOut };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", kill);
  }
}

export interface EncodeArgsInput {
  width: number;
  height: number;
  fps: number;
  outWidth: number;
  outHeight: number;
  encoder: string;
  encoderArgs: readonly string[];
  threads: number;
  maxBytes: number;
  outPath: string;
}

/** The one ffmpeg command line for raw RGBA on stdin → MP4/H.264, no audio, yuv420p, faststart. */
export function buildEncodeArgs(a: EncodeArgsInput): string[] {
  return [
    "-hide_banner",
    "-loglevel",
    "error",
    "-nostats",
    "-y",
    "-filter_threads",
    String(a.threads),
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgba",
    "-s",
    `${a.width}x${a.height}`,
    "-framerate",
    String(a.fps),
    "-i",
    "pipe:0",
    "-an",
    "-sn",
    "-dn",
    "-vf",
    `scale=${a.outWidth}:${a.outHeight}:flags=bicubic,format=yuv420p`,
    "-c:v",
    a.encoder,
    ...a.encoderArgs,
    "-pix_fmt",
    "yuv420p",
    "-threads",
    String(a.threads),
    "-map_metadata",
    "-1",
    "-fflags",
    "+bitexact",
    "-movflags",
    "+faststart",
    "-fs",
    String(a.maxBytes),
    "-f",
    "mp4",
    a.outPath,
  ];
}

/** True when the bytes look like an MP4 holding an H.264 track. */
export function looksLikeH264Mp4(bytes: Uint8Array): boolean {
  const text = new TextDecoder("latin1").decode(bytes);
  return text.slice(4, 8) === "ftyp" && text.includes("moov") && text.includes("avc1");
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return false;
    return Deno.build.os === "windows" || info.mode === null || (info.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Explicit path, then KROMETRAIL_FFMPEG, then PATH. Returns a path or a sanitized reason. */
async function locate(explicit?: string): Promise<{ path: string } | { reason: string }> {
  const configured = explicit ?? Deno.env.get("KROMETRAIL_FFMPEG");
  const source = explicit !== undefined ? "the configured ffmpeg path" : "KROMETRAIL_FFMPEG";
  const exe = Deno.build.os === "windows" ? ["", ".exe"] : [""];
  if (configured !== undefined && configured.trim() !== "") {
    const name = configured.trim();
    if (isAbsolute(name) || name.includes("/") || name.includes("\\")) {
      const full = resolve(name);
      for (const ext of exe) if (await isExecutableFile(full + ext)) return { path: full + ext };
      return { reason: `${source} does not name an executable file` };
    }
    const found = await searchPath(name, exe);
    return found ? { path: found } : { reason: `${source} names a program that is not on PATH` };
  }
  const found = await searchPath("ffmpeg", exe);
  return found
    ? { path: found }
    : { reason: "ffmpeg was not found on PATH (install FFmpeg or set KROMETRAIL_FFMPEG)" };
}

async function searchPath(name: string, exts: string[]): Promise<string | undefined> {
  const sep = Deno.build.os === "windows" ? ";" : ":";
  for (const dir of (Deno.env.get("PATH") ?? "").split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = resolve(join(dir, name + ext));
      if (await isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

/** First line of `ffmpeg -version`, without the copyright tail. */
function buildLine(stdout: string): string {
  const first = stdout.split(/\r?\n/, 1)[0] ?? "";
  return sanitizeDiagnostics(first.replace(/\s+Copyright.*$/i, ""), 200);
}

function firstLine(text: string): string {
  const line = text.split(/\r?\n/).find((l) => l.trim() !== "") ?? "";
  return sanitizeDiagnostics(line, 160);
}

/** Three tiny RGBA frames through the exact production command line. */
async function testEncode(
  path: string,
  candidate: EncoderCandidate,
  dir: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const outPath = join(dir, `${candidate.encoder}.mp4`);
  const size = 64;
  const frames = [0, 1, 2].map((i) => new Uint8Array(size * size * 4).fill(60 + i * 60));
  const args = buildEncodeArgs({
    width: size,
    height: size,
    fps: 10,
    outWidth: size,
    outHeight: size,
    encoder: candidate.encoder,
    encoderArgs: candidate.args,
    threads: 1,
    maxBytes: 1_000_000,
    outPath,
  });
  const run = await runBounded(path, args, { timeoutMs, stdin: frames });
  if (run.timedOut) return `test encode timed out after ${timeoutMs} ms`;
  if (run.code !== 0) {
    return `test encode failed (exit ${run.code}): ${firstLine(run.stderr) || "no diagnostics"}`;
  }
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(outPath);
  } catch {
    return "test encode produced no output file";
  }
  return looksLikeH264Mp4(bytes) ? undefined : "test encode output is not an MP4 with an H.264 track";
}

/**
 * Startup qualification. Bounded by `timeoutMs` in total (default 5 s); never throws. The
 * reason of a failure is sanitized and safe to show in status output.
 */
export async function qualifyFfmpeg(
  options: { path?: string; timeoutMs?: number } = {},
): Promise<FfmpegQualification> {
  const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_QUALIFY_TIMEOUT_MS);
  const remaining = () => deadline - Date.now();
  const located = await locate(options.path);
  if ("reason" in located) return { available: false, reason: located.reason };
  const path = located.path;
  const fail = (reason: string): FfmpegQualification => ({
    available: false,
    reason: sanitizeDiagnostics(reason),
  });
  try {
    const version = await runBounded(path, ["-hide_banner", "-version"], { timeoutMs: remaining() });
    if (version.timedOut) return fail("ffmpeg -version timed out");
    if (version.code !== 0) return fail(`ffmpeg -version failed (exit ${version.code})`);
    const build = buildLine(version.stdout);
    if (!/ffmpeg/i.test(build)) return fail("the executable does not identify itself as ffmpeg");

    // Listing encoders only narrows the candidates; qualification needs a real encode.
    const listing = await runBounded(path, ["-hide_banner", "-encoders"], { timeoutMs: remaining() });
    if (listing.timedOut) return fail("ffmpeg -encoders timed out");
    const listed = new Set(
      listing.stdout.split(/\r?\n/).map((l) => l.trim().split(/\s+/)[1]).filter((n): n is string => !!n),
    );
    const candidates = H264_CANDIDATES.filter((c) =>
      (!c.os || c.os === Deno.build.os) && listed.has(c.encoder)
    );
    if (candidates.length === 0) {
      return fail("this ffmpeg build has no supported H.264 encoder (libx264, libopenh264)");
    }

    const dir = await Deno.makeTempDir({ prefix: "krometrail-ffmpeg-qualify-" });
    const failures: string[] = [];
    try {
      for (const candidate of candidates) {
        const left = remaining();
        if (left <= 0) {
          failures.push(`${candidate.encoder}: qualification time ran out`);
          break;
        }
        const problem = await testEncode(path, candidate, dir, left);
        if (!problem) {
          return {
            available: true,
            path,
            build,
            encoder: candidate.encoder,
            encoderArgs: [...candidate.args],
          };
        }
        failures.push(`${candidate.encoder}: ${problem}`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
    return fail(`no H.264 encoder passed a test encode: ${failures.join("; ")}`);
  } catch (err) {
    const kind = err instanceof Error ? err.name : "error";
    return fail(`ffmpeg could not be run (${kind})`);
  }
}

/**
 * Request-time check: the qualified executable still exists, runs, and reports the same build
 * (a changed build would make the manifest's recorded build false). Throws encoder_unavailable.
 * A cancelled call (its signal, by default the running call's) kills the check's child and throws the
 * call's abort reason, so the check never outlives the call by up to its timeout.
 */
export async function ensureFfmpegAvailable(
  q: QualifiedFfmpeg,
  // `ffmpeg -version` took over 2 s at load 20 on 2 cores; a video request takes seconds anyway, and a
  // false encoder_unavailable costs the caller the whole video.
  timeoutMs = 10_000,
  signal: AbortSignal | undefined = currentCallSignal(),
): Promise<void> {
  if (!(await isExecutableFile(q.path))) throw encoderUnavailable("the qualified ffmpeg executable is gone");
  let run: BoundedRun;
  try {
    run = await runBounded(q.path, ["-hide_banner", "-version"], { timeoutMs, signal });
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw encoderUnavailable(`ffmpeg could not be started (${err instanceof Error ? err.name : "error"})`);
  }
  if (run.timedOut) throw encoderUnavailable(`ffmpeg -version did not answer within ${timeoutMs} ms`);
  if (run.code !== 0) throw encoderUnavailable(`ffmpeg -version failed (exit ${run.code})`, run.stderr);
  const build = buildLine(run.stdout);
  if (build !== q.build) {
    throw encoderUnavailable("the ffmpeg build changed since startup qualification", `now: ${build}`);
  }
}
