import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { decodeJpeg, JpegDecodeError, JpegUnsupportedError } from "../../../src/vision/jpeg_decode.ts";
import {
  type BlockSize,
  blockSlots,
  dequantMultipliers,
  idct2,
  idct4,
  idct8,
  idctRect,
  ZIGZAG,
} from "../../../src/vision/jpeg_idct.ts";
import {
  boxDown,
  encode,
  encodeMany,
  ffmpegDecode,
  ffmpegDecodeMany,
  hasMarker,
  modelRgba,
  psnr,
  segmentBody,
  sourceRgba,
  withDir,
} from "./jpeg_reference.ts";
import { encodeTestJpeg, type TestJpegOptions } from "./jpeg_test_encoder.ts";

const SCALES = [1, 2, 4, 8] as const;

/** A smooth, saturated, deterministic colour field (lavfi's gradients source is random despite its seed). */
const SMOOTH = "format=rgb24,geq=r=128+100*sin(X/9)*cos(Y/7):g=128+100*sin((X+Y)/11):b=128+100*cos(X/13-Y/5)";
const fmtDb = (v: number) => (v === Infinity ? "∞" : v.toFixed(1));

/**
 * Decodes at every scale and measures: scale 1 against ffmpeg's RGBA (≥ minFull dB) and against ffmpeg's
 * planes through the model (≥ 40 dB); scales 2–8 against ffmpeg's RGBA box-downscaled (≥ 25 dB unless
 * minScaled / min8 say otherwise). Returns a report line and what fell short. ffmpeg's decode is `decoded`
 * (from a batch of them, one process for many images) or made here.
 */
async function checkAllScales(
  dir: string,
  label: string,
  jpeg: Uint8Array,
  opts: { width: number; height: number; minFull: number; minScaled?: number; min8?: number },
  decoded?: { rgba: Uint8Array; planes: Uint8Array },
): Promise<{ line: string; failures: string[] }> {
  const { width, height } = opts;
  const failures: string[] = [];
  const full = decodeJpeg(jpeg);
  assertEquals([full.width, full.height], [width, height], `${label}: size`);
  assertEquals(full.data.length, width * height * 4, `${label}: data length`);
  for (let i = 3; i < full.data.length; i += 4) {
    if (full.data[i] !== 255) throw new Error(`${label}: alpha ${full.data[i]} at pixel ${i >> 2}`);
  }
  const { rgba: reference, planes } = decoded ?? await ffmpegDecode(dir, jpeg);
  const p1 = psnr(full.data, reference);
  const pm = psnr(full.data, modelRgba(jpeg, planes, width, height));
  if (pm < 40) {
    failures.push(`${label}: scale 1 ${pm.toFixed(2)} dB against ffmpeg's planes through the model`);
  }
  if (p1 < opts.minFull) failures.push(`${label}: scale 1 ${p1.toFixed(2)} dB against ffmpeg`);
  const parts = [`1: ${fmtDb(p1)} (model ${fmtDb(pm)})`];
  for (const scale of SCALES.slice(1)) {
    const img = decodeJpeg(jpeg, { scale });
    assertEquals(
      [img.width, img.height],
      [Math.ceil(width / scale), Math.ceil(height / scale)],
      `${label}: size at 1/${scale}`,
    );
    const p = psnr(img.data, boxDown(reference, width, height, scale));
    if (p < (scale === 8 ? opts.min8 ?? 25 : opts.minScaled ?? 25)) {
      failures.push(`${label}: scale ${scale} ${p.toFixed(2)} dB against ffmpeg box-downscaled`);
    }
    parts.push(`${scale}: ${fmtDb(p)}`);
  }
  return { line: `${label.padEnd(34)} ${parts.join("  ")}`, failures };
}

// ---- ffmpeg-encoded frames ------------------------------------------------------------------------------

