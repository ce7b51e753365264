import { assert, assertEquals } from "../../assert.ts";
import { frameRow, MS } from "./frame_rows.ts";
import {
  analysisScale,
  analyzeEpoch,
  type AnalyzeInput,
  baselineIndex,
  type JpegScale,
  type PixelOps,
  sampleIndices,
  unionRect,
} from "../../../src/temporal/analysis.ts";
import { type Epoch, splitEpochs } from "../../../src/temporal/frames.ts";
import { createImage, type Rect } from "../../../src/vision/image.ts";
import { kernelOps } from "../../../src/temporal/pixel_ops.ts";

const DARK: [number, number, number] = [20, 20, 20];

const frame = frameRow;

/**
 * Synthetic pixels: each frame is white with dark rectangles given in source pixels; decoding at a
 * JPEG scale s samples the source at (x·s, y·s), like a decoder's 1/s output of ceil(w/s)×ceil(h/s).
 * Difference, perceptual distance and accumulation are the real kernels.
 */
function fakeOps(scenes: Map<number, Rect[]>) {
  const calls: Array<{ frame_id: number; scale: JpegScale }> = [];
  const ops: PixelOps = kernelOps((f, scale) => {
    calls.push({ frame_id: f.frame_id, scale });
    const w = Math.ceil(f.width / scale);
    const h = Math.ceil(f.height / scale);
    const img = createImage(w, h, [255, 255, 255]);
    for (const r of scenes.get(f.frame_id) ?? []) {
      for (let y = 0; y < h; y++) {
        const sy = y * scale;
        if (sy < r.y || sy >= r.y + r.height) continue;
        for (let x = 0; x < w; x++) {
          const sx = x * scale;
          if (sx >= r.x && sx < r.x + r.width) img.data.set(DARK, (y * w + x) * 4);
        }
      }
    }
    return img;
  });
  return { ops, calls };
}

const square = (x: number, y = 12, size = 8): Rect => ({ x, y, width: size, height: size });

/** One epoch of frames at the given times, with a dark square at the given x per frame. */
function movingSquare(times: number[], xs: number[], width = 64, height = 32, y = 12, size = 8) {
  const frames = times.map((t, i) => frame(i + 1, t, width, height));
  const scenes = new Map(frames.map((f, i) => [f.frame_id, [square(xs[i], y, size)]]));
  const [epoch] = splitEpochs(frames);
  return { epoch, scenes };
}

function input(epoch: Epoch, over: Partial<AnalyzeInput> = {}): AnalyzeInput {
  return {
    epoch,
    start_ns: epoch.start_ns,
    end_ns: epoch.end_ns,
    anchor_ns: epoch.start_ns,
    gaps: [],
    ...over,
  };
}

Deno.test("analysisScale: the smallest JPEG scale that brings the width to 480 or under", () => {
  const cases: Array<[number, number]> = [
    [1, 1],
    [64, 1],
    [480, 1],
    [481, 2],
    [960, 2],
    [961, 4],
    [1280, 4],
    [1920, 4],
    [1921, 8],
    [3840, 8],
  ];
  for (const [w, s] of cases) assertEquals(analysisScale(w), s, `width ${w}`);
});

Deno.test("baselineIndex: the last frame at or before the anchor, else the first", () => {
  const frames = [frame(1, 0), frame(2, 100), frame(3, 200), frame(4, 300)];
  assertEquals(baselineIndex(frames, 150 * MS), 1);
  assertEquals(baselineIndex(frames, 200 * MS), 2, "a frame exactly at the anchor is the baseline");
  assertEquals(baselineIndex(frames, -5 * MS), 0);
  assertEquals(baselineIndex(frames, 9000 * MS), 3);
});

