/**
 * The entropy-coded data of the full decoder: Huffman-decodes each block's coefficients, dequantises them
 * straight into the layout of the inverse DCT for the chosen output scale and writes the block's pixels into
 * its component plane. Scale 8 has its own loop that keeps DC only and skips AC without materialising it.
 *
 * The bit reader is the one of jpeg_huffman.ts (32-bit window, refilled to ≥ 25 bits before each symbol, over
 * unstuffed data followed by PAD zero bytes), with a second AC table that resolves a short code together
 * with its magnitude bits in one lookup — at screencast qualities most coefficients take that path.
 */

import { JpegDecodeError, truncated } from "./jpeg_errors.ts";
import {
  buildTable,
  FAST_BITS,
  FAST_MASK,
  FAST_SIZE,
  type HuffmanTable,
  slowSymbol,
} from "./jpeg_huffman.ts";
import { type BlockSize, blockSlots, idct2, idct4, idct8, idctRect } from "./jpeg_idct.ts";

export interface AcTable {
  /** Skip-oriented fast table (DC-only decode) and the canonical tables for codes longer than FAST_BITS. */
  base: HuffmanTable;
  /**
   * By the next FAST_BITS bits, when code and magnitude bits both fit: value << 10 | run << 5 | bits used.
   * End of block and ZRL have value 0 (run 0 / 15). 0 = take the symbol path.
   */
  value: Int32Array;
  /** By the next FAST_BITS bits: code length | symbol << 5; 0 = code longer than FAST_BITS. */
  sym: Uint16Array;
}

export function buildAcTable(counts: Uint8Array, symbols: Uint8Array): AcTable {
  const base = buildTable(counts, symbols, false); // validates the code lengths
  const value = new Int32Array(FAST_SIZE);
  const sym = new Uint16Array(FAST_SIZE);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= FAST_BITS; len++) {
    for (let i = 0; i < counts[len - 1]; i++, k++, code++) {
      const rs = symbols[k];
      const r = rs >> 4;
      const s = rs & 15;
      const shift = FAST_BITS - len;
      sym.fill(len | (rs << 5), code << shift, (code + 1) << shift);
      if (s === 0) {
        value.fill((r << 5) | len, code << shift, (code + 1) << shift);
      } else if (len + s <= FAST_BITS) {
        const rest = shift - s;
        for (let bits = 0; bits < 1 << s; bits++) {
          const v = bits < 1 << (s - 1) ? bits - (1 << s) + 1 : bits;
          const first = ((code << s) | bits) << rest;
          value.fill((v << 10) | (r << 5) | (len + s), first, first + (1 << rest));
        }
      }
    }
    code <<= 1;
  }
  return { base, value, sym };
}

export interface BlockScanPlan {
  /** Per block slot of one MCU: frame component (indexes the DC predictors), tables, destination. */
  slotComp: number[];
  slotDc: HuffmanTable[];
  slotAc: AcTable[];
  /** Block offset inside the MCU, and the component's blocks per MCU (1×1 when not interleaved). */
  slotX: number[];
  slotY: number[];
  slotH: number[];
  slotV: number[];
  slotPlane: Uint8ClampedArray[];
  slotStride: number[];
  /** Dequantisation multipliers for the slot's block size (see jpeg_idct.ts), zigzag order. */
  slotQuant: Float64Array[];
  /**
   * Output samples per block across and down: 8 / scale, or more on an axis where the component is
   * subsampled (1 × 1 for DC-only).
   */
  slotNh: BlockSize[];
  slotNv: BlockSize[];
  mcusX: number;
  mcusY: number;
  restartInterval: number;
}

/** blockSlots() by nh · 16 + nv. */
const SLOTS = new Map<number, Int32Array>();

function slotsFor(nh: BlockSize, nv: BlockSize): Int32Array {
  let slots = SLOTS.get(nh * 16 + nv);
  if (!slots) {
    slots = blockSlots(nh, nv);
    SLOTS.set(nh * 16 + nv, slots);
  }
  return slots;
}

// Per-block scratch, shared by every call (decoding is synchronous).
const blk = new Float64Array(65);
const ws = new Float64Array(64);
const touched = new Int32Array(64 + 16);
const pred = new Int32Array(4);

/** Moves to the next restart interval; returns the new segment index. */
function nextSegment(ends: number[], rst: number[], seg: number, mcu: number, total: number): number {
  if (seg + 1 >= ends.length) throw truncated(`restart marker missing before MCU ${mcu} of ${total}`);
  const expected = seg & 7;
  if (rst[seg] !== expected) {
    throw new JpegDecodeError(`restart marker RST${rst[seg]} where RST${expected} was expected`);
  }
  return seg + 1;
}

