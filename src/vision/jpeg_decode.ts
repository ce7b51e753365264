/**
 * Full baseline JPEG decode to RGBA, optionally scaled down by 2, 4 or 8 inside the decoder: scale 1 runs
 * the full IDCT, scales 2 and 4 reduced IDCTs that only ever compute the smaller grid, and scale 8 keeps each
 * block's DC (its mean) and skips AC unread, like jpeg_dc.ts does for luma alone.
 *
 * Supports baseline and 8-bit extended-sequential Huffman JPEGs with 1 (grey) or 3 components (YCbCr, or RGB
 * when Adobe's transform flag says so), any integral sampling, interleaved or one scan per component, and
 * restart intervals. Progressive, arithmetic, lossless and 12-bit JPEGs throw JpegUnsupportedError; corrupt
 * or truncated data throws JpegDecodeError.
 *
 * This file is the marker walk and the buffers. The parts: jpeg_entropy.ts (Huffman decode into the IDCT),
 * jpeg_idct.ts, jpeg_color.ts (upsampling and colour), and the shared jpeg_markers.ts / jpeg_huffman.ts.
 */

import { type ColorMode, type ComponentPlane, planesToRgba } from "./jpeg_color.ts";
import {
  type AcTable,
  type BlockScanPlan,
  buildAcTable,
  decodeScanBlocks,
  decodeScanDc,
} from "./jpeg_entropy.ts";
import { JpegDecodeError, JpegUnsupportedError, truncated } from "./jpeg_errors.ts";
import { buildTable, destuff, type HuffmanTable, PAD } from "./jpeg_huffman.ts";
import { type BlockSize, dequantMultipliers } from "./jpeg_idct.ts";
import {
  forEachHuffmanTable,
  type Frame,
  isRgb,
  noteAppSegment,
  parseFrame,
  parseQuantTables,
  parseScanHeader,
  readSegment,
  readU16,
} from "./jpeg_markers.ts";
import type { RgbaImage } from "./image.ts";

export { JpegDecodeError, JpegUnsupportedError };

export interface DecodeJpegOptions {
  /** Output is ceil(width / scale) × ceil(height / scale). Default 1. */
  scale?: 1 | 2 | 4 | 8;
  /**
   * Decode into this buffer (at least width × height × 4 bytes of the output) instead of a new one; the
   * result's `data` is then a view of it. Worth it for repeated decodes: a fresh 8 MB buffer costs its
   * page faults on every call.
   */
  into?: Uint8Array;
}

/** Frames past this many pixels are refused before any allocation (the 16-bit size fields allow 4 G). */
const MAX_PIXELS = 1 << 26;

/** Scratch kept between calls up to this many bytes each; bigger frames get one-off buffers. */
const SCRATCH_KEEP = 8 << 20;

let entropyScratch = new Uint8Array(0);
const planeScratch: Uint8ClampedArray[] = [];

interface DecodeState {
  bytes: Uint8Array;
  /** Scale 8: every block reduces to its DC. */
  dcOnly: boolean;
  /** Output samples per block across and down, per frame component. */
  blockSizes: Array<[BlockSize, BlockSize]>;
  dcTables: (HuffmanTable | undefined)[];
  acTables: (AcTable | undefined)[];
  quant: (Uint16Array | undefined)[];
  frame?: Frame;
  planes: ComponentPlane[];
  decoded: boolean[];
  restartInterval: number;
  jfif: boolean;
  adobeTransform: number;
}