Deno.test("unionRect: the smallest rectangle holding both", () => {
  assertEquals(unionRect(null, null), null);
  assertEquals(unionRect(square(1, 2), null), square(1, 2));
  assertEquals(unionRect(null, square(1, 2)), square(1, 2));
  assertEquals(unionRect({ x: 8, y: 12, width: 16, height: 8 }, { x: 16, y: 4, width: 24, height: 2 }), {
    x: 8,
    y: 4,
    width: 32,
    height: 16,
  });
});

Deno.test("sampleIndices: everything when within the bound", () => {
  assertEquals(sampleIndices(5, [0, 2, 4], 5), [0, 1, 2, 3, 4]);
  assertEquals(sampleIndices(0, [], 5), []);
});

Deno.test("sampleIndices: keeps required indices, bounds the count, ascending and unique", () => {
  for (const [count, limit] of [[100, 10], [1000, 360], [37, 6], [7, 6]]) {
    const required = [0, 37 % count, 38 % count, count - 1, -1, count];
    const got = sampleIndices(count, required, limit);
    assert(got.length <= limit, `${count}/${limit}: ${got.length} > limit`);
    assert(got.length >= Math.min(limit, 4) - 1, `${count}/${limit}: too few (${got.length})`);
    for (const r of required.filter((i) => i >= 0 && i < count)) {
      assert(got.includes(r), `${count}/${limit}: required ${r} kept`);
    }
    assert(got.every((i) => i >= 0 && i < count), "in range");
    for (let k = 1; k < got.length; k++) assert(got[k] > got[k - 1], "ascending, unique");
    assertEquals(sampleIndices(count, required, limit), got, "deterministic");
  }
  // A uniform stride: with no required frames, 5 of 101 are 0, 25, 50, 75, 100.
  assertEquals(sampleIndices(101, [], 5), [0, 25, 50, 75, 100]);
});

Deno.test("analyzeEpoch: baseline, steps, to-final and change bounds at scale 1", () => {
  // The square rests at x=8, moves to 16 then 32, and rests there.
  const { epoch, scenes } = movingSquare([0, 100, 200, 300, 400], [8, 8, 16, 32, 32]);
  const { ops, calls } = fakeOps(scenes);
  const a = analyzeEpoch(input(epoch, { anchor_ns: 150 * MS }), ops);

  assertEquals(a.scale, 1);
  assertEquals([a.analysis_width, a.analysis_height], [64, 32]);
  assertEquals(a.noise_floor, 12);
  assertEquals(a.baseline.frame_id, 2, "the last frame at or before the anchor");
  assertEquals(a.final.frame_id, 5);
  assertEquals(a.sampling, undefined, "nothing dropped, no sampling block");
  assertEquals(a.crop, undefined);
  assertEquals(a.measures.map((m) => m.frame.frame_id), [1, 2, 3, 4, 5]);
  assertEquals(a.measures.map((m) => m.offset_ms), [-150, -50, 50, 150, 250]);
  assertEquals(a.measures.map((m) => m.t), [0, 0.25, 0.5, 0.75, 1]);

  const [m0, m1, m2, m3, m4] = a.measures;
  assertEquals(m0.step, undefined, "the first frame has no predecessor");
  const s1 = m1.step;
  assert(s1, "step 1");
  assertEquals([s1.changed_proportion, s1.bounds, s1.centroid, s1.perceptual_distance], [0, null, null, 0]);
  assertEquals(s1.interval_ms, 100);
  assertEquals(s1.across_gap, false);

  const s2 = m2.step;
  assert(s2, "step 2");
  assertEquals(s2.changed_proportion, 128 / 2048);
  assertEquals(s2.bounds, { x: 8, y: 12, width: 16, height: 8 });
  assertEquals(s2.centroid, { x: 16, y: 16 });
  assertEquals(s2.mean_abs_diff, (128 * 235) / 2048);
  assert(s2.perceptual_distance > 0 && s2.perceptual_distance <= 1, `perceptual ${s2.perceptual_distance}`);

  const s3 = m3.step;
  assert(s3, "step 3");
  assertEquals(s3.bounds, { x: 16, y: 12, width: 24, height: 8 });
  assertEquals(s3.centroid, { x: 28, y: 16 });
  assertEquals(m4.step?.changed_proportion, 0);

  // Against the baseline (frame 2, square at 8).
  assertEquals(m1.baseline, { changed_proportion: 0, mean_abs_diff: 0, bounds: null });
  assertEquals(m0.baseline.changed_proportion, 0, "frame 1 looks like the baseline");
  assertEquals(m3.baseline.bounds, { x: 8, y: 12, width: 32, height: 8 });
  assertEquals(m3.baseline.changed_proportion, 128 / 2048);
  // Against the final frame (square at 32).
  assertEquals(m2.to_final.changed_proportion, 128 / 2048);
  assertEquals(m3.to_final, { changed_proportion: 0, mean_abs_diff: 0 });
  assertEquals(m4.to_final, { changed_proportion: 0, mean_abs_diff: 0 });

  assertEquals(a.change_bounds, { x: 8, y: 12, width: 32, height: 8 }, "union of every step's bounds");
  assertEquals(a.change.steps, 2, "only changing steps are accumulated");
  assertEquals([a.change.width, a.change.height], [64, 32]);
  const count = (x: number, y: number) => a.change.count[y * 64 + x];
  assertEquals([count(8, 12), count(16, 12), count(23, 19), count(32, 12), count(40, 12), count(0, 0)], [
    1,
    2,
    2,
    1,
    0,
    0,
  ]);
  assertEquals(m0.signature.length, 144);
  assert(m0.signature[0] > 254, "white corner");

  assertEquals(calls.map((c) => c.scale), [1, 1, 1, 1, 1]);
  assertEquals(calls.map((c) => c.frame_id).sort(), [1, 2, 3, 4, 5], "each frame decoded exactly once");
});

