import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import { ChangeAccumulator } from "../../../src/vision/change_accumulator.ts";
import { colorizeField, PALETTES } from "../../../src/vision/colormap.ts";
import { blendColor, blendImage, blit } from "../../../src/vision/compose.ts";
import { diffImages, perceptualDistance } from "../../../src/vision/pixels.ts";
import { withPngScanlines } from "../../../src/vision/png_rows.ts";
import { downscaleBox, resizeImage } from "../../../src/vision/resample.ts";
import { wasmMemoryBytes } from "../../../src/vision/wasm_heap.ts";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function randomImage(width: number, height: number, seed: number): RgbaImage {
  const r = rng(seed);
  const img = createImage(width, height);
  for (let i = 0; i < img.data.length; i++) img.data[i] = (i & 3) === 3 ? 255 : Math.floor(r() * 256);
  return img;
}

function copy(img: RgbaImage): RgbaImage {
  return { width: img.width, height: img.height, data: img.data.slice() };
}

function setPixel(img: RgbaImage, x: number, y: number, rgba: readonly number[]): void {
  img.data.set(rgba, (y * img.width + x) * 4);
}

function pixel(img: RgbaImage, x: number, y: number): number[] {
  const i = (y * img.width + x) * 4;
  return Array.from(img.data.subarray(i, i + 4));
}

/** Straightforward JS statement of the diff definition, to check the SIMD kernel against. */
function referenceDiff(a: RgbaImage, b: RgbaImage, noise: number) {
  let changed = 0, sumAbs = 0, sumY = 0, sumC = 0, max = 0;
  let minX = Infinity, minY = Infinity, maxX = -1, maxY = -1;
  const mask = new Uint8Array(a.width * a.height);
  for (let p = 0; p < a.width * a.height; p++) {
    const d = [0, 1, 2, 3].map((c) => b.data[p * 4 + c] - a.data[p * 4 + c]);
    const mag = Math.max(...d.map(Math.abs));
    if (mag <= noise) continue;
    const x = p % a.width, y = Math.floor(p / a.width);
    changed++;
    sumAbs += mag;
    sumY += Math.abs(77 * d[0] + 150 * d[1] + 29 * d[2]);
    sumC += Math.max(
      Math.abs(-43 * d[0] - 85 * d[1] + 128 * d[2]),
      Math.abs(128 * d[0] - 107 * d[1] - 21 * d[2]),
    );
    max = Math.max(max, mag);
    minX = Math.min(minX, x);
    minY = Math.min(minY, y);
    maxX = Math.max(maxX, x);
    maxY = Math.max(maxY, y);
    mask[p] = mag;
  }
  const n = a.width * a.height;
  return {
    changedPixels: changed,
    changedProportion: changed / n,
    bounds: changed ? { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } : null,
    meanAbsDiff: sumAbs / n,
    meanLumaDiff: sumY / 256 / n,
    meanColorDiff: sumC / 256 / n,
    maxDiff: max,
    mask,
  };
}

Deno.test("diff: a crafted 10×8 change has exact count, bounds, means and mask", () => {
  const a = createImage(10, 8, [100, 100, 100]);
  const b = copy(a);
  setPixel(b, 2, 1, [110, 100, 100, 255]); // Δ 10 on red
  setPixel(b, 7, 5, [100, 100, 40, 255]); // Δ 60 on blue
  setPixel(b, 4, 3, [102, 100, 100, 255]); // Δ 2: under a noise floor of 3
  const d = diffImages(a, b, { noiseFloor: 3, mask: true });
  assertEquals(d.changedPixels, 2);
  assertEquals(d.changedProportion, 2 / 80);
  assertEquals(d.bounds, { x: 2, y: 1, width: 6, height: 5 });
  assertEquals(d.maxDiff, 60);
  assertEquals(d.meanAbsDiff, 70 / 80);
  // |ΔY|·256: 77·10 and 29·60; |ΔC|·256: max(43·10, 128·10) and max(128·60, 21·60).
  assertEquals(d.meanLumaDiff, (770 + 1740) / 256 / 80);
  assertEquals(d.meanColorDiff, (1280 + 7680) / 256 / 80);
  const mask = d.mask ?? new Uint8Array();
  assertEquals(mask.length, 80);
  assertEquals([mask[1 * 10 + 2], mask[5 * 10 + 7], mask[3 * 10 + 4]], [10, 60, 0]);
  assertEquals(mask.reduce((s, v) => s + v, 0), 70);

  const all = diffImages(a, b);
  assertEquals(all.changedPixels, 3, "noise floor 0 counts the Δ 2 pixel");
  assertEquals(diffImages(a, a), {
    changedPixels: 0,
    changedProportion: 0,
    bounds: null,
    meanAbsDiff: 0,
    meanLumaDiff: 0,
    meanColorDiff: 0,
    maxDiff: 0,
  });
});

