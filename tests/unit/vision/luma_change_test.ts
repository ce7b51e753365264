import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { decodeJpegLuma, type LumaImage } from "../../../src/vision/jpeg_dc.ts";
import { compareLuma, lumaSignature } from "../../../src/vision/luma_change.ts";

function image(width: number, height: number, fill: (bx: number, by: number) => number): LumaImage {
  const blocksWide = Math.ceil(width / 8);
  const blocksHigh = Math.ceil(height / 8);
  const luma = new Uint8Array(blocksWide * blocksHigh);
  for (let by = 0; by < blocksHigh; by++) {
    for (let bx = 0; bx < blocksWide; bx++) luma[by * blocksWide + bx] = fill(bx, by);
  }
  return { width, height, blocksWide, blocksHigh, luma };
}

async function squareFrame(dir: string, x: number, y: number): Promise<LumaImage> {
  const path = join(dir, `sq${x}_${y}.jpg`);
  const out = await new Deno.Command("ffmpeg", {
    args: [
      ...["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"],
      ...["-i", `color=c=0x202020:s=160x96,format=rgb24,drawbox=x=${x}:y=${y}:w=16:h=16:color=white:t=fill`],
      ...["-frames:v", "1", "-q:v", "5", path],
    ],
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return decodeJpegLuma(await Deno.readFile(path));
}

Deno.test("identical frames: nothing changed, no bounds", () => {
  const a = image(64, 48, (bx, by) => (bx * 31 + by * 17) % 256);
  assertEquals(compareLuma(a, a), { changedProportion: 0, meanAbsDiff: 0 });
});

Deno.test("a square moved between two real JPEG frames: bounds cover both positions", async () => {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-luma-change-" });
  try {
    const before = await squareFrame(dir, 16, 16);
    const after = await squareFrame(dir, 96, 56);
    const change = compareLuma(before, after);
    // 2×2 blocks left and 2×2 blocks arrived, out of 20×12.
    assertEquals(change.changedProportion, 8 / 240);
    assertEquals(change.bounds, { x: 16, y: 16, width: 96, height: 56 });
    // Each changed block moved by ~(255 - 32); the rest by JPEG jitter at most.
    assert(Math.abs(change.meanAbsDiff - (8 * 223) / 240) < 1, `meanAbsDiff ${change.meanAbsDiff}`);
    // Re-encoding the same scene changes nothing above the floor.
    assertEquals(compareLuma(before, await squareFrame(dir, 16, 16)).changedProportion, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("differences at or below the noise floor are ignored but still counted in meanAbsDiff", () => {
  const a = image(64, 32, () => 100);
  const b = image(64, 32, (bx) => (bx % 2 === 0 ? 108 : 92));
  assertEquals(compareLuma(a, b), { changedProportion: 0, meanAbsDiff: 8 });
  assertEquals(compareLuma(a, b, 7).changedProportion, 1);
  const c = image(64, 32, (bx, by) => (bx === 5 && by === 2 ? 109 : 100));
  assertEquals(compareLuma(a, c), {
    changedProportion: 1 / 32,
    bounds: { x: 40, y: 16, width: 8, height: 8 },
    meanAbsDiff: 9 / 32,
  });
});

Deno.test("bounds are clamped to the image at partial edge blocks", () => {
  const a = image(70, 45, () => 50);
  const b = image(70, 45, (bx, by) => (bx === 8 && by === 5 ? 200 : 50));
  assertEquals(compareLuma(a, b).bounds, { x: 64, y: 40, width: 6, height: 5 });
  const all = image(70, 45, () => 0);
  assertEquals(compareLuma(a, all), {
    changedProportion: 1,
    bounds: { x: 0, y: 0, width: 70, height: 45 },
    meanAbsDiff: 50,
  });
});

Deno.test("a size change counts as everything changed", () => {
  const a = image(64, 48, () => 10);
  const b = image(72, 48, () => 10);
  assertEquals(compareLuma(a, b), {
    changedProportion: 1,
    bounds: { x: 0, y: 0, width: 72, height: 48 },
    meanAbsDiff: 255,
  });
  // Same block grid, different pixel size: still not comparable.
  assertEquals(compareLuma(image(64, 48, () => 10), image(60, 48, () => 10)).changedProportion, 1);
});

Deno.test("signature: exact halves stay exact, fractional overlaps are area-weighted", () => {
  const halves = lumaSignature(image(512, 288, (bx) => (bx < 32 ? 0 : 200)));
  assertEquals(halves.length, 32 * 18);
  for (let r = 0; r < 18; r++) {
    for (let c = 0; c < 32; c++) assertEquals(halves[r * 32 + c], c < 16 ? 0 : 200, `cell ${c},${r}`);
  }
  // 3 blocks onto 2 cells: each cell is 1.5 blocks wide.
  const third = lumaSignature(image(24, 8, (bx) => [0, 90, 180][bx]), 2, 1);
  assertEquals(Array.from(third), [30, 150]);
  // 1280×720 → 160×90 blocks → 32×18: 5×5 blocks per cell, the mean of each.
  const big = image(1280, 720, (bx, by) => (bx % 5 === 0 ? 250 : 0) + (by % 5 === 0 ? 5 : 0));
  const sig = lumaSignature(big);
  for (const v of sig) assertEquals(v, Math.round(250 / 5 + 5 / 5));
});

Deno.test("signature of a tiny image upsamples, and odd sizes are rejected", () => {
  assertEquals(Array.from(lumaSignature(image(8, 8, () => 77), 4, 2)), [77, 77, 77, 77, 77, 77, 77, 77]);
  // 2×1 blocks onto 4×1: each block fills two cells.
  assertEquals(Array.from(lumaSignature(image(16, 8, (bx) => (bx === 0 ? 10 : 250)), 4, 1)), [
    10,
    10,
    250,
    250,
  ]);
  assertThrows(() => lumaSignature(image(8, 8, () => 0), 0, 4), "positive integers");
  assertThrows(() => lumaSignature(image(8, 8, () => 0), 2.5, 4), "positive integers");
});
