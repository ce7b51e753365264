import { assert, assertEquals } from "../../assert.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import {
  CELL_HEIGHT,
  CELL_WIDTH,
  COVERED_CHARACTERS,
  drawText,
  fitText,
  lineHeight,
  measureText,
} from "../../../src/vision/font.ts";

const WHITE = [255, 255, 255] as const;

/** Ink mask of an image drawn black on white: "#" for ink, "." for paper, one string per row. */
function mask(img: RgbaImage): string[] {
  const rows: string[] = [];
  for (let y = 0; y < img.height; y++) {
    let row = "";
    for (let x = 0; x < img.width; x++) row += img.data[(y * img.width + x) * 4] < 128 ? "#" : ".";
    rows.push(row);
  }
  return rows;
}

function render(text: string, scale = 1): RgbaImage {
  const size = measureText(text, scale);
  const img = createImage(Math.max(1, size.width), size.height, WHITE);
  drawText(img, 0, 0, text, { scale });
  return img;
}

function inkCount(img: RgbaImage): number {
  return mask(img).join("").split("#").length - 1;
}

Deno.test("coverage: printable ASCII plus the extra symbols, each exactly once", () => {
  const chars = Array.from(COVERED_CHARACTERS);
  for (let c = 0x20; c <= 0x7e; c++) {
    assert(chars.includes(String.fromCharCode(c)), `missing 0x${c.toString(16)}`);
  }
  for (const ch of "→←▶◀±×·…–—°µ") assert(chars.includes(ch), `missing ${ch}`);
  assertEquals(new Set(chars).size, chars.length, "a character is listed twice");
});

Deno.test("every covered glyph has ink except space, and no two glyphs are identical", () => {
  const seen = new Map<string, string>();
  for (const ch of COVERED_CHARACTERS) {
    // A following space gives the glyph its whole cell: the em dash differs from the en dash only in
    // the spacing column, which a line's last glyph never inks.
    const img = render(ch + " ");
    const ink = inkCount(img);
    if (ch === " ") {
      assertEquals(ink, 0, "space must be blank");
      continue;
    }
    assert(ink > 0, `glyph ${JSON.stringify(ch)} is empty`);
    const key = mask(img).join("/");
    const twin = seen.get(key);
    assert(twin === undefined, `glyphs ${JSON.stringify(twin)} and ${JSON.stringify(ch)} are identical`);
    seen.set(key, ch);
  }
});

Deno.test("confusable pairs differ in several pixels, not one", () => {
  for (const [a, b] of ["0O", "1l", "1I", "lI", "5S", "8B", "2Z", "6b", "9g", "gq", "l|", "x×"]) {
    const ma = mask(render(a)).join("");
    const mb = mask(render(b)).join("");
    let differing = 0;
    for (let i = 0; i < ma.length; i++) if (ma[i] !== mb[i]) differing++;
    assert(differing >= 3, `${a} and ${b} differ in only ${differing} pixels`);
  }
});

Deno.test("unknown characters draw a visible box, the same for any of them", () => {
  const box = mask(render("é"));
  assert(box.join("").includes("#"), "unknown character drew nothing");
  assertEquals(mask(render("😀")), box, "astral characters are one box too");
  assertEquals(measureText("😀", 1).width, CELL_WIDTH - 1, "a surrogate pair counts as one cell");
  for (const ch of COVERED_CHARACTERS) {
    assert(mask(render(ch)).join("/") !== box.join("/"), `${JSON.stringify(ch)} looks like the unknown box`);
  }
});

Deno.test("measureText: cells minus the trailing spacing column, lines by cell height", () => {
  assertEquals(measureText("", 2), { width: 0, height: 20 });
  assertEquals(measureText("A", 1), { width: 5, height: 10 });
  assertEquals(measureText("+201.4 ms", 2), { width: (9 * 6 - 1) * 2, height: 20 });
  assertEquals(measureText("ab\nlonger", 3), { width: (6 * 6 - 1) * 3, height: 60 });
  assertEquals(measureText("x", 0), measureText("x", 1), "scale below 1 reads as 1");
  assertEquals(measureText("x", 2.4), measureText("x", 2), "scale rounds to a whole number");
  assertEquals(lineHeight(3), 3 * CELL_HEIGHT);
  assertEquals(lineHeight(Number.NaN), CELL_HEIGHT);
});

Deno.test("drawText returns the measured box plus padding, and ink stays inside it", () => {
  const img = createImage(200, 80, WHITE);
  const text = "CAPTURE GAP 120 ms";
  const rect = drawText(img, 7, 9, text, { scale: 1, padding: 3 });
  const size = measureText(text, 1);
  assertEquals(rect, { x: 7, y: 9, width: size.width + 6, height: size.height + 6 });
  const rows = mask(img);
  let minX = Infinity, maxX = -1, minY = Infinity, maxY = -1;
  rows.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      if (row[x] !== "#") continue;
      minX = Math.min(minX, x), maxX = Math.max(maxX, x), minY = Math.min(minY, y), maxY = Math.max(maxY, y);
    }
  });
  assertEquals(minX, 7 + 3, "ink starts right after the padding ('C' touches column 0)");
  assertEquals(maxX, 7 + 3 + size.width - 1, "ink ends at the measured width ('s' touches column 4)");
  assert(minY >= 9 + 3 && maxY < 9 + 3 + size.height, `ink rows ${minY}..${maxY} leave the box`);
});

