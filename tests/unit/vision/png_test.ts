import { join } from "node:path";
import { unzlibSync, zlibSync } from "fflate";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import { decodePng, encodePng } from "../../../src/vision/png.ts";
import { concatBytes } from "../../../src/bytes.ts";

async function ffmpeg(args: string[]): Promise<Uint8Array> {
  const out = await new Deno.Command("ffmpeg", {
    args: ["-hide_banner", "-loglevel", "error", "-y", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`ffmpeg ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return out.stdout;
}

/** testsrc2 with a varying alpha channel, so alpha-carrying formats have something to keep. */
const SOURCE = "testsrc2=s=64x48,format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='mod(X*7+Y*3,256)'";

/** ffmpeg's own decode of a PNG as RGBA (expanding gray formats here, where swscale might rescale). */
async function ffmpegRgba(path: string, pixFmt: string): Promise<Uint8Array> {
  const native = pixFmt === "gray" || pixFmt === "ya8" ? pixFmt : "rgba";
  const raw = await ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", native, "-"]);
  if (native === "rgba") return raw;
  const step = native === "gray" ? 1 : 2;
  const out = new Uint8Array((raw.length / step) * 4);
  for (let p = 0; p < raw.length / step; p++) {
    out.fill(raw[p * step], p * 4, p * 4 + 3);
    out[p * 4 + 3] = step === 2 ? raw[p * step + 1] : 255;
  }
  return out;
}

function filterTypes(png: Uint8Array, rowBytes: number): Set<number> {
  const chunks = readChunks(png);
  const idat = chunks.filter((c) => c.type === "IDAT").map((c) => c.data);
  const raw = unzlibSync(concatBytes(idat));
  const types = new Set<number>();
  for (let at = 0; at < raw.length; at += rowBytes + 1) types.add(raw[at]);
  return types;
}

Deno.test("decode: ffmpeg PNGs in every 8-bit colour type match ffmpeg's own decode", async () => {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-png-" });
  try {
    const cases: [string, string, number][] = [
      ["rgb24", "mixed", 3],
      ["rgba", "mixed", 4],
      ["gray", "mixed", 1],
      ["ya8", "mixed", 2],
      ["pal8", "mixed", 1],
      ...["none", "sub", "up", "avg", "paeth"].flatMap((pred) => [
        ["rgb24", pred, 3] as [string, string, number],
        ["rgba", pred, 4] as [string, string, number],
      ]),
    ];
    const seen = new Set<number>();
    await Promise.all(cases.map(async ([pixFmt, pred, channels]) => {
      const path = join(dir, `${pixFmt}_${pred}.png`);
      await ffmpeg(["-f", "lavfi", "-i", SOURCE, "-frames:v", "1", "-pix_fmt", pixFmt, "-pred", pred, path]);
      const bytes = await Deno.readFile(path);
      const img = decodePng(bytes);
      assertEquals([img.width, img.height], [64, 48], `${pixFmt}/${pred} size`);
      const want = await ffmpegRgba(path, pixFmt);
      const bad = img.data.findIndex((v, i) => v !== want[i]);
      assertEquals(bad, -1, `${pixFmt}/${pred}: first differing byte`);
      for (const t of filterTypes(bytes, 64 * channels)) seen.add(t);
    }));
    assertEquals([...seen].sort(), [0, 1, 2, 3, 4], "the ffmpeg files exercise all five filter types");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

function randomImage(width: number, height: number, seed: number, opaque: boolean): RgbaImage {
  let s = seed;
  const img = createImage(width, height);
  for (let i = 0; i < img.data.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    img.data[i] = opaque && (i & 3) === 3 ? 255 : s >>> 24;
  }
  return img;
}

Deno.test("encode: round trip is lossless for every filter, RGBA kept, opaque stored as RGB", async () => {
  for (const opaque of [false, true]) {
    // 67×70: rows that are not a multiple of 4 pixels, and more than one 64-row band.
    const img = randomImage(67, 70, opaque ? 1 : 2, opaque);
    for (const filter of ["none", "sub", "up", "average", "paeth", "adaptive"] as const) {
      const png = encodePng(img, { filter });
      assertEquals(png[25], opaque ? 2 : 6, `${filter}: colour type`);
      const back = decodePng(png);
      assertEquals([back.width, back.height], [67, 70]);
      assertEquals(back.data.findIndex((v, i) => v !== img.data[i]), -1, `${filter} opaque=${opaque}`);
    }
  }
  // ffmpeg reads our file back to the same pixels.
  const dir = await Deno.makeTempDir({ prefix: "krometrail-png-" });
  try {
    const img = randomImage(33, 21, 3, false);
    const path = join(dir, "ours.png");
    await Deno.writeFile(path, encodePng(img));
    const raw = await ffmpeg(["-i", path, "-f", "rawvideo", "-pix_fmt", "rgba", "-"]);
    assertEquals(raw.findIndex((v, i) => v !== img.data[i]), -1, "ffmpeg decode of our PNG");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("encode: a flat UI-like frame compresses well with the default filter", () => {
  const img = createImage(400, 300, [241, 243, 244]);
  for (let y = 40; y < 80; y++) {
    for (let x = 20; x < 380; x++) img.data.set([26, 115, 232, 255], (y * 400 + x) * 4);
  }
  const png = encodePng(img);
  assert(png.length < 2000, `400×300 flat frame took ${png.length} bytes`);
  assertEquals(decodePng(png).data.findIndex((v, i) => v !== img.data[i]), -1);
});

// --- hand-built files for the corners ffmpeg does not produce ------------------------------------

const SIGNATURE = [137, 80, 78, 71, 13, 10, 26, 10];

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array | number[]): Uint8Array {
  const body = concatBytes([new TextEncoder().encode(type), Uint8Array.from(data)]);
  const out = new Uint8Array(body.length + 8);
  const view = new DataView(out.buffer);
  view.setUint32(0, body.length - 4);
  out.set(body, 4);
  view.setUint32(body.length + 4, crc32(body));
  return out;
}

function ihdr(width: number, height: number, colorType: number, depth = 8, interlace = 0): Uint8Array {
  const d = new Uint8Array(13);
  const v = new DataView(d.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  d.set([depth, colorType, 0, 0, interlace], 8);
  return chunk("IHDR", d);
}

function png(...chunks: Uint8Array[]): Uint8Array {
  return concatBytes([Uint8Array.from(SIGNATURE), ...chunks, chunk("IEND", [])]);
}

/** Scanlines with filter type 0 from rows of samples. */
function idat(rows: number[][], split = 1): Uint8Array[] {
  const z = zlibSync(Uint8Array.from(rows.flatMap((r) => [0, ...r])));
  const size = Math.ceil(z.length / split);
  return Array.from({ length: split }, (_, i) => chunk("IDAT", z.subarray(i * size, (i + 1) * size)));
}

Deno.test("decode: palette with tRNS, gray and RGB transparency keys, split IDAT, ancillary chunks", () => {
  const pal = png(
    ihdr(3, 1, 3),
    chunk("tEXt", [...new TextEncoder().encode("Comment"), 0, 104, 105]),
    chunk("PLTE", [255, 0, 0, 0, 255, 0, 0, 0, 255]),
    chunk("tRNS", [128]),
    ...idat([[0, 1, 2]], 3),
  );
  assertEquals(Array.from(decodePng(pal).data), [255, 0, 0, 128, 0, 255, 0, 255, 0, 0, 255, 255]);
  const gray = png(ihdr(2, 1, 0), chunk("tRNS", [0, 7]), ...idat([[7, 8]]));
  assertEquals(Array.from(decodePng(gray).data), [7, 7, 7, 0, 8, 8, 8, 255]);
  const rgb = png(ihdr(2, 1, 2), chunk("tRNS", [0, 1, 0, 2, 0, 3]), ...idat([[1, 2, 3, 1, 2, 4]]));
  assertEquals(Array.from(decodePng(rgb).data), [1, 2, 3, 0, 1, 2, 4, 255]);
});

Deno.test("decode: bad input throws clear errors", () => {
  const good = png(ihdr(2, 1, 2), ...idat([[1, 2, 3, 4, 5, 6]]));
  assertEquals(decodePng(good).width, 2);
  assertThrows(() => decodePng(new Uint8Array([1, 2, 3])), "not a PNG file");
  const corrupt = good.slice();
  corrupt[20] ^= 1;
  assertThrows(() => decodePng(corrupt), "PNG chunk IHDR fails its CRC check");
  assertThrows(() => decodePng(good.subarray(0, 40)), "truncated");
  assertThrows(() => decodePng(png(ihdr(2, 1, 2, 16), ...idat([[1, 2, 3, 4, 5, 6]]))), "bit depth 16");
  assertThrows(() => decodePng(png(ihdr(2, 1, 2, 8, 1), ...idat([[1, 2, 3, 4, 5, 6]]))), "interlaced");
  assertThrows(() => decodePng(png(ihdr(2, 1, 5), ...idat([[1, 2]]))), "colour type 5");
  assertThrows(() => decodePng(png(ihdr(2, 1, 3), ...idat([[0, 1]]))), "no PLTE");
  assertThrows(
    () => decodePng(png(ihdr(2, 1, 3), chunk("PLTE", [1, 2, 3]), ...idat([[0, 1]]))),
    "palette index 1 but the palette has 1 entries",
  );
  assertThrows(
    () => decodePng(png(ihdr(2, 1, 2), chunk("ABCD", [1]), ...idat([[1, 2, 3, 4, 5, 6]]))),
    "ABCD",
  );
  assertThrows(() => decodePng(png(ihdr(2, 1, 2))), "no IDAT");
  assertThrows(() => decodePng(png(ihdr(2, 1, 2), chunk("IDAT", [1, 2, 3, 4]))), "PNG image data is corrupt");
  assertThrows(() => decodePng(png(ihdr(2, 2, 2), ...idat([[1, 2, 3, 4, 5, 6]]))), "truncated");
  const badFilter = png(ihdr(1, 2, 0), chunk("IDAT", zlibSync(Uint8Array.from([0, 5, 9, 5]))));
  assertThrows(() => decodePng(badFilter), "PNG row 1 has unknown filter type 9");
  assertThrows(() => encodePng(createImage(0, 3)), "cannot encode a 0×3 image");
});

function readChunks(bytes: Uint8Array): { type: string; data: Uint8Array }[] {
  const out: { type: string; data: Uint8Array }[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 8; at < bytes.length;) {
    const length = view.getUint32(at);
    out.push({
      type: String.fromCharCode(...bytes.subarray(at + 4, at + 8)),
      data: bytes.subarray(at + 8, at + 8 + length),
    });
    at += 12 + length;
  }
  return out;
}