Deno.test("analyzeEpoch: an anchor before the first frame makes the first frame the baseline", () => {
  const { epoch, scenes } = movingSquare([100, 200, 300], [0, 16, 32]);
  const a = analyzeEpoch(
    input(epoch, { start_ns: 0, end_ns: 400 * MS, anchor_ns: 50 * MS }),
    fakeOps(scenes).ops,
  );
  assertEquals(a.baseline.frame_id, 1);
  assertEquals(a.measures.map((m) => m.t), [0.25, 0.5, 0.75]);
  assertEquals(a.measures[2].baseline.bounds, { x: 0, y: 12, width: 40, height: 8 });
});

Deno.test("analyzeEpoch: a 1280-wide epoch decodes at scale 4 and reports bounds in source pixels", () => {
  // 32×32 source squares at x=64 then x=128 (8×8 at analysis scale), y=64.
  const { epoch, scenes } = movingSquare([0, 100, 200], [64, 128, 128], 1280, 720, 64, 32);
  const { ops, calls } = fakeOps(scenes);
  const a = analyzeEpoch(input(epoch), ops);
  assertEquals(a.scale, 4);
  assertEquals(calls.map((c) => c.scale), [4, 4, 4]);
  assertEquals([a.analysis_width, a.analysis_height], [320, 180]);
  const s = a.measures[1].step;
  assert(s, "step 1");
  assertEquals(s.bounds, { x: 64, y: 64, width: 96, height: 32 });
  assertEquals(s.centroid, { x: 112, y: 80 });
  assertEquals(s.changed_proportion, 128 / (320 * 180));
  assertEquals(a.measures[2].baseline.bounds, { x: 64, y: 64, width: 96, height: 32 });
  assertEquals(a.change_bounds, { x: 64, y: 64, width: 96, height: 32 });
  assertEquals([a.change.width, a.change.height], [320, 180], "accumulation is at analysis size");
});