/** Decodes one scan at scale 1, 2 or 4: every block through the IDCT for its slot's size into its plane. */
export function decodeScanBlocks(d: Uint8Array, ends: number[], rst: number[], plan: BlockScanPlan): void {
  const { slotComp, slotDc, slotAc, slotX, slotY, slotH, slotV, slotPlane, slotStride, slotQuant } = plan;
  const { slotNh, slotNv, mcusX, mcusY, restartInterval } = plan;
  const slots = slotComp.length;
  const slotZz = slotNh.map((nh, i) => slotsFor(nh, slotNv[i]));
  const totalMcus = mcusX * mcusY;
  let seg = 0;
  let segEndBits = ends[0] * 8;
  let pos = 0;
  let buf = 0;
  let cnt = 0;
  let untilRestart = restartInterval;
  pred.fill(0);
  blk.fill(0);

  for (let mcu = 0; mcu < totalMcus; mcu++) {
    if (restartInterval > 0) {
      if (untilRestart === 0) {
        // The rest of the segment is padding; the next interval starts byte-aligned, predictors at 0.
        pos = ends[seg];
        seg = nextSegment(ends, rst, seg, mcu, totalMcus);
        segEndBits = ends[seg] * 8;
        buf = 0;
        cnt = 0;
        pred.fill(0);
        untilRestart = restartInterval;
      }
      untilRestart--;
    }
    const my = (mcu / mcusX) | 0;
    const mx = mcu - my * mcusX;

    for (let sl = 0; sl < slots; sl++) {
      const dc = slotDc[sl];
      const ac = slotAc[sl];
      const acValue = ac.value;
      const qm = slotQuant[sl];
      const zz = slotZz[sl];
      const c = slotComp[sl];

      // DC: category symbol, then that many magnitude bits.
      if (cnt < 25) {
        do {
          buf = (buf << 8) | d[pos++];
          cnt += 8;
        } while (cnt < 25);
      }
      let e = dc.fast[(buf >>> (cnt - FAST_BITS)) & FAST_MASK];
      let s: number;
      if (e !== 0) {
        cnt -= e & 31;
        s = e >>> 5;
      } else {
        const ls = slowSymbol(dc, (buf >>> (cnt - 16)) & 0xffff);
        if (ls < 0) throw new JpegDecodeError("invalid Huffman code in DC coefficient");
        cnt -= ls >>> 8;
        s = ls & 15;
        if (cnt < s) {
          do {
            buf = (buf << 8) | d[pos++];
            cnt += 8;
          } while (cnt < 25);
        }
      }
      if (s !== 0) {
        const v = (buf >>> (cnt - s)) & ((1 << s) - 1);
        cnt -= s;
        pred[c] += v < 1 << (s - 1) ? v - (1 << s) + 1 : v;
      }
      blk[0] = pred[c] * qm[0] + 128;

      // AC: into the block's slots; `touched` remembers what to zero afterwards.
      let nt = 0;
      let k = 1;
      while (k < 64) {
        if (cnt < 25) {
          do {
            buf = (buf << 8) | d[pos++];
            cnt += 8;
          } while (cnt < 25);
        }
        const peek = (buf >>> (cnt - FAST_BITS)) & FAST_MASK;
        e = acValue[peek];
        if (e !== 0) {
          cnt -= e & 31;
          const v = e >> 10;
          if (v === 0) {
            if ((e & 0x1e0) !== 0x1e0) break; // end of block
            k += 16;
            continue;
          }
          k += (e >> 5) & 15;
          const z = zz[k];
          blk[z] = v * qm[k];
          touched[nt++] = z;
          k++;
          continue;
        }
        let rs: number;
        const f = ac.sym[peek];
        if (f !== 0) {
          cnt -= f & 31;
          rs = f >>> 5;
        } else {
          const ls = slowSymbol(ac.base, (buf >>> (cnt - 16)) & 0xffff);
          if (ls < 0) throw new JpegDecodeError("invalid Huffman code in AC coefficient");
          cnt -= ls >>> 8;
          rs = ls & 255;
        }
        s = rs & 15;
        if (s === 0) {
          if (rs !== 0xf0) break;
          k += 16;
          continue;
        }
        k += rs >> 4;
        if (cnt < s) {
          do {
            buf = (buf << 8) | d[pos++];
            cnt += 8;
          } while (cnt < 25);
        }
        const bits = (buf >>> (cnt - s)) & ((1 << s) - 1);
        cnt -= s;
        const z = zz[k];
        blk[z] = (bits < 1 << (s - 1) ? bits - (1 << s) + 1 : bits) * qm[k];
        touched[nt++] = z;
        k++;
      }
      if (k > 64) throw new JpegDecodeError("AC coefficient run goes past the end of the block");

      const out = slotPlane[sl];
      const stride = slotStride[sl];
      const nh = slotNh[sl];
      const nv = slotNv[sl];
      let o = (my * slotV[sl] + slotY[sl]) * nv * stride + (mx * slotH[sl] + slotX[sl]) * nh;
      if (nt === 0) {
        // Flat block (common in UI content): no transform.
        const v = blk[0];
        for (let y = 0; y < nv; y++, o += stride) {
          for (let x = 0; x < nh; x++) out[o + x] = v;
        }
      } else {
        if (nh !== nv) idctRect(blk, ws, out, o, stride, nh, nv);
        else if (nh === 8) idct8(blk, ws, out, o, stride);
        else if (nh === 4) idct4(blk, ws, out, o, stride);
        else idct2(blk, out, o, stride);
        for (let t = 0; t < nt; t++) blk[touched[t]] = 0;
      }
    }
    // Valid data never needs the zero padding; reading into it means the segment was cut short.
    if (pos * 8 - cnt > segEndBits) {
      throw truncated(`entropy-coded data ends inside MCU ${mcu} of ${totalMcus}`);
    }
  }
}