Deno.test("diff: alpha-only changes count; luma and colour do not see them", () => {
  const a = createImage(4, 4, [10, 20, 30]);
  const b = copy(a);
  setPixel(b, 3, 3, [10, 20, 30, 55]);
  const d = diffImages(a, b);
  assertEquals([d.changedPixels, d.maxDiff, d.meanLumaDiff, d.meanColorDiff], [1, 200, 0, 0]);
  assertEquals(d.bounds, { x: 3, y: 3, width: 1, height: 1 });
});

Deno.test("diff: matches the reference on odd sizes, multiple bands and row-straddling groups", () => {
  for (const [w, h, seed] of [[7, 5, 1], [33, 150, 2], [1, 70, 3], [130, 3, 4], [17, 129, 5]] as const) {
    const a = randomImage(w, h, seed);
    const b = copy(a);
    const r = rng(seed + 100);
    for (let k = 0; k < Math.max(3, (w * h) >> 3); k++) {
      const p = Math.floor(r() * w * h);
      b.data[p * 4 + Math.floor(r() * 4)] = Math.floor(r() * 256);
    }
    for (const noise of [0, 40]) {
      const got = diffImages(a, b, { noiseFloor: noise, mask: true });
      const want = referenceDiff(a, b, noise);
      const { mask: gotMask, ...gotStats } = got;
      const { mask: wantMask, ...wantStats } = want;
      assertEquals(gotStats.changedPixels, wantStats.changedPixels, `${w}×${h} count`);
      assertEquals(gotStats.bounds, wantStats.bounds, `${w}×${h} bounds`);
      assertEquals(gotStats.maxDiff, wantStats.maxDiff, `${w}×${h} max`);
      for (const k of ["meanAbsDiff", "meanLumaDiff", "meanColorDiff", "changedProportion"] as const) {
        assert(
          Math.abs(gotStats[k] - wantStats[k]) < 1e-9,
          `${w}×${h} ${k}: ${gotStats[k]} vs ${wantStats[k]}`,
        );
      }
      assertEquals(Array.from(gotMask ?? []), Array.from(wantMask), `${w}×${h} mask`);
    }
  }
});

Deno.test("diff: different sizes and malformed images throw", () => {
  assertThrows(() => diffImages(createImage(4, 4), createImage(4, 5)), "sizes differ");
  assertThrows(
    () => diffImages({ width: 4, height: 4, data: new Uint8Array(10) }, createImage(4, 4)),
    "RGBA bytes",
  );
  assertThrows(
    () => diffImages(createImage(4, 4), createImage(4, 4), { mask: new Uint8Array(3) }),
    "mask needs 16",
  );
});

Deno.test("memory: repeated diffs and disposed accumulators reuse WASM memory", () => {
  const a = randomImage(640, 360, 9);
  const b = randomImage(640, 360, 10);
  diffImages(a, b, { mask: true });
  new ChangeAccumulator(640, 360).dispose();
  const before = wasmMemoryBytes();
  for (let i = 0; i < 20; i++) diffImages(a, b, { mask: true });
  for (let i = 0; i < 20; i++) new ChangeAccumulator(640, 360).dispose();
  assertEquals(wasmMemoryBytes(), before);
});

