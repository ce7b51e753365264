/**
 * Built-ins against the code they replaced (issue 10, item 10), on real 1280×720 Chromium frames:
 * PNG deflate/inflate (fflate vs node:zlib), base64 (btoa/atob loops vs Uint8Array.toBase64/fromBase64)
 * and CRC32 (a table loop vs node:zlib crc32). The "before" implementations are copied here so the
 * comparison survives the switch. Prints medians; it never asserts timings.
 *
 *   deno run --frozen -A bench/builtins.ts [--runs 30]
 */
import { crc32 as zlibCrc32, inflateSync } from "node:zlib";
import { decode as decodePngForBench } from "fast-png";
import { unzlibSync, zlibSync } from "fflate";
import type { RgbaImage } from "../src/vision/image.ts";
import { encodePng } from "../src/vision/png.ts";
import { withPngScanlines } from "../src/vision/png_rows.ts";
import { CHROME_ARGS, CHROMIUM } from "./lib/chromium.ts";
import { dec, formatTable, int } from "./lib/table.ts";

const FIXTURES = ["heavy", "animation", "form", "index"];
const WIDTH = 1280;
const HEIGHT = 720;

function parseRuns(args: string[]): number {
  const i = args.indexOf("--runs");
  const runs = i >= 0 ? Number(args[i + 1]) : 30;
  if (!Number.isInteger(runs) || runs < 5) throw new Error("--runs must be an integer ≥ 5");
  return runs;
}

function median(fn: () => unknown, runs: number): number {
  for (let i = 0; i < 3; i++) fn(); // warm the JIT
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

// --- the implementations before the switch ----------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function tableCrc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function loopEncodeBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

function loopDecodeBase64(data: string): Uint8Array {
  const bin = atob(data);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** encodePng as it was: WASM filtering, fflate zlib at level 3, table CRCs. */
function encodePngBefore(img: RgbaImage): Uint8Array {
  return withPngScanlines(img, "up", (scanlines, channels) => {
    const idat = zlibSync(scanlines, { level: 3 });
    const ihdr = new Uint8Array(13);
    const v = new DataView(ihdr.buffer);
    v.setUint32(0, img.width);
    v.setUint32(4, img.height);
    ihdr[8] = 8;
    ihdr[9] = channels === 4 ? 6 : 2;
    const parts = [new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10])];
    for (const [type, data] of [["IHDR", ihdr], ["IDAT", idat], ["IEND", new Uint8Array(0)]] as const) {
      const chunk = new Uint8Array(12 + data.length);
      const cv = new DataView(chunk.buffer);
      cv.setUint32(0, data.length);
      for (let i = 0; i < 4; i++) chunk[4 + i] = type.charCodeAt(i);
      chunk.set(data, 8);
      cv.setUint32(8 + data.length, tableCrc32(chunk.subarray(4, 8 + data.length)));
      parts.push(chunk);
    }
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  });
}

// --- real frames -------------------------------------------------------------------------------

