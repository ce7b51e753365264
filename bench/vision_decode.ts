/**
 * JPEG decode speed. First the DC-only luma decode (jpeg_dc.ts) of a 1280×720 testsrc2 frame encoded by
 * ffmpeg at screencast-like quality; then the RGBA decode (jpeg_decode.ts) of 1920×1080 and 1280×633 frames
 * at scales 1, 2, 4 and 8, into a fresh buffer and into a reused one (`into`). Each case is decoded
 * repeatedly; prints the median and p90 ms per decode. It measures; it never asserts timings.
 *
 *   deno run --frozen -A bench/vision_decode.ts [iterations]
 */
import { join } from "node:path";
import { decodeJpegLuma } from "../src/vision/jpeg_dc.ts";
import { decodeJpeg } from "../src/vision/jpeg_decode.ts";

const ITERATIONS = Number(Deno.args[0] ?? 200);
const WARMUP = 20;
// ffmpeg's mjpeg quantisers are flatter than libjpeg's; by mean AC quantiser, -q:v 5 ≈ libjpeg quality 80,
// -q:v 8 ≈ 70 and -q:v 2 ≈ 90. testsrc2 is smoother than most pages, so a noisy frame shows the worst case.
const CASES: Array<{ label: string; args: string[] }> = [
  { label: "4:2:0 q:v 5 (~q80)", args: ["-q:v", "5", "-pix_fmt", "yuvj420p"] },
  { label: "4:2:0 q:v 8 (~q70)", args: ["-q:v", "8", "-pix_fmt", "yuvj420p"] },
  {
    label: "4:2:0 q:v 5, standard Huffman tables",
    args: ["-q:v", "5", "-pix_fmt", "yuvj420p", "-huffman", "default"],
  },
  { label: "4:4:4 q:v 5", args: ["-q:v", "5", "-pix_fmt", "yuvj444p"] },
  { label: "4:2:0 q:v 2 (~q90)", args: ["-q:v", "2", "-pix_fmt", "yuvj420p"] },
  {
    label: "4:2:0 q:v 5, heavy noise (worst case)",
    args: ["-q:v", "5", "-pix_fmt", "yuvj420p", "-vf", "noise=alls=40:allf=u"],
  },
];

function encode(path: string, args: string[], source = "testsrc2=s=1280x720"): void {
  const out = new Deno.Command("ffmpeg", {
    args: [
      "-loglevel",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      source,
      "-frames:v",
      "1",
      ...args,
      path,
    ],
  }).outputSync();
  if (!out.success) throw new Error(`ffmpeg failed: ${new TextDecoder().decode(out.stderr)}`);
}

/** Median and p90 of `ITERATIONS` timed runs, after `WARMUP` untimed ones. */
function time(run: () => void): { median: number; p90: number } {
  for (let i = 0; i < WARMUP; i++) run();
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return {
    median: times[Math.floor(times.length / 2)],
    p90: times[Math.min(times.length - 1, Math.ceil(times.length * 0.9) - 1)],
  };
}

// Chrome's screencast default is quality 60: about -q:v 11 on the scale above.
const FULL_CASES: Array<{ label: string; source: string; args: string[] }> = [
  { label: "1920×1080 4:2:0 q:v 11 (~q60)", source: "testsrc2=s=1920x1080", args: ["-q:v", "11"] },
  { label: "1920×1080 4:2:0 q:v 8 (~q70)", source: "testsrc2=s=1920x1080", args: ["-q:v", "8"] },
  {
    label: "1280×633 4:2:0 q:v 11 (~q60)",
    source: "testsrc2=s=1280x634,crop=1280:633",
    args: ["-q:v", "11"],
  },
  {
    label: "1920×1080 4:2:0 q:v 5, heavy noise (worst)",
    source: "testsrc2=s=1920x1080",
    args: ["-q:v", "5", "-vf", "noise=alls=40:allf=u"],
  },
];

const dir = await Deno.makeTempDir({ prefix: "krometrail-vision-bench-" });
try {
  console.log("decodeJpegLuma (DC-only luma, 1/8 grid)");
  for (const { label, args } of CASES) {
    const path = join(dir, "frame.jpg");
    encode(path, args);
    const bytes = await Deno.readFile(path);
    const { median, p90 } = time(() => decodeJpegLuma(bytes));
    console.log(
      `${label.padEnd(40)} ${(bytes.length / 1024).toFixed(0).padStart(4)} KiB  ` +
        `median ${median.toFixed(2)} ms  p90 ${p90.toFixed(2)} ms  (${ITERATIONS} decodes)`,
    );
  }

  console.log("\ndecodeJpeg (RGBA), ms per decode: median / p90, into a fresh buffer | into a reused one");
  const reused = new Uint8Array(1920 * 1080 * 4);
  for (const { label, source, args } of FULL_CASES) {
    const path = join(dir, "full.jpg");
    encode(path, ["-pix_fmt", "yuvj420p", ...args], source);
    const bytes = await Deno.readFile(path);
    console.log(`${label} (${(bytes.length / 1024).toFixed(0)} KiB)`);
    for (const scale of [1, 2, 4, 8] as const) {
      const fresh = time(() => decodeJpeg(bytes, { scale }));
      const into = time(() => decodeJpeg(bytes, { scale, into: reused }));
      console.log(
        `  scale ${scale}  ${fresh.median.toFixed(2).padStart(6)} / ${
          fresh.p90.toFixed(2).padStart(6)
        }  |  ` +
          `${into.median.toFixed(2).padStart(6)} / ${into.p90.toFixed(2).padStart(6)}`,
      );
    }
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
