/** Visual predicates over synthetic pixels: region mapping, the two predicates, and the bounded flip scan. */
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import {
  canonicalPredicate,
  evaluatePredicate,
  isVisualPredicate,
  parsePredicate,
  PredicateError,
  predicateSchema,
} from "../../../src/pagestate/predicates.ts";
import type { DomNode } from "../../../src/pagestate/dom_types.ts";
import { parseSelector } from "../../../src/pagestate/selector.ts";
import { createImage, type Rect, type RgbaImage } from "../../../src/vision/image.ts";
import {
  canonicalVisual,
  changedShare,
  clipRegion,
  decodeScale,
  evaluateVisual,
  hexOf,
  meanColor,
  parseHex,
  regionGrid,
  sampleRegion,
  scanIndices,
} from "../../../src/temporal/visual_predicates.ts";

function fill(img: RgbaImage, r: Rect, rgb: [number, number, number]): RgbaImage {
  for (let y = r.y; y < r.y + r.height; y++) {
    for (let x = r.x; x < r.x + r.width; x++) {
      const i = (y * img.width + x) * 4;
      img.data[i] = rgb[0];
      img.data[i + 1] = rgb[1];
      img.data[i + 2] = rgb[2];
    }
  }
  return img;
}

const viewport = { width: 400, height: 300 };

Deno.test("visual predicates: the schema takes both kinds strictly and bounded", () => {
  const region = { x: 10, y: 20, width: 100, height: 50 };
  for (
    const good of [
      { kind: "regionChanged", region, threshold: 0.2 },
      { kind: "regionChanged", region },
      { kind: "regionColor", region, color: "#FF0000", tolerance: 30 },
      { kind: "regionColor", region, color: "#00ff00" },
    ]
  ) {
    const r = predicateSchema.safeParse(good);
    assert(r.success, JSON.stringify(good));
    assert(isVisualPredicate(r.data), good.kind);
  }
  for (
    const bad of [
      { kind: "regionChanged", region, threshold: 1.5 },
      { kind: "regionChanged", region, threshold: -0.1 },
      { kind: "regionChanged" },
      { kind: "regionChanged", region: { ...region, width: 0 } },
      { kind: "regionChanged", region: { ...region, x: -1 } },
      { kind: "regionChanged", region: { ...region, depth: 1 } },
      { kind: "regionChanged", region, extra: true },
      { kind: "regionColor", region, color: "red" },
      { kind: "regionColor", region, color: "#ff000" },
      { kind: "regionColor", region, color: "#ff0000", tolerance: 256 },
      { kind: "regionColor", region, color: "#ff0000", selector: "#x" },
    ]
  ) {
    assert(!predicateSchema.safeParse(bad).success, `refused: ${JSON.stringify(bad)}`);
  }
  assert(!isVisualPredicate({ kind: "exists" }));
});

Deno.test("visual predicates: every DOM evaluator refuses a visual kind, as not applicable", () => {
  const p = { kind: "regionColor" as const, region: { x: 0, y: 0, width: 1, height: 1 }, color: "#ffffff" };
  const doc: DomNode = {
    id: 1,
    kind: "document",
    tag: "",
    attrs: new Map(),
    text: "",
    parent: undefined,
    children: [],
  };
  for (
    const run of [
      () => parsePredicate(p),
      () => canonicalPredicate(p),
      () => evaluatePredicate(doc, parseSelector("#missing"), p),
    ]
  ) {
    const e = assertThrows(run);
    assert(e instanceof PredicateError && e.code === "predicate_not_applicable", String(e));
    assert(e.message.includes("visual predicate"), e.message);
  }
});

Deno.test("visual predicates: defaults, and colours as #rrggbb", () => {
  const region = { x: 0, y: 0, width: 10, height: 10 };
  assertEquals(canonicalVisual({ kind: "regionChanged", region }), {
    kind: "regionChanged",
    region,
    threshold: 0.01,
  });
  assertEquals(canonicalVisual({ kind: "regionColor", region, color: "#Ff8001" }), {
    kind: "regionColor",
    region,
    color: [255, 128, 1],
    tolerance: 24,
  });
  assertEquals(parseHex("#102030"), [16, 32, 48]);
  assertEquals(hexOf([255, 0, 127.6]), "#ff0080");
});