Deno.test("ffmpeg JPEGs match ffmpeg's decode at every scale (sizes × subsampling × tables × restarts)", () =>
  withDir(async (dir) => {
    const lines: string[] = [];
    const failures: string[] = [];
    // testsrc2 is saturated colour bars with hard edges. At 77×53 nearly every pixel is near one, where a
    // triangle chroma filter and swscale's bicubic (with its own chroma siting) disagree by design: there
    // the model comparison carries the check and ffmpeg's own conversion only has to agree roughly. And at
    // 1/8 every component is DC-only by design, so subsampled chroma is one mean per 16×16: colour detail
    // finer than that (hard saturated edges, the smooth field's ~30 px waves) cannot match a box average
    // of full-resolution pixels. Real screencast frames score 33–40 dB there.
    // [source, width, height, min dB at 1/1, at 1/2 and 1/4, at 1/8 when chroma is subsampled]
    const sources: Array<[string, number, number, number, number, number]> = [
      [`color=s=77x53,${SMOOTH}`, 77, 53, 30, 25, 16],
      [`color=s=101x75,${SMOOTH}`, 101, 75, 30, 25, 16],
      ["testsrc2=s=77x53", 77, 53, 24, 23, 15],
      ["testsrc2=s=320x240", 320, 240, 30, 25, 18],
      ["testsrc2=s=1280x633", 1280, 633, 30, 25, 22],
    ];
    const variants: Array<[string, string[]]> = [
      ["", ["-q:v", "5"]],
      [" std tables", ["-q:v", "8", "-huffman", "default"]],
      [" restarts", ["-q:v", "5", "-threads", "4", "-thread_type", "slice"]],
    ];
    for (const [source, width, height, minFull, minScaled, minSub8] of sources) {
      // Every variant at two sizes; once per layout elsewhere, which keeps the test quick.
      const runs = ["yuvj420p", "yuvj422p", "yuvj444p"].flatMap((pixFmt) =>
        variants.filter(([name]) => name === "" || width === 77 || width === 320)
          .map(([name, args]) => ({ pixFmt, name, args: ["-pix_fmt", pixFmt, ...args] }))
      );
      // One ffmpeg run encodes every run of a source and one decodes them all (the same bytes as a run
      // each, without a process start per image).
      const jpegs = await encodeMany(dir, `${source},format=rgb24`, runs.map((r) => r.args));
      const decoded = await ffmpegDecodeMany(dir, jpegs);
      for (const [i, { pixFmt, name }] of runs.entries()) {
        const jpeg = jpegs[i];
        if (name === " restarts" && height >= 64) {
          assert(
            hasMarker(jpeg, 0xdd) && hasMarker(jpeg, 0xd0),
            "ffmpeg no longer writes DRI/RSTn for slices",
          );
        }
        const label = `${source.split(",")[0].replace("color", "smooth")} ${pixFmt}${name}`;
        const min8 = pixFmt === "yuvj444p" ? 25 : minSub8;
        const r = await checkAllScales(
          dir,
          label,
          jpeg,
          { width, height, minFull, minScaled, min8 },
          decoded[i],
        );
        lines.push(r.line);
        failures.push(...r.failures);
      }
    }
    // ffmpeg's default conversion, for the record (nearest chroma, coarse rounding).
    const jpeg = await encode(dir, "testsrc2=s=320x240,format=rgb24", ["-pix_fmt", "yuvj420p", "-q:v", "5"]);
    const plain = psnr(decodeJpeg(jpeg).data, (await ffmpegDecode(dir, jpeg, false)).rgba);
    if (plain < 28) failures.push(`against ffmpeg's default conversion: ${plain.toFixed(2)} dB`);
    lines.push(`testsrc2=s=320x240 yuvj420p, ffmpeg default flags  1: ${fmtDb(plain)}`);
    console.log(`PSNR dB per scale\n${lines.join("\n")}`);
    assert(failures.length === 0, failures.join("\n"));
  }));

Deno.test("flat colours decode to their RGB at every scale (grey, black, white, 0x336699)", () =>
  withDir(async (dir) => {
    const colours: Array<[string, number[]]> = [
      ["0x808080", [128, 128, 128]],
      ["black", [0, 0, 0]],
      ["white", [255, 255, 255]],
      ["0x336699", [0x33, 0x66, 0x99]],
    ];
    for (const [colour, rgb] of colours) {
      const jpeg = await encode(dir, `color=c=${colour}:s=48x32,format=rgb24`, [
        "-pix_fmt",
        "yuvj420p",
        "-q:v",
        "2",
      ]);
      for (const scale of SCALES) {
        const { data } = decodeJpeg(jpeg, { scale });
        for (let i = 0; i < data.length; i += 4) {
          for (let c = 0; c < 3; c++) {
            const v = data[i + c];
            if (Math.abs(v - rgb[c]) > 3) {
              throw new Error(`${colour} at 1/${scale}: pixel ${i >> 2} channel ${c} = ${v}`);
            }
          }
        }
      }
    }
  }));

// ---- layouts only the test encoder writes -----------------------------------------------------------------

