/**
 * The marker segments around the entropy-coded data: frame (SOF), Huffman (DHT), quantization (DQT) and
 * scan (SOS) headers, plus the APPn hints that decide whether three components are RGB.
 */

import { JpegDecodeError, JpegUnsupportedError, truncated } from "./jpeg_errors.ts";
import { buildTable, type HuffmanTable } from "./jpeg_huffman.ts";

export interface FrameComponent {
  id: number;
  h: number;
  v: number;
  tq: number;
}

export interface Frame {
  width: number;
  height: number;
  components: FrameComponent[];
  hMax: number;
  vMax: number;
}

export function readU16(b: Uint8Array, i: number): number {
  return (b[i] << 8) | b[i + 1];
}

export function markerName(marker: number): string {
  return `0xFF${marker.toString(16).toUpperCase().padStart(2, "0")}`;
}

export const SOF_NAMES: Record<number, string> = {
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

/** One step of the marker walk: a segment with a length, EOI, or a marker to pass over (RSTn, TEM). */
export type SegmentStep =
  | { kind: "segment"; marker: number; at: number; end: number; len: number; next: number }
  | { kind: "eoi"; next: number }
  | { kind: "skip"; next: number };

/**
 * Reads the marker at `pos` (after fill bytes) and, for a segment, its bounds. Markers of coding
 * processes we do not decode (other SOFs, arithmetic coding, DNL/hierarchical) are refused here, so
 * every decoder refuses them alike.
 */
export function readSegment(bytes: Uint8Array, pos: number): SegmentStep {
  const n = bytes.length;
  if (bytes[pos] !== 0xff) throw new JpegDecodeError(`expected a marker at byte ${pos}`);
  while (pos < n && bytes[pos] === 0xff) pos++;
  if (pos >= n) throw truncated("inside a marker");
  const marker = bytes[pos++];
  // Stray RSTn and TEM carry no length and no meaning here.
  if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) return { kind: "skip", next: pos };
  if (marker === 0xd8) throw new JpegDecodeError("second SOI marker");
  if (marker === 0xd9) return { kind: "eoi", next: pos };
  if (pos + 2 > n) throw truncated("inside a segment length");
  const len = readU16(bytes, pos);
  if (len < 2) throw new JpegDecodeError(`segment ${markerName(marker)} has length ${len}`);
  const at = pos + 2;
  const end = pos + len;
  if (end > n) throw truncated(`segment ${markerName(marker)} runs past the end`);
  if (SOF_NAMES[marker] !== undefined) {
    throw new JpegUnsupportedError(`${SOF_NAMES[marker]} JPEG is not supported (baseline Huffman only)`);
  }
  if (marker === 0xcc) throw new JpegUnsupportedError("arithmetic coding (DAC) is not supported");
  if (marker === 0xdc || marker === 0xde || marker === 0xdf) {
    throw new JpegUnsupportedError(`marker ${markerName(marker)} (DNL/hierarchical) is not supported`);
  }
  return { kind: "segment", marker, at, end, len, next: end };
}

/** The APPn hints that decide whether three components are RGB: JFIF (APP0) and Adobe's transform (APP14). */
export function noteAppSegment(
  bytes: Uint8Array,
  marker: number,
  at: number,
  len: number,
  hints: { jfif: boolean; adobeTransform: number },
): void {
  if (marker === 0xe0) {
    if (len >= 7 && bytes[at] === 0x4a && bytes[at + 1] === 0x46 && bytes[at + 2] === 0x49) hints.jfif = true;
  } else if (marker === 0xee) {
    // "Adobe" + version(2) + flags0(2) + flags1(2) + transform(1)
    if (len >= 14 && bytes[at] === 0x41 && bytes[at + 1] === 0x64 && bytes[at + 2] === 0x6f) {
      hints.adobeTransform = bytes[at + 11];
    }
  }
}

export function parseFrame(b: Uint8Array, at: number, len: number): Frame {
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
export function isRgb(frame: Frame, jfif: boolean, adobeTransform: number): boolean {
  if (frame.components.length !== 3 || jfif) return false;
  if (adobeTransform >= 0) return adobeTransform === 0;
  const [a, b, c] = frame.components;
  return a.id === 0x52 && b.id === 0x47 && c.id === 0x42;
}

/** DHT: one or more tables, each replacing any earlier one with the same class and id. */
export function parseHuffmanTables(
  bytes: Uint8Array,
  at: number,
  end: number,
  dcTables: (HuffmanTable | undefined)[],
  acTables: (HuffmanTable | undefined)[],
): void {
  forEachHuffmanTable(bytes, at, end, (tc, th, counts, symbols) => {
    (tc === 0 ? dcTables : acTables)[th] = buildTable(counts, symbols, tc === 0);
  });
}

/**
 * Walks a DHT segment's tables, checked for length: class (0 DC, 1 AC), id, the 16 code-length counts and
 * the symbols.
 */
export function forEachHuffmanTable(
  bytes: Uint8Array,
  at: number,
  end: number,
  visit: (tc: number, th: number, counts: Uint8Array, symbols: Uint8Array) => void,
): void {
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
    visit(tc, th, counts, bytes.subarray(p + 17, p + 17 + total));
    p += 17 + total;
  }
}

/** DQT: one or more tables, of which only the DC entry is kept. */
export function parseDcQuant(bytes: Uint8Array, at: number, end: number, dcQuant: number[]): void {
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
}

/** DQT: one or more whole tables (zigzag order, as stored), each replacing any earlier one with its id. */
export function parseQuantTables(
  bytes: Uint8Array,
  at: number,
  end: number,
  tables: (Uint16Array | undefined)[],
): void {
  let p = at;
  while (p < end) {
    const pq = bytes[p] >> 4;
    const tq = bytes[p] & 15;
    if (pq > 1 || tq > 3) {
      throw new JpegDecodeError(`invalid quantization table precision/id ${pq}/${tq}`);
    }
    const size = pq === 0 ? 64 : 128;
    if (p + 1 + size > end) throw new JpegDecodeError("DQT segment too short");
    const table = new Uint16Array(64);
    for (let k = 0; k < 64; k++) table[k] = pq === 0 ? bytes[p + 1 + k] : readU16(bytes, p + 1 + 2 * k);
    tables[tq] = table;
    p += 1 + size;
  }
}

/** `Ac` is the AC table type of the caller (the full decoder keeps richer AC tables than the DC-only one). */
export interface ScanHeader<Ac = HuffmanTable> {
  /** Frame component index of each scan component, in scan order. */
  comps: number[];
  dcs: HuffmanTable[];
  acs: Ac[];
}

/** SOS: which frame components the scan holds, with their Huffman tables. */
export function parseScanHeader<Ac = HuffmanTable>(
  bytes: Uint8Array,
  at: number,
  end: number,
  frame: Frame,
  dcTables: (HuffmanTable | undefined)[],
  acTables: (Ac | undefined)[],
): ScanHeader<Ac> {
  const ns = bytes[at];
  if (ns < 1 || ns > 4 || end - at < 1 + ns * 2 + 3) throw new JpegDecodeError("malformed SOS segment");
  const comps: number[] = [];
  const dcs: HuffmanTable[] = [];
  const acs: Ac[] = [];
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
  return { comps, dcs, acs };
}
