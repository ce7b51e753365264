/**
 * 1/8-scale luminance from a baseline JPEG without IDCT: a block's DC coefficient is 8× its mean
 * (centred on 128), so Huffman-decoding the scan and keeping the Y component's DC values gives one mean per
 * 8×8 luma block. AC coefficients are skipped, never materialised; chroma blocks are decoded only to
 * advance the bitstream, and scans without Y are not decoded at all.
 */

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

/** The data is not a well-formed JPEG: corrupt, truncated or inconsistent. */
export class JpegDecodeError extends Error {
  override name = "JpegDecodeError";
}

/** A well-formed JPEG this decoder deliberately does not handle (progressive, arithmetic, lossless, CMYK…). */
export class JpegUnsupportedError extends Error {
  override name = "JpegUnsupportedError";
}

/** Codes up to this length resolve with one table lookup; longer ones (rare) take the canonical-code path. */
const FAST_BITS = 9;
const FAST_SIZE = 1 << FAST_BITS;
const FAST_MASK = FAST_SIZE - 1;
/**
 * Zero bytes after the copied entropy data. The decoder checks for overrun once per MCU, and one MCU
 * (≤ 10 blocks × 64 symbols × ≤ 31 bits ≈ 2.5 KB) can read at most this far past the end before that check.
 */
const PAD = 4096;
/** Largest scratch buffer kept between calls; bigger frames get a one-off buffer. */
const SCRATCH_KEEP = 4 << 20;

