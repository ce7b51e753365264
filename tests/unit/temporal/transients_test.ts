import { assert, assertEquals } from "../../assert.ts";
import { frameRow } from "./frame_rows.ts";
import { sceneOps } from "./scene_ops.ts";
import { analyzeEpoch } from "../../../src/temporal/analysis.ts";
import { changeRegions } from "../../../src/temporal/change_regions.ts";
import { splitEpochs } from "../../../src/temporal/frames.ts";
import {
  colourName,
  describeTransients,
  lookApart,
  looksFinal,
  regionTimelines,
} from "../../../src/temporal/transients.ts";
import { createImage, type Rect } from "../../../src/vision/image.ts";

/** Frames at the given times (64×32) showing the given rectangles; analyzed from the first frame. */
function analysisOf(times: number[], scenes: Rect[][]) {
  const frames = times.map((t, i) => frameRow(i + 1, t));
  const ops = sceneOps(new Map(frames.map((f, i) => [f.frame_id, scenes[i]])));
  const [epoch] = splitEpochs(frames);
  const a = analyzeEpoch(
    { epoch, start_ns: epoch.start_ns, end_ns: epoch.end_ns, anchor_ns: 0, gaps: [] },
    ops,
  );
  const regions = changeRegions(a.change, a.scale);
  const decode = (k: number) => ops.decode(a.measures[k].frame, a.scale);
  return { a, regions, decode };
}

const box: Rect = { x: 16, y: 8, width: 16, height: 16 };

Deno.test("regionTimelines: a flash is one transient state between two changes", () => {
  const { a, regions, decode } = analysisOf([0, 100, 260, 400], [[], [box], [], []]);
  assertEquals(regions.length, 1);
  const [t] = regionTimelines(a, regions, 0);
  assertEquals([t.changes, t.first_change_ms, t.last_change_ms], [2, 100, 260]);
  assertEquals(t.states.map((s) => [s.shown, s.replaced, s.appeared_ms, s.replaced_ms]), [[1, 2, 100, 260]]);
  const d = describeTransients(a, [t], decode);
  assertEquals(d.transient_states.length, 1);
  const s = d.transient_states[0];
  assertEquals([s.colour, s.appeared_ms, s.replaced_ms, s.duration_ms], ["black", 100, 260, 160]);
  assertEquals([s.frame_id, s.replaced_by_frame_id, s.looks_final], [2, 3, null]);
  assertEquals(s.bounds, box);
  assertEquals(d.repeated_changes, [{
    bounds: t.region,
    changes: 2,
    first_change_ms: 100,
    last_change_ms: 260,
  }]);
});

Deno.test("regionTimelines: a blink repeated is several states, one of them the final look; four changes", () => {
  const { a, regions, decode } = analysisOf([0, 100, 200, 300, 400, 600], [[], [box], [], [box], [], []]);
  const [t] = regionTimelines(a, regions, 0);
  assertEquals(t.changes, 4);
  const d = describeTransients(a, [t], decode);
  assertEquals(
    d.transient_states.map((s) => [s.appeared_ms, s.replaced_ms, s.looks_final]),
    [[100, 200, null], [200, 300, "identical"], [300, 400, null]],
  );
});

Deno.test("regionTimelines: change closer together than a state lasts is one episode (motion), not states", () => {
  // The square slides over five frames 16 ms apart, then stays: one change, no transient state.
  const times = [0, 100, 116, 132, 148, 164, 400];
  const xs = [null, 8, 16, 24, 32, 40, 40];
  const { a, regions } = analysisOf(
    times,
    xs.map((x) => (x === null ? [] : [{ x, y: 8, width: 8, height: 8 }])),
  );
  const [t] = regionTimelines(a, regions, 0);
  assertEquals([t.changes, t.states.length], [1, 0]);
});

Deno.test("regionTimelines: change before `from` (the frame on screen at dispatch) is not counted", () => {
  const { a, regions } = analysisOf([0, 100, 200, 300], [[], [box], [box], []]);
  const [t] = regionTimelines(a, regions, 2);
  assertEquals([t.changes, t.states.length, t.first_change_ms], [1, 0, 300]);
  assertEquals(regionTimelines(a, regions, 3), [], "nothing changed after the last frame");
});

Deno.test("colourName: dominant hue families and greys", () => {
  const cases: Array<[[number, number, number], string]> = [
    [[208, 24, 24], "red"],
    [[240, 140, 0], "orange"],
    [[230, 210, 30], "yellow"],
    [[24, 160, 64], "green"],
    [[20, 200, 210], "cyan"],
    [[16, 64, 192], "blue"],
    [[120, 40, 200], "purple"],
    [[255, 0, 255], "magenta"],
    [[244, 244, 244], "white"],
    [[180, 182, 178], "light grey"],
    [[120, 120, 125], "grey"],
    [[60, 58, 62], "dark grey"],
    [[10, 10, 10], "black"],
  ];
  for (const [[r, g, b], name] of cases) assertEquals(colourName(r, g, b), name, `${r},${g},${b}`);
});

