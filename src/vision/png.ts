/**
 * PNG encode and decode for RgbaImage. Chunks and CRCs are handled here; zlib is fflate; row
 * filtering and unfiltering, alpha detection and pixel expansion run in the WASM kernels (png_rows.ts).
 */
import { unzlibSync, zlibSync } from "fflate";
import type { RgbaImage } from "./image.ts";
import { type PngColorType, type PngFilter, pngScanlinesToRgba, withPngScanlines } from "./png_rows.ts";

const SIGNATURE = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10]);

/** Largest pixel count decoded (1 GiB of RGBA); beyond that the input is almost surely hostile. */
const MAX_PIXELS = 1 << 28;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array, start: number, end: number): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]) & 255] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export interface PngEncodeOptions {
  /**
   * zlib level 0–9. Default 3: artifacts are rendered on demand, and with fflate on 1080p UI frames
   * levels 1–3 cost the same (~40 ms) while 3 is ~15% smaller; 6 is 1.5–3× slower.
   */
  level?: 0 | 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9;
  /**
   * Row filter. Default "up": one SIMD subtraction, flat UI regions become zero runs, and it decodes
   * fastest. Paeth/adaptive shrink UI frames ~8% more but cost ~15 ms more to encode and to decode.
   */
  filter?: PngFilter;
}

/** Encodes 8-bit RGBA, or 8-bit RGB when every pixel is opaque. Non-interlaced, one IDAT chunk. */
export function encodePng(img: RgbaImage, options: PngEncodeOptions = {}): Uint8Array {
  if (img.width < 1 || img.height < 1) {
    throw new Error(`encodePng: cannot encode a ${img.width}×${img.height} image`);
  }
  const level = options.level ?? 3;
  return withPngScanlines(img, options.filter ?? "up", (scanlines, channels) => {
    const idat = zlibSync(scanlines, { level });
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
  view.setUint32(at + 8 + data.length, crc32(out, at + 4, at + 8 + data.length));
  return at + 12 + data.length;
}

interface Header {
  width: number;
  height: number;
  colorType: PngColorType;
}

const CHANNELS: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

function readHeader(data: Uint8Array): Header {
  if (data.length !== 13) throw new Error(`PNG IHDR has ${data.length} bytes, expected 13`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const width = view.getUint32(0);
  const height = view.getUint32(4);
  const [depth, colorType, compression, filter, interlace] = data.subarray(8);
  if (width === 0 || height === 0) throw new Error(`PNG has an empty size ${width}×${height}`);
  if (width * height > MAX_PIXELS) throw new Error(`PNG is too large to decode (${width}×${height})`);
  if (colorType !== 0 && colorType !== 2 && colorType !== 3 && colorType !== 4 && colorType !== 6) {
    throw new Error(`PNG colour type ${colorType} is invalid`);
  }
  if (depth !== 8) {
    throw new Error(`PNG bit depth ${depth} is not supported (only 8-bit samples are decoded)`);
  }
  if (compression !== 0 || filter !== 0) throw new Error("PNG uses an unknown compression or filter method");
  if (interlace !== 0) throw new Error("interlaced (Adam7) PNGs are not supported");
  return { width, height, colorType };
}

/**
 * Decodes an 8-bit, non-interlaced PNG (gray, gray+alpha, RGB, RGBA or palette, with tRNS) to RGBA.
 * Throws an Error saying what is wrong for anything else or for damaged input (bad signature, CRC,
 * truncation, corrupt zlib data, bad filter types, palette indexes beyond PLTE).
 */
export function decodePng(bytes: Uint8Array): RgbaImage {
  if (bytes.length < SIGNATURE.length || SIGNATURE.some((b, i) => bytes[i] !== b)) {
    throw new Error("not a PNG file (bad signature)");
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: Header | undefined;
  let palette: Uint8Array | undefined;
  let trns: Uint8Array | undefined;
  const idat: Uint8Array[] = [];
  let idatBytes = 0;
  let ended = false;
  let at = SIGNATURE.length;
  while (at < bytes.length && !ended) {
    if (at + 12 > bytes.length) throw new Error("PNG is truncated (incomplete chunk header)");
    const length = view.getUint32(at);
    const type = String.fromCharCode(...bytes.subarray(at + 4, at + 8));
    const end = at + 8 + length;
    if (end + 4 > bytes.length) throw new Error(`PNG is truncated inside chunk ${type}`);
    if (crc32(bytes, at + 4, end) !== view.getUint32(end)) {
      throw new Error(`PNG chunk ${type} fails its CRC check`);
    }
    const data = bytes.subarray(at + 8, end);
    if (!header && type !== "IHDR") throw new Error(`PNG starts with chunk ${type}, not IHDR`);
    switch (type) {
      case "IHDR":
        if (header) throw new Error("PNG has two IHDR chunks");
        header = readHeader(data);
        break;
      case "PLTE":
        if (length % 3 !== 0 || length > 768) throw new Error(`PNG PLTE has a bad length ${length}`);
        palette = data;
        break;
      case "tRNS":
        trns = data;
        break;
      case "IDAT":
        idat.push(data);
        idatBytes += data.length;
        break;
      case "IEND":
        ended = true;
        break;
      default:
        // Bit 5 of the first letter: lowercase = ancillary (safe to skip), uppercase = critical.
        if (!(bytes[at + 4] & 0x20)) throw new Error(`PNG has an unknown critical chunk ${type}`);
    }
    at = end + 4;
  }
  if (!header) throw new Error("PNG has no IHDR chunk");
  if (idat.length === 0) throw new Error("PNG has no IDAT chunk");
  const { width, height, colorType } = header;
  if (colorType === 3 && !palette) throw new Error("palette PNG has no PLTE chunk");

  const compressed = idat.length === 1 ? idat[0] : new Uint8Array(idatBytes);
  if (idat.length > 1) {
    let o = 0;
    for (const part of idat) {
      compressed.set(part, o);
      o += part.length;
    }
  }
  const expected = height * (width * CHANNELS[colorType] + 1);
  let filtered: Uint8Array;
  try {
    filtered = unzlibSync(compressed, { out: new Uint8Array(expected) });
  } catch (err) {
    throw new Error(`PNG image data is corrupt: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (filtered.length < expected) {
    throw new Error(`PNG image data is truncated: ${filtered.length} bytes inflated, ${expected} expected`);
  }

  let rgbaPalette: Uint8Array | undefined;
  let transparentKey = -1;
  if (colorType === 3 && palette) {
    const entries = palette.length / 3;
    rgbaPalette = new Uint8Array(entries * 4);
    for (let i = 0; i < entries; i++) {
      rgbaPalette[i * 4] = palette[i * 3];
      rgbaPalette[i * 4 + 1] = palette[i * 3 + 1];
      rgbaPalette[i * 4 + 2] = palette[i * 3 + 2];
      rgbaPalette[i * 4 + 3] = trns && i < trns.length ? trns[i] : 255;
    }
  } else if (trns && colorType === 0 && trns.length >= 2) {
    // 16-bit sample; for 8-bit images only the low byte can match.
    transparentKey = trns[0] === 0 ? trns[1] : -1;
  } else if (trns && colorType === 2 && trns.length >= 6) {
    transparentKey = trns[0] | trns[2] | trns[4] ? -1 : trns[1] | (trns[3] << 8) | (trns[5] << 16);
  }
  return pngScanlinesToRgba({ width, height, colorType, filtered, palette: rgbaPalette, transparentKey });
}
