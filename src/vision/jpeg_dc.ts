/**
 * 1/8-scale luminance from a baseline JPEG without IDCT: a block's DC coefficient is 8× its mean
 * (centred on 128), so Huffman-decoding the scan and keeping the Y component's DC values gives one mean per
 * 8×8 luma block. AC coefficients are skipped, never materialised; chroma blocks are decoded only to
 * advance the bitstream, and scans without Y are not decoded at all.
 *
 * This file is the public entry: the marker walk and each scan's block layout. The parts:
 * jpeg_markers.ts (SOF/DHT/DQT/SOS headers), jpeg_huffman.ts (Huffman tables, unstuffing, the per-block
 * bit reader) and jpeg_errors.ts.
 */

import { JpegDecodeError, JpegUnsupportedError, truncated } from "./jpeg_errors.ts";
import { decodeScan, destuff, type HuffmanTable, PAD, skipEntropyData } from "./jpeg_huffman.ts";
import {
  type Frame,
  isRgb,
  noteAppSegment,
  parseDcQuant,
  parseFrame,
  parseHuffmanTables,
  parseScanHeader,
  readSegment,
  readU16,
} from "./jpeg_markers.ts";

export { JpegDecodeError, JpegUnsupportedError };

export interface LumaImage {
  /** The JPEG's pixel size. */
  width: number;
  height: number;
  /** ceil(width / 8) × ceil(height / 8). */
  blocksWide: number;
  blocksHigh: number;
  /** Row-major mean luminance (0–255) of each 8×8 luma block. */
  luma: Uint8Array;
}

/** Largest scratch buffer kept between calls; bigger frames get a one-off buffer. */
const SCRATCH_KEEP = 4 << 20;

let scratch = new Uint8Array(0);

/** Decodes the luma DC values of a baseline (or 8-bit extended sequential) Huffman JPEG. */
export function decodeJpegLuma(bytes: Uint8Array): LumaImage {
  const n = bytes.length;
  if (n < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) {
    throw new JpegDecodeError("not a JPEG (no SOI marker)");
  }
  const dcTables: (HuffmanTable | undefined)[] = [];
  const acTables: (HuffmanTable | undefined)[] = [];
  const dcQuant: number[] = [];
  let frame: Frame | undefined;
  let restartInterval = 0;
  const hints = { jfif: false, adobeTransform: -1 };
  let pos = 2;

  for (;;) {
    if (pos >= n) throw truncated(frame ? "no scan containing the luma component" : "no frame header");
    const step = readSegment(bytes, pos);
    pos = step.next;
    if (step.kind === "skip") continue;
    if (step.kind === "eoi") {
      throw new JpegDecodeError(frame ? "no scan contains the luma component" : "no frame");
    }
    const { marker, at, end, len } = step;
    if (marker === 0xc0 || marker === 0xc1) {
      if (frame) throw new JpegDecodeError("more than one frame header");
      frame = parseFrame(bytes, at, len - 2);
    } else if (marker === 0xc4) {
      parseHuffmanTables(bytes, at, end, dcTables, acTables);
    } else if (marker === 0xdb) {
      parseDcQuant(bytes, at, end, dcQuant);
    } else if (marker === 0xdd) {
      if (len !== 4) throw new JpegDecodeError("DRI segment must be 4 bytes");
      restartInterval = readU16(bytes, at);
    } else if (marker === 0xda) {
      if (!frame) throw new JpegDecodeError("scan before frame header");
      const result = scan(
        bytes,
        at,
        end,
        frame,
        dcTables,
        acTables,
        dcQuant,
        restartInterval,
        hints.jfif,
        hints.adobeTransform,
      );
      if (typeof result !== "number") return result;
      pos = result;
    } else {
      // APP0/APP14 hints; other APPn, COM and anything else with a length: skipped.
      noteAppSegment(bytes, marker, at, len, hints);
    }
  }
}

