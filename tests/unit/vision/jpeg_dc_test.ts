import { join } from "node:path";
import { assert, assertEquals } from "../../assert.ts";
import {
  decodeJpegLuma,
  JpegDecodeError,
  JpegUnsupportedError,
  type LumaImage,
} from "../../../src/vision/jpeg_dc.ts";

// ---- ffmpeg-made JPEGs, checked against ffmpeg's own full decode -------------------------------------------

async function ffmpeg(args: string[]): Promise<Uint8Array> {
  const out = await new Deno.Command("ffmpeg", {
    args: ["-hide_banner", "-loglevel", "error", "-y", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`ffmpeg ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return out.stdout;
}

/** Encodes one frame of a lavfi source to a JPEG and returns its bytes. */
async function encode(dir: string, source: string, args: string[] = []): Promise<Uint8Array> {
  const path = join(dir, `f${crypto.randomUUID()}.jpg`);
  await ffmpeg(["-f", "lavfi", "-i", source, "-frames:v", "1", ...args, path]);
  return await Deno.readFile(path);
}

/** ffmpeg's full decode of `jpeg`: the Y plane (the first plane of its native, planar output). */
async function referenceLuma(
  dir: string,
  jpeg: Uint8Array,
  width: number,
  height: number,
): Promise<Uint8Array> {
  const path = join(dir, `r${crypto.randomUUID()}.jpg`);
  await Deno.writeFile(path, jpeg);
  const raw = await ffmpeg(["-xerror", "-err_detect", "explode", "-i", path, "-f", "rawvideo", "-"]);
  assert(raw.length >= width * height, `ffmpeg decoded only ${raw.length} bytes`);
  return raw.subarray(0, width * height);
}

/** Largest and mean |error| of the decoded block means against the reference, over whole 8×8 blocks. */
function compareToReference(img: LumaImage, y: Uint8Array): { max: number; mean: number } {
  let max = 0;
  let sum = 0;
  let count = 0;
  for (let by = 0; by < Math.floor(img.height / 8); by++) {
    for (let bx = 0; bx < Math.floor(img.width / 8); bx++) {
      let s = 0;
      for (let j = 0; j < 8; j++) {
        for (let i = 0; i < 8; i++) s += y[(by * 8 + j) * img.width + bx * 8 + i];
      }
      const err = Math.abs(s / 64 - img.luma[by * img.blocksWide + bx]);
      max = Math.max(max, err);
      sum += err;
      count++;
    }
  }
  return { max, mean: sum / count };
}

function hasMarker(bytes: Uint8Array, marker: number): boolean {
  for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === 0xff && bytes[i + 1] === marker) return true;
  return false;
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-jpeg-dc-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("a flat mid-grey frame decodes to 128 in every block", () =>
  withDir(async (dir) => {
    const img = decodeJpegLuma(await encode(dir, "color=c=0x808080:s=64x48", ["-q:v", "2"]));
    assertEquals([img.width, img.height, img.blocksWide, img.blocksHigh, img.luma.length], [
      64,
      48,
      8,
      6,
      48,
    ]);
    for (const v of img.luma) assert(Math.abs(v - 128) <= 2, `block mean ${v}, expected 128±2`);
  }));

Deno.test("flat colours give their BT.601 luma (black, white, 0x336699)", () =>
  withDir(async (dir) => {
    for (const [colour, expected] of [["black", 0], ["white", 255], ["0x336699", 93]] as const) {
      const img = decodeJpegLuma(await encode(dir, `color=c=${colour}:s=32x32`, ["-q:v", "3"]));
      for (const v of img.luma) {
        assert(Math.abs(v - expected) <= 2, `${colour}: block mean ${v}, expected ${expected}`);
      }
    }
  }));

Deno.test("a white square on black is bright exactly in the blocks it covers", () =>
  withDir(async (dir) => {
    const img = decodeJpegLuma(
      await encode(dir, "color=c=black:s=64x48,format=rgb24,drawbox=x=16:y=8:w=16:h=16:color=white:t=fill", [
        "-q:v",
        "4",
      ]),
    );
    for (let by = 0; by < 6; by++) {
      for (let bx = 0; bx < 8; bx++) {
        const v = img.luma[by * 8 + bx];
        const inside = bx >= 2 && bx <= 3 && by >= 1 && by <= 2;
        assert(inside ? v >= 252 : v <= 3, `block ${bx},${by} = ${v} (${inside ? "inside" : "outside"})`);
      }
    }
  }));

Deno.test("testsrc2 block means match ffmpeg's full decode across subsampling, tables and quality", () =>
  withDir(async (dir) => {
    const variants: Array<[string, string[]]> = [
      ["4:2:0", ["-pix_fmt", "yuvj420p", "-q:v", "5"]],
      ["4:2:2", ["-pix_fmt", "yuvj422p", "-q:v", "5"]],
      ["4:4:4", ["-pix_fmt", "yuvj444p", "-q:v", "5"]],
      ["standard Huffman tables", ["-pix_fmt", "yuvj420p", "-q:v", "2", "-huffman", "default"]],
      ["coarse quantiser", ["-pix_fmt", "yuvj420p", "-q:v", "31"]],
    ];
    for (const [label, args] of variants) {
      const jpeg = await encode(dir, "testsrc2=s=320x240", args);
      const img = decodeJpegLuma(jpeg);
      assertEquals([img.width, img.height, img.blocksWide, img.blocksHigh], [320, 240, 40, 30], label);
      const { max, mean } = compareToReference(img, await referenceLuma(dir, jpeg, 320, 240));
      // DC is the exact block mean before IDCT rounding and clamping to 0–255; only clamping moves it further.
      assert(max <= 2, `${label}: largest block error ${max}`);
      assert(mean <= 0.1, `${label}: mean block error ${mean}`);
    }
  }));

Deno.test("restart intervals (DRI/RSTn from sliced encoding) decode like the unsliced frame", () =>
  withDir(async (dir) => {
    const sliced = await encode(dir, "testsrc2=s=320x240", [
      "-q:v",
      "5",
      "-threads",
      "4",
      "-thread_type",
      "slice",
    ]);
    assert(hasMarker(sliced, 0xdd) && hasMarker(sliced, 0xd0), "ffmpeg no longer wrote DRI/RST0 for slices");
    const img = decodeJpegLuma(sliced);
    const { max, mean } = compareToReference(img, await referenceLuma(dir, sliced, 320, 240));
    assert(max <= 2 && mean <= 0.1, `block errors max ${max}, mean ${mean}`);
  }));

Deno.test("non-multiple-of-8 sizes: partial edge blocks carry the visible colour", () =>
  withDir(async (dir) => {
    for (const pixFmt of ["yuvj420p", "yuvj422p", "yuvj444p"]) {
      // White exactly over the visible part of the bottom-right block (x 64–69, y 40–44).
      const img = decodeJpegLuma(
        await encode(dir, "color=c=black:s=70x45,format=rgb24,drawbox=x=64:y=40:w=6:h=5:color=white:t=fill", [
          "-pix_fmt",
          pixFmt,
          "-q:v",
          "3",
        ]),
      );
      assertEquals([img.width, img.height, img.blocksWide, img.blocksHigh], [70, 45, 9, 6], pixFmt);
      for (let i = 0; i < img.luma.length; i++) {
        const v = img.luma[i];
        const corner = i === img.luma.length - 1;
        assert(corner ? v >= 252 : v <= 3, `${pixFmt}: block ${i} = ${v}`);
      }
    }
  }));

Deno.test("odd-sized testsrc2 matches ffmpeg on every whole block", () =>
  withDir(async (dir) => {
    for (const pixFmt of ["yuvj420p", "yuvj444p"]) {
      const jpeg = await encode(dir, "testsrc2=s=70x45,format=rgb24", ["-pix_fmt", pixFmt, "-q:v", "3"]);
      const img = decodeJpegLuma(jpeg);
      assertEquals([img.blocksWide, img.blocksHigh, img.luma.length], [9, 6, 54], pixFmt);
      const { max } = compareToReference(img, await referenceLuma(dir, jpeg, 70, 45));
      assert(max <= 2, `${pixFmt}: largest block error ${max}`);
    }
  }));

Deno.test("truncated data throws JpegDecodeError, wherever it is cut", () =>
  withDir(async (dir) => {
    const jpeg = await encode(dir, "testsrc2=s=320x240", ["-q:v", "5"]);
    for (const cut of [3, 40, 300, Math.floor(jpeg.length / 2), jpeg.length - 40]) {
      let err: unknown;
      try {
        decodeJpegLuma(jpeg.subarray(0, cut));
      } catch (e) {
        err = e;
      }
      assert(err instanceof JpegDecodeError, `cut at ${cut}: expected JpegDecodeError, got ${String(err)}`);
    }
    // Only the EOI marker missing: the luma is all there, so it decodes.
    assertEquals(decodeJpegLuma(jpeg.subarray(0, jpeg.length - 2)).luma, decodeJpegLuma(jpeg).luma);
  }));

Deno.test("not a JPEG at all throws JpegDecodeError", () => {
  for (
    const bytes of [new Uint8Array(0), new TextEncoder().encode("GIF89a, not a jpeg"), new Uint8Array(100)]
  ) {
    expectError(bytes, JpegDecodeError, "");
  }
});

Deno.test("mutated JPEGs either decode or throw a Jpeg error, never anything else", () =>
  withDir(async (dir) => {
    const sources = [
      await encode(dir, "testsrc2=s=64x48", ["-q:v", "5"]),
      await encode(dir, "testsrc2=s=64x48", ["-q:v", "5", "-threads", "2", "-thread_type", "slice"]),
      handJpeg({ width: 40, height: 24, components: 1, mean: () => 100, restartInterval: 2, acNoise: 3 }),
    ];
    const rand = prng(7);
    let decoded = 0;
    let rejected = 0;
    for (const source of sources) {
      for (let round = 0; round < 300; round++) {
        const bytes = source.slice();
        const edits = 1 + Math.floor(rand() * 4);
        for (let e = 0; e < edits; e++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
        const cut = rand() < 0.3 ? Math.floor(rand() * bytes.length) : bytes.length;
        try {
          const img = decodeJpegLuma(bytes.subarray(0, cut));
          assertEquals(img.luma.length, img.blocksWide * img.blocksHigh);
          decoded++;
        } catch (err) {
          assert(
            err instanceof JpegDecodeError || err instanceof JpegUnsupportedError,
            `round ${round}: unexpected ${err instanceof Error ? err.stack : String(err)}`,
          );
          rejected++;
        }
      }
    }
    assert(decoded > 0 && rejected > 0, `decoded ${decoded}, rejected ${rejected}`);
  }));

// ---- hand-assembled JPEGs: grayscale, exotic layouts, unsupported coding ------------------------------------

const STD_DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const STD_DC_VALS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
// ITU T.81 Annex K.3.3.2, luminance AC: its longest codes are 16 bits, so the slow lookup path runs too.
const STD_AC_BITS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d];
// deno-fmt-ignore
const STD_AC_VALS = [
  0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
  0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
  0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
  0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
  0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
  0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
  0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
  0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
  0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
  0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
  0xf9, 0xfa,
];

/** symbol → [code, length] for a canonical Huffman table (T.81 Annex C). */
function huffmanCodes(bits: number[], vals: number[]): Map<number, [number, number]> {
  const codes = new Map<number, [number, number]>();
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    for (let i = 0; i < bits[len - 1]; i++) codes.set(vals[k++], [code++, len]);
    code <<= 1;
  }
  return codes;
}
const DC_CODES = huffmanCodes(STD_DC_BITS, STD_DC_VALS);
const AC_CODES = huffmanCodes(STD_AC_BITS, STD_AC_VALS);

class BitWriter {
  readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;
  write(value: number, len: number): void {
    for (let i = len - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >> i) & 1);
      if (++this.n === 8) {
        this.bytes.push(this.acc);
        if (this.acc === 0xff) this.bytes.push(0); // byte stuffing
        this.acc = 0;
        this.n = 0;
      }
    }
  }
  /** Pads the last byte with 1 bits, as before a marker. */
  flush(): void {
    if (this.n > 0) this.write((1 << (8 - this.n)) - 1, 8 - this.n);
  }
}

function magnitude(v: number): [number, number] {
  const a = Math.abs(v);
  const s = a === 0 ? 0 : 32 - Math.clz32(a);
  return [s, v >= 0 ? v : v + (1 << s) - 1];
}

function writeSymbol(w: BitWriter, codes: Map<number, [number, number]>, sym: number): void {
  const c = codes.get(sym);
  if (!c) throw new Error(`no code for symbol ${sym}`);
  w.write(c[0], c[1]);
}

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface HandOptions {
  width: number;
  height: number;
  components: 1 | 3;
  /** Luma sampling factors; chroma is 1×1 unless chroma is given. */
  luma?: [number, number];
  chroma?: [number, number];
  /** Mean luminance of luma block (bx, by) of the luma component's block grid. */
  mean: (bx: number, by: number) => number;
  restartInterval?: number;
  /** Extra 0xFF fill bytes before each RSTn. */
  fill?: boolean;
  /** One scan per component instead of one interleaved scan. */
  separateScans?: boolean;
  sof?: number;
  precision?: number;
  /** Random luma AC coefficients up to this magnitude size (bits), to exercise skipping; 0 = DC only. */
  acNoise?: number;
  /** The same for chroma (defaults to acNoise); wide chroma noise cannot clamp, so luma stays comparable. */
  chromaNoise?: number;
  /** Adobe APP14 with transform 0 (RGB) instead of JFIF. */
  adobeRgb?: boolean;
  /** 16-bit quantization table entries (allowed with SOF1). */
  quant16?: boolean;
}

/**
 * A minimal baseline encoder for flat blocks: every luma block's DC is its mean; AC noise (which cannot move
 * the mean) is optional. DC quantiser 4, AC quantiser 1, standard luminance Huffman tables for all components.
 */
function handJpeg(o: HandOptions): Uint8Array {
  const out: number[] = [];
  const u16 = (v: number) => out.push(v >> 8, v & 255);
  const segment = (marker: number, body: number[]) => {
    out.push(0xff, marker);
    u16(body.length + 2);
    out.push(...body);
  };
  out.push(0xff, 0xd8);
  if (o.adobeRgb) segment(0xee, [0x41, 0x64, 0x6f, 0x62, 0x65, 0, 100, 0, 0, 0, 0, 0]);
  else segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  segment(0xfe, [...new TextEncoder().encode("hand-made test image")]);
  segment(0xe9, [0x74, 0x65, 0x73, 0x74, 0, 0xff, 0xd9, 0xff, 0xda]); // APP9 whose payload looks like markers
  if (o.quant16) segment(0xdb, [0x10, 0, 4, ...new Array<number>(63).fill(0).flatMap(() => [0, 1])]);
  else segment(0xdb, [0x00, 4, ...new Array<number>(63).fill(1)]);
  segment(0xc4, [0x00, ...STD_DC_BITS, ...STD_DC_VALS, 0x10, ...STD_AC_BITS, ...STD_AC_VALS]);

  const [lh, lv] = o.luma ?? [1, 1];
  const [ch, cv] = o.chroma ?? [1, 1];
  const comps = o.components === 1 ? [{ id: 1, h: 1, v: 1 }] : [
    { id: 1, h: lh, v: lv },
    { id: 2, h: ch, v: cv },
    { id: 3, h: ch, v: cv },
  ];
  const hMax = Math.max(...comps.map((c) => c.h));
  const vMax = Math.max(...comps.map((c) => c.v));
  const sof = [o.precision ?? 8, o.height >> 8, o.height & 255, o.width >> 8, o.width & 255, comps.length];
  for (const c of comps) sof.push(c.id, (c.h << 4) | c.v, 0);
  segment(o.sof ?? 0xc0, sof);
  if (o.restartInterval) segment(0xdd, [o.restartInterval >> 8, o.restartInterval & 255]);

  const lumaW = Math.ceil(Math.ceil((o.width * comps[0].h) / hMax) / 8);
  const lumaH = Math.ceil(Math.ceil((o.height * comps[0].v) / vMax) / 8);
  const rand = prng(7);

  const writeBlock = (w: BitWriter, pred: number[], ci: number, bx: number, by: number) => {
    const dc = ci === 0 ? 2 * (o.mean(Math.min(bx, lumaW - 1), Math.min(by, lumaH - 1)) - 128) : 0;
    const [s, bits] = magnitude(dc - pred[ci]);
    pred[ci] = dc;
    writeSymbol(w, DC_CODES, s);
    w.write(bits, s);
    const noise = ci === 0 ? o.acNoise ?? 0 : o.chromaNoise ?? o.acNoise ?? 0;
    let k = 1;
    while (noise > 0 && k < 64 && rand() < 0.8) {
      let run = Math.floor(rand() * 20); // > 15 exercises ZRL
      while (run > 15 && k + 16 < 64) {
        writeSymbol(w, AC_CODES, 0xf0);
        k += 16;
        run -= 16;
      }
      run = Math.min(run & 15, 63 - k);
      const size = 1 + Math.floor(rand() * noise);
      const v = (rand() < 0.5 ? -1 : 1) * ((1 << (size - 1)) + Math.floor(rand() * (1 << (size - 1))));
      const [s2, bits2] = magnitude(v);
      writeSymbol(w, AC_CODES, (run << 4) | s2);
      w.write(bits2, s2);
      k += run + 1;
    }
    if (k < 64) writeSymbol(w, AC_CODES, 0x00);
  };

  const writeScan = (scanComps: number[]) => {
    out.push(0xff, 0xda);
    u16(6 + 2 * scanComps.length);
    out.push(scanComps.length);
    for (const ci of scanComps) out.push(comps[ci].id, 0x00);
    out.push(0, 63, 0);
    const single = scanComps.length === 1;
    const c0 = comps[scanComps[0]];
    const mcusX = single
      ? Math.ceil(Math.ceil((o.width * c0.h) / hMax) / 8)
      : Math.ceil(o.width / (8 * hMax));
    const mcusY = single
      ? Math.ceil(Math.ceil((o.height * c0.v) / vMax) / 8)
      : Math.ceil(o.height / (8 * vMax));
    let w = new BitWriter();
    let pred = [0, 0, 0];
    for (let m = 0; m < mcusX * mcusY; m++) {
      if (o.restartInterval && m > 0 && m % o.restartInterval === 0) {
        w.flush();
        out.push(...w.bytes);
        if (o.fill) out.push(0xff, 0xff);
        out.push(0xff, 0xd0 + ((m / o.restartInterval - 1) & 7));
        w = new BitWriter();
        pred = [0, 0, 0];
      }
      const mx = m % mcusX;
      const my = Math.floor(m / mcusX);
      for (const ci of scanComps) {
        const c = single ? { h: 1, v: 1 } : comps[ci];
        for (let y = 0; y < c.v; y++) {
          for (let x = 0; x < c.h; x++) writeBlock(w, pred, ci, mx * c.h + x, my * c.v + y);
        }
      }
    }
    w.flush();
    out.push(...w.bytes);
  };
  if (o.separateScans) comps.forEach((_, ci) => writeScan([ci]));
  else writeScan(comps.map((_, ci) => ci));
  out.push(0xff, 0xd9);
  return new Uint8Array(out);
}

function expectError(
  bytes: Uint8Array,
  errorClass: typeof JpegDecodeError | typeof JpegUnsupportedError,
  includes: string,
): void {
  let err: unknown;
  try {
    decodeJpegLuma(bytes);
  } catch (e) {
    err = e;
  }
  assert(err instanceof errorClass, `expected ${errorClass.name}, got ${String(err)}`);
  assert(err.message.includes(includes), `${JSON.stringify(err.message)} does not mention ${includes}`);
}

/** A gradient that differs per block, so misplaced or shifted blocks show. */
const gradient = (bx: number, by: number) => 40 + ((bx * 7 + by * 13) % 170);
const COLOUR = { components: 3, mean: gradient, acNoise: 2, chromaNoise: 10 } as const;

function expectGrid(img: LumaImage, w: number, h: number, mean: (bx: number, by: number) => number): void {
  assertEquals([img.blocksWide, img.blocksHigh], [w, h]);
  const expected: number[] = [];
  for (let by = 0; by < h; by++) for (let bx = 0; bx < w; bx++) expected.push(mean(bx, by));
  assertEquals(Array.from(img.luma), expected);
}

Deno.test("hand-made JPEGs decode to their exact means, and ffmpeg's decode of them agrees", () =>
  withDir(async (dir) => {
    const cases: Array<[string, HandOptions]> = [
      ["gray", { width: 61, height: 37, components: 1, mean: gradient, acNoise: 2 }],
      ["gray, restart every MCU", {
        width: 40,
        height: 40,
        components: 1,
        mean: gradient,
        restartInterval: 1,
      }],
      [
        "gray, restart every 3 MCUs with fill bytes",
        { width: 72, height: 40, components: 1, mean: gradient, restartInterval: 3, fill: true, acNoise: 2 },
      ],
      [
        "4:2:0, restarts, wide chroma noise (16-bit codes, byte stuffing)",
        { ...COLOUR, width: 50, height: 34, luma: [2, 2], restartInterval: 2, fill: true },
      ],
      ["2×1 luma", { ...COLOUR, width: 45, height: 21, luma: [2, 1] }],
      ["1×2 luma", { ...COLOUR, width: 45, height: 21, luma: [1, 2] }],
      ["4×2 luma (10 blocks per MCU, the most allowed)", { ...COLOUR, width: 53, height: 17, luma: [4, 2] }],
      ["one scan per component", { ...COLOUR, width: 45, height: 30, luma: [2, 2], separateScans: true }],
      ["SOF1 with a 16-bit quantiser", { ...COLOUR, width: 30, height: 20, sof: 0xc1, quant16: true }],
    ];
    for (const [label, options] of cases) {
      const jpeg = handJpeg(options);
      if (options.chromaNoise) {
        assert(hasMarker(jpeg, 0x00), `${label}: expected the noise to need byte stuffing`);
      }
      const img = decodeJpegLuma(jpeg);
      assertEquals([img.width, img.height], [options.width, options.height], label);
      expectGrid(img, Math.ceil(options.width / 8), Math.ceil(options.height / 8), gradient);
      // Proves the test encoder right: ffmpeg's pixels average to the same block means.
      const { max } = compareToReference(img, await referenceLuma(dir, jpeg, options.width, options.height));
      assert(max <= 1, `${label}: largest block error against ffmpeg ${max}`);
    }
  }));

Deno.test("wide AC noise in luma (every magnitude size, ZRL runs) is skipped exactly", () => {
  const options: HandOptions = {
    width: 72,
    height: 40,
    components: 1,
    mean: gradient,
    restartInterval: 3,
    fill: true,
    acNoise: 10,
  };
  expectGrid(decodeJpegLuma(handJpeg(options)), 9, 5, gradient);
});

Deno.test("luma subsampled relative to chroma: each luma block fills the 8×8 cells it spans", () => {
  const img = decodeJpegLuma(
    handJpeg({
      width: 40,
      height: 24,
      components: 3,
      luma: [1, 1],
      chroma: [2, 2],
      mean: gradient,
      acNoise: 2,
    }),
  );
  expectGrid(img, 5, 3, (bx, by) => gradient(Math.floor(bx / 2), Math.floor(by / 2)));
});

Deno.test("progressive, arithmetic, 12-bit, CMYK and RGB JPEGs throw JpegUnsupportedError", () => {
  const base = { width: 16, height: 16, mean: () => 128 } as const;
  expectError(handJpeg({ ...base, components: 3, sof: 0xc2 }), JpegUnsupportedError, "progressive");
  expectError(handJpeg({ ...base, components: 1, sof: 0xc9 }), JpegUnsupportedError, "arithmetic");
  expectError(handJpeg({ ...base, components: 1, sof: 0xc3 }), JpegUnsupportedError, "lossless");
  expectError(handJpeg({ ...base, components: 1, sof: 0xc1, precision: 12 }), JpegUnsupportedError, "12-bit");
  expectError(handJpeg({ ...base, components: 3, adobeRgb: true }), JpegUnsupportedError, "RGB");
  // SOI, SOF0 with four components (CMYK), EOI.
  const cmyk = [
    0xff,
    0xd8,
    0xff,
    0xc0,
    0,
    20,
    8,
    0,
    16,
    0,
    16,
    4,
    1,
    0x11,
    0,
    2,
    0x11,
    0,
    3,
    0x11,
    0,
    4,
    0x11,
    0,
  ];
  expectError(new Uint8Array([...cmyk, 0xff, 0xd9]), JpegUnsupportedError, "4-component");
});

Deno.test("structural corruption throws JpegDecodeError with the reason", () => {
  const good = handJpeg({ width: 32, height: 16, components: 1, mean: gradient, restartInterval: 1 });
  expectGrid(decodeJpegLuma(good), 4, 2, gradient);

  // RST0 rewritten to RST5: the restart sequence is broken.
  const badRst = good.slice();
  const rst0 = badRst.findIndex((b, i) => b === 0xff && badRst[i + 1] === 0xd0);
  badRst[rst0 + 1] = 0xd5;
  expectError(badRst, JpegDecodeError, "RST5");

  // DRI says 1, but the restart markers are gone: segments run together.
  const noRst: number[] = [];
  for (let i = 0; i < good.length; i++) {
    if (good[i] === 0xff && good[i + 1] >= 0xd0 && good[i + 1] <= 0xd7) i++;
    else noRst.push(good[i]);
  }
  expectError(new Uint8Array(noRst), JpegDecodeError, "");

  // No Huffman tables at all.
  const dht = good.findIndex((b, i) => b === 0xff && good[i + 1] === 0xc4);
  const dhtLen = (good[dht + 2] << 8) | good[dht + 3];
  expectError(
    new Uint8Array([...good.subarray(0, dht), ...good.subarray(dht + 2 + dhtLen)]),
    JpegDecodeError,
    "undefined Huffman table",
  );

  // A segment length that runs past the end.
  expectError(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0x40, 0x00, 1, 2, 3]), JpegDecodeError, "truncated");
  // A frame with no scan.
  expectError(new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), JpegDecodeError, "no frame");
});