Deno.test("visual predicates: regions clip to the viewport; the decode scale keeps the region legible", () => {
  assertEquals(clipRegion({ x: 350, y: 250, width: 100, height: 100 }, viewport), {
    x: 350,
    y: 250,
    width: 50,
    height: 50,
  });
  assertEquals(clipRegion({ x: 400, y: 0, width: 10, height: 10 }, viewport), undefined);
  // 800-px frame of a 400-px viewport (device scale 2): a 400×300 region is 600 px high, /8 = 75 ≥ 48.
  assertEquals(decodeScale({ x: 0, y: 0, width: 400, height: 300 }, 800, viewport), 8);
  assertEquals(decodeScale({ x: 0, y: 0, width: 100, height: 100 }, 800, viewport), 4);
  assertEquals(decodeScale({ x: 0, y: 0, width: 60, height: 200 }, 400, viewport), 1);
  assertEquals(decodeScale({ x: 0, y: 0, width: 100, height: 200 }, 400, viewport), 2);
  assertEquals(regionGrid({ x: 0, y: 0, width: 100, height: 50 }, { width: 200, height: 150 }, viewport), {
    cols: 50,
    rows: 25,
  });
  assertEquals(regionGrid({ x: 0, y: 0, width: 400, height: 300 }, { width: 4000, height: 3000 }, viewport), {
    cols: 384,
    rows: 384,
  });
});

Deno.test("visual predicates: CSS px map onto the image's own pixels at any device or decode scale", () => {
  const region = { x: 100, y: 50, width: 40, height: 20 };
  // The same page at device scale 2 (800×600) and as a 1/4 decode of it (200×150).
  const full = fill(createImage(800, 600, [255, 255, 255]), { x: 200, y: 100, width: 80, height: 40 }, [
    200,
    0,
    0,
  ]);
  const quarter = fill(createImage(200, 150, [255, 255, 255]), { x: 50, y: 25, width: 20, height: 10 }, [
    200,
    0,
    0,
  ]);
  const grid = regionGrid(region, quarter, viewport);
  assertEquals(grid, { cols: 20, rows: 10 });
  const a = sampleRegion(full, viewport, region, grid);
  const b = sampleRegion(quarter, viewport, region, grid);
  assertEquals(a, b);
  assertEquals(meanColor(a), [200, 0, 0]);
  // A region straddling the box's edge averages both.
  const half = sampleRegion(full, viewport, { x: 120, y: 50, width: 40, height: 20 }, grid);
  assertEquals(meanColor(half).map(Math.round), [228, 128, 128]);
});

Deno.test("visual predicates: regionChanged counts pixels past the channel delta, beyond the threshold", () => {
  const region = { x: 0, y: 0, width: 100, height: 100 };
  const grid = regionGrid(region, { width: 100, height: 100 }, { width: 100, height: 100 });
  const vp = { width: 100, height: 100 };
  const base = sampleRegion(createImage(100, 100, [100, 100, 100]), vp, region, grid);
  const p = canonicalVisual({ kind: "regionChanged", region, threshold: 0.1 });
  // JPEG-like noise: every pixel moved by 24 — not a change.
  const noisy = sampleRegion(createImage(100, 100, [124, 76, 124]), vp, region, grid);
  assertEquals(changedShare(base, noisy), 0);
  assertEquals(evaluateVisual(p, noisy, base).value, false);
  // Exactly 10% of pixels changed is not beyond 0.1; 11% is.
  const ten = sampleRegion(
    fill(createImage(100, 100, [100, 100, 100]), { x: 0, y: 0, width: 100, height: 10 }, [
      125,
      100,
      100,
    ]),
    vp,
    region,
    grid,
  );
  assertEquals(evaluateVisual(p, ten, base), { value: false, measure: { changed_share: 0.1 } });
  const eleven = sampleRegion(
    fill(createImage(100, 100, [100, 100, 100]), { x: 0, y: 0, width: 100, height: 11 }, [100, 100, 160]),
    vp,
    region,
    grid,
  );
  assertEquals(evaluateVisual(p, eleven, base), { value: true, measure: { changed_share: 0.11 } });
  // An equal-luma hue change still counts (a channel test, not luma).
  const red = sampleRegion(createImage(100, 100, [180, 60, 100]), vp, region, grid);
  const green = sampleRegion(createImage(100, 100, [60, 120, 100]), vp, region, grid);
  assert(Math.abs((180 * 299 + 60 * 587) - (60 * 299 + 120 * 587)) < 2_000, "near-equal luma");
  assertEquals(changedShare(red, green), 1);
});