Deno.test("accumulator: a 3-frame sequence gives counts, weighted mean time, spread, first/last", () => {
  const f0 = createImage(4, 2, [0, 0, 0]);
  const f1 = copy(f0);
  setPixel(f1, 0, 0, [100, 0, 0, 255]); // changes at t = 0.5 only (magnitude 100)
  setPixel(f1, 1, 0, [50, 0, 0, 255]); // changes at t = 0.5 (50) and back at t = 1 (50)
  setPixel(f1, 2, 0, [30, 0, 0, 255]); // changes at t = 0.5 (30) and again at t = 1 (90)
  const f2 = copy(f1);
  setPixel(f2, 1, 0, [0, 0, 0, 255]);
  setPixel(f2, 2, 0, [120, 0, 0, 255]);
  setPixel(f2, 3, 1, [0, 0, 200, 255]); // changes at t = 1 only
  using acc = new ChangeAccumulator(4, 2);
  assertEquals(acc.addFrame(f0, 0), null);
  assertEquals(acc.addFrame(f1, 0.5)?.changedPixels, 3);
  assertEquals(acc.addFrame(f2, 1)?.changedPixels, 3);
  const r = acc.result();
  assertEquals(r.steps, 2);
  assertEquals(Array.from(r.count), [1, 2, 2, 0, 0, 0, 0, 1]);
  assertEquals(Array.from(r.weight), [100, 100, 120, 0, 0, 0, 0, 200]);
  const mean = Array.from(r.meanTime, (v) => Number.isNaN(v) ? null : Math.round(v * 1e6) / 1e6);
  // Pixel 2: (30·0.5 + 90·1) / 120 = 0.875.
  assertEquals(mean, [0.5, 0.75, 0.875, null, null, null, null, 1]);
  const spread = Array.from(r.spread, (v) => Number.isNaN(v) ? null : Math.round(v * 1e4) / 1e4);
  // Pixel 1: equal weights at 0.5 and 1 → σ 0.25; pixel 2: sqrt(0.8125 − 0.875²) = 0.2165.
  assertEquals(spread, [0, 0.25, 0.2165, null, null, null, null, 0]);
  assertEquals(Array.from(r.firstTime), [0.5, 0.5, 0.5, -1, -1, -1, -1, 1]);
  assertEquals(Array.from(r.lastTime), [0.5, 1, 1, -1, -1, -1, -1, 1]);
});

Deno.test("accumulator: add() takes masks directly; addDiff() takes pairs; misuse throws", () => {
  const acc = new ChangeAccumulator(3, 1);
  acc.add(new Uint8Array([0, 255, 10]), 0.2);
  acc.add(new Uint8Array([0, 255, 0]), 0.6);
  const a = createImage(3, 1);
  const b = copy(a);
  setPixel(b, 0, 0, [0, 9, 0, 255]);
  assertEquals(acc.addDiff(a, b, 1, 10).changedPixels, 0, "under the noise floor");
  assertEquals(acc.addDiff(a, b, 1).changedPixels, 1);
  const r = acc.result();
  assertEquals(Array.from(r.count), [1, 2, 1]);
  assertEquals(Array.from(r.lastTime, (v) => Math.round(v * 10) / 10), [1, 0.6, 0.2]);
  assertEquals(Math.round((r.meanTime[1]) * 10) / 10, 0.4);
  assertThrows(() => acc.add(new Uint8Array(2), 0.5), "mask needs 3 bytes");
  assertThrows(() => acc.add(new Uint8Array(3), 1.5), "outside [0, 1]");
  assertThrows(() => acc.addDiff(createImage(2, 2), createImage(2, 2), 0.5), "accumulator 3×1");
  acc.dispose();
  assertThrows(() => acc.result(), "after dispose");
});

Deno.test("blit: unscaled copies clip at every edge and honour a source rect", () => {
  const src = createImage(3, 2);
  for (let i = 0; i < 6; i++) setPixel(src, i % 3, Math.floor(i / 3), [i + 1, 0, 0, 255]);
  const dst = createImage(4, 3, [9, 9, 9]);
  blit(dst, src, -1, 2);
  // Only source row 0, columns 1–2 land on dst row 2, columns 0–1.
  const reds = Array.from({ length: 12 }, (_, p) => dst.data[p * 4]);
  assertEquals(reds, [9, 9, 9, 9, 9, 9, 9, 9, 2, 3, 9, 9]);
  const dst2 = createImage(4, 3, [9, 9, 9]);
  blit(dst2, src, 3, 0, { source: { x: 1, y: 1, width: 5, height: 5 } });
  assertEquals(Array.from({ length: 12 }, (_, p) => dst2.data[p * 4]), [9, 9, 9, 5, 9, 9, 9, 9, 9, 9, 9, 9]);
  const dst3 = createImage(4, 3, [9, 9, 9]);
  blit(dst3, src, 10, 10);
  blit(dst3, src, -3, 0);
  assertEquals(dst3.data.every((v, i) => v === ((i & 3) === 3 ? 255 : 9)), true, "fully outside: untouched");
});

