import { assert, assertEquals } from "../../assert.ts";
import type { FrameRow } from "../../../src/capture/frames.ts";
import { epochAt, inPaintOrder, sinceDocument, splitEpochs } from "../../../src/temporal/frames.ts";
import { frameRow, MS } from "./frame_rows.ts";

/** Frames default to 800×600 with a matching viewport; `size` changes the image, `viewport` the page. */
function frame(
  id: number,
  tMs: number,
  size: [number, number] = [800, 600],
  viewport: FrameRow["viewport"] = { width: 800, height: 600, device_scale: 1 },
): FrameRow {
  return frameRow(id, tMs, size[0], size[1], viewport);
}

const ids = (frames: FrameRow[]) => frames.map((f) => f.frame_id);

Deno.test("splitEpochs: no frames, no epochs", () => {
  assertEquals(splitEpochs([]), []);
});

Deno.test("splitEpochs: frames of one geometry form one epoch spanning first to last frame", () => {
  const epochs = splitEpochs([frame(1, 100), frame(2, 200), frame(3, 350)]);
  assertEquals(epochs.length, 1);
  const e = epochs[0];
  assertEquals(e.index, 0);
  assertEquals([e.width, e.height], [800, 600]);
  assertEquals(e.viewport, { width: 800, height: 600, device_scale: 1 });
  assertEquals(ids(e.frames), [1, 2, 3]);
  assertEquals([e.start_ns, e.end_ns], [100 * MS, 350 * MS]);
});

Deno.test("splitEpochs: image size, viewport and device scale changes each start an epoch", () => {
  const vp = (width: number, height: number, device_scale: number) => ({ width, height, device_scale });
  const frames = [
    frame(1, 100),
    frame(2, 200),
    frame(3, 300, [1024, 600]), // image size
    frame(4, 400, [1024, 600]),
    frame(5, 500, [1024, 600], vp(1024, 600, 1)), // viewport
    frame(6, 600, [1024, 600], vp(1024, 600, 2)), // device scale
    frame(7, 700, [1024, 600], vp(1024, 600, 2)),
    frame(8, 800), // back to the first geometry: a new epoch, not the old one
  ];
  const epochs = splitEpochs(frames);
  assertEquals(epochs.map((e) => e.index), [0, 1, 2, 3, 4]);
  assertEquals(epochs.map((e) => ids(e.frames)), [[1, 2], [3, 4], [5], [6, 7], [8]]);
  assertEquals(epochs.map((e) => [e.start_ns / MS, e.end_ns / MS]), [
    [100, 200],
    [300, 400],
    [500, 500],
    [600, 700],
    [800, 800],
  ]);
  assertEquals(epochs.map((e) => [e.width, e.height]), [[800, 600], [1024, 600], [1024, 600], [1024, 600], [
    800,
    600,
  ]]);
  assertEquals(epochs.map((e) => e.viewport.device_scale), [1, 1, 1, 2, 1]);
  assertEquals(epochs.map((e) => e.viewport.width), [800, 800, 1024, 1024, 800]);
  assertEquals(epochs.flatMap((e) => ids(e.frames)), ids(frames), "frames stay in order, each once");
});

Deno.test("splitEpochs: height-only changes split too", () => {
  const epochs = splitEpochs([
    frame(1, 0),
    frame(2, 10, [800, 700]),
    frame(3, 20, [800, 700], { width: 800, height: 700, device_scale: 1 }),
  ]);
  assertEquals(epochs.map((e) => ids(e.frames)), [[1], [2], [3]]);
});

Deno.test("splitEpochs: sub-pixel viewport jitter does not split an epoch", () => {
  const epochs = splitEpochs([
    frame(1, 0, [800, 600], { width: 800, height: 600, device_scale: 1 }),
    frame(2, 10, [800, 600], { width: 800.3, height: 599.8, device_scale: 1 }),
  ]);
  assertEquals(epochs.length, 1);
  assertEquals(ids(epochs[0].frames), [1, 2]);
});

Deno.test("splitEpochs: an epoch's viewport is its own copy", () => {
  const f = frame(1, 0);
  const [e] = splitEpochs([f]);
  f.viewport.width = 1;
  assertEquals(e.viewport.width, 800);
});