Deno.test("visual predicates: regionColor is the mean colour within the max-channel tolerance", () => {
  const region = { x: 0, y: 0, width: 10, height: 10 };
  const vp = { width: 10, height: 10 };
  const grid = regionGrid(region, { width: 10, height: 10 }, vp);
  const p = canonicalVisual({ kind: "regionColor", region, color: "#ff0000", tolerance: 20 });
  const nearRed = sampleRegion(createImage(10, 10, [240, 12, 20]), vp, region, grid);
  assertEquals(evaluateVisual(p, nearRed, nearRed), {
    value: true,
    measure: { mean_color: "#f00c14", distance: 20 },
  });
  const orange = sampleRegion(createImage(10, 10, [250, 30, 0]), vp, region, grid);
  assertEquals(evaluateVisual(p, orange, orange).value, false);
  // Half red, half white: the mean (255,128,128) is far from red.
  const split = sampleRegion(
    fill(createImage(10, 10, [255, 255, 255]), { x: 0, y: 0, width: 10, height: 5 }, [255, 0, 0]),
    vp,
    region,
    grid,
  );
  assertEquals(evaluateVisual(p, split, split).value, false);
});

Deno.test("visual predicates: within budget every frame is evaluated and every flip reported", () => {
  const truth = [false, false, true, true, false, true, true, true];
  const asked: number[] = [];
  const scan = scanIndices(truth.length, 360, (i) => {
    asked.push(i);
    return truth[i];
  });
  assertEquals(scan.transitions, [
    { index: 2, previous: 1, from: false, to: true },
    { index: 4, previous: 3, from: true, to: false },
    { index: 5, previous: 4, from: false, to: true },
  ]);
  assertEquals([scan.initial, scan.final, scan.probes, scan.sampled], [false, true, 8, false]);
  assertEquals(asked, [0, 1, 2, 3, 4, 5, 6, 7], "each index once");
});

Deno.test("visual predicates: beyond budget the scan samples evenly and bisects each flip exactly", () => {
  const n = 10_000;
  const flips = [1_234, 5_000, 7_777];
  const valueAt = (i: number) => flips.filter((f) => i >= f).length % 2 === 1;
  let calls = 0;
  const scan = scanIndices(n, 360, (i) => {
    calls++;
    return valueAt(i);
  });
  assert(scan.sampled);
  assert(scan.probes <= 360 && calls === scan.probes, `${scan.probes} probes, ${calls} calls`);
  assertEquals(scan.transitions.map((t) => [t.index, t.previous, t.to]), [
    [1_234, 1_233, true],
    [5_000, 4_999, false],
    [7_777, 7_776, true],
  ]);
  // A budget too small to narrow: the flip is bracketed, not exact, and never over budget.
  const tight = scanIndices(n, 12, valueAt);
  assert(tight.probes <= 12, String(tight.probes));
  // Each reported transition brackets a real flip: previous < flip ≤ index.
  assertEquals(tight.transitions.length, 3, JSON.stringify(tight.transitions));
  tight.transitions.forEach((t, k) =>
    assert(t.previous < flips[k] && flips[k] <= t.index, JSON.stringify(t))
  );
  assert(tight.transitions.some((t) => t.index - t.previous > 1), JSON.stringify(tight.transitions));
});