/** Decodes one scan at scale 8: each block's DC (its mean) into one plane sample; AC is skipped unread. */
export function decodeScanDc(d: Uint8Array, ends: number[], rst: number[], plan: BlockScanPlan): void {
  const { slotComp, slotDc, slotAc, slotX, slotY, slotH, slotV, slotPlane, slotStride, slotQuant } = plan;
  const { mcusX, mcusY, restartInterval } = plan;
  const slots = slotComp.length;
  const totalMcus = mcusX * mcusY;
  let seg = 0;
  let segEndBits = ends[0] * 8;
  let pos = 0;
  let buf = 0;
  let cnt = 0;
  let untilRestart = restartInterval;
  pred.fill(0);

  for (let mcu = 0; mcu < totalMcus; mcu++) {
    if (restartInterval > 0) {
      if (untilRestart === 0) {
        pos = ends[seg];
        seg = nextSegment(ends, rst, seg, mcu, totalMcus);
        segEndBits = ends[seg] * 8;
        buf = 0;
        cnt = 0;
        pred.fill(0);
        untilRestart = restartInterval;
      }
      untilRestart--;
    }
    const my = (mcu / mcusX) | 0;
    const mx = mcu - my * mcusX;

    for (let sl = 0; sl < slots; sl++) {
      const dc = slotDc[sl];
      const ac = slotAc[sl].base;
      const acFast = ac.fast;
      const c = slotComp[sl];

      if (cnt < 25) {
        do {
          buf = (buf << 8) | d[pos++];
          cnt += 8;
        } while (cnt < 25);
      }
      let e = dc.fast[(buf >>> (cnt - FAST_BITS)) & FAST_MASK];
      let s: number;
      if (e !== 0) {
        cnt -= e & 31;
        s = e >>> 5;
      } else {
        const ls = slowSymbol(dc, (buf >>> (cnt - 16)) & 0xffff);
        if (ls < 0) throw new JpegDecodeError("invalid Huffman code in DC coefficient");
        cnt -= ls >>> 8;
        s = ls & 15;
        if (cnt < s) {
          do {
            buf = (buf << 8) | d[pos++];
            cnt += 8;
          } while (cnt < 25);
        }
      }
      if (s !== 0) {
        const v = (buf >>> (cnt - s)) & ((1 << s) - 1);
        cnt -= s;
        pred[c] += v < 1 << (s - 1) ? v - (1 << s) + 1 : v;
      }

      // AC: skip run/size symbols and their magnitude bits until end of block.
      let k = 1;
      while (k < 64) {
        if (cnt < 25) {
          do {
            buf = (buf << 8) | d[pos++];
            cnt += 8;
          } while (cnt < 25);
        }
        e = acFast[(buf >>> (cnt - FAST_BITS)) & FAST_MASK];
        let advance: number;
        if (e !== 0) {
          cnt -= e & 31;
          advance = e >>> 5;
        } else {
          const ls = slowSymbol(ac, (buf >>> (cnt - 16)) & 0xffff);
          if (ls < 0) throw new JpegDecodeError("invalid Huffman code in AC coefficient");
          cnt -= ls >>> 8;
          const r = (ls >>> 4) & 15;
          s = ls & 15;
          if (s !== 0) {
            if (cnt < s) {
              do {
                buf = (buf << 8) | d[pos++];
                cnt += 8;
              } while (cnt < 25);
            }
            cnt -= s;
            advance = r + 1;
          } else {
            advance = r === 15 ? 16 : 0;
          }
        }
        if (advance === 0) break;
        k += advance;
      }
      if (k > 64) throw new JpegDecodeError("AC coefficient run goes past the end of the block");

      const stride = slotStride[sl];
      slotPlane[sl][(my * slotV[sl] + slotY[sl]) * stride + mx * slotH[sl] + slotX[sl]] = pred[c] *
          slotQuant[sl][0] + 128;
    }
    if (pos * 8 - cnt > segEndBits) {
      throw truncated(`entropy-coded data ends inside MCU ${mcu} of ${totalMcus}`);
    }
  }
}