/** Decodes a baseline (or 8-bit extended-sequential) Huffman JPEG to RGBA, scaled down by `scale`. */
export function decodeJpeg(bytes: Uint8Array, options: DecodeJpegOptions = {}): RgbaImage {
  const scale = options.scale ?? 1;
  if (scale !== 1 && scale !== 2 && scale !== 4 && scale !== 8) {
    throw new RangeError(`scale must be 1, 2, 4 or 8, not ${scale}`);
  }
  const n = bytes.length;
  if (n < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8) {
    throw new JpegDecodeError("not a JPEG (no SOI marker)");
  }
  const st: DecodeState = {
    bytes,
    dcOnly: scale === 8,
    blockSizes: [],
    dcTables: [],
    acTables: [],
    quant: [],
    planes: [],
    decoded: [],
    restartInterval: 0,
    jfif: false,
    adobeTransform: -1,
  };
  let pos = 2;

  for (;;) {
    if (pos >= n) {
      // A missing EOI after complete scans is common enough (cut-off writers) to accept.
      if (st.frame && st.decoded.every(Boolean)) break;
      throw truncated(st.frame ? "scans missing for some components" : "no frame header");
    }
    const step = readSegment(bytes, pos);
    pos = step.next;
    if (step.kind === "skip") continue;
    if (step.kind === "eoi") break;
    const { marker, at, end, len } = step;
    if (marker === 0xc0 || marker === 0xc1) {
      if (st.frame) throw new JpegDecodeError("more than one frame header");
      st.frame = parseFrame(bytes, at, len - 2);
      setUpPlanes(st, st.frame, scale);
    } else if (marker === 0xc4) {
      forEachHuffmanTable(bytes, at, end, (tc, th, counts, symbols) => {
        if (tc === 0) st.dcTables[th] = buildTable(counts, symbols, true);
        else st.acTables[th] = buildAcTable(counts, symbols);
      });
    } else if (marker === 0xdb) {
      parseQuantTables(bytes, at, end, st.quant);
    } else if (marker === 0xdd) {
      if (len !== 4) throw new JpegDecodeError("DRI segment must be 4 bytes");
      st.restartInterval = readU16(bytes, at);
    } else if (marker === 0xda) {
      if (!st.frame) throw new JpegDecodeError("scan before frame header");
      pos = scan(st, st.frame, at, end);
    } else {
      // APP0/APP14 hints; other APPn, COM and anything else with a length: skipped.
      noteAppSegment(bytes, marker, at, len, st);
    }
  }

  const frame = st.frame;
  if (!frame) throw new JpegDecodeError("no frame header before EOI");
  const missing = st.decoded.findIndex((d) => !d);
  if (missing >= 0) {
    throw new JpegDecodeError(`no scan holds component ${frame.components[missing].id} (EOI reached)`);
  }
  const width = Math.ceil(frame.width / scale);
  const height = Math.ceil(frame.height / scale);
  const mode: ColorMode = frame.components.length === 1
    ? "gray"
    : isRgb(frame, st.jfif, st.adobeTransform)
    ? "rgb"
    : "ycc";
  const size = width * height * 4;
  let data: Uint8Array;
  if (options.into) {
    if (options.into.length < size) {
      throw new RangeError(
        `output buffer holds ${options.into.length} bytes, ${width}×${height} RGBA needs ${size}`,
      );
    }
    data = options.into.subarray(0, size);
  } else {
    data = new Uint8Array(size);
  }
  planesToRgba(st.planes, mode, width, height, data);
  return { width, height, data };
}

/**
 * One plane per component, covering every block of the MCU grid at n×n samples per block. A subsampled
 * component gets a larger n where the scale leaves room (4:2:0 at 1/2: chroma through the full 8×8 IDCT, at
 * 1/4 through the 4×4), so it arrives at output resolution and needs no upsampling — as libjpeg does. At
 * 1/8 every component stays DC-only.
 */
function setUpPlanes(st: DecodeState, frame: Frame, scale: number): void {
  const { width, height, hMax, vMax, components } = frame;
  if (width * height > MAX_PIXELS) {
    throw new JpegUnsupportedError(
      `${width}×${height} is larger than the ${MAX_PIXELS / (1 << 20)} MP this decoder accepts`,
    );
  }
  const mcusX = Math.ceil(width / (8 * hMax));
  const mcusY = Math.ceil(height / (8 * vMax));
  for (let i = 0; i < components.length; i++) {
    const c = components[i];
    if (hMax % c.h !== 0 || vMax % c.v !== 0) {
      throw new JpegUnsupportedError(
        `fractional sampling (${c.h}×${c.v} against ${hMax}×${vMax}) is not supported`,
      );
    }
    const rh = hMax / c.h;
    const rv = vMax / c.v;
    const nh = blockSize(scale, rh);
    const nv = blockSize(scale, rv);
    const stride = mcusX * c.h * nh;
    const size = stride * mcusY * c.v * nv;
    let plane = planeScratch[i];
    if (!plane || plane.length < size) {
      plane = new Uint8ClampedArray(size);
      if (size <= SCRATCH_KEEP) planeScratch[i] = plane;
    }
    st.blockSizes.push([nh, nv]);
    st.planes.push({
      plane,
      stride,
      rh: (rh * 8) / scale / nh,
      rv: (rv * 8) / scale / nv,
      w: Math.ceil((Math.ceil((width * c.h) / hMax) * nh) / 8),
      h: Math.ceil((Math.ceil((height * c.v) / vMax) * nv) / 8),
    });
    st.decoded.push(false);
  }
}