Deno.test("scale 2 covers exactly the scale-1 pixels doubled", () => {
  const text = "#1234 +201.4ms Oq";
  const one = mask(render(text, 1));
  const two = mask(render(text, 2));
  assertEquals(two.length, one.length * 2);
  for (let y = 0; y < two.length; y++) {
    for (let x = 0; x < two[y].length; x++) {
      assertEquals(two[y][x], one[y >> 1][x >> 1], `pixel ${x},${y}`);
    }
  }
});

Deno.test("a hyphen at scale 2 is one 6×2 bar at mid-capital height", () => {
  const rows = mask(render("-", 2));
  const expected = Array.from({ length: 20 }, (_, y) => (y === 8 || y === 9 ? "..######.." : ".........."));
  assertEquals(rows, expected);
});

Deno.test("background and colour: the box is filled, glyph pixels take the ink colour", () => {
  const img = createImage(60, 30, [0, 0, 0]);
  const rect = drawText(img, 2, 3, "I", {
    scale: 2,
    color: [10, 200, 30],
    background: [90, 0, 0],
    padding: 2,
  });
  const px = (x: number, y: number) => Array.from(img.data.subarray((y * 60 + x) * 4, (y * 60 + x) * 4 + 4));
  assertEquals(px(rect.x, rect.y), [90, 0, 0, 255], "padding corner is background");
  assertEquals(px(rect.x + rect.width - 1, rect.y + rect.height - 1), [90, 0, 0, 255]);
  // 'I' is ".###." on its top row: cell row 1, columns 1–3, so x = 2 + 2 + 2..7, y = 3 + 2 + 2..3.
  assertEquals(px(2 + 2 + 2, 3 + 2 + 2), [10, 200, 30, 255]);
  assertEquals(px(2 + 2 + 0, 3 + 2 + 2), [90, 0, 0, 255], "column 0 of 'I' is blank");
  assertEquals(px(rect.x + rect.width, rect.y), [0, 0, 0, 255], "nothing drawn past the box");
});

Deno.test("clipping: text off any edge draws only the visible part and never throws", () => {
  const text = "Early → Late";
  const full = createImage(120, 20, WHITE);
  drawText(full, 0, 0, text, { scale: 1 });
  const fullRows = mask(full);
  for (const [dx, dy] of [[-17, 0], [0, -4], [-30, -7], [50, 5], [100, 15]]) {
    const img = createImage(120, 20, WHITE);
    const rect = drawText(img, dx, dy, text, { scale: 1 });
    const rows = mask(img);
    for (let y = 0; y < 20; y++) {
      for (let x = 0; x < 120; x++) {
        const sx = x - dx;
        const sy = y - dy;
        const want = sx >= 0 && sy >= 0 && sx < 120 && sy < 20 ? fullRows[sy][sx] : ".";
        assertEquals(rows[y][x], want, `offset ${dx},${dy} pixel ${x},${y}`);
      }
    }
    assert(rect.x >= 0 && rect.y >= 0 && rect.x + rect.width <= 120 && rect.y + rect.height <= 20);
  }
  const img = createImage(10, 10, WHITE);
  for (const [x, y] of [[-1e9, 0], [1e9, 1e9], [Number.NaN, 0], [0, Infinity], [-5000, -5000]]) {
    const rect = drawText(img, x, y, "x".repeat(1000), { scale: 3, background: [0, 0, 0], padding: 2 });
    assertEquals(rect.width * rect.height, 0, `rect at ${x},${y}`);
  }
  assertEquals(inkCount(img), 0, "nothing landed on the image");
  const partial = drawText(img, -3, -3, "A", { scale: 2 });
  assertEquals(partial, { x: 0, y: 0, width: 7, height: 10 });
});

Deno.test("fitText: unchanged when it fits, else truncated with an ellipsis that fits", () => {
  assertEquals(fitText("+201.4 ms", 1000, 2), "+201.4 ms");
  const exact = measureText("+201.4 ms", 2).width;
  assertEquals(fitText("+201.4 ms", exact, 2), "+201.4 ms");
  assertEquals(fitText("+201.4 ms", exact - 1, 2), "+201.4…", "trailing space dropped before the ellipsis");
  for (let width = 0; width < 200; width += 7) {
    const fitted = fitText("No change … Frequent change", width, 2);
    assert(measureText(fitted, 2).width <= width, `"${fitted}" overflows ${width}`);
  }
  assertEquals(fitText("abc", 4, 1), "", "not even the ellipsis fits");
  assertEquals(fitText("abc", 5, 1), "…");
  assertEquals(fitText("abc", Number.NaN, 1), "");
  assertEquals(fitText("short\nmuch longer line", measureText("short", 1).width, 1), "short\nmuch…");
});

Deno.test("em dashes join into one rule; a line-final one stays inside the box", () => {
  const rows = mask(render("——"));
  assertEquals(rows[4], "###########", "two em dashes make one unbroken 11-pixel rule");
  assertEquals(mask(render("–– ")).slice(4, 5), ["#####.#####......"], "en dashes keep their gap");
  const img = createImage(20, 12, WHITE);
  const rect = drawText(img, 0, 0, "a—", { scale: 1 });
  assertEquals(rect.width, 11);
  assert(mask(img).every((row) => !row.slice(11).includes("#")), "ink past the measured box");
});