Deno.test("analyzeEpoch: bounds at the frame's right edge are clamped to the frame", () => {
  // 1000 wide → scale 4 → 250 analysis px; a square touching the right edge.
  const { epoch, scenes } = movingSquare([0, 100], [968, 936], 1000, 100, 0, 32);
  const a = analyzeEpoch(input(epoch), fakeOps(scenes).ops);
  const b = a.measures[1].step?.bounds;
  assert(b, "bounds");
  assert(b.x + b.width <= 1000, `bounds ${JSON.stringify(b)} stay inside the 1000-px frame`);
  assertEquals(b, { x: 936, y: 0, width: 64, height: 32 });
});

Deno.test("analyzeEpoch: gaps between two analyzed frames mark the step across_gap", () => {
  const { epoch, scenes } = movingSquare([0, 100, 200, 300], [0, 8, 16, 24]);
  const gaps = [{ start_ns: 120 * MS, end_ns: 180 * MS }, { start_ns: 290 * MS, end_ns: null }];
  const a = analyzeEpoch(input(epoch, { gaps }), fakeOps(scenes).ops);
  assertEquals(a.measures.map((m) => m.step?.across_gap), [undefined, false, true, true]);
});

Deno.test("analyzeEpoch: past max_analyzed, frames are sampled with a sampling block", () => {
  const times = Array.from({ length: 20 }, (_, i) => i * 100);
  const xs = times.map((_, i) => (i * 2) % 56);
  const { epoch, scenes } = movingSquare(times, xs);
  const { ops, calls } = fakeOps(scenes);
  // Anchor between frame index 7 (700 ms) and 8 (800 ms).
  const a = analyzeEpoch(input(epoch, { anchor_ns: 750 * MS, max_analyzed: 6 }), ops);
  const analyzed = a.measures.map((m) => m.frame.frame_id);
  assert(analyzed.length <= 6, `analyzed ${analyzed.length}`);
  for (const id of [1, 8, 9, 20]) assert(analyzed.includes(id), `required frame ${id} analyzed: ${analyzed}`);
  assertEquals(a.sampling, {
    sampling_mode: "uniform_stride",
    source_frame_count: 20,
    analyzed_frame_count: analyzed.length,
  });
  assertEquals(
    [...new Set(calls.map((c) => c.frame_id))].sort((x, y) => x - y),
    analyzed,
    "only analyzed frames are decoded",
  );
  assertEquals(a.baseline.frame_id, 8);
  // A step between sampled frames spans their real interval.
  const gapStep = a.measures.find((m) => m.frame.frame_id === 20)?.step;
  assertEquals(gapStep?.interval_ms, 1900 - 800);

  const all = analyzeEpoch(input(epoch, { anchor_ns: 750 * MS, max_analyzed: 20 }), fakeOps(scenes).ops);
  assertEquals(all.measures.length, 20);
  assertEquals(all.sampling, undefined, "no block when nothing was dropped");
});

Deno.test("analyzeEpoch: a crop reports bounds in source pixels with the crop origin applied", () => {
  const { epoch, scenes } = movingSquare([0, 100], [40, 48]);
  const crop = { x: 16, y: 4, width: 48, height: 24 };
  const a = analyzeEpoch(input(epoch, { crop }), fakeOps(scenes).ops);
  assertEquals(a.scale, 1);
  assertEquals([a.analysis_width, a.analysis_height], [48, 24]);
  assertEquals(a.crop, { x: 16, y: 4 });
  const s = a.measures[1].step;
  assert(s, "step");
  assertEquals(s.bounds, { x: 40, y: 12, width: 16, height: 8 });
  assertEquals(s.centroid, { x: 48, y: 16 });
  assertEquals(s.changed_proportion, 128 / (48 * 24));
  assertEquals(a.change_bounds, { x: 40, y: 12, width: 16, height: 8 });
});

