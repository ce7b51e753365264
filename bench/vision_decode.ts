/**
 * DC-only luma decode speed: a 1280×720 testsrc2 frame encoded by ffmpeg at screencast-like quality,
 * decoded repeatedly; prints the median ms per decode. It measures; it never asserts timings.
 *
 *   deno run --frozen -A bench/vision_decode.ts [iterations]
 */
import { join } from "node:path";
import { decodeJpegLuma } from "../src/vision/jpeg_dc.ts";

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

function encode(path: string, args: string[]): void {
  const out = new Deno.Command("ffmpeg", {
    args: [
      "-loglevel",
      "error",
      "-y",
      "-f",
      "lavfi",
      "-i",
      "testsrc2=s=1280x720",
      "-frames:v",
      "1",
      ...args,
      path,
    ],
  }).outputSync();
  if (!out.success) throw new Error(`ffmpeg failed: ${new TextDecoder().decode(out.stderr)}`);
}

const dir = await Deno.makeTempDir({ prefix: "krometrail-vision-bench-" });
try {
  for (const { label, args } of CASES) {
    const path = join(dir, "frame.jpg");
    encode(path, args);
    const bytes = await Deno.readFile(path);
    for (let i = 0; i < WARMUP; i++) decodeJpegLuma(bytes);
    const times: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const t0 = performance.now();
      decodeJpegLuma(bytes);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    const p90 = times[Math.min(times.length - 1, Math.ceil(times.length * 0.9) - 1)];
    console.log(
      `${label.padEnd(40)} ${(bytes.length / 1024).toFixed(0).padStart(4)} KiB  ` +
        `median ${median.toFixed(2)} ms  p90 ${p90.toFixed(2)} ms  (${ITERATIONS} decodes)`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