Deno.test("blit: scaled copies area-average when shrinking and still clip", () => {
  const src = createImage(4, 4);
  for (let y = 0; y < 4; y++) for (let x = 0; x < 4; x++) setPixel(src, x, y, [x * 40, y * 40, 200, 255]);
  const dst = createImage(3, 3, [0, 0, 0]);
  blit(dst, src, 1, 1, { width: 2, height: 2 }); // 4×4 → 2×2 at (1, 1): fully inside
  assertEquals(pixel(dst, 1, 1), [20, 20, 200, 255]);
  assertEquals(pixel(dst, 2, 2), [100, 100, 200, 255]);
  assertEquals(pixel(dst, 0, 0), [0, 0, 0, 255]);
  const clipped = createImage(2, 2, [0, 0, 0]);
  blit(clipped, src, -1, -1, { width: 2, height: 2 });
  assertEquals(pixel(clipped, 0, 0), [100, 100, 200, 255], "only the bottom-right output lands");
  assertEquals(pixel(clipped, 1, 1), [0, 0, 0, 255]);
});

Deno.test("resize: area average, integer box downscale with partial edges, bilinear enlarge", () => {
  const src = createImage(4, 2);
  for (let x = 0; x < 4; x++) for (let y = 0; y < 2; y++) setPixel(src, x, y, [x * 60, y * 100, 0, 255]);
  const half = resizeImage(src, 2, 1);
  assertEquals([pixel(half, 0, 0), pixel(half, 1, 0)], [[30, 50, 0, 255], [150, 50, 0, 255]]);
  // 3 source columns into 2 outputs: weights 1, 0.5 | 0.5, 1 of columns 0..2 (0, 60, 120) → 20, 100.
  const third = resizeImage(src, 2, 2, { x: 0, y: 0, width: 3, height: 2 });
  assertEquals([pixel(third, 0, 0)[0], pixel(third, 1, 0)[0]], [20, 100]);
  const box = downscaleBox(createImage(5, 5, [10, 20, 30]), 2);
  assertEquals([box.width, box.height], [3, 3]);
  const grad = createImage(5, 1);
  for (let x = 0; x < 5; x++) setPixel(grad, x, 0, [x * 10, 0, 0, 255]);
  assertEquals(Array.from({ length: 3 }, (_, x) => pixel(downscaleBox(grad, 2), x, 0)[0]), [5, 25, 40]);
  const two = createImage(2, 1);
  setPixel(two, 0, 0, [0, 0, 0, 255]);
  setPixel(two, 1, 0, [200, 0, 0, 255]);
  // Centres of 4 outputs over 2 inputs sit at −0.25, 0.25, 0.75, 1.25 → clamped 0, 50, 150, 200.
  assertEquals(Array.from({ length: 4 }, (_, x) => pixel(resizeImage(two, 4, 1), x, 0)[0]), [
    0,
    50,
    150,
    200,
  ]);
  assertThrows(() => resizeImage(two, 0, 1), "bad target size");
  assertThrows(() => downscaleBox(two, 1.5), "integer");
});

Deno.test("blend: solid colour and overlay images mix by opacity and alpha, clipped", () => {
  const img = createImage(3, 1, [0, 100, 200]);
  blendColor(img, { x: 1, y: -4, width: 9, height: 9 }, [200, 100, 0], 0.5);
  assertEquals([pixel(img, 0, 0), pixel(img, 1, 0), pixel(img, 2, 0)], [
    [0, 100, 200, 255],
    [100, 100, 100, 255],
    [100, 100, 100, 255],
  ]);
  const base = createImage(2, 2, [0, 0, 0]);
  const overlay = createImage(2, 2, [255, 255, 255]);
  setPixel(overlay, 1, 1, [255, 255, 255, 0]); // transparent pixel: no effect
  blendImage(base, overlay, 1, 1, 1);
  assertEquals([pixel(base, 1, 1), pixel(base, 0, 0)], [[255, 255, 255, 255], [0, 0, 0, 255]]);
  const half = createImage(1, 1, [0, 0, 0]);
  blendImage(half, createImage(1, 1, [200, 200, 200]), 0, 0, 0.25);
  assertEquals(pixel(half, 0, 0), [50, 50, 50, 255]);
});