Deno.test("analyzeEpoch: change outside the crop is not measured", () => {
  // Square moves in the left half; the crop is the right half.
  const { epoch, scenes } = movingSquare([0, 100], [0, 8]);
  const a = analyzeEpoch(input(epoch, { crop: { x: 32, y: 0, width: 32, height: 32 } }), fakeOps(scenes).ops);
  assertEquals(a.measures[1].step?.changed_proportion, 0);
  assertEquals(a.change_bounds, null);
  assertEquals(a.change.steps, 0);
});

Deno.test("analyzeEpoch: a mask measures only changes inside it", () => {
  // Two things change: a square moving inside the right half (the mask) and one in the left half.
  const frames = [frame(1, 0), frame(2, 100)];
  const scenes = new Map<number, Rect[]>([
    [1, [square(40), square(0, 4)]],
    [2, [square(48), square(8, 20)]],
  ]);
  const [epoch] = splitEpochs(frames);
  const crop = { x: 0, y: 0, width: 64, height: 32 };
  const unmasked = analyzeEpoch(input(epoch, { crop }), fakeOps(scenes).ops);
  assertEquals(
    unmasked.measures[1].step?.bounds,
    { x: 0, y: 4, width: 56, height: 24 },
    "both changes without a mask",
  );

  const mask = [{ x: 32, y: 0, width: 32, height: 32 }];
  const a = analyzeEpoch(input(epoch, { crop, mask }), fakeOps(scenes).ops);
  const s = a.measures[1].step;
  assert(s, "step");
  assertEquals(s.bounds, { x: 40, y: 12, width: 16, height: 8 });
  assertEquals(s.changed_proportion, 128 / 2048);
  assertEquals(s.centroid, { x: 48, y: 16 });
  assertEquals(a.change_bounds, { x: 40, y: 12, width: 16, height: 8 });
  assertEquals(a.measures[1].baseline.bounds, { x: 40, y: 12, width: 16, height: 8 });
  // Accumulated change stays inside the mask.
  let outside = 0;
  for (let y = 0; y < 32; y++) for (let x = 0; x < 32; x++) outside += a.change.count[y * 64 + x];
  assertEquals(outside, 0);
});

Deno.test("analyzeEpoch: a change in the column just left of the mask is outside it", () => {
  // Mask starts at x=32; a 1-px dark line appears at x=31 (outside) and nothing else changes.
  const frames = [frame(1, 0), frame(2, 100)];
  const scenes = new Map<number, Rect[]>([[1, []], [2, [{ x: 31, y: 12, width: 1, height: 8 }]]]);
  const [epoch] = splitEpochs(frames);
  const a = analyzeEpoch(
    input(epoch, {
      crop: { x: 0, y: 0, width: 64, height: 32 },
      mask: [{ x: 32, y: 0, width: 32, height: 32 }],
    }),
    fakeOps(scenes).ops,
  );
  assertEquals(a.measures[1].step?.bounds, null, "x=31 is outside a mask starting at x=32");
  assertEquals(a.measures[1].step?.changed_proportion, 0);
});

Deno.test("analyzeEpoch: a crop at a non-multiple of the scale still reports source-pixel bounds", () => {
  // 1280 wide, crop 1000 wide from x=2 → scale 4. 32×32 squares at x=64 then 128, y=64.
  const { epoch, scenes } = movingSquare([0, 100], [64, 128], 1280, 720, 64, 32);
  const a = analyzeEpoch(
    input(epoch, { crop: { x: 2, y: 0, width: 1000, height: 200 } }),
    fakeOps(scenes).ops,
  );
  assertEquals(a.scale, 4);
  assertEquals(a.crop, { x: 0, y: 0 }, "the analyzed area starts at the scale-aligned origin");
  const s = a.measures[1].step;
  assert(s, "step");
  assertEquals(s.bounds, { x: 64, y: 64, width: 96, height: 32 }, "the squares span source x 64–160");
  assertEquals(s.centroid, { x: 112, y: 80 });
});
