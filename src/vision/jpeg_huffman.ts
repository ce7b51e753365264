/**
 * The entropy-coded data: Huffman tables, unstuffing a scan's bytes, and the bit reader that walks every
 * block's coefficients and keeps only the DC. The per-block loop and everything it reads live here, so
 * its constants are module-local.
 */

import { JpegDecodeError, truncated } from "./jpeg_errors.ts";

/** Codes up to this length resolve with one table lookup; longer ones (rare) take the canonical-code path. */
export const FAST_BITS = 9;
export const FAST_SIZE = 1 << FAST_BITS;
export const FAST_MASK = FAST_SIZE - 1;
/**
 * Zero bytes after the copied entropy data. The decoder checks for overrun once per MCU, and one MCU
 * (≤ 10 blocks × 64 symbols × ≤ 31 bits ≈ 2.5 KB) can read at most this far past the end before that check.
 */
export const PAD = 4096;

export interface HuffmanTable {
  /**
   * Indexed by the next FAST_BITS bits; 0 = code longer than FAST_BITS.
   * DC tables: code length | magnitude size << 5.
   * AC tables: code length + magnitude size (bits to skip) | coefficient advance << 5, advance 0 = end of block.
   */
  fast: Uint16Array;
  /** Per code length 1–16: largest code of that length, or -1. */
  maxCode: Int32Array;
  /** Per code length: symbol index = code + valOffset[length]. */
  valOffset: Int32Array;
  symbols: Uint8Array;
}

export function buildTable(counts: Uint8Array, symbols: Uint8Array, isDc: boolean): HuffmanTable {
  const fast = new Uint16Array(FAST_SIZE);
  const maxCode = new Int32Array(18).fill(-1);
  const valOffset = new Int32Array(18);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    const n = counts[len - 1];
    valOffset[len] = k - code;
    for (let i = 0; i < n; i++, k++, code++) {
      const sym = symbols[k];
      if (isDc && sym > 15) throw new JpegDecodeError(`DC Huffman table has invalid symbol ${sym}`);
      if (len > FAST_BITS) continue;
      let entry: number;
      if (isDc) {
        entry = len | (sym << 5);
      } else {
        const r = sym >> 4;
        const s = sym & 15;
        entry = s !== 0 ? (len + s) | ((r + 1) << 5) : len | ((r === 15 ? 16 : 0) << 5);
      }
      const shift = FAST_BITS - len;
      const first = code << shift;
      fast.fill(entry, first, first + (1 << shift));
    }
    if (n > 0) maxCode[len] = code - 1;
    // libjpeg's rule: a table whose codes overflow the length (or use the all-ones code) is bad.
    if (code >= 1 << len && n > 0) throw new JpegDecodeError("Huffman table code lengths overflow");
    code <<= 1;
  }
  return { fast, maxCode, valOffset, symbols };
}

/** Canonical decode of a code longer than FAST_BITS from 16 peeked bits: (length << 8) | symbol, or -1. */
export function slowSymbol(t: HuffmanTable, peek16: number): number {
  for (let len = FAST_BITS + 1; len <= 16; len++) {
    const code = peek16 >>> (16 - len);
    if (code <= t.maxCode[len]) return (len << 8) | t.symbols[code + t.valOffset[len]];
  }
  return -1;
}

/**
 * Copies a scan's entropy-coded bytes from `start` into `out`, unstuffing 0xFF00, dropping fill bytes and
 * splitting at RSTn. Records each segment's end (in `out`) and the RST number that ended it; returns the
 * offset in `src` of the marker that ends the scan (or src.length when the data just stops).
 */