Deno.test("perceptual distance: 0 for identical, small for a small change, large for unrelated", () => {
  const a = randomImage(320, 200, 1);
  assertEquals(perceptualDistance(a, a), 0);
  const small = copy(a);
  for (let y = 10; y < 20; y++) for (let x = 10; x < 30; x++) setPixel(small, x, y, [255, 255, 255, 255]);
  const other = randomImage(320, 200, 2);
  const dSmall = perceptualDistance(a, small);
  const dOther = perceptualDistance(a, other);
  assert(dSmall > 0 && dSmall < 0.05, `small change: ${dSmall}`);
  assert(dOther > 0.5 && dOther <= 1, `unrelated: ${dOther}`);
  const big = createImage(1920, 1080, [250, 250, 250]);
  const bigChanged = copy(big);
  for (let y = 400; y < 700; y++) for (let x = 0; x < 1920; x++) setPixel(bigChanged, x, y, [0, 0, 0, 255]);
  const dBig = perceptualDistance(big, bigChanged);
  assert(dBig > 0.01 && dBig < 0.5, `a dark band over a 1080p page: ${dBig}`);
  assertThrows(() => perceptualDistance(a, createImage(2, 2)), "sizes differ");
});

Deno.test("colorize: palette mapping with clamping and an empty colour for NaN", () => {
  const field = new Float32Array([0, 0.5, 1, 2, -1, NaN]);
  const img = colorizeField(field, 3, 2, PALETTES.gray, { empty: [1, 2, 3, 4] });
  assertEquals(Array.from({ length: 6 }, (_, p) => pixel(img, p % 3, Math.floor(p / 3))), [
    [0, 0, 0, 255],
    [128, 128, 128, 255],
    [255, 255, 255, 255],
    [255, 255, 255, 255],
    [0, 0, 0, 255],
    [1, 2, 3, 4],
  ]);
  const counts = colorizeField(new Uint32Array([0, 5, 10]), 3, 1, PALETTES.time, { min: 0, max: 10 });
  assertEquals(pixel(counts, 0, 0), [68, 1, 84, 255]);
  assertEquals(pixel(counts, 2, 0), [253, 231, 37, 255]);
  assertThrows(() => colorizeField(new Float32Array(2), 3, 1, PALETTES.gray), "field has 2 values");
});

function filterRows(
  raw: Uint8Array,
  rows: number,
  rowBytes: number,
  bpp: number,
  types: number[],
): Uint8Array {
  const out = new Uint8Array(rows * (rowBytes + 1));
  for (let y = 0; y < rows; y++) {
    const type = types[y % types.length];
    out[y * (rowBytes + 1)] = type;
    for (let i = 0; i < rowBytes; i++) {
      const x = raw[y * rowBytes + i];
      const a = i >= bpp ? raw[y * rowBytes + i - bpp] : 0;
      const b = y > 0 ? raw[(y - 1) * rowBytes + i] : 0;
      const c = y > 0 && i >= bpp ? raw[(y - 1) * rowBytes + i - bpp] : 0;
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const pred = [0, a, b, (a + b) >> 1, paeth][type];
      out[y * (rowBytes + 1) + 1 + i] = (x - pred) & 255;
    }
  }
  return out;
}

Deno.test("png filter: the kernel matches the reference for each fixed type, RGB and RGBA, across bands", () => {
  const r = rng(77);
  for (const opaque of [true, false]) {
    const img = createImage(13, 70); // more than one 64-row band
    for (let i = 0; i < img.data.length; i++) {
      img.data[i] = opaque && (i & 3) === 3 ? 255 : Math.floor(r() * 256);
    }
    const bpp = opaque ? 3 : 4;
    const raw = img.data.filter((_, i) => bpp === 4 || (i & 3) !== 3);
    for (
      const [filter, type] of [["none", 0], ["sub", 1], ["up", 2], ["average", 3], ["paeth", 4]] as const
    ) {
      const want = filterRows(raw, 70, 13 * bpp, bpp, [type]);
      const got = withPngScanlines(img, filter, (scanlines, channels) => {
        assertEquals(channels, bpp);
        return scanlines.slice();
      });
      assertEquals(
        got.findIndex((v, i) => v !== want[i]),
        -1,
        `${filter}, ${bpp} channels: first wrong byte`,
      );
    }
  }
});