/**
 * Samples per block along an axis where the component has `ratio` output pixels per sample at scale 1:
 * 8 / scale, doubled while the ratio allows and 8 is not passed. DC-only (1) at scale 8.
 */
function blockSize(scale: number, ratio: number): BlockSize {
  let n = 8 / scale;
  let k = 1;
  while (scale !== 8 && n < 8 && ratio % (k * 2) === 0) {
    n *= 2;
    k *= 2;
  }
  return n as BlockSize;
}

/** Runs one SOS; returns the offset of the marker after its entropy-coded data. */
function scan(st: DecodeState, frame: Frame, at: number, end: number): number {
  const { bytes } = st;
  const { comps, dcs, acs } = parseScanHeader(bytes, at, end, frame, st.dcTables, st.acTables);
  const ns = comps.length;
  const { width, height, hMax, vMax } = frame;

  const plan: BlockScanPlan = {
    slotComp: [],
    slotDc: [],
    slotAc: [],
    slotX: [],
    slotY: [],
    slotH: [],
    slotV: [],
    slotPlane: [],
    slotStride: [],
    slotQuant: [],
    slotNh: [],
    slotNv: [],
    mcusX: 0,
    mcusY: 0,
    restartInterval: st.restartInterval,
  };
  for (let i = 0; i < ns; i++) {
    const ci = comps[i];
    const c = frame.components[ci];
    const q = st.quant[c.tq];
    if (!q) throw new JpegDecodeError(`quantization table ${c.tq} is not defined`);
    const [nh, nv] = st.blockSizes[ci];
    const quant = dequantMultipliers(q, nh, nv);
    // Non-interleaved: one block per MCU over the component's own block grid.
    const bh = ns === 1 ? 1 : c.h;
    const bv = ns === 1 ? 1 : c.v;
    for (let by = 0; by < bv; by++) {
      for (let bx = 0; bx < bh; bx++) {
        plan.slotComp.push(ci);
        plan.slotDc.push(dcs[i]);
        plan.slotAc.push(acs[i]);
        plan.slotX.push(bx);
        plan.slotY.push(by);
        plan.slotH.push(bh);
        plan.slotV.push(bv);
        plan.slotPlane.push(st.planes[ci].plane);
        plan.slotStride.push(st.planes[ci].stride);
        plan.slotQuant.push(quant);
        plan.slotNh.push(nh);
        plan.slotNv.push(nv);
      }
    }
    st.decoded[ci] = true;
  }
  if (ns === 1) {
    const c = frame.components[comps[0]];
    plan.mcusX = Math.ceil(Math.ceil((width * c.h) / hMax) / 8);
    plan.mcusY = Math.ceil(Math.ceil((height * c.v) / vMax) / 8);
  } else {
    if (plan.slotComp.length > 10) {
      throw new JpegDecodeError(`${plan.slotComp.length} blocks per MCU (at most 10 allowed)`);
    }
    plan.mcusX = Math.ceil(width / (8 * hMax));
    plan.mcusY = Math.ceil(height / (8 * vMax));
  }

  const dataLen = bytes.length - end;
  let out = entropyScratch;
  if (out.length < dataLen + PAD) {
    out = new Uint8Array(dataLen + PAD);
    if (out.length <= SCRATCH_KEEP) entropyScratch = out;
  }
  const ends: number[] = [];
  const rst: number[] = [];
  const next = destuff(bytes, end, out, ends, rst);
  if (st.dcOnly) decodeScanDc(out, ends, rst, plan);
  else decodeScanBlocks(out, ends, rst, plan);
  return next;
}