Deno.test("grey, 4:4:0, 4:1:1, one scan per component, restarts, Adobe RGB and SOF1 match ffmpeg", () =>
  withDir(async (dir) => {
    const width = 77;
    const height = 53;
    // A blur keeps chroma edges off the 2×2 grid, where chroma filters would disagree most.
    const sharp = await sourceRgba(`testsrc2=s=${width}x${height},format=rgb24`);
    const soft = await sourceRgba(`testsrc2=s=${width}x${height},format=rgb24,gblur=sigma=2`);
    // [label, layout, source, min dB at 1/1 against ffmpeg, min dB at 1/8]. ffmpeg converts 4:1:1 with its
    // own chroma positions (a pixel off from replication), so there the model carries the check and ffmpeg
    // only has to agree roughly at every scale; 1/8 of a subsampled layout is DC-only chroma (see above).
    const cases: Array<[string, Partial<TestJpegOptions>, Uint8Array, number, number]> = [
      ["grey", { color: "gray" }, sharp, 40, 25],
      ["grey, 2×2 sampling declared", { color: "gray", sampling: [[2, 2]] }, sharp, 40, 25],
      ["grey, restart every 5", { color: "gray", restartInterval: 5 }, sharp, 40, 25],
      ["4:4:4, restart every MCU", { color: "ycc", restartInterval: 1 }, sharp, 40, 25],
      ["4:4:0", { color: "ycc", sampling: [[1, 2], [1, 1], [1, 1]] }, soft, 30, 20],
      [
        "4:2:0, one scan per component",
        {
          color: "ycc",
          sampling: [[2, 2], [1, 1], [1, 1]],
          separateScans: true,
        },
        soft,
        30,
        15,
      ],
      [
        "4:2:2, separate scans, restarts",
        {
          color: "ycc",
          sampling: [[2, 1], [1, 1], [1, 1]],
          separateScans: true,
          restartInterval: 7,
        },
        soft,
        30,
        15,
      ],
      ["4:1:1", { color: "ycc", sampling: [[4, 1], [1, 1], [1, 1]] }, soft, 20, 15],
      ["Adobe RGB", { color: "rgb" }, sharp, 40, 25],
      [
        "SOF1, 16-bit tables, q90",
        {
          color: "ycc",
          sampling: [[2, 2], [1, 1], [1, 1]],
          sof: 0xc1,
          quality: 90,
        },
        soft,
        30,
        15,
      ],
    ];
    const lines: string[] = [];
    const failures: string[] = [];
    const jpegs = cases.map(([, options, rgba]) =>
      encodeTestJpeg({ width, height, rgba, color: "ycc", ...options })
    );
    const decoded = await ffmpegDecodeMany(dir, jpegs);
    for (const [i, [label, , , minFull, min8]] of cases.entries()) {
      const minScaled = label === "4:1:1" ? 22 : 25;
      const r = await checkAllScales(
        dir,
        label,
        jpegs[i],
        { width, height, minFull, minScaled, min8 },
        decoded[i],
      );
      lines.push(r.line);
      failures.push(...r.failures);
    }
    console.log(`PSNR dB per scale\n${lines.join("\n")}`);
    assert(failures.length === 0, failures.join("\n"));
  }));

Deno.test("luma subsampled against chroma (Y 1×1, chroma 2×2) decodes at the frame's size", () => {
  const width = 20;
  const height = 12;
  const rgba = new Uint8Array(width * height * 4);
  for (let i = 0; i < rgba.length; i += 4) rgba.set([0x33, 0x66, 0x99, 255], i);
  const jpeg = encodeTestJpeg({ width, height, rgba, color: "ycc", sampling: [[1, 1], [2, 2], [2, 2]] });
  for (const scale of SCALES) {
    const img = decodeJpeg(jpeg, { scale });
    assertEquals([img.width, img.height], [Math.ceil(width / scale), Math.ceil(height / scale)]);
    for (let i = 0; i < img.data.length; i += 4) {
      const d = Math.max(
        Math.abs(img.data[i] - 0x33),
        Math.abs(img.data[i + 1] - 0x66),
        Math.abs(img.data[i + 2] - 0x99),
      );
      assert(d <= 3, `1/${scale}: pixel ${i >> 2} off by ${d}`);
    }
  }
});

// ---- the transforms on their own --------------------------------------------------------------------------

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