Deno.test("lookApart: bounds and colour of what differs inside the rectangle only", () => {
  const a = createImage(20, 10, [240, 240, 240]);
  const b = createImage(20, 10, [240, 240, 240]);
  for (let y = 2; y < 5; y++) for (let x = 3; x < 9; x++) a.data.set([210, 20, 20], (y * 20 + x) * 4);
  a.data.set([0, 0, 255], (8 * 20 + 18) * 4); // outside the rectangle asked about
  const look = lookApart(a, b, { x: 0, y: 0, width: 12, height: 8 }, 12);
  assertEquals(look, { bounds: { x: 3, y: 2, width: 6, height: 3 }, pixels: 18, colour: "red" });
  assertEquals(lookApart(b, b, { x: 0, y: 0, width: 20, height: 10 }, 12), {
    bounds: null,
    pixels: 0,
    colour: null,
  });
  assert(lookApart(a, b, { x: 0, y: 0, width: 20, height: 10 }, 12).bounds?.width === 16);
});

Deno.test("lookApart: a moved panel is named by the panel, not by the background it uncovered", () => {
  // 40 columns: the panel (blue) covers 10..19 in the look and 5..14 in its replacement; before the
  // action it was far away (30..39). Half of what differs is blue, half the grey background.
  const paint = (from: number) => {
    const img = createImage(40, 4, [244, 244, 244]);
    for (let y = 0; y < 4; y++) {
      for (let x = from; x < from + 10; x++) img.data.set([16, 64, 192], (y * 40 + x) * 4);
    }
    return img;
  };
  const [look, replacement, before] = [paint(10), paint(5), paint(30)];
  const rect = { x: 0, y: 0, width: 40, height: 4 };
  assertEquals(lookApart(look, replacement, rect, 12).pixels, 40);
  assertEquals(lookApart(look, replacement, rect, 12, before).colour, "blue");
});

Deno.test("looksFinal: identical, or nearly: a sliver apart from the final frame next to a real replacement", () => {
  const look = (pixels: number) => ({ bounds: null, pixels, colour: null });
  assertEquals(looksFinal(look(0), look(10)), "identical");
  assertEquals(looksFinal(look(60), look(600)), "nearly", "a moved edge a pixel short of rest");
  assertEquals(looksFinal(look(150), look(400)), null, "more than a sixth of the replacement's difference");
});

Deno.test("describeTransients: a moving thing caught mid-way is passing motion; a stop on the way is a state", () => {
  const square = (x: number) => [{ x, y: 8, width: 16, height: 16 }];
  // Steps 40 ms apart (an uneven capture of a slide): each look lies between its neighbours.
  const sliding = analysisOf([0, 100, 140, 180, 400], [8, 12, 16, 20, 20].map(square));
  const [t] = regionTimelines(sliding.a, sliding.regions, 0);
  assertEquals([t.changes, t.states.length], [3, 2]);
  assertEquals(describeTransients(sliding.a, [t], sliding.decode).transient_states, []);
  // The same slide with a 200 ms stop at x 16.
  const stopping = analysisOf([0, 100, 140, 340, 500], [8, 12, 16, 20, 20].map(square));
  const [s] = regionTimelines(stopping.a, stopping.regions, 0);
  const states = describeTransients(stopping.a, [s], stopping.decode).transient_states;
  assertEquals(states.map((x) => [x.appeared_ms, x.replaced_ms]), [[140, 340]]);
});

Deno.test("describeTransients: in a busy region painted sparsely, a reversal's held extreme is still a state", () => {
  // A loaded machine's capture of fixtures/site/reversal.html (paint ms, panel offset px; 1/8 scale):
  // forward to 480, held 150 ms, back to 440, forward to rest at 480; then a last small repaint as the
  // animation ends. Every look is held long, so the hold does not stand out by duration.
  const seq: Array<[number, number]> = [
    [0, 0],
    [200, 0],
    [233, 0],
    [283, 0],
    [300, 44],
    [367, 200],
    [383, 236],
    [533, 460],
    [550, 472],
    [633, 480],
    [783, 440],
    [917, 456],
    [1033, 480],
    [1233, 480],
    [1250, 480],
  ];
  const frames = seq.map(([t], i) => frameRow(i + 1, t, 128, 32));
  const ops = sceneOps(
    new Map(frames.map((f, i) => [f.frame_id, [
      { x: 5 + seq[i][1] / 8, y: 8, width: 20, height: 16 },
      ...(i >= 13 ? [{ x: 70, y: 26, width: 2, height: 2 }] : []),
    ]])),
  );
  const [epoch] = splitEpochs(frames);
  const a = analyzeEpoch(
    { epoch, start_ns: epoch.start_ns, end_ns: epoch.end_ns, anchor_ns: 0, gaps: [] },
    ops,
  );
  const timelines = regionTimelines(a, changeRegions(a.change, a.scale), 0);
  assert(timelines.some((t) => t.busy_min_ms !== null), "the reversal's region is busy");
  const states = describeTransients(a, timelines, (k) => ops.decode(a.measures[k].frame, a.scale))
    .transient_states.map((s) => [s.frame_id, s.appeared_ms, s.replaced_ms]);
  assert(
    states.some(([id]) => id === 10),
    `the extreme (frame 10, 633–783 ms) is a state: ${JSON.stringify(states)}`,
  );
  assert(
    states.some(([id]) => id === 11),
    `so is the step back it turned at (frame 11): ${JSON.stringify(states)}`,
  );
  assert(!states.some(([id]) => id === 12 || id === 9), `passing looks are not: ${JSON.stringify(states)}`);
});
