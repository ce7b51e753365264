import { assert, assertEquals } from "../../assert.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import {
  clipRect,
  type Color,
  dashedRect,
  drawArrow,
  drawLegendBar,
  drawLine,
  fillRect,
  grayRamp,
  hatchRect,
  strokeRect,
  timePalette,
} from "../../../src/vision/draw.ts";

const WHITE: Color = [255, 255, 255];
const BLACK: Color = [0, 0, 0];

function px(img: RgbaImage, x: number, y: number): number[] {
  const i = (y * img.width + x) * 4;
  return Array.from(img.data.subarray(i, i + 4));
}

/** "#" where the red channel is dark (ink on a white canvas), one string per row. */
function mask(img: RgbaImage): string[] {
  const rows: string[] = [];
  for (let y = 0; y < img.height; y++) {
    let row = "";
    for (let x = 0; x < img.width; x++) row += img.data[(y * img.width + x) * 4] < 128 ? "#" : ".";
    rows.push(row);
  }
  return rows;
}

/** Rec. 601 luma of gamma-encoded sRGB: what a grayscale conversion shows. */
function luma([r, g, b]: Color): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** WCAG relative luminance (linear light). */
function relativeLuminance([r, g, b]: Color): number {
  const lin = (v: number) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

Deno.test("fillRect: opaque fill covers exactly the rect", () => {
  const img = createImage(8, 6, WHITE);
  fillRect(img, { x: 2, y: 1, width: 3, height: 2 }, [10, 20, 30]);
  assertEquals(mask(img), ["........", "..###...", "..###...", "........", "........", "........"]);
  assertEquals(px(img, 2, 1), [10, 20, 30, 255]);
});

Deno.test("fillRect: alpha composites over the existing pixel", () => {
  const img = createImage(4, 4, [100, 100, 100]);
  fillRect(img, { x: 0, y: 0, width: 2, height: 2 }, [200, 0, 50], 0.25);
  // 200·0.25 + 100·0.75 = 125; 0 + 75 = 75; 12.5 + 75 = 87.5 → 88.
  assertEquals(px(img, 1, 1), [125, 75, 88, 255]);
  assertEquals(px(img, 2, 2), [100, 100, 100, 255], "outside the rect untouched");
  fillRect(img, { x: 0, y: 0, width: 1, height: 1 }, [0, 0, 0], 0);
  assertEquals(px(img, 0, 0), [125, 75, 88, 255], "alpha 0 draws nothing");
  fillRect(img, { x: 0, y: 0, width: 1, height: 1 }, [1, 2, 3], 7);
  assertEquals(px(img, 0, 0), [1, 2, 3, 255], "alpha above 1 is opaque");
  fillRect(img, { x: 3, y: 3, width: 1, height: 1 }, [300, -5, 127.6]);
  assertEquals(px(img, 3, 3), [255, 0, 128, 255], "channels clamp and round");

  const clear = createImage(2, 1);
  clear.data.fill(0);
  fillRect(clear, { x: 0, y: 0, width: 1, height: 1 }, [200, 100, 0], 0.5);
  assertEquals(px(clear, 0, 0), [200, 100, 0, 128], "over a transparent pixel the colour stays pure");
});

Deno.test("clipping: off-image, negative, non-finite rects never throw and draw nothing", () => {
  const img = createImage(10, 10, WHITE);
  const before = img.data.slice();
  const bad = [
    { x: -50, y: 0, width: 20, height: 5 },
    { x: 10, y: 0, width: 5, height: 5 },
    { x: 0, y: 11, width: 5, height: 5 },
    { x: 2, y: 2, width: -4, height: 3 },
    { x: Number.NaN, y: 0, width: 3, height: 3 },
    { x: 0, y: 0, width: Infinity, height: 3 },
  ];
  for (const rect of bad) {
    fillRect(img, rect, BLACK);
    fillRect(img, rect, BLACK, 0.5);
    strokeRect(img, rect, BLACK, 2);
    dashedRect(img, rect, BLACK, 2, 3);
    hatchRect(img, rect, BLACK, 4);
    drawLegendBar(img, rect, grayRamp);
    assertEquals(clipRect(img, rect).width * clipRect(img, rect).height, 0, JSON.stringify(rect));
  }
  assertEquals(img.data, before, "the image changed");
  fillRect(img, { x: -3, y: 8, width: 5, height: 100 }, BLACK);
  assertEquals(clipRect(img, { x: -3, y: 8, width: 5, height: 100 }), { x: 0, y: 8, width: 2, height: 2 });
  assertEquals(mask(img).slice(7), ["..........", "##........", "##........"]);
});

Deno.test("strokeRect: an inside border of the given thickness, interior untouched", () => {
  const img = createImage(9, 7, WHITE);
  strokeRect(img, { x: 1, y: 1, width: 7, height: 5 }, BLACK, 2);
  assertEquals(mask(img), [
    ".........",
    ".#######.",
    ".#######.",
    ".##...##.",
    ".#######.",
    ".#######.",
    ".........",
  ]);
  const thin = createImage(4, 4, WHITE);
  strokeRect(thin, { x: 0, y: 0, width: 4, height: 4 }, BLACK, 10);
  assertEquals(mask(thin), ["####", "####", "####", "####"], "thickness past the middle fills");
});

Deno.test("dashedRect: dashes alternate along each side and every corner is inked", () => {
  const img = createImage(14, 8, WHITE);
  dashedRect(img, { x: 0, y: 0, width: 14, height: 8 }, BLACK, 1, 2);
  const rows = mask(img);
  assertEquals(rows[0], "##..##..##..##");
  assertEquals(rows[7], "##..##..##..##");
  // Sides run top-down from their corner; the last row belongs to the bottom side's dash.
  assertEquals(rows.map((row) => row[0]).join(""), "##..##.#");
  assertEquals(rows.map((row) => row[13]).join(""), "##..##.#");
  assertEquals(rows[3].slice(1, 13), "............", "interior untouched");
  // A rect a billion pixels wide only visits the dashes that can reach the image.
  const start = performance.now();
  dashedRect(img, { x: -1e9, y: 2, width: 2e9, height: 4 }, BLACK, 1, 1);
  assert(performance.now() - start < 200, "huge dashed rect was slow");
  assertEquals(mask(img)[2], "#.#.#.#.#.#.#.");
});

Deno.test("hatchRect: diagonal stripes alternate along rows and shift by one per row", () => {
  const img = createImage(16, 6, WHITE);
  hatchRect(img, { x: 0, y: 0, width: 16, height: 6 }, BLACK, 4);
  const rows = mask(img);
  assertEquals(rows[0], "##..##..##..##..");
  assertEquals(rows[1], "#..##..##..##..#");
  assertEquals(rows[2], "..##..##..##..##");
  for (let y = 0; y < 6; y++) {
    for (let x = 1; x < 16; x++) {
      if (y + 1 < 6) assertEquals(rows[y + 1][x - 1], rows[y][x], `"/" stripe broken at ${x},${y}`);
    }
  }
  const ink = rows.join("").split("#").length - 1;
  assertEquals(ink, 16 * 6 / 2, "half the area is inked");
  const odd = createImage(9, 1, WHITE);
  hatchRect(odd, { x: 0, y: 0, width: 9, height: 1 }, BLACK, 3);
  assertEquals(mask(odd)[0], "#..#..#..", "odd spacing: one-pixel stripes three apart");
});

Deno.test("drawLine: exact thickness, both endpoints, clipped segments follow the true line", () => {
  const img = createImage(12, 7, WHITE);
  drawLine(img, 1, 3, 10, 3, BLACK, 3);
  assertEquals(mask(img).slice(1, 6), [
    "............",
    ".##########.",
    ".##########.",
    ".##########.",
    "............",
  ]);
  const diag = createImage(6, 6, WHITE);
  drawLine(diag, 5, 5, 0, 0, BLACK, 1);
  assertEquals(mask(diag), ["#.....", ".#....", "..#...", "...#..", "....#.", ".....#"]);
  const crossing = createImage(6, 6, WHITE);
  const start = performance.now();
  drawLine(crossing, -1e9, -1e9, 1e9, 1e9, BLACK, 1);
  assert(performance.now() - start < 200, "huge line was slow");
  assertEquals(mask(crossing), mask(diag), "a clipped line keeps its course");
  const steep = createImage(5, 5, WHITE);
  drawLine(steep, 2, 0, 2, 4, BLACK, 3);
  assertEquals(mask(steep), [".###.", ".###.", ".###.", ".###.", ".###."]);
  drawLine(steep, Number.NaN, 0, 3, 3, WHITE, 1);
  drawLine(steep, 50, 50, 60, 70, WHITE, 1);
  assertEquals(mask(steep)[0], ".###.", "non-finite or off-image lines draw nothing");
});

Deno.test("drawArrow: a shaft and a head that widens behind the tip, in either direction", () => {
  const right = createImage(40, 21, WHITE);
  drawArrow(right, 2, 10, 37, BLACK, 1);
  const rows = mask(right);
  const column = (x: number) => rows.map((row) => row[x]).join("").split("#").length - 1;
  assertEquals(column(2), 1, "one-pixel shaft at the tail");
  assertEquals(column(20), 1);
  assertEquals(column(37), 1, "the tip is one shaft wide");
  assert(column(37 - 4) > 5, "the head is wide behind the tip");
  assertEquals(column(38), 0, "nothing past the tip");
  assert(rows[10].slice(2, 38) === "#".repeat(36), "the centre row runs from tail to tip");

  const left = createImage(40, 21, WHITE);
  drawArrow(left, 37, 10, 2, BLACK, 1);
  assertEquals(mask(left), rows.map((row) => [...row].reverse().join("")), "reversed arrow is the mirror");

  const thick = createImage(60, 30, WHITE);
  drawArrow(thick, 0, 15, 59, BLACK, 3);
  const shaft = mask(thick).map((row) => row[5]).join("");
  assertEquals(shaft.indexOf("#"), 14);
  assertEquals(shaft.lastIndexOf("#"), 16, "a 3-pixel shaft centred on y");

  const tiny = createImage(10, 10, WHITE);
  drawArrow(tiny, 4, 5, 6, BLACK, 2);
  drawArrow(tiny, -1e9, 1e9, 1e9, BLACK, 1e9);
  drawArrow(tiny, Number.NaN, 1, 2, BLACK, 1);
  assert(mask(tiny).join("").includes("#"), "a short arrow still draws");
});

Deno.test("drawLegendBar: column i of n is palette(i / (n - 1)), clipped at the edges", () => {
  const img = createImage(20, 4, WHITE);
  drawLegendBar(img, { x: 2, y: 1, width: 16, height: 2 }, timePalette);
  assertEquals(px(img, 2, 1), [...timePalette(0), 255]);
  assertEquals(px(img, 17, 2), [...timePalette(1), 255]);
  assertEquals(px(img, 7, 1), [...timePalette(5 / 15), 255]);
  assertEquals(px(img, 1, 1), [255, 255, 255, 255]);
  assertEquals(px(img, 5, 0), [255, 255, 255, 255]);
  const cut = createImage(10, 1, WHITE);
  drawLegendBar(cut, { x: -10, y: 0, width: 21, height: 1 }, grayRamp);
  assertEquals(px(cut, 0, 0), [...grayRamp(10 / 20), 255], "a clipped bar keeps its gradient positions");
});

Deno.test("grayRamp: black to white, clamped", () => {
  assertEquals(grayRamp(0), [0, 0, 0]);
  assertEquals(grayRamp(1), [255, 255, 255]);
  assertEquals(grayRamp(0.5), [128, 128, 128]);
  assertEquals(grayRamp(-3), [0, 0, 0]);
  assertEquals(grayRamp(9), [255, 255, 255]);
  assertEquals(grayRamp(Number.NaN), [0, 0, 0]);
  for (let i = 1; i <= 256; i++) assert(luma(grayRamp(i / 256)) >= luma(grayRamp((i - 1) / 256)));
});

Deno.test("timePalette: luminance rises monotonically (reads in grayscale), hue is not gray", () => {
  // Channels round to integers, so neighbouring samples may wobble by under half a level; allow that,
  // and require a real rise over every tenth of the range.
  const samples = Array.from({ length: 1001 }, (_, i) => timePalette(i / 1000));
  for (let i = 1; i < samples.length; i++) {
    assert(luma(samples[i]) >= luma(samples[i - 1]) - 0.5, `luma falls at t=${i / 1000}`);
    const lum = relativeLuminance(samples[i]);
    assert(lum >= relativeLuminance(samples[i - 1]) - 0.002, `relative luminance falls at t=${i / 1000}`);
    if (i >= 100) {
      assert(luma(samples[i]) > luma(samples[i - 100]) + 10, `luma flat before t=${i / 1000}`);
      assert(lum > relativeLuminance(samples[i - 100]), `relative luminance flat before t=${i / 1000}`);
    }
  }
  // Five evenly spaced legend swatches must be told apart by brightness alone.
  const swatches = [0, 0.25, 0.5, 0.75, 1].map((t) => luma(timePalette(t)));
  for (let i = 1; i < swatches.length; i++) {
    assert(
      swatches[i] - swatches[i - 1] >= 25,
      `swatches ${i - 1}→${i} differ by ${swatches[i] - swatches[i - 1]}`,
    );
  }
  assert(luma(timePalette(1)) - luma(timePalette(0)) > 150, "early and late far apart in brightness");
  for (const t of [0, 0.5, 1]) {
    const [r, g, b] = timePalette(t);
    assert(Math.max(r, g, b) - Math.min(r, g, b) > 60, `t=${t} is nearly gray`);
  }
  assertEquals(timePalette(-1), timePalette(0));
  assertEquals(timePalette(2), timePalette(1));
  assertEquals(timePalette(Number.NaN), timePalette(0));
});