Deno.test("reduced IDCTs equal the box average of the full IDCT of the frequencies they keep", () => {
  const rand = prng(3);
  const ones = new Uint16Array(64).fill(1);
  const shapes: Array<[BlockSize, BlockSize]> = [[8, 8], [4, 4], [2, 2], [8, 4], [4, 8], [4, 2], [2, 4], [
    8,
    2,
  ]];
  for (let round = 0; round < 40; round++) {
    const coefs = new Float64Array(64); // zigzag order
    for (let k = 0; k < 64; k++) {
      coefs[k] = rand() < 0.5 ? 0 : Math.round((rand() - 0.5) * (k === 0 ? 600 : 120));
    }
    for (const [nh, nv] of shapes) {
      // Exact float IDCT of the low nv×nh frequencies, box-averaged onto the nh×nv grid.
      const sx = 8 / nh;
      const sy = 8 / nv;
      const expected = new Float64Array(nh * nv);
      for (let y = 0; y < 8; y++) {
        for (let x = 0; x < 8; x++) {
          let f = 0;
          for (let k = 0; k < 64; k++) {
            const v = ZIGZAG[k] >> 3;
            const u = ZIGZAG[k] & 7;
            if (u >= nh || v >= nv) continue;
            f += 0.25 * (u === 0 ? Math.SQRT1_2 : 1) * (v === 0 ? Math.SQRT1_2 : 1) * coefs[k] *
              Math.cos(((2 * x + 1) * u * Math.PI) / 16) * Math.cos(((2 * y + 1) * v * Math.PI) / 16);
          }
          expected[Math.floor(y / sy) * nh + Math.floor(x / sx)] += (f + 128) / (sx * sy);
        }
      }
      const mult = dequantMultipliers(ones, nh, nv);
      const slots = blockSlots(nh, nv);
      const blk = new Float64Array(65);
      for (let k = 0; k < 64; k++) blk[slots[k]] += coefs[k] * mult[k];
      blk[0] += 128;
      blk[nh * nv] = 0;
      const out = new Uint8ClampedArray(nh * nv);
      const ws = new Float64Array(64);
      if (nh !== nv) idctRect(blk, ws, out, 0, nh, nh, nv);
      else if (nh === 8) idct8(blk, ws, out, 0, 8);
      else if (nh === 4) idct4(blk, ws, out, 0, 4);
      else idct2(blk, out, 0, 2);
      for (let i = 0; i < nh * nv; i++) {
        const e = Math.min(255, Math.max(0, expected[i]));
        assert(
          Math.abs(out[i] - e) <= 0.5 + 1e-6,
          `${nh}×${nv} round ${round}: pixel ${i} = ${out[i]}, expected ${e}`,
        );
      }
    }
  }
});

// ---- options, unsupported coding, corrupt data ------------------------------------------------------------

Deno.test("`into` receives the pixels, at any alignment; a short buffer and a bad scale are refused", () =>
  withDir(async (dir) => {
    const jpeg = await encode(dir, "testsrc2=s=64x48", ["-pix_fmt", "yuvj420p", "-q:v", "5"]);
    const fresh = decodeJpeg(jpeg, { scale: 2 });
    const buffer = new Uint8Array(32 * 24 * 4 + 100).fill(7);
    const into = decodeJpeg(jpeg, { scale: 2, into: buffer });
    assert(into.data.buffer === buffer.buffer, "result is not a view of the given buffer");
    assertEquals(Array.from(into.data), Array.from(fresh.data));
    assertEquals(buffer[32 * 24 * 4], 7, "bytes past the image were touched");
    // An odd byte offset takes the byte-wise store path, for every colour mode.
    const rgba = await sourceRgba("testsrc2=s=40x24");
    const jpegs = [
      jpeg,
      encodeTestJpeg({ width: 40, height: 24, rgba, color: "gray" }),
      encodeTestJpeg({ width: 40, height: 24, rgba, color: "rgb" }),
      encodeTestJpeg({ width: 40, height: 24, rgba, color: "ycc", sampling: [[4, 1], [1, 1], [1, 1]] }),
    ];
    for (const bytes of jpegs) {
      const expected = decodeJpeg(bytes);
      const odd = new Uint8Array(expected.data.length + 1).subarray(1);
      assertEquals(Array.from(decodeJpeg(bytes, { into: odd }).data), Array.from(expected.data));
    }
    assert(
      assertThrows(() => decodeJpeg(jpeg, { into: new Uint8Array(100) }), "needs") instanceof RangeError,
    );
    const badScale = { scale: 3 } as unknown as { scale: 1 };
    assert(assertThrows(() => decodeJpeg(jpeg, badScale), "scale") instanceof RangeError);
  }));