/** Runs one SOS: returns the image if the scan held Y, otherwise the offset of the marker after it. */
function scan(
  bytes: Uint8Array,
  at: number,
  end: number,
  frame: Frame,
  dcTables: (HuffmanTable | undefined)[],
  acTables: (HuffmanTable | undefined)[],
  dcQuant: number[],
  restartInterval: number,
  jfif: boolean,
  adobeTransform: number,
): LumaImage | number {
  const { comps, dcs, acs } = parseScanHeader(bytes, at, end, frame, dcTables, acTables);
  const ns = comps.length;
  // Y is the first frame component; a scan without it is skipped unread.
  if (!comps.includes(0)) return skipEntropyData(bytes, end);
  if (isRgb(frame, jfif, adobeTransform)) throw new JpegUnsupportedError("RGB-coded JPEGs are not supported");

  const { width, height, hMax, vMax } = frame;
  const y = frame.components[0];
  const q = dcQuant[y.tq];
  if (q === undefined) throw new JpegDecodeError(`quantization table ${y.tq} is not defined`);
  const gridW = Math.ceil(Math.ceil((width * y.h) / hMax) / 8);
  const gridH = Math.ceil(Math.ceil((height * y.v) / vMax) / 8);

  const slotComp: number[] = [];
  const slotDc: HuffmanTable[] = [];
  const slotAc: HuffmanTable[] = [];
  const slotX: number[] = [];
  const slotY: number[] = [];
  let mcusX: number;
  let mcusY: number;
  let lumaPerMcuX = 1;
  let lumaPerMcuY = 1;
  if (ns === 1) {
    // Non-interleaved: one block per MCU, over this component's own block grid.
    slotComp.push(0);
    slotDc.push(dcs[0]);
    slotAc.push(acs[0]);
    slotX.push(0);
    slotY.push(0);
    mcusX = gridW;
    mcusY = gridH;
  } else {
    for (let i = 0; i < ns; i++) {
      const c = frame.components[comps[i]];
      for (let by = 0; by < c.v; by++) {
        for (let bx = 0; bx < c.h; bx++) {
          slotComp.push(i);
          slotDc.push(dcs[i]);
          slotAc.push(acs[i]);
          slotX.push(comps[i] === 0 ? bx : -1);
          slotY.push(by);
        }
      }
    }
    if (slotComp.length > 10) {
      throw new JpegDecodeError(`${slotComp.length} blocks per MCU (at most 10 allowed)`);
    }
    mcusX = Math.ceil(width / (8 * hMax));
    mcusY = Math.ceil(height / (8 * vMax));
    lumaPerMcuX = y.h;
    lumaPerMcuY = y.v;
  }

  const dataLen = bytes.length - end;
  let out = scratch;
  if (out.length < dataLen + PAD) {
    out = new Uint8Array(dataLen + PAD);
    if (out.length <= SCRATCH_KEEP) scratch = out;
  }
  const ends: number[] = [];
  const rst: number[] = [];
  destuff(bytes, end, out, ends, rst);

  const grid = new Uint8Array(gridW * gridH);
  decodeScan(out, ends, rst, {
    slotComp,
    slotDc,
    slotAc,
    slotX,
    slotY,
    mcusX,
    mcusY,
    lumaPerMcuX,
    lumaPerMcuY,
    gridW,
    gridH,
    dcQuant: q,
    restartInterval,
  }, grid);

  const blocksWide = Math.ceil(width / 8);
  const blocksHigh = Math.ceil(height / 8);
  if (blocksWide === gridW && blocksHigh === gridH) {
    return { width, height, blocksWide, blocksHigh, luma: grid };
  }
  // Y subsampled relative to chroma (unusual): each luma block spans several 8×8 output cells.
  const luma = new Uint8Array(blocksWide * blocksHigh);
  for (let by = 0; by < blocksHigh; by++) {
    const sy = Math.min(gridH - 1, Math.floor((by * y.v) / vMax));
    for (let bx = 0; bx < blocksWide; bx++) {
      luma[by * blocksWide + bx] = grid[sy * gridW + Math.min(gridW - 1, Math.floor((bx * y.h) / hMax))];
    }
  }
  return { width, height, blocksWide, blocksHigh, luma };
}
