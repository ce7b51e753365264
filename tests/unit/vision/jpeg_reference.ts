/**
 * References for the JPEG decoder tests: ffmpeg as encoder and as decoder, a slow model of the intended
 * colour conversion over ffmpeg's native planes, PSNR and box downscaling.
 */
import { join } from "node:path";
import { assertEquals } from "../../assert.ts";

export async function ffmpeg(args: string[]): Promise<Uint8Array> {
  const out = await new Deno.Command("ffmpeg", {
    args: ["-hide_banner", "-loglevel", "error", "-y", ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`ffmpeg ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return out.stdout;
}

export async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-jpeg-decode-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** One frame of a lavfi source, encoded by ffmpeg's mjpeg encoder. */
export async function encode(dir: string, source: string, args: string[]): Promise<Uint8Array> {
  const path = join(dir, `e${crypto.randomUUID()}.jpg`);
  await ffmpeg(["-f", "lavfi", "-i", source, "-frames:v", "1", ...args, path]);
  return await Deno.readFile(path);
}

/**
 * One frame of a lavfi source encoded once per argument list, in one ffmpeg run (one output each, with
 * its own options): the same bytes as `encode` per list, without a process start per image.
 */
export async function encodeMany(dir: string, source: string, variants: string[][]): Promise<Uint8Array[]> {
  const paths = variants.map(() => join(dir, `e${crypto.randomUUID()}.jpg`));
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    source,
    ...variants.flatMap((args, i) => ["-frames:v", "1", ...args, paths[i]]),
  ]);
  return await Promise.all(paths.map((path) => Deno.readFile(path)));
}

/** One frame of a lavfi source as RGBA (the input of the test encoder). */
export function sourceRgba(source: string): Promise<Uint8Array> {
  return ffmpeg(["-f", "lavfi", "-i", source, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgba", "-"]);
}

async function writeTemp(dir: string, jpeg: Uint8Array): Promise<string> {
  const path = join(dir, `r${crypto.randomUUID()}.jpg`);
  await Deno.writeFile(path, jpeg);
  return path;
}

/**
 * ffmpeg's decode, in one run: RGBA, and the decoder's native planes. swscale's default yuv→rgb path
 * replicates chroma and rounds coarsely; the accurate flags make it interpolate chroma (bicubic) and
 * round properly, the fairer reference for a decoder that interpolates chroma (libjpeg's "fancy"
 * upsampling). `accurate: false` gives the default, for the record.
 */
export async function ffmpegDecode(
  dir: string,
  jpeg: Uint8Array,
  accurate = true,
): Promise<{ rgba: Uint8Array; planes: Uint8Array }> {
  const path = await writeTemp(dir, jpeg);
  const flags = accurate ? ["-sws_flags", "accurate_rnd+full_chroma_int"] : [];
  await ffmpeg([
    "-i",
    path,
    ...flags,
    "-f",
    "rawvideo",
    "-pix_fmt",
    "rgba",
    `${path}.rgba`,
    "-f",
    "rawvideo",
    `${path}.raw`,
  ]);
  return { rgba: await Deno.readFile(`${path}.rgba`), planes: await Deno.readFile(`${path}.raw`) };
}

/** `ffmpegDecode` of several JPEGs in one ffmpeg run (two outputs per input), in their order. */
export async function ffmpegDecodeMany(
  dir: string,
  jpegs: Uint8Array[],
): Promise<Array<{ rgba: Uint8Array; planes: Uint8Array }>> {
  const paths = await Promise.all(jpegs.map((jpeg) => writeTemp(dir, jpeg)));
  await ffmpeg([
    ...paths.flatMap((path) => ["-i", path]),
    ...paths.flatMap((path, i) => [
      "-map",
      `${i}:v`,
      "-sws_flags",
      "accurate_rnd+full_chroma_int",
      "-f",
      "rawvideo",
      "-pix_fmt",
      "rgba",
      `${path}.rgba`,
      "-map",
      `${i}:v`,
      "-f",
      "rawvideo",
      `${path}.raw`,
    ]),
  ]);
  return await Promise.all(paths.map(async (path) => ({
    rgba: await Deno.readFile(`${path}.rgba`),
    planes: await Deno.readFile(`${path}.raw`),
  })));
}

/** The pixel format ffmpeg decodes `jpeg` to, from its frame header and APP14. */
function ffmpegPixelFormat(jpeg: Uint8Array): string {
  const sof = segmentBody(jpeg, hasMarker(jpeg, 0xc0) ? 0xc0 : 0xc1);
  if (jpeg[sof + 5] === 1) return "gray";
  if (hasMarker(jpeg, 0xee)) return "gbrp";
  // Luma over chroma sampling (ffmpeg's encoder writes 4:2:2 as 2×2 and 1×2, for one).
  const ratio = `${(jpeg[sof + 7] >> 4) / (jpeg[sof + 10] >> 4)}${
    (jpeg[sof + 7] & 15) / (jpeg[sof + 10] & 15)
  }`;
  const name: Record<string, string> = { "11": "444", "21": "422", "22": "420", "12": "440", "41": "411" };
  return `yuvj${name[ratio] ?? "?"}p`;
}

/**
 * ffmpeg's native planes converted to RGBA by a slow, obvious model of what the decoder is meant to do
 * (triangle filter on halved axes, replication on others, full-range BT.601). Against it, the decode
 * itself is checked free of any difference between chroma filters.
 */
export function modelRgba(jpeg: Uint8Array, raw: Uint8Array, width: number, height: number): Uint8Array {
  const fmt = ffmpegPixelFormat(jpeg);
  const n = width * height;
  const ratios: Record<string, [number, number]> = {
    gray: [1, 1],
    gbrp: [1, 1],
    yuvj444p: [1, 1],
    yuvj422p: [2, 1],
    yuvj420p: [2, 2],
    yuvj440p: [1, 2],
    yuvj411p: [4, 1],
  };
  const [rh, rv] = ratios[fmt] ?? [0, 0];
  const cw = Math.ceil(width / rh);
  const ch = Math.ceil(height / rv);
  const expected = fmt === "gray" ? n : n + 2 * cw * ch;
  if (raw.length !== expected) {
    throw new Error(`ffmpeg gave ${raw.length} bytes of ${fmt}, expected ${expected}`);
  }
  // One axis of the filter: the nearest sample with weight ¾ and its neighbour on the pixel's side with ¼
  // when the ratio is 2 (edges repeat), the covering sample alone otherwise.
  const taps = (i: number, r: number, len: number): [number, number, number] => {
    if (r !== 2) return [Math.floor(i / r), 0, 1];
    const near = i >> 1;
    return [near, Math.min(len - 1, Math.max(0, i & 1 ? near + 1 : near - 1)), 0.75];
  };
  const chroma = (plane: number, x: number, y: number) => {
    const [y0, y1, wy] = taps(y, rv, ch);
    const [x0, x1, wx] = taps(x, rh, cw);
    const p = (sx: number, sy: number) => raw[plane + sy * cw + sx];
    return wy * (wx * p(x0, y0) + (1 - wx) * p(x1, y0)) + (1 - wy) * (wx * p(x0, y1) + (1 - wx) * p(x1, y1));
  };
  const out = new Uint8Array(n * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      let rgb: number[];
      if (fmt === "gray") {
        rgb = [raw[i], raw[i], raw[i]];
      } else if (fmt === "gbrp") {
        rgb = [raw[2 * n + i], raw[i], raw[n + i]];
      } else {
        const l = raw[i];
        const cb = chroma(n, x, y) - 128;
        const cr = chroma(n + cw * ch, x, y) - 128;
        rgb = [l + 1.402 * cr, l - 0.344136 * cb - 0.714136 * cr, l + 1.772 * cb];
      }
      for (let c = 0; c < 3; c++) out[i * 4 + c] = Math.min(255, Math.max(0, Math.round(rgb[c])));
      out[i * 4 + 3] = 255;
    }
  }
  return out;
}

/** PSNR over R, G and B (alpha ignored), in dB; Infinity when identical. */
export function psnr(a: Uint8Array, b: Uint8Array): number {
  assertEquals(a.length, b.length, "image sizes");
  let se = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    if ((i & 3) === 3) continue;
    const d = a[i] - b[i];
    se += d * d;
    n++;
  }
  return se === 0 ? Infinity : 10 * Math.log10((255 * 255 * n) / se);
}

/** Box average over scale×scale cells (partial cells at the edges average what they cover). */
export function boxDown(rgba: Uint8Array, width: number, height: number, scale: number): Uint8Array {
  const ow = Math.ceil(width / scale);
  const oh = Math.ceil(height / scale);
  const out = new Uint8Array(ow * oh * 4);
  for (let y = 0; y < oh; y++) {
    for (let x = 0; x < ow; x++) {
      for (let c = 0; c < 4; c++) {
        let s = 0;
        let n = 0;
        for (let j = y * scale; j < Math.min(height, (y + 1) * scale); j++) {
          for (let i = x * scale; i < Math.min(width, (x + 1) * scale); i++, n++) {
            s += rgba[(j * width + i) * 4 + c];
          }
        }
        out[(y * ow + x) * 4 + c] = Math.round(s / n);
      }
    }
  }
  return out;
}

export function hasMarker(bytes: Uint8Array, marker: number): boolean {
  for (let i = 0; i + 1 < bytes.length; i++) if (bytes[i] === 0xff && bytes[i + 1] === marker) return true;
  return false;
}

/** Offset of the first marker `marker`'s segment body. */
export function segmentBody(bytes: Uint8Array, marker: number): number {
  for (let i = 2; i + 1 < bytes.length; i++) if (bytes[i] === 0xff && bytes[i + 1] === marker) return i + 4;
  throw new Error(`no marker ${marker.toString(16)}`);
}