Deno.test("epochAt: inside a span picks it; between spans the nearest, ties to the earlier", () => {
  const epochs = splitEpochs([
    frame(1, 100),
    frame(2, 200),
    frame(3, 500, [1024, 600]),
    frame(4, 600, [1024, 600]),
    frame(5, 900, [640, 480]),
  ]);
  const at = (tMs: number) => epochAt(epochs, tMs * MS)?.index;
  assertEquals(at(100), 0, "first frame");
  assertEquals(at(150), 0);
  assertEquals(at(200), 0, "last frame of the epoch");
  // Between spans (200 and 500) the nearest span wins; 350 is equally far and goes to the earlier.
  assertEquals(at(300), 0);
  assertEquals(at(350), 0, "a tie between spans picks the earlier epoch");
  assertEquals(at(351), 1);
  assertEquals(at(499), 1);
  assertEquals(at(500), 1, "the next epoch's first frame");
  assertEquals(at(650), 1);
  assertEquals(at(900), 2);
  assertEquals(at(5000), 2, "after the last frame: the last epoch");
  assertEquals(at(0), 0, "before the first frame: the nearest, the first");
});

Deno.test("epochAt: an exact tie in distance picks the earlier epoch", () => {
  // Two epochs whose first frames share one instant: an anchor before both is equally far from each.
  const epochs = splitEpochs([frame(1, 100), frame(2, 100, [1024, 600]), frame(3, 300, [1024, 600])]);
  assertEquals(epochs.length, 2);
  assertEquals(epochAt(epochs, 50 * MS)?.index, 0);
  assertEquals(epochAt(epochs, 100 * MS)?.index, 0, "both spans contain the instant: the earlier one");
});

Deno.test("epochAt: no epochs, no answer", () => {
  assert(epochAt([], 0) === undefined);
});

/** A frame received at recvMs that Chrome stamped as painted at paintS seconds (its own clock). */
function painted(id: number, recvMs: number, paintS: number | null): FrameRow {
  return { ...frame(id, recvMs), chrome_timestamp: paintS };
}

Deno.test("inPaintOrder: frames delivered out of order are put back in paint order and timed at their paint", () => {
  // Chrome's clock is 1000 s ahead; the fastest delivery (frame 1) took 5 ms; frame 3 was painted
  // before frame 2 but delivered 100 ms late.
  const frames = [painted(1, 105, 1000.1), painted(2, 215, 1000.2), painted(3, 255, 1000.15)];
  const out = inPaintOrder(frames);
  assertEquals(ids(out), [1, 3, 2]);
  assertEquals(out.map((f) => f.session_time_ms), [105, 155, 205]);
  assertEquals(out.map((f) => f.session_time_ns), [105 * MS, 155 * MS, 205 * MS]);
  // No frame is timed after its receipt.
  const received = new Map(frames.map((f) => [f.frame_id, f.session_time_ns]));
  for (const f of out) assert(f.session_time_ns <= (received.get(f.frame_id) ?? 0), `frame ${f.frame_id}`);
});

Deno.test("inPaintOrder: frames without a usable Chrome timestamp keep their receipt time", () => {
  const out = inPaintOrder([painted(1, 100, null), painted(2, 150, 0), painted(3, 120, 500.11)]);
  assertEquals(out.map((f) => [f.frame_id, f.session_time_ms]), [[1, 100], [3, 120], [2, 150]]);
  assertEquals(inPaintOrder([]), []);
});

Deno.test("sinceDocument: frames of an earlier document are left out once the document has painted", () => {
  const frames = [frame(1, 100), frame(2, 400), frame(3, 500), frame(4, 900)];
  // The navigation committed at 300 ms and the document painted at 400 ms, before the click at 600 ms.
  const kept = sinceDocument(frames, 300 * MS, 600 * MS);
  assertEquals([ids(kept.frames), kept.dropped], [[2, 3, 4], 1]);
  // Not painted by the click yet: the earlier page is what the screen showed, and stays.
  assertEquals(sinceDocument(frames, 300 * MS, 350 * MS), { frames, dropped: 0 });
  // The range already starts in the document: nothing to drop.
  assertEquals(sinceDocument(frames, 50 * MS, 600 * MS), { frames, dropped: 0 });
  // No frame of the document at all.
  assertEquals(sinceDocument(frames, 1000 * MS, 2000 * MS), { frames, dropped: 0 });
});
