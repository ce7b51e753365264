import { decode, encode } from "fast-png";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { ToolError } from "../../../src/errors.ts";
import { fillRect } from "../../../src/vision/draw.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import { encodePng } from "../../../src/vision/png.ts";
import { decodeScreenshot, NOISE_FLOOR, visualDifference } from "../../../src/scenario/visual_diff.ts";

/** A small UI-like picture: a gradient page, a header bar and a few boxes, deterministic. */
function page(width: number, height: number): RgbaImage {
  const img = createImage(width, height, [250, 250, 250]);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = (y * width + x) * 4;
      img.data[o] = 200 + ((x * 37) % 50);
      img.data[o + 1] = 210 + ((y * 13) % 40);
      img.data[o + 2] = 230 - ((x + y) % 30);
    }
  }
  fillRect(img, { x: 0, y: 0, width, height: 12 }, [30, 60, 120]);
  fillRect(img, { x: 10, y: 20, width: 30, height: 16 }, [20, 20, 20]);
  return img;
}

function clone(img: RgbaImage): RgbaImage {
  return { width: img.width, height: img.height, data: img.data.slice() };
}

function pixel(img: RgbaImage, x: number, y: number): number[] {
  const o = (y * img.width + x) * 4;
  return [...img.data.subarray(o, o + 4)];
}

Deno.test("identical screenshots: nothing changed, no bounds, a greyscale overlay of the same size", () => {
  const png = encodePng(page(96, 64));
  const d = visualDifference(png, encodePng(page(96, 64)));
  assertEquals(d.changed_pixels, 0);
  assertEquals(d.changed_proportion, 0);
  assertEquals(d.bounds, null);
  assertEquals(d.size_mismatch, null);
  assertEquals([d.width, d.height], [96, 64]);
  const overlay = decodeScreenshot(d.png);
  assertEquals([overlay.width, overlay.height], [96, 64]);
  for (let i = 0; i < overlay.data.length; i += 4) {
    const [r, g, b] = overlay.data.subarray(i, i + 3);
    assert(r === g && g === b, `pixel ${i / 4} is not grey: ${r},${g},${b}`);
  }
});

Deno.test("a changed rectangle: bounds are exactly it, the overlay paints it and outlines it", () => {
  const before = page(120, 80);
  const after = clone(before);
  const box = { x: 57, y: 31, width: 23, height: 11 };
  fillRect(after, box, [220, 30, 30]);
  const d = visualDifference(encodePng(before), encodePng(after));
  assertEquals(d.bounds, box);
  assertEquals(d.pixel_bounds, box, "at scale 1 CSS px are image px");
  assertEquals(d.changed_pixels, box.width * box.height);
  assertEquals(d.changed_proportion, (box.width * box.height) / (120 * 80));
  const overlay = decodeScreenshot(d.png);
  assertEquals(pixel(overlay, 60, 35), [255, 0, 170, 255], "changed pixel highlighted");
  assertEquals(pixel(overlay, box.x - 1, box.y + 5), [255, 214, 0, 255], "bounds outlined just outside");
  assertEquals(pixel(overlay, box.x + box.width, box.y + 5), [255, 214, 0, 255], "right edge outlined");
  const [r, g, b] = pixel(overlay, 5, 60);
  assert(r === g && g === b && r < 170, `far pixel is dimmed grey: ${r},${g},${b}`);
});

Deno.test("at device scale 2 bounds are CSS px, widened to whole pixels; pixel_bounds stay image px", () => {
  const before = page(120, 80);
  const after = clone(before);
  const box = { x: 57, y: 31, width: 23, height: 11 };
  fillRect(after, box, [220, 30, 30]);
  const d = visualDifference(encodePng(before), encodePng(after), { device_scale_factor: 2 });
  assertEquals(d.pixel_bounds, box);
  // 57..80 → 28..40, 31..42 → 15..21
  assertEquals(d.bounds, { x: 28, y: 15, width: 12, height: 6 });
  assertEquals(d.device_scale_factor, 2);
  const bad = assertThrows(() =>
    visualDifference(encodePng(before), encodePng(after), { device_scale_factor: 0 })
  );
  assert(bad instanceof ToolError && bad.code === "invalid_arguments", bad.message);
});

Deno.test("two separate changes: bounds span both", () => {
  const before = page(100, 100);
  const after = clone(before);
  fillRect(after, { x: 5, y: 70, width: 4, height: 4 }, [0, 0, 0]);
  fillRect(after, { x: 80, y: 15, width: 6, height: 3 }, [255, 255, 0]);
  const d = visualDifference(encodePng(before), encodePng(after));
  assertEquals(d.bounds, { x: 5, y: 15, width: 81, height: 59 });
  assertEquals(d.changed_pixels, 16 + 18);
});

