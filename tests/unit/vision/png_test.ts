import { join } from "node:path";
import { inflateSync } from "node:zlib";
import { decode } from "fast-png";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { createImage, type RgbaImage } from "../../../src/vision/image.ts";
import { encodePng } from "../../../src/vision/png.ts";
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

/** An independent decoder (npm:fast-png, dev-only) read back as RGBA. */
function decodeRgba(png: Uint8Array): RgbaImage {
  const img = decode(png, { checkCrc: true });
  assertEquals(img.depth, 8);
  const data = new Uint8Array(img.width * img.height * 4);
  for (let p = 0; p < img.width * img.height; p++) {
    for (let c = 0; c < 3; c++) data[p * 4 + c] = img.data[p * img.channels + c];
    data[p * 4 + 3] = img.channels === 4 ? img.data[p * 4 + 3] : 255;
  }
  return { width: img.width, height: img.height, data };
}

function filterTypes(png: Uint8Array, rowBytes: number): Set<number> {
  const idat = readChunks(png).filter((c) => c.type === "IDAT").map((c) => c.data);
  const raw = inflateSync(concatBytes(idat));
  const types = new Set<number>();
  for (let at = 0; at < raw.length; at += rowBytes + 1) types.add(raw[at]);
  return types;
}

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
      const back = decodeRgba(png);
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
  assertEquals(decodeRgba(png).data.findIndex((v, i) => v !== img.data[i]), -1);
});

/** Bitwise CRC-32, independent of the table and native implementations. */
function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

Deno.test("encode: standard chunk CRCs, one IDAT, and each fixed filter on every row", () => {
  const img = randomImage(9, 70, 4, true);
  for (const [filter, type] of [["none", 0], ["sub", 1], ["up", 2], ["average", 3], ["paeth", 4]] as const) {
    const png = encodePng(img, { filter });
    const chunks = readChunks(png);
    assertEquals(chunks.map((c) => c.type), ["IHDR", "IDAT", "IEND"]);
    const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
    let at = 8;
    for (const c of chunks) {
      const crc = view.getUint32(at + 8 + c.data.length);
      assertEquals(crc, crc32(png.subarray(at + 4, at + 8 + c.data.length)), `${filter}: ${c.type} CRC`);
      at += 12 + c.data.length;
    }
    assertEquals([...filterTypes(png, 9 * 3)], [type], `${filter}: row filter types`);
  }
  assert(filterTypes(encodePng(img, { filter: "adaptive" }), 9 * 3).size > 1, "adaptive mixes filter types");
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
