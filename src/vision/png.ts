/**
 * PNG encoding for RgbaImage (artifacts). Chunks are built here; zlib and CRC32 are node:zlib's native
 * ones: on real 720p Chromium frames 3.5× faster than fflate level 3 for ~5% more bytes, and faster on
 * label-sized images too, so fflate is not used anywhere in the product (bench/builtins.ts). Row
 * filtering and alpha detection run in the WASM kernels (png_rows.ts). Nothing in the product decodes
 * PNG; tests and benches use npm:fast-png.
 */
import { crc32, deflateSync } from "node:zlib";
import type { RgbaImage } from "./image.ts";
import { type PngFilter, withPngScanlines } from "./png_rows.ts";

const SIGNATURE = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);

export interface PngEncodeOptions {
  /**
   * zlib level 0–9. Default 6: on real 720p Chromium frames ~13 ms, ~4 ms more than 3 for 3% fewer
   * bytes; 1 is 40–150% larger; 9 is 5–10× slower (bench/builtins.ts).
   */
  level?: 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;
  /**
   * Row filter. Default "up": one SIMD subtraction, and flat UI regions become zero runs. On 720p
   * frames Paeth saves ~2% for ~25% more time, adaptive ~8% for 2.5× the time (bench/builtins.ts).
   */
  filter?: PngFilter;
}

/** Encodes 8-bit RGBA, or 8-bit RGB when every pixel is opaque. Non-interlaced, one IDAT chunk. */
export function encodePng(img: RgbaImage, options: PngEncodeOptions = {}): Uint8Array {
  if (img.width < 1 || img.height < 1) {
    throw new Error(`encodePng: cannot encode a ${img.width}×${img.height} image`);
  }
  const level = options.level ?? 6;
  return withPngScanlines(img, options.filter ?? "up", (scanlines, channels) => {
    const idat = deflateSync(scanlines, { level });
    const ihdr = new Uint8Array(13);
    const view = new DataView(ihdr.buffer);
    view.setUint32(0, img.width);
    view.setUint32(4, img.height);
    ihdr[8] = 8;
    ihdr[9] = channels === 4 ? 6 : 2;
    const out = new Uint8Array(SIGNATURE.length + 12 * 3 + ihdr.length + idat.length);
    out.set(SIGNATURE, 0);
    let at = SIGNATURE.length;
    for (const [type, data] of [["IHDR", ihdr], ["IDAT", idat], ["IEND", new Uint8Array(0)]] as const) {
      at = writeChunk(out, at, type, data);
    }
    return out;
  });
}

function writeChunk(out: Uint8Array, at: number, type: string, data: Uint8Array): number {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  view.setUint32(at, data.length);
  for (let i = 0; i < 4; i++) out[at + 4 + i] = type.charCodeAt(i);
  out.set(data, at + 8);
  view.setUint32(at + 8 + data.length, crc32(out.subarray(at + 4, at + 8 + data.length)));
  return at + 12 + data.length;
}
