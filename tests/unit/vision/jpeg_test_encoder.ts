/**
 * A small baseline JPEG encoder for the decoder tests: the layouts ffmpeg's mjpeg encoder cannot write
 * (greyscale, 4:4:0 and other sampling, one scan per component, Adobe RGB, SOF1). Straightforward float
 * FDCT, ITU T.81 Annex K tables scaled like libjpeg's quality setting, standard luminance Huffman tables for
 * every component. Slow and simple on purpose.
 */

export interface TestJpegOptions {
  width: number;
  height: number;
  /** Source pixels, RGBA, stride width × 4. */
  rgba: Uint8Array;
  /** JFIF YCbCr, Adobe RGB (transform 0), or one grey component. */
  color: "ycc" | "rgb" | "gray";
  /** Sampling factors per component; default 1×1 each. */
  sampling?: Array<[number, number]>;
  /** libjpeg-style 1–100; default 75. */
  quality?: number;
  restartInterval?: number;
  /** One scan per component instead of one interleaved scan. */
  separateScans?: boolean;
  /** Frame marker; SOF1 (extended sequential) also gets 16-bit quantization tables. */
  sof?: 0xc0 | 0xc1;
}

// deno-fmt-ignore
const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14,
  21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53,
  60, 61, 54, 47, 55, 62, 63,
];
// deno-fmt-ignore
const LUMA_Q = [
  16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
  14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
  49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
];
// deno-fmt-ignore
const CHROMA_Q = [
  17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99,
  47, 66, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
  99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
];
const DC_BITS = [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0];
const DC_VALS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
const AC_BITS = [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d];
// deno-fmt-ignore
const AC_VALS = [
  0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07,
  0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0,
  0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28,
  0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49,
  0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69,
  0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
  0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
  0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5,
  0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2,
  0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
  0xf9, 0xfa,
];

/** symbol → [code, length] for a canonical Huffman table (T.81 Annex C). */
function huffmanCodes(bits: number[], vals: number[]): Array<[number, number]> {
  const codes: Array<[number, number]> = [];
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    for (let i = 0; i < bits[len - 1]; i++) codes[vals[k++]] = [code++, len];
    code <<= 1;
  }
  return codes;
}
const DC_CODES = huffmanCodes(DC_BITS, DC_VALS);
const AC_CODES = huffmanCodes(AC_BITS, AC_VALS);

class BitWriter {
  readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;
  write(value: number, len: number): void {
    for (let i = len - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | ((value >> i) & 1);
      if (++this.n === 8) {
        this.bytes.push(this.acc);
        if (this.acc === 0xff) this.bytes.push(0);
        this.acc = 0;
        this.n = 0;
      }
    }
  }
  symbol(codes: Array<[number, number]>, sym: number): void {
    const [code, len] = codes[sym];
    this.write(code, len);
  }
  /** Pads the last byte with 1 bits, as before a marker. */
  flush(): void {
    if (this.n > 0) this.write((1 << (8 - this.n)) - 1, 8 - this.n);
  }
}

const COS = Array.from({ length: 64 }, (_, i) => Math.cos(((2 * (i >> 3) + 1) * (i & 7) * Math.PI) / 16));

/** Forward DCT and quantization of one 8×8 block (natural order in, zigzag order out). */
function fdct(px: Float64Array, quant: number[]): Int32Array {
  const out = new Int32Array(64);
  for (let v = 0; v < 8; v++) {
    for (let u = 0; u < 8; u++) {
      let s = 0;
      for (let y = 0; y < 8; y++) {
        for (let x = 0; x < 8; x++) s += (px[y * 8 + x] - 128) * COS[x * 8 + u] * COS[y * 8 + v];
      }
      const f = 0.25 * (u === 0 ? Math.SQRT1_2 : 1) * (v === 0 ? Math.SQRT1_2 : 1) * s;
      out[ZIGZAG.indexOf(v * 8 + u)] = Math.round(f / quant[v * 8 + u]);
    }
  }
  return out;
}

function magnitude(v: number): [number, number] {
  const a = Math.abs(v);
  const s = a === 0 ? 0 : 32 - Math.clz32(a);
  return [s, v >= 0 ? v : v + (1 << s) - 1];
}

function encodeBlock(w: BitWriter, coefs: Int32Array, prev: number): void {
  const [s, bits] = magnitude(coefs[0] - prev);
  w.symbol(DC_CODES, s);
  w.write(bits, s);
  let run = 0;
  for (let k = 1; k < 64; k++) {
    const c = coefs[k];
    if (c === 0) {
      run++;
      continue;
    }
    while (run > 15) {
      w.symbol(AC_CODES, 0xf0);
      run -= 16;
    }
    const [s2, bits2] = magnitude(c);
    w.symbol(AC_CODES, (run << 4) | s2);
    w.write(bits2, s2);
    run = 0;
  }
  if (run > 0) w.symbol(AC_CODES, 0x00);
}