Deno.test("noise at the floor is ignored, one level above it counts", () => {
  const before = page(64, 48);
  const within = clone(before);
  const above = clone(before);
  for (let i = 0; i < within.data.length; i += 4) {
    // Alternating ± jitter on every channel, as antialiasing produces, clamped inside 0–255.
    const s = (i / 4) % 2 === 0 ? 1 : -1;
    for (let c = 0; c < 3; c++) {
      within.data[i + c] = Math.max(0, Math.min(255, before.data[i + c] + s * NOISE_FLOOR));
    }
  }
  const quiet = visualDifference(encodePng(before), encodePng(within));
  assertEquals(quiet.changed_pixels, 0);
  assertEquals(quiet.bounds, null);
  const o = (20 * 64 + 30) * 4;
  above.data[o + 1] = before.data[o + 1] + NOISE_FLOOR + 1;
  const loud = visualDifference(encodePng(before), encodePng(above));
  assertEquals(loud.changed_pixels, 1);
  assertEquals(loud.bounds, { x: 30, y: 20, width: 1, height: 1 });
  const strict = visualDifference(encodePng(before), encodePng(within), { noise_floor: 0 });
  assert(strict.changed_pixels > 64 * 48 / 2, `floor 0 counts the jitter (${strict.changed_pixels})`);
  assertEquals(strict.noise_floor, 0);
});

Deno.test("different sizes: the overlap is compared, the mismatch is reported, the rest is hatched", () => {
  const before = page(100, 80);
  const after = page(120, 60);
  // page() depends on width only through x, so the overlap starts out identical.
  const same = visualDifference(encodePng(before), encodePng(after));
  assertEquals([same.width, same.height], [100, 60]);
  assertEquals(same.changed_pixels, 0);
  assertEquals(same.bounds, null);
  assertEquals(same.size_mismatch, {
    before: { width: 100, height: 80 },
    after: { width: 120, height: 60 },
    compared: { width: 100, height: 60 },
  });
  const changed = clone(after);
  fillRect(changed, { x: 40, y: 30, width: 10, height: 10 }, [0, 200, 0]);
  fillRect(changed, { x: 105, y: 5, width: 10, height: 10 }, [0, 200, 0]); // outside the overlap
  const d = visualDifference(encodePng(before), encodePng(changed));
  assertEquals(d.bounds, { x: 40, y: 30, width: 10, height: 10 });
  assertEquals(d.changed_proportion, 100 / (100 * 60));
  const overlay = decodeScreenshot(d.png);
  assertEquals([overlay.width, overlay.height], [120, 60], "the overlay keeps the after image's size");
  let hatched = 0;
  for (let y = 0; y < 60; y++) {
    for (let x = 100; x < 120; x++) if (pixel(overlay, x, y).join() === "120,120,130,255") hatched++;
  }
  assert(hatched > 20 * 60 / 4, `the uncompared strip is hatched (${hatched} px)`);
});

Deno.test("the same picture in other PNG encodings decodes equal (RGBA, 16-bit, palette)", () => {
  const img = page(40, 30);
  const rgb = encodePng(img);
  const rgba = encode({ width: 40, height: 30, data: img.data, channels: 4, depth: 8 });
  assertEquals(visualDifference(rgb, rgba).changed_pixels, 0);
  const wide = new Uint16Array(img.data.length);
  for (let i = 0; i < wide.length; i++) wide[i] = img.data[i] * 257;
  const deep = encode({ width: 40, height: 30, data: wide, channels: 4, depth: 16 });
  assertEquals(visualDifference(rgb, deep).changed_pixels, 0);
  const flat = createImage(8, 4, [10, 200, 30]);
  const indexed = encode({
    width: 8,
    height: 4,
    data: new Uint8Array(32),
    channels: 1,
    depth: 8,
    palette: [[10, 200, 30]],
  });
  assertEquals(decodeScreenshot(indexed).data, flat.data);
  assertEquals(decode(rgb).channels, 3, "the product encoder wrote RGB: the RGBA path was really exercised");
});

Deno.test("bytes that are not a PNG fail as screenshot_undecodable naming the side", () => {
  const good = encodePng(page(10, 10));
  const err = assertThrows(() => visualDifference(good, new TextEncoder().encode("not a png")));
  assert(err instanceof ToolError);
  assertEquals(err.code, "screenshot_undecodable");
  assertEquals(err.affected, { argument: "after" });
  assert(err.message.includes("after screenshot"), err.message);
  const truncated = assertThrows(() => visualDifference(good.subarray(0, 40), good));
  assert(truncated instanceof ToolError && truncated.code === "screenshot_undecodable");
});
