import { assert, assertEquals } from "../../assert.ts";
import { encodeTestJpeg } from "../vision/jpeg_test_encoder.ts";
import {
  jpegScan,
  newPictures,
  pictureComparer,
  type StampedFrame,
  streamPace,
  visibleChange,
} from "../../../src/capture/frame_identity.ts";

const W = 160;
const H = 96;

/** A grey page with optional dark rectangles [x, y, w, h]. */
function page(rects: Array<[number, number, number, number]> = []): Uint8Array {
  const rgba = new Uint8Array(W * H * 4).fill(200);
  for (const [x0, y0, w, h] of rects) {
    for (let y = y0; y < y0 + h; y++) {
      for (let x = x0; x < x0 + w; x++) rgba.fill(20, (y * W + x) * 4, (y * W + x) * 4 + 3);
    }
  }
  return encodeTestJpeg({ width: W, height: H, rgba, color: "ycc", quality: 60 });
}

/** The same JPEG with an ICC (APP2) segment after SOI, as Chrome's screenshots carry. */
function withIcc(jpeg: Uint8Array): Uint8Array {
  const app2 = [0xff, 0xe2, 0x00, 0x06, 1, 2, 3, 4];
  return new Uint8Array([...jpeg.subarray(0, 2), ...app2, ...jpeg.subarray(2)]);
}

Deno.test("jpegScan: the size from the frame header and the bytes from start-of-scan on", () => {
  const jpeg = page();
  const scan = jpegScan(jpeg);
  assert(scan, "parsed");
  assertEquals([scan.width, scan.height], [W, H]);
  assertEquals([scan.scan[0], scan.scan[1]], [0xff, 0xda]);
  assertEquals(jpegScan(withIcc(jpeg))?.scan.length, scan.scan.length);
  assertEquals(jpegScan(new Uint8Array([0xff, 0xd8, 0x00])), undefined);
  assertEquals(jpegScan(new Uint8Array([1, 2, 3, 4])), undefined);
});

Deno.test("pictureComparer: same pixels with another header are the same; a caret is slight; a region is visible", () => {
  const base = page([[20, 20, 40, 16]]);
  const compare = pictureComparer(withIcc(base));
  assertEquals(compare(base), "same");
  // A 2 px caret, 20 px tall.
  assertEquals(compare(page([[20, 20, 40, 16], [100, 40, 2, 20]])), "slight");
  // A 40 px square elsewhere (a spinner's size) and a banner.
  assertEquals(compare(page([[20, 20, 40, 16], [100, 40, 40, 40]])), "visible");
  assertEquals(compare(page([[0, 60, 160, 30]])), "visible");
  // Another size, or not a JPEG: not comparable.
  const other = encodeTestJpeg({ width: 80, height: 48, rgba: new Uint8Array(80 * 48 * 4), color: "ycc" });
  assertEquals(compare(other), undefined);
  assertEquals(compare(new Uint8Array([0x89, 0x50, 0x4e, 0x47])), undefined);
});

Deno.test("visibleChange: a one- or two-block-wide column is slight; a 3×2 region or 8 blocks are visible", () => {
  const column = (x: number, n: number) => Array.from({ length: n }, (_, y) => ({ x, y }));
  assertEquals(visibleChange([]), false);
  assertEquals(visibleChange(column(4, 3)), false);
  assertEquals(visibleChange([...column(4, 3), ...column(5, 3)]), false);
  assertEquals(visibleChange([{ x: 1, y: 1 }, { x: 3, y: 2 }]), true);
  assertEquals(visibleChange([...column(4, 4), ...column(5, 4)]), true);
});

Deno.test("newPictures: new pictures in the window count; a repaint of the same does not", () => {
  const frame = (ordinal: number, stampMs: number, data: string): StampedFrame => ({
    ordinal,
    recvNs: ordinal,
    stampMs,
    data,
  });
  // Delivered out of order; judged in stamp order.
  const frames = [frame(3, 300, "b"), frame(1, 100, "a"), frame(2, 200, "a"), frame(4, 400, "c")];
  assertEquals(newPictures(frames, 150, 250), 0, "200 repaints 100's picture");
  assertEquals(newPictures(frames, 250, 450), 2, "300 and 400 are new pictures");
  assertEquals(newPictures(frames, 500, 600), 0, "nothing stamped there");
  assertEquals(newPictures(frames, 50, 150), 1, "the first frame has no known predecessor");
  assertEquals(
    newPictures([{ ordinal: 1, recvNs: 1, data: "a" }], 0, 1e9),
    0,
    "unstamped frames are left out",
  );
});

Deno.test("streamPace: the median recent gap (pauses left out) and the slowest recent delivery", () => {
  const frame = (ordinal: number, stampMs: number, latencyMs: number): StampedFrame => ({
    ordinal,
    recvNs: ordinal,
    stampMs,
    latencyMs,
    data: String(ordinal),
  });
  // A page painting every 50 ms after a 2 s pause, delivered 10–40 ms late; separate paints are no pace.
  const frames = [
    frame(1, 0, 10),
    frame(2, 2000, 20),
    frame(3, 2050, 40),
    frame(4, 2100, 10),
    frame(5, 2150, 15),
  ];
  assertEquals(streamPace(frames, 3000), { intervalMs: 50, latencyMs: 40 });
  assertEquals(streamPace(frames, 2060).intervalMs, 50, "frames stamped later are left out");
  assertEquals(
    streamPace([], 0),
    { intervalMs: 1000 / 60, latencyMs: 0 },
    "one 60 Hz frame when nothing is known",
  );
});