interface HuffmanTable {
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

interface FrameComponent {
  id: number;
  h: number;
  v: number;
  tq: number;
}

interface Frame {
  width: number;
  height: number;
  components: FrameComponent[];
  hMax: number;
  vMax: number;
}

function readU16(b: Uint8Array, i: number): number {
  return (b[i] << 8) | b[i + 1];
}

function markerName(marker: number): string {
  return `0xFF${marker.toString(16).toUpperCase().padStart(2, "0")}`;
}

function truncated(what: string): JpegDecodeError {
  return new JpegDecodeError(`JPEG truncated: ${what}`);
}

function buildTable(counts: Uint8Array, symbols: Uint8Array, isDc: boolean): HuffmanTable {
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
function slowSymbol(t: HuffmanTable, peek16: number): number {
  for (let len = FAST_BITS + 1; len <= 16; len++) {
    const code = peek16 >>> (16 - len);
    if (code <= t.maxCode[len]) return (len << 8) | t.symbols[code + t.valOffset[len]];
  }
  return -1;
}

let scratch = new Uint8Array(0);

/**
 * Copies a scan's entropy-coded bytes from `start` into `out`, unstuffing 0xFF00, dropping fill bytes and
 * splitting at RSTn. Records each segment's end (in `out`) and the RST number that ended it; returns the
 * offset in `src` of the marker that ends the scan (or src.length when the data just stops).
 */
function destuff(src: Uint8Array, start: number, out: Uint8Array, ends: number[], rst: number[]): number {
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
function skipEntropyData(src: Uint8Array, start: number): number {
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

interface ScanPlan {
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
function decodeScan(d: Uint8Array, ends: number[], rst: number[], plan: ScanPlan, grid: Uint8Array): void {
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

const SOF_NAMES: Record<number, string> = {
  0xc2: "progressive (SOF2)",
  0xc3: "lossless (SOF3)",
  0xc5: "differential sequential (SOF5)",
  0xc6: "differential progressive (SOF6)",
  0xc7: "differential lossless (SOF7)",
  0xc9: "arithmetic-coded sequential (SOF9)",
  0xca: "arithmetic-coded progressive (SOF10)",
  0xcb: "arithmetic-coded lossless (SOF11)",
  0xcd: "arithmetic-coded differential sequential (SOF13)",
  0xce: "arithmetic-coded differential progressive (SOF14)",
  0xcf: "arithmetic-coded differential lossless (SOF15)",
};

function parseFrame(b: Uint8Array, at: number, len: number): Frame {
  if (len < 6) throw new JpegDecodeError("SOF segment too short");
  const precision = b[at];
  const height = readU16(b, at + 1);
  const width = readU16(b, at + 3);
  const nf = b[at + 5];
  if (precision !== 8) {
    throw new JpegUnsupportedError(`${precision}-bit samples are not supported (8-bit baseline only)`);
  }
  if (width === 0) throw new JpegDecodeError("JPEG width is 0");
  if (height === 0) throw new JpegUnsupportedError("height defined by a DNL marker is not supported");
  if (nf === 0) throw new JpegDecodeError("JPEG frame has no components");
  if (nf !== 1 && nf !== 3) {
    throw new JpegUnsupportedError(`${nf}-component JPEGs are not supported (1 or 3 only)`);
  }
  if (len < 6 + nf * 3) throw new JpegDecodeError("SOF segment too short for its components");
  const components: FrameComponent[] = [];
  let hMax = 1;
  let vMax = 1;
  for (let i = 0; i < nf; i++) {
    const p = at + 6 + i * 3;
    const h = b[p + 1] >> 4;
    const v = b[p + 1] & 15;
    const tq = b[p + 2];
    if (h < 1 || h > 4 || v < 1 || v > 4) throw new JpegDecodeError(`invalid sampling factors ${h}×${v}`);
    if (tq > 3) throw new JpegDecodeError(`invalid quantization table ${tq}`);
    hMax = Math.max(hMax, h);
    vMax = Math.max(vMax, v);
    components.push({ id: b[p], h, v, tq });
  }
  return { width, height, components, hMax, vMax };
}

/** Same decision as libjpeg: JFIF means YCbCr; else Adobe's transform flag; else component ids. */
function isRgb(frame: Frame, jfif: boolean, adobeTransform: number): boolean {
  if (frame.components.length !== 3 || jfif) return false;
  if (adobeTransform >= 0) return adobeTransform === 0;
  const [a, b, c] = frame.components;
  return a.id === 0x52 && b.id === 0x47 && c.id === 0x42;
}

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
  let jfif = false;
  let adobeTransform = -1;
  let pos = 2;

  for (;;) {
    if (pos >= n) throw truncated(frame ? "no scan containing the luma component" : "no frame header");
    if (bytes[pos] !== 0xff) throw new JpegDecodeError(`expected a marker at byte ${pos}`);
    while (pos < n && bytes[pos] === 0xff) pos++;
    if (pos >= n) throw truncated("inside a marker");
    const marker = bytes[pos++];
    // Stray RSTn and TEM carry no length and no meaning here.
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue;
    if (marker === 0xd8) throw new JpegDecodeError("second SOI marker");
    if (marker === 0xd9) {
      throw new JpegDecodeError(frame ? "no scan contains the luma component" : "no frame");
    }
    if (pos + 2 > n) throw truncated("inside a segment length");
    const len = readU16(bytes, pos);
    if (len < 2) throw new JpegDecodeError(`segment ${markerName(marker)} has length ${len}`);
    const at = pos + 2;
    const end = pos + len;
    if (end > n) throw truncated(`segment ${markerName(marker)} runs past the end`);
    pos = end;

    if (marker === 0xc0 || marker === 0xc1) {
      if (frame) throw new JpegDecodeError("more than one frame header");
      frame = parseFrame(bytes, at, len - 2);
    } else if (SOF_NAMES[marker] !== undefined) {
      throw new JpegUnsupportedError(`${SOF_NAMES[marker]} JPEG is not supported (baseline Huffman only)`);
    } else if (marker === 0xcc) {
      throw new JpegUnsupportedError("arithmetic coding (DAC) is not supported");
    } else if (marker === 0xdc || marker === 0xde || marker === 0xdf) {
      throw new JpegUnsupportedError(
        `marker ${markerName(marker)} (DNL/hierarchical) is not supported`,
      );
    } else if (marker === 0xc4) {
      let p = at;
      while (p < end) {
        if (p + 17 > end) throw new JpegDecodeError("DHT segment too short");
        const tc = bytes[p] >> 4;
        const th = bytes[p] & 15;
        if (tc > 1 || th > 3) throw new JpegDecodeError(`invalid Huffman table class/id ${tc}/${th}`);
        const counts = bytes.subarray(p + 1, p + 17);
        let total = 0;
        for (let i = 0; i < 16; i++) total += counts[i];
        if (total > 256 || p + 17 + total > end) {
          throw new JpegDecodeError("DHT segment too short for its codes");
        }
        const table = buildTable(counts, bytes.subarray(p + 17, p + 17 + total), tc === 0);
        (tc === 0 ? dcTables : acTables)[th] = table;
        p += 17 + total;
      }
    } else if (marker === 0xdb) {
      let p = at;
      while (p < end) {
        const pq = bytes[p] >> 4;
        const tq = bytes[p] & 15;
        const size = pq === 0 ? 64 : 128;
        if (pq > 1 || tq > 3) {
          throw new JpegDecodeError(`invalid quantization table precision/id ${pq}/${tq}`);
        }
        if (p + 1 + size > end) throw new JpegDecodeError("DQT segment too short");
        // Only the first entry (DC, first in zigzag order) is ever used.
        dcQuant[tq] = pq === 0 ? bytes[p + 1] : readU16(bytes, p + 1);
        p += 1 + size;
      }
    } else if (marker === 0xdd) {
      if (len !== 4) throw new JpegDecodeError("DRI segment must be 4 bytes");
      restartInterval = readU16(bytes, at);
    } else if (marker === 0xe0) {
      if (len >= 7 && bytes[at] === 0x4a && bytes[at + 1] === 0x46 && bytes[at + 2] === 0x49) jfif = true;
    } else if (marker === 0xee) {
      // "Adobe" + version(2) + flags0(2) + flags1(2) + transform(1)
      if (len >= 14 && bytes[at] === 0x41 && bytes[at + 1] === 0x64 && bytes[at + 2] === 0x6f) {
        adobeTransform = bytes[at + 11];
      }
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
        jfif,
        adobeTransform,
      );
      if (typeof result !== "number") return result;
      pos = result;
    }
    // APPn, COM and anything else with a length: skipped.
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
  const ns = bytes[at];
  if (ns < 1 || ns > 4 || end - at < 1 + ns * 2 + 3) throw new JpegDecodeError("malformed SOS segment");
  const comps: number[] = [];
  const dcs: HuffmanTable[] = [];
  const acs: HuffmanTable[] = [];
  for (let i = 0; i < ns; i++) {
    const id = bytes[at + 1 + i * 2];
    const ci = frame.components.findIndex((c) => c.id === id);
    if (ci < 0) throw new JpegDecodeError(`scan names unknown component ${id}`);
    comps.push(ci);
    const td = bytes[at + 2 + i * 2] >> 4;
    const ta = bytes[at + 2 + i * 2] & 15;
    const dc = dcTables[td];
    const ac = acTables[ta];
    if (!dc || !ac) throw new JpegDecodeError(`scan uses undefined Huffman table (DC ${td}, AC ${ta})`);
    dcs.push(dc);
    acs.push(ac);
  }
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