export function destuff(
  src: Uint8Array,
  start: number,
  out: Uint8Array,
  ends: number[],
  rst: number[],
): number {
  const n = src.length;
  let i = start;
  let o = 0;
  while (i < n) {
    // Runs between 0xFF bytes are copied natively; only the 0xFF sequences are looked at byte by byte.
    let f = src.indexOf(0xff, i);
    if (f < 0) f = n;
    if (f > i) {
      out.set(src.subarray(i, f), o);
      o += f - i;
      i = f;
      if (i >= n) break;
    }
    let j = i + 1;
    while (j < n && src[j] === 0xff) j++;
    if (j >= n) {
      i = n;
      break;
    }
    const m = src[j];
    if (m === 0) {
      out[o++] = 0xff;
      i = j + 1;
    } else if (m >= 0xd0 && m <= 0xd7) {
      ends.push(o);
      rst.push(m & 7);
      i = j + 1;
    } else {
      break;
    }
  }
  ends.push(o);
  out.fill(0, o, o + PAD);
  return i;
}

/** Offset of the marker ending a scan we do not decode. */
export function skipEntropyData(src: Uint8Array, start: number): number {
  const n = src.length;
  let i = start;
  for (;;) {
    i = src.indexOf(0xff, i);
    if (i < 0) return n;
    let j = i + 1;
    while (j < n && src[j] === 0xff) j++;
    if (j >= n) return n;
    const m = src[j];
    if (m !== 0 && (m < 0xd0 || m > 0xd7)) return i;
    i = j + 1;
  }
}

export interface ScanPlan {
  /** Per block slot of one MCU. */
  slotComp: number[];
  slotDc: HuffmanTable[];
  slotAc: HuffmanTable[];
  /** Luma slots carry their block offset inside the MCU; -1 for other components. */
  slotX: number[];
  slotY: number[];
  mcusX: number;
  mcusY: number;
  /** Luma blocks per MCU across/down (1 when the scan is not interleaved). */
  lumaPerMcuX: number;
  lumaPerMcuY: number;
  /** Luma block grid, which the output grid equals unless Y itself is subsampled. */
  gridW: number;
  gridH: number;
  dcQuant: number;
  restartInterval: number;
}

/** Decodes one scan that contains Y; writes each luma block's mean into `grid`. */
export function decodeScan(
  d: Uint8Array,
  ends: number[],
  rst: number[],
  plan: ScanPlan,
  grid: Uint8Array,
): void {
  const { slotComp, slotDc, slotAc, slotX, slotY, mcusX, mcusY, gridW, gridH, dcQuant } = plan;
  const { lumaPerMcuX, lumaPerMcuY, restartInterval } = plan;
  const slots = slotComp.length;
  const pred = new Int32Array(4);
  const totalMcus = mcusX * mcusY;
  let seg = 0;
  let segEndBits = ends[0] * 8;
  let pos = 0;
  let buf = 0;
  let cnt = 0;
  let untilRestart = restartInterval;

  for (let mcu = 0; mcu < totalMcus; mcu++) {
    if (restartInterval > 0) {
      if (untilRestart === 0) {
        if (seg + 1 >= ends.length) {
          throw truncated(`restart marker missing before MCU ${mcu} of ${totalMcus}`);
        }
        const expected = seg & 7;
        if (rst[seg] !== expected) {
          throw new JpegDecodeError(`restart marker RST${rst[seg]} where RST${expected} was expected`);
        }
        // The rest of the segment is 1-bit padding; the next interval starts byte-aligned, predictors at 0.
        pos = ends[seg];
        seg++;
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
      const acFast = ac.fast;
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

      const ox = slotX[sl];
      if (ox >= 0) {
        const bx = mx * lumaPerMcuX + ox;
        const by = my * lumaPerMcuY + slotY[sl];
        if (bx < gridW && by < gridH) {
          const m = ((pred[c] * dcQuant + 4) >> 3) + 128;
          grid[by * gridW + bx] = m < 0 ? 0 : m > 255 ? 255 : m;
        }
      }
    }
    // Valid data never needs the zero padding; reading into it means the segment was cut short.
    if (pos * 8 - cnt > segEndBits) {
      throw truncated(`entropy-coded data ends inside MCU ${mcu} of ${totalMcus}`);
    }
  }
}