function expectError(
  bytes: Uint8Array,
  cls: typeof JpegDecodeError,
  includes: string,
  scale: 1 | 8 = 1,
): void {
  const err = assertThrows(() => decodeJpeg(bytes, { scale }), includes);
  assert(err instanceof cls, `expected ${cls.name}, got ${err.name}: ${err.message}`);
}

Deno.test("progressive, arithmetic, lossless and 12-bit JPEGs throw JpegUnsupportedError", () =>
  withDir(async (dir) => {
    const jpeg = await encode(dir, "testsrc2=s=64x48", ["-pix_fmt", "yuvj420p", "-q:v", "5"]);
    const sof = segmentBody(jpeg, 0xc0) - 3;
    for (const [marker, name] of [[0xc2, "progressive"], [0xc9, "arithmetic"], [0xc3, "lossless"]] as const) {
      const patched = jpeg.slice();
      patched[sof] = marker;
      for (const scale of [1, 8] as const) expectError(patched, JpegUnsupportedError, name, scale);
    }
    const twelve = jpeg.slice();
    twelve[sof] = 0xc1;
    twelve[sof + 3] = 12;
    expectError(twelve, JpegUnsupportedError, "12-bit");
  }));

Deno.test("truncated, empty or foreign data throws JpegDecodeError; a missing EOI is accepted", () =>
  withDir(async (dir) => {
    const jpeg = await encode(dir, "testsrc2=s=160x120", ["-pix_fmt", "yuvj420p", "-q:v", "5"]);
    for (const cut of [1, 3, 40, 300, Math.floor(jpeg.length / 2), jpeg.length - 40]) {
      for (const scale of [1, 8] as const) expectError(jpeg.subarray(0, cut), JpegDecodeError, "", scale);
    }
    expectError(jpeg.subarray(0, Math.floor(jpeg.length / 2)), JpegDecodeError, "truncated");
    assertEquals(
      Array.from(decodeJpeg(jpeg.subarray(0, jpeg.length - 2)).data),
      Array.from(decodeJpeg(jpeg).data),
    );
    for (
      const bytes of [new Uint8Array(0), new TextEncoder().encode("GIF89a, not a jpeg"), new Uint8Array(100)]
    ) {
      expectError(bytes, JpegDecodeError, "");
    }
    // A scan that never comes: the frame's second component has none.
    const rgba = new Uint8Array(16 * 16 * 4).fill(200);
    const separate = encodeTestJpeg({ width: 16, height: 16, rgba, color: "ycc", separateScans: true });
    const sos = [...separate.keys()].filter((i) => separate[i] === 0xff && separate[i + 1] === 0xda);
    const secondScan = sos[1];
    const cutScans = Uint8Array.from([...separate.subarray(0, secondScan), 0xff, 0xd9]);
    expectError(cutScans, JpegDecodeError, "no scan holds component 2");
  }));

Deno.test("mutated JPEGs either decode or throw a Jpeg error, never anything else", () =>
  withDir(async (dir) => {
    const sources = [
      await encode(dir, "testsrc2=s=64x48", ["-pix_fmt", "yuvj420p", "-q:v", "5"]),
      await encode(dir, "testsrc2=s=64x48", [
        "-pix_fmt",
        "yuvj444p",
        "-q:v",
        "5",
        "-threads",
        "2",
        "-thread_type",
        "slice",
      ]),
      encodeTestJpeg({
        width: 40,
        height: 24,
        rgba: await sourceRgba("testsrc2=s=40x24"),
        color: "ycc",
        sampling: [[2, 1], [1, 1], [1, 1]],
        separateScans: true,
        restartInterval: 2,
      }),
    ];
    const rand = prng(11);
    let decoded = 0;
    let rejected = 0;
    for (const source of sources) {
      for (let round = 0; round < 200; round++) {
        const bytes = source.slice();
        const edits = 1 + Math.floor(rand() * 4);
        for (let e = 0; e < edits; e++) bytes[Math.floor(rand() * bytes.length)] = Math.floor(rand() * 256);
        const cut = rand() < 0.3 ? Math.floor(rand() * bytes.length) : bytes.length;
        const scale = SCALES[round & 3];
        try {
          const img = decodeJpeg(bytes.subarray(0, cut), { scale });
          assertEquals(img.data.length, img.width * img.height * 4);
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