/** Screenshots each fixture at 1280×720 with headless Chromium and decodes them to RGBA. */
async function realFrames(): Promise<{ name: string; img: RgbaImage }[]> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-bench-builtins-" });
  try {
    const frames: { name: string; img: RgbaImage }[] = [];
    for (const name of FIXTURES) {
      const out = `${dir}/${name}.png`;
      const url = new URL(`../fixtures/site/${name}.html`, import.meta.url).href;
      const { code } = await new Deno.Command(CHROMIUM, {
        args: [
          ...CHROME_ARGS,
          "--headless",
          "--hide-scrollbars",
          `--user-data-dir=${dir}/profile`,
          `--window-size=${WIDTH},${HEIGHT}`,
          `--screenshot=${out}`,
          url,
        ],
        stdout: "null",
        stderr: "null",
      }).output();
      if (code !== 0) throw new Error(`chromium --screenshot exited ${code} for ${name}`);
      const png = decodePngForBench(await Deno.readFile(out));
      const data = new Uint8Array(png.width * png.height * 4);
      for (let i = 0, j = 0; i < data.length; i += 4, j += png.channels) {
        data[i] = png.data[j];
        data[i + 1] = png.data[j + 1];
        data[i + 2] = png.data[j + 2];
        data[i + 3] = png.channels === 4 ? png.data[j + 3] : 255;
      }
      frames.push({ name, img: { width: png.width, height: png.height, data } });
    }
    return frames;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

// --- parts -------------------------------------------------------------------------------------

function pngRows(frames: { name: string; img: RgbaImage }[], runs: number): string[][] {
  const rows = [["PNG 1280×720 (median over frames)", "bytes", "encode ms", "inflate ms"]];
  type Way = { label: string; encode: (img: RgbaImage) => Uint8Array; inflate: (z: Uint8Array) => unknown };
  const ways: Way[] = [
    { label: "before: fflate level 3", encode: encodePngBefore, inflate: (z) => unzlibSync(z) },
    ...([1, 3, 6] as const).map((level): Way => ({
      label: `node:zlib level ${level}${level === 6 ? " (encodePng default)" : ""}`,
      encode: (img) => encodePng(img, { level }),
      inflate: (z) => inflateSync(z),
    })),
    ...(["paeth", "adaptive"] as const).map((filter): Way => ({
      label: `node:zlib level 6, filter ${filter}`,
      encode: (img) => encodePng(img, { filter }),
      inflate: (z) => inflateSync(z),
    })),
  ];
  for (const way of ways) {
    const bytes: number[] = [];
    const enc: number[] = [];
    const inf: number[] = [];
    for (const { img } of frames) {
      const png = way.encode(img);
      const idat = idatOf(png);
      bytes.push(png.length);
      enc.push(median(() => way.encode(img), runs));
      inf.push(median(() => way.inflate(idat), runs));
    }
    rows.push([way.label, int(mid(bytes)), dec(mid(enc), 1), dec(mid(inf), 1)]);
  }
  return rows;
}

/** The single IDAT chunk's zlib stream of a PNG encodePng made. */
function idatOf(png: Uint8Array): Uint8Array {
  const v = new DataView(png.buffer, png.byteOffset, png.byteLength);
  for (let at = 8; at + 12 <= png.length; at += 12 + v.getUint32(at)) {
    if (String.fromCharCode(...png.subarray(at + 4, at + 8)) === "IDAT") {
      return png.subarray(at + 8, at + 8 + v.getUint32(at));
    }
  }
  throw new Error("no IDAT");
}

function mid(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function smallPngRows(runs: number): string[][] {
  // A label-sized image: where per-call overhead, not throughput, decides.
  const img: RgbaImage = { width: 96, height: 24, data: new Uint8Array(96 * 24 * 4).fill(200) };
  return [
    ["PNG 96×24", "bytes", "encode ms", "inflate ms"],
    [
      "before: fflate level 3",
      int(encodePngBefore(img).length),
      dec(median(() => encodePngBefore(img), runs), 3),
      dec(median(() => unzlibSync(idatOf(encodePngBefore(img))), runs), 3),
    ],
    [
      "node:zlib level 6",
      int(encodePng(img).length),
      dec(median(() => encodePng(img), runs), 3),
      dec(median(() => inflateSync(idatOf(encodePng(img))), runs), 3),
    ],
  ];
}

function base64AndCrcRows(sample: Uint8Array, runs: number): string[][] {
  const b64 = sample.toBase64();
  if (loopEncodeBase64(sample) !== b64) throw new Error("base64 encoders disagree");
  if (tableCrc32(sample) !== zlibCrc32(sample)) throw new Error("CRC32 implementations disagree");
  const segment = new Uint8Array(8 << 20);
  for (let at = 0; at < segment.length; at += sample.length) {
    segment.set(sample.subarray(0, segment.length - at), at);
  }
  const row = (label: string, before: () => unknown, after: () => unknown, d = 2) => {
    const b = median(before, runs);
    const a = median(after, runs);
    return [label, dec(b, d), dec(a, d), `${dec(b / a, 0)}×`];
  };
  return [
    ["operation", "before ms", "built-in ms", "speedup"],
    row(
      `base64 encode ${int(sample.length / 1000)} KB`,
      () => loopEncodeBase64(sample),
      () => sample.toBase64(),
    ),
    row(
      `base64 decode ${int(sample.length / 1000)} KB`,
      () => loopDecodeBase64(b64),
      () => Uint8Array.fromBase64(b64),
    ),
    row(`CRC32 ${int(sample.length / 1000)} KB frame`, () => tableCrc32(sample), () => zlibCrc32(sample)),
    row("CRC32 8 MiB segment rescan", () => tableCrc32(segment), () => zlibCrc32(segment)),
  ];
}

if (import.meta.main) {
  const runs = parseRuns(Deno.args);
  const frames = await realFrames();
  console.log(
    `Real frames: ${frames.map((f) => `${f.name}.html`).join(", ")} at ${WIDTH}×${HEIGHT}; ${runs} runs each`,
  );
  console.log(formatTable(pngRows(frames, runs)));
  console.log();
  console.log(formatTable(smallPngRows(runs)));
  console.log();
  // ~300 KB of real PNG bytes (incompressible, like a screencast JPEG).
  const pngs = frames.map((f) => encodePngBefore(f.img));
  const sample = new Uint8Array(300_000);
  for (let at = 0, i = 0; at < sample.length; i++) {
    const p = pngs[i % pngs.length].subarray(0, sample.length - at);
    sample.set(p, at);
    at += p.length;
  }
  console.log(formatTable(base64AndCrcRows(sample, runs)));
}
