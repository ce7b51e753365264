import { assert, assertEquals } from "../../assert.ts";
import type { AccumulatedChange } from "../../../src/temporal/analysis.ts";
import { changeRegions } from "../../../src/temporal/change_regions.ts";

/** An accumulated-change field with the given rectangles (analysis pixels) changed `count` times. */
function field(
  width: number,
  height: number,
  blobs: Array<{ x: number; y: number; width: number; height: number; count?: number }>,
): AccumulatedChange {
  const n = width * height;
  const count = new Uint32Array(n);
  for (const b of blobs) {
    for (let y = b.y; y < b.y + b.height; y++) {
      for (let x = b.x; x < b.x + b.width; x++) count[y * width + x] = b.count ?? 1;
    }
  }
  return {
    width,
    height,
    steps: 3,
    count,
    weight: new Float32Array(n),
    meanTime: new Float32Array(n).fill(NaN),
    spread: new Float32Array(n).fill(NaN),
    firstTime: new Float32Array(n).fill(-1),
    lastTime: new Float32Array(n).fill(-1),
  };
}

Deno.test("changeRegions: no change, no regions", () => {
  assertEquals(changeRegions(field(64, 32, []), 1), []);
});

Deno.test("changeRegions: two separated blobs are two regions, largest first, in source pixels", () => {
  // A: 12×8 at (4,4), changed twice; B: 4×4 at (40,20), changed 3 times. Listed small first.
  const change = field(64, 32, [
    { x: 40, y: 20, width: 4, height: 4, count: 3 },
    { x: 4, y: 4, width: 12, height: 8, count: 2 },
  ]);
  const regions = changeRegions(change, 1);
  assertEquals(regions, [
    { bounds: { x: 4, y: 4, width: 12, height: 8 }, changed_pixels: 96, share: 0.8571, max_count: 2 },
    { bounds: { x: 40, y: 20, width: 4, height: 4 }, changed_pixels: 16, share: 0.1429, max_count: 3 },
  ]);
  const total = regions.reduce((s, r) => s + r.share, 0);
  assert(Math.abs(total - 1) < 1e-3, `shares sum to ${total}`);
});

Deno.test("changeRegions: the analysis scale and the crop origin are applied to bounds", () => {
  const change = field(64, 32, [
    { x: 4, y: 4, width: 12, height: 8 },
    { x: 40, y: 20, width: 4, height: 4 },
  ]);
  const regions = changeRegions(change, 2, { x: 10, y: 20 });
  assertEquals(regions.map((r) => r.bounds), [
    { x: 18, y: 28, width: 24, height: 16 },
    { x: 90, y: 60, width: 8, height: 8 },
  ]);
  assertEquals(regions.map((r) => r.changed_pixels), [96, 16], "counts stay in analysis pixels");
  const scaled4 = changeRegions(change, 4);
  assertEquals(scaled4[0].bounds, { x: 16, y: 16, width: 48, height: 32 });
  assertEquals(scaled4[1].bounds, { x: 160, y: 80, width: 16, height: 16 });
});

Deno.test("changeRegions: bounds snap outward to whole cells", () => {
  // A 2×2 speck at (5,6) lies in the 4-px cell (4..7, 4..7).
  const [r] = changeRegions(field(64, 32, [{ x: 5, y: 6, width: 2, height: 2 }]), 1);
  assertEquals(r.bounds, { x: 4, y: 4, width: 4, height: 4 });
  assertEquals([r.changed_pixels, r.share], [4, 1]);
});

Deno.test("changeRegions: diagonally touching cells join; a one-cell gap separates", () => {
  const diagonal = changeRegions(
    field(64, 32, [{ x: 0, y: 0, width: 4, height: 4 }, { x: 4, y: 4, width: 4, height: 4 }]),
    1,
  );
  assertEquals(diagonal.length, 1);
  assertEquals(diagonal[0].bounds, { x: 0, y: 0, width: 8, height: 8 });
  assertEquals(diagonal[0].share, 1);
  const apart = changeRegions(
    field(64, 32, [{ x: 0, y: 0, width: 4, height: 4 }, { x: 8, y: 0, width: 4, height: 4 }]),
    1,
  );
  assertEquals(apart.length, 2);
});

Deno.test("changeRegions: equal sizes are ordered top to bottom, then left to right", () => {
  const regions = changeRegions(
    field(64, 32, [
      { x: 40, y: 20, width: 4, height: 4 },
      { x: 40, y: 0, width: 4, height: 4 },
      { x: 0, y: 20, width: 4, height: 4 },
    ]),
    1,
  );
  assertEquals(regions.map((r) => [r.bounds.x, r.bounds.y]), [[40, 0], [0, 20], [40, 20]]);
  const total = regions.reduce((s, r) => s + r.share, 0);
  assert(Math.abs(total - 1) < 1e-3, `shares sum to ${total}`);
});