export function encodeTestJpeg(o: TestJpegOptions): Uint8Array {
  const { width, height, rgba } = o;
  const nc = o.color === "gray" ? 1 : 3;
  const sampling = o.sampling ?? Array.from({ length: nc }, (): [number, number] => [1, 1]);
  const hMax = Math.max(...sampling.map((s) => s[0]));
  const vMax = Math.max(...sampling.map((s) => s[1]));
  const q = o.quality ?? 75;
  const scaleQ = q < 50 ? 5000 / q : 200 - 2 * q;
  const maxQ = o.sof === 0xc1 ? 65535 : 255;
  const tables = [LUMA_Q, CHROMA_Q].map((t) =>
    t.map((v) => Math.min(maxQ, Math.max(1, Math.floor((v * scaleQ + 50) / 100))))
  );

  // Full-resolution component planes.
  const full = Array.from({ length: nc }, () => new Float64Array(width * height));
  for (let i = 0; i < width * height; i++) {
    const r = rgba[i * 4];
    const g = rgba[i * 4 + 1];
    const b = rgba[i * 4 + 2];
    if (o.color === "gray") full[0][i] = 0.299 * r + 0.587 * g + 0.114 * b;
    else if (o.color === "rgb") [full[0][i], full[1][i], full[2][i]] = [r, g, b];
    else {
      full[0][i] = 0.299 * r + 0.587 * g + 0.114 * b;
      full[1][i] = 128 - 0.168736 * r - 0.331264 * g + 0.5 * b;
      full[2][i] = 128 + 0.5 * r - 0.418688 * g - 0.081312 * b;
    }
  }
  // Subsampled planes (box average), read with edge replication beyond their size.
  const comps = sampling.map(([h, v], ci) => {
    const rh = hMax / h;
    const rv = vMax / v;
    const cw = Math.ceil((width * h) / hMax);
    const ch = Math.ceil((height * v) / vMax);
    const plane = new Float64Array(cw * ch);
    for (let y = 0; y < ch; y++) {
      for (let x = 0; x < cw; x++) {
        let s = 0;
        let n = 0;
        for (let j = y * rv; j < Math.min(height, (y + 1) * rv); j++) {
          for (let i = x * rh; i < Math.min(width, (x + 1) * rh); i++, n++) s += full[ci][j * width + i];
        }
        plane[y * cw + x] = s / n;
      }
    }
    const sample = (x: number, y: number) => plane[Math.min(ch - 1, y) * cw + Math.min(cw - 1, x)];
    return { h, v, cw, ch, sample, quant: tables[ci === 0 ? 0 : 1] };
  });
  const blockCache = new Map<string, Int32Array>();
  const block = (ci: number, bx: number, by: number): Int32Array => {
    const key = `${ci},${bx},${by}`;
    const hit = blockCache.get(key);
    if (hit) return hit;
    const px = new Float64Array(64);
    for (let i = 0; i < 64; i++) px[i] = comps[ci].sample(bx * 8 + (i & 7), by * 8 + (i >> 3));
    const coefs = fdct(px, comps[ci].quant);
    blockCache.set(key, coefs);
    return coefs;
  };

  const out: number[] = [];
  const u16 = (v: number) => out.push(v >> 8, v & 255);
  const segment = (marker: number, body: number[]) => {
    out.push(0xff, marker);
    u16(body.length + 2);
    out.push(...body);
  };
  out.push(0xff, 0xd8);
  if (o.color === "rgb") segment(0xee, [0x41, 0x64, 0x6f, 0x62, 0x65, 0, 100, 0, 0, 0, 0, 0]);
  else segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  for (let t = 0; t < (nc === 1 ? 1 : 2); t++) {
    const zz = ZIGZAG.map((n) => tables[t][n]);
    segment(0xdb, o.sof === 0xc1 ? [0x10 | t, ...zz.flatMap((v) => [v >> 8, v & 255])] : [t, ...zz]);
  }
  const sof = [8, height >> 8, height & 255, width >> 8, width & 255, nc];
  comps.forEach((c, i) => sof.push(i + 1, (c.h << 4) | c.v, i === 0 ? 0 : 1));
  segment(o.sof ?? 0xc0, sof);
  segment(0xc4, [0x00, ...DC_BITS, ...DC_VALS, 0x10, ...AC_BITS, ...AC_VALS]);
  if (o.restartInterval) segment(0xdd, [o.restartInterval >> 8, o.restartInterval & 255]);

  const scans = o.separateScans ? comps.map((_, i) => [i]) : [comps.map((_, i) => i)];
  for (const scan of scans) {
    const sos = [scan.length];
    for (const ci of scan) sos.push(ci + 1, 0x00);
    sos.push(0, 63, 0);
    segment(0xda, sos);
    // MCUs: interleaved over the frame's MCU grid, or one block each over the component's own block grid.
    const single = scan.length === 1;
    const c0 = comps[scan[0]];
    const mcusX = single ? Math.ceil(c0.cw / 8) : Math.ceil(width / (8 * hMax));
    const mcusY = single ? Math.ceil(c0.ch / 8) : Math.ceil(height / (8 * vMax));
    const w = new BitWriter();
    const pred = new Array<number>(nc).fill(0);
    let rst = 0;
    for (let m = 0; m < mcusX * mcusY; m++) {
      if (o.restartInterval && m > 0 && m % o.restartInterval === 0) {
        w.flush();
        w.bytes.push(0xff, 0xd0 + (rst++ & 7));
        pred.fill(0);
      }
      const mx = m % mcusX;
      const my = Math.floor(m / mcusX);
      for (const ci of scan) {
        const c = comps[ci];
        const bh = single ? 1 : c.h;
        const bv = single ? 1 : c.v;
        for (let by = 0; by < bv; by++) {
          for (let bx = 0; bx < bh; bx++) {
            const coefs = block(ci, mx * bh + bx, my * bv + by);
            encodeBlock(w, coefs, pred[ci]);
            pred[ci] = coefs[0];
          }
        }
      }
    }
    w.flush();
    for (const b of w.bytes) out.push(b);
  }
  out.push(0xff, 0xd9);
  return Uint8Array.from(out);
}
