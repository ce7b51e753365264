// AssemblyScript, not Deno TypeScript: `deno task build:wasm` compiles this file into
// ../kernels_wasm.ts. Every buffer is a raw pointer into linear memory that the host
// (src/vision/wasm_heap.ts) allocated with `alloc`; kernels never allocate themselves.
// RGBA images are tightly packed (stride = width * 4) unless a stride argument says otherwise.

// ---------------------------------------------------------------------------------------------
// Memory: the host owns every block (TLSF from the runtime; it grows memory on demand).

export function alloc(size: usize): usize {
  return heap.alloc(size);
}

export function free(ptr: usize): void {
  heap.free(ptr);
}

// ---------------------------------------------------------------------------------------------
// PNG rows

@inline
function paeth(a: i32, b: i32, c: i32): i32 {
  const pa = abs(b - c);
  const pb = abs(a - c);
  const pc = abs(a + b - c - c);
  return select(a, select(b, c, pb <= pc), pa <= pb && pa <= pc);
}

/**
 * Reverses PNG filtering. `src` holds `height` rows of (1 filter byte + rowBytes); the
 * unfiltered rows go to `dst` (height * rowBytes). `prev` is the unfiltered row above the first
 * (0 for the top of the image, which PNG treats as zeros), so the host can work in bands.
 * `bpp` is bytes per complete pixel (1–8). Both buffers need 16 bytes of slack at the end.
 * Returns 0, or -(y + 1) when row y of the band names an unknown filter type.
 */
export function png_unfilter(src: usize, dst: usize, height: i32, rowBytes: i32, bpp: i32, prev: usize): i32 {
  const n = <usize> rowBytes;
  const b = <usize> min(bpp, rowBytes);
  // Sub, Average and Paeth chain each pixel on its left neighbour, so SIMD works one pixel at a
  // time (16-bit lanes); that covers RGB and RGBA, the common cases.
  const pixelwise = bpp == 3 || bpp == 4;
  for (let y = 0; y < height; y++) {
    const type = load<u8>(src);
    const s = src + 1;
    if (type == 0) {
      memory.copy(dst, s, n);
    } else if (type == 2) {
      if (prev == 0) {
        memory.copy(dst, s, n);
      } else {
        let i: usize = 0;
        for (; i + 16 <= n; i += 16) v128.store(dst + i, i8x16.add(v128.load(s + i), v128.load(prev + i)));
        for (; i < n; i++) store<u8>(dst + i, load<u8>(s + i) + load<u8>(prev + i));
      }
    } else if (type == 1 || type == 3 || type == 4) {
      if (pixelwise) unfilterPixels(type, s, dst, prev, n, b);
      else unfilterBytes(type, s, dst, prev, n, b);
    } else {
      return -(y + 1);
    }
    prev = dst;
    src += n + 1;
    dst += n;
  }
  return 0;
}

@inline
function px16(p: usize): v128 {
  return i16x8.extend_low_i8x16_u(v128.load32_zero(p));
}

/** Sub (1), Average (3) or Paeth (4) for 3- or 4-byte pixels; each store spills one byte for RGB. */
function unfilterPixels(type: i32, s: usize, d: usize, prev: usize, n: usize, bpp: usize): void {
  const low = i16x8.splat(0xff);
  let a = i16x8.splat(0); // left, already unfiltered
  let c = i16x8.splat(0); // above-left
  for (let i: usize = 0; i < n; i += bpp) {
    const x = px16(s + i);
    let v: v128;
    if (type == 1) {
      v = i16x8.add(x, a);
    } else {
      const up = prev == 0 ? i16x8.splat(0) : px16(prev + i);
      if (type == 3) {
        v = i16x8.add(x, i16x8.shr_u(i16x8.add(a, up), 1));
      } else {
        // Only pb, pc and the selects depend on the left pixel; keep that chain short (gt needs
        // no negation on x86, le does).
        const bc = i16x8.sub(up, c);
        const pa = i16x8.abs(bc);
        const ac = i16x8.sub(a, c);
        const pb = i16x8.abs(ac);
        const pc = i16x8.abs(i16x8.add(ac, bc));
        const notA = v128.or(i16x8.gt_s(pa, pb), i16x8.gt_s(pa, pc));
        const pred = v128.bitselect(v128.bitselect(c, up, i16x8.gt_s(pb, pc)), a, notA);
        v = i16x8.add(x, pred);
      }
      c = up;
    }
    a = v128.and(v, low);
    v128.store32_lane(d + i, i8x16.narrow_i16x8_u(a, a), 0);
  }
}

/** Sub (1), Average (3) or Paeth (4) byte by byte, for any pixel size. */
function unfilterBytes(type: i32, s: usize, d: usize, prev: usize, n: usize, b: usize): void {
  if (type == 1 || (type == 4 && prev == 0)) {
    // Paeth with a zero row above degenerates to Sub.
    memory.copy(d, s, b);
    for (let i = b; i < n; i++) store<u8>(d + i, load<u8>(s + i) + load<u8>(d + i - b));
  } else if (type == 3 && prev == 0) {
    memory.copy(d, s, b);
    for (let i = b; i < n; i++) store<u8>(d + i, load<u8>(s + i) + (load<u8>(d + i - b) >> 1));
  } else if (type == 3) {
    for (let i: usize = 0; i < b; i++) store<u8>(d + i, load<u8>(s + i) + (load<u8>(prev + i) >> 1));
    for (let i = b; i < n; i++) {
      store<u8>(d + i, load<u8>(s + i) + ((<u32> load<u8>(d + i - b) + <u32> load<u8>(prev + i)) >> 1));
    }
  } else {
    for (let i: usize = 0; i < b; i++) store<u8>(d + i, load<u8>(s + i) + load<u8>(prev + i));
    for (let i = b; i < n; i++) {
      const p = paeth(load<u8>(d + i - b), load<u8>(prev + i), load<u8>(prev + i - b));
      store<u8>(d + i, load<u8>(s + i) + <u8> p);
    }
  }
}

/**
 * Expands `n` unfiltered 8-bit PNG pixels of `colorType` (0 gray, 2 RGB, 3 palette, 4 gray+alpha,
 * 6 RGBA) to RGBA. `palette` is a 256-entry RGBA table (tRNS already applied); `key` is the tRNS
 * colour for gray/RGB (gray, or r | g << 8 | b << 16) or -1. Returns the largest palette index
 * seen, so the host can reject indexes beyond PLTE.
 */
export function png_expand(src: usize, dst: usize, n: i32, colorType: i32, palette: usize, key: i32): i32 {
  let maxIndex: i32 = 0;
  const count = <usize> n;
  if (colorType == 6) {
    memory.copy(dst, src, count << 2);
  } else if (colorType == 2) {
    for (let i: usize = 0; i < count; i++) {
      const s = src + i * 3;
      const rgb = <u32> load<u8>(s) | (<u32> load<u8>(s + 1) << 8) | (<u32> load<u8>(s + 2) << 16);
      store<u32>(dst + (i << 2), rgb | (select<u32>(0, 0xff000000, <i32> rgb == key)));
    }
  } else if (colorType == 0) {
    for (let i: usize = 0; i < count; i++) {
      const g = <u32> load<u8>(src + i);
      store<u32>(dst + (i << 2), g * 0x010101 | select<u32>(0, 0xff000000, <i32> g == key));
    }
  } else if (colorType == 4) {
    for (let i: usize = 0; i < count; i++) {
      const g = <u32> load<u8>(src + (i << 1));
      store<u32>(dst + (i << 2), g * 0x010101 | (<u32> load<u8>(src + (i << 1) + 1) << 24));
    }
  } else if (colorType == 3) {
    for (let i: usize = 0; i < count; i++) {
      const index = <u32> load<u8>(src + i);
      maxIndex = max(maxIndex, <i32> index);
      store<u32>(dst + (i << 2), load<u32>(palette + (index << 2)));
    }
  }
  return maxIndex;
}

/** 1 when every alpha byte of the `n` RGBA pixels is 255, else 0. */
export function rgba_opaque(src: usize, n: i32): i32 {
  const count = <usize> n << 2;
  const alpha = i32x4.splat(<i32>0xff000000);
  let i: usize = 0;
  for (; i + 64 <= count; i += 64) {
    let v = v128.and(v128.load(src + i), v128.load(src + i + 16));
    v = v128.and(v, v128.and(v128.load(src + i + 32), v128.load(src + i + 48)));
    if (i32x4.bitmask(i32x4.ne(v128.and(v, alpha), alpha)) != 0) return 0;
  }
  for (; i < count; i += 4) if (load<u8>(src + i + 3) != 255) return 0;
  return 1;
}

/**
 * Writes PNG scanlines for rows y0..y1 of an RGBA image: per row a filter byte then the filtered
 * pixels, as RGBA (channels 4) or with alpha dropped (channels 3), at `dst` (row y0 first). `mode`
 * 0–4 forces that filter for every row; 5 picks, per row, whichever of Sub, Up and Paeth has the
 * smallest sum of |signed residuals| (the libpng heuristic, minus Average, which rarely wins on UI
 * pixels). `tmp` holds 2 packed rows plus 3 candidate rows (5 * (width * channels + 16) bytes).
 */
export function png_filter(
  src: usize,
  width: i32,
  y0: i32,
  y1: i32,
  channels: i32,
  mode: i32,
  dst: usize,
  tmp: usize,
): void {
  const rowBytes = <usize> width * <usize> channels;
  const bpp = <usize> channels;
  const pad: usize = 16;
  let prev = tmp; // packed row above (zeros above the first row)
  let cur = tmp + rowBytes + pad;
  const cands = tmp + 2 * (rowBytes + pad);
  const stride = <usize> width << 2;
  if (y0 == 0) memory.fill(prev, 0, rowBytes + pad);
  else packRow(src + <usize> (y0 - 1) * stride, prev, width, channels);
  for (let y = y0; y < y1; y++) {
    packRow(src + <usize> y * stride, cur, width, channels);
    const out = dst + <usize> (y - y0) * (rowBytes + 1);
    let type = mode;
    if (mode == 5) {
      const c1 = cands;
      const c2 = cands + rowBytes + pad;
      const c4 = cands + 2 * (rowBytes + pad);
      const s1 = filterRow(1, cur, prev, rowBytes, bpp, c1);
      const s2 = filterRow(2, cur, prev, rowBytes, bpp, c2);
      const s4 = filterRow(4, cur, prev, rowBytes, bpp, c4);
      let best = c1;
      type = 1;
      let bestSum = s1;
      if (s2 < bestSum) {
        best = c2;
        type = 2;
        bestSum = s2;
      }
      if (s4 < bestSum) {
        best = c4;
        type = 4;
      }
      memory.copy(out + 1, best, rowBytes);
    } else {
      filterRow(mode, cur, prev, rowBytes, bpp, out + 1);
    }
    store<u8>(out, <u8> type);
    const t = prev;
    prev = cur;
    cur = t;
  }
}

/** Copies an RGBA row, or packs it to RGB; `out` needs 16 bytes of slack. */
function packRow(s: usize, out: usize, width: i32, channels: i32): void {
  const w = <usize> width;
  if (channels == 4) {
    memory.copy(out, s, w << 2);
    return;
  }
  let x: usize = 0;
  // 4 pixels (12 bytes) per step; the 16-byte store spills 4 bytes that the next step rewrites.
  for (; x + 4 <= w; x += 4) {
    const v = v128.load(s + (x << 2));
    v128.store(out + x * 3, i8x16.shuffle(v, v, 0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 3, 7, 11, 15));
  }
  for (; x < w; x++) {
    store<u8>(out + x * 3, load<u8>(s + (x << 2)));
    store<u8>(out + x * 3 + 1, load<u8>(s + (x << 2) + 1));
    store<u8>(out + x * 3 + 2, load<u8>(s + (x << 2) + 2));
  }
}

/** Sum of |residual| read as signed bytes, 16 at a time. */

@inline
function residualSum(v: v128): u32 {
  const a = i8x16.abs(v);
  const s = i16x8.extadd_pairwise_i8x16_u(a);
  const q = i32x4.extadd_pairwise_i16x8_u(s);
  return <u32> (i32x4.extract_lane(q, 0) + i32x4.extract_lane(q, 1) + i32x4.extract_lane(q, 2) +
    i32x4.extract_lane(q, 3));
}

/** Filters one packed row into `out`; returns the residual sum (only computed for 1, 2 and 4). */
function filterRow(type: i32, cur: usize, prev: usize, n: usize, bpp: usize, out: usize): u32 {
  let sum: u32 = 0;
  if (type == 0) {
    memory.copy(out, cur, n);
    return 0;
  }
  let i: usize = 0;
  // The first pixel has no left neighbour (a = c = 0).
  if (type == 1) {
    for (; i < bpp; i++) store<u8>(out + i, load<u8>(cur + i));
    for (; i + 16 <= n; i += 16) {
      const r = i8x16.sub(v128.load(cur + i), v128.load(cur + i - bpp));
      v128.store(out + i, r);
      sum += residualSum(r);
    }
    for (; i < n; i++) store<u8>(out + i, load<u8>(cur + i) - load<u8>(cur + i - bpp));
  } else if (type == 2) {
    for (; i + 16 <= n; i += 16) {
      const r = i8x16.sub(v128.load(cur + i), v128.load(prev + i));
      v128.store(out + i, r);
      sum += residualSum(r);
    }
    for (; i < n; i++) store<u8>(out + i, load<u8>(cur + i) - load<u8>(prev + i));
  } else if (type == 3) {
    for (; i < bpp; i++) store<u8>(out + i, load<u8>(cur + i) - (load<u8>(prev + i) >> 1));
    for (; i < n; i++) {
      store<u8>(
        out + i,
        load<u8>(cur + i) - <u8> ((<u32> load<u8>(cur + i - bpp) + <u32> load<u8>(prev + i)) >> 1),
      );
    }
  } else {
    for (; i < bpp; i++) store<u8>(out + i, load<u8>(cur + i) - load<u8>(prev + i));
    // Paeth on 8 bytes at a time in 16-bit lanes; encoding reads only original bytes, so it vectorises.
    for (; i + 8 <= n; i += 8) {
      const a = i16x8.extend_low_i8x16_u(v128.load64_zero(cur + i - bpp));
      const b = i16x8.extend_low_i8x16_u(v128.load64_zero(prev + i));
      const c = i16x8.extend_low_i8x16_u(v128.load64_zero(prev + i - bpp));
      const x = i16x8.extend_low_i8x16_u(v128.load64_zero(cur + i));
      const pa = i16x8.abs(i16x8.sub(b, c));
      const pb = i16x8.abs(i16x8.sub(a, c));
      const pc = i16x8.abs(i16x8.sub(i16x8.add(a, b), i16x8.add(c, c)));
      const useA = v128.and(i16x8.le_s(pa, pb), i16x8.le_s(pa, pc));
      const useB = i16x8.le_s(pb, pc);
      const pred = v128.bitselect(a, v128.bitselect(b, c, useB), useA);
      const r16 = v128.and(i16x8.sub(x, pred), i16x8.splat(0xff));
      const r = i8x16.narrow_i16x8_u(r16, r16);
      v128.store64_lane(out + i, r, 0);
      sum += residualSum(v128.and(r, i64x2(-1, 0)));
    }
    for (; i < n; i++) {
      const p = paeth(load<u8>(cur + i - bpp), load<u8>(prev + i), load<u8>(prev + i - bpp));
      store<u8>(out + i, load<u8>(cur + i) - <u8> p);
    }
  }
  return sum;
}

// ---------------------------------------------------------------------------------------------
// Difference

// Stats written by diff_rgba as f64: [changed, sumAbs, sumLuma*256, sumChroma*256, maxDiff,
// minX, minY, maxX, maxY] (bounds are -1 when nothing changed).
const CHUNK: usize = 16384; // pixels per flush of the 32-bit vector sums (no overflow)

/**
 * Compares `n` RGBA pixels of `a` and `b` (rows of `width` pixels). A pixel's difference is the
 * largest absolute channel difference (alpha included); it is changed when that exceeds `noise`.
 * Luma difference is |ΔY| with BT.601 weights (Y = 0.299R + 0.587G + 0.114B, as 77/150/29 over
 * 256); colour difference is max(|ΔCb|, |ΔCr|) (JPEG's BT.601 chroma). Unchanged pixels count 0
 * in every sum. `mask`, when not 0, receives per pixel the difference if changed else 0.
 * `n` must be a multiple of 16 with zeroed padding in both images (the host pads).
 */
export function diff_rgba(a: usize, b: usize, n: i32, width: i32, noise: i32, mask: usize, out: usize): void {
  const total = <usize> n;
  const w = <usize> width;
  const noise8 = i8x16.splat(<i8> min(max(noise, 0), 255));
  const noise32 = i32x4.splat(min(max(noise, 0), 255));
  const lowByte = i32x4.splat(0xff);
  const wY = i16x8(77, 150, 29, 0, 77, 150, 29, 0);
  const wCb = i16x8(-43, -85, 128, 0, -43, -85, 128, 0);
  const wCr = i16x8(128, -107, -21, 0, 128, -107, -21, 0);
  let changed: f64 = 0;
  let sumAbs: f64 = 0;
  let sumY: f64 = 0;
  let sumC: f64 = 0;
  let vMax = i32x4.splat(0);
  let minX: usize = w;
  let maxX: isize = -1;
  let minY: isize = -1;
  let maxY: isize = -1;
  let row: usize = 0;
  let rowStart: usize = 0;
  for (let base: usize = 0; base < total; base += CHUNK) {
    const end = min(total, base + CHUNK);
    let vCount = i32x4.splat(0);
    let vAbs = i32x4.splat(0);
    let vY = i32x4.splat(0);
    let vC = i32x4.splat(0);
    for (let p = base; p < end; p += 16) {
      const pa = a + (p << 2);
      const pb = b + (p << 2);
      const a0 = v128.load(pa);
      const b0 = v128.load(pb);
      const a1 = v128.load(pa, 16);
      const b1 = v128.load(pb, 16);
      const a2 = v128.load(pa, 32);
      const b2 = v128.load(pb, 32);
      const a3 = v128.load(pa, 48);
      const b3 = v128.load(pb, 48);
      const d0 = v128.or(i8x16.sub_sat_u(a0, b0), i8x16.sub_sat_u(b0, a0));
      const d1 = v128.or(i8x16.sub_sat_u(a1, b1), i8x16.sub_sat_u(b1, a1));
      const d2 = v128.or(i8x16.sub_sat_u(a2, b2), i8x16.sub_sat_u(b2, a2));
      const d3 = v128.or(i8x16.sub_sat_u(a3, b3), i8x16.sub_sat_u(b3, a3));
      const dm = i8x16.max_u(i8x16.max_u(d0, d1), i8x16.max_u(d2, d3));
      // Most of a frame is unchanged: skip 16 pixels with one test.
      if (!v128.any_true(i8x16.gt_u(dm, noise8))) {
        if (mask != 0) v128.store(mask + p, i32x4.splat(0));
        continue;
      }
      let bits: i32 = 0; // one bit per changed pixel of the 16
      for (let k: usize = 0; k < 4; k++) {
        const q = p + (k << 2);
        const va = v128.load(a + (q << 2));
        const vb = v128.load(b + (q << 2));
        const d = v128.or(i8x16.sub_sat_u(va, vb), i8x16.sub_sat_u(vb, va));
        const m1 = i8x16.max_u(d, i32x4.shr_u(d, 8));
        const m2 = i8x16.max_u(m1, i32x4.shr_u(m1, 16));
        const mag = v128.and(m2, lowByte);
        const on = i32x4.gt_s(mag, noise32);
        const magOn = v128.and(mag, on);
        bits |= i32x4.bitmask(on) << (<i32> k << 2);
        if (mask != 0) {
          const m16 = i16x8.narrow_i32x4_u(magOn, magOn);
          v128.store32_lane(mask + q, i8x16.narrow_i16x8_u(m16, m16), 0);
        }
        vCount = i32x4.sub(vCount, on);
        vAbs = i32x4.add(vAbs, magOn);
        vMax = i32x4.max_u(vMax, magOn);
        const lo = i16x8.sub(i16x8.extend_low_i8x16_u(va), i16x8.extend_low_i8x16_u(vb));
        const hi = i16x8.sub(i16x8.extend_high_i8x16_u(va), i16x8.extend_high_i8x16_u(vb));
        // dot() sums (R,G) and (B,A) pairs; adding the even and odd lanes finishes each pixel.
        const yl = i32x4.dot_i16x8_s(lo, wY);
        const yh = i32x4.dot_i16x8_s(hi, wY);
        const dy = i32x4.abs(i32x4.add(i32x4.shuffle(yl, yh, 0, 2, 4, 6), i32x4.shuffle(yl, yh, 1, 3, 5, 7)));
        const bl = i32x4.dot_i16x8_s(lo, wCb);
        const bh = i32x4.dot_i16x8_s(hi, wCb);
        const db = i32x4.abs(i32x4.add(i32x4.shuffle(bl, bh, 0, 2, 4, 6), i32x4.shuffle(bl, bh, 1, 3, 5, 7)));
        const rl = i32x4.dot_i16x8_s(lo, wCr);
        const rh = i32x4.dot_i16x8_s(hi, wCr);
        const dr = i32x4.abs(i32x4.add(i32x4.shuffle(rl, rh, 0, 2, 4, 6), i32x4.shuffle(rl, rh, 1, 3, 5, 7)));
        vY = i32x4.add(vY, v128.and(dy, on));
        vC = i32x4.add(vC, v128.and(i32x4.max_s(db, dr), on));
      }
      if (bits == 0) continue;
      // Bounds, once per 16 pixels: advance the row cursor to the first changed pixel.
      const i0 = p + <usize> ctz(bits);
      const i1 = p + <usize> (31 - clz(bits));
      while (i0 >= rowStart + w) {
        rowStart += w;
        row++;
      }
      if (minY < 0) minY = <isize> row;
      if (i1 < rowStart + w) {
        minX = min(minX, i0 - rowStart);
        maxX = max(maxX, <isize> (i1 - rowStart));
        maxY = max(maxY, <isize> row);
      } else {
        // The group straddles a row end: place each changed pixel on its own.
        for (let l = 0; l < 16; l++) {
          if ((bits & (1 << l)) == 0) continue;
          const i = p + <usize> l;
          const yy = i / w;
          const xx = i - yy * w;
          minX = min(minX, xx);
          maxX = max(maxX, <isize> xx);
          maxY = max(maxY, <isize> yy);
        }
      }
    }
    changed += <f64> lanesSum(vCount);
    sumAbs += <f64> lanesSum(vAbs);
    sumY += <f64> lanesSum(vY);
    sumC += <f64> lanesSum(vC);
  }
  const maxDiff = max(
    max(i32x4.extract_lane(vMax, 0), i32x4.extract_lane(vMax, 1)),
    max(i32x4.extract_lane(vMax, 2), i32x4.extract_lane(vMax, 3)),
  );
  store<f64>(out, changed);
  store<f64>(out, sumAbs, 8);
  store<f64>(out, sumY, 16);
  store<f64>(out, sumC, 24);
  store<f64>(out, <f64> maxDiff, 32);
  store<f64>(out, maxX < 0 ? -1 : <f64> minX, 40);
  store<f64>(out, <f64> minY, 48);
  store<f64>(out, <f64> maxX, 56);
  store<f64>(out, <f64> maxY, 64);
}

@inline
function lanesSum(v: v128): i64 {
  return <i64> i32x4.extract_lane(v, 0) + <i64> i32x4.extract_lane(v, 1) + <i64> i32x4.extract_lane(v, 2) +
    <i64> i32x4.extract_lane(v, 3);
}

// ---------------------------------------------------------------------------------------------
// Resampling

/**
 * Builds one axis of a separable resampling filter: for each of `dstLen` outputs, an i32 first
 * source index, an i32 tap count and `taps` f32 weights (entry stride 8 + 4 * taps bytes).
 * Shrinking averages areas exactly (each output covers srcLen / dstLen sources, partial at the
 * edges); enlarging is bilinear with pixel centres aligned.
 */
export function resize_axis(out: usize, srcLen: i32, dstLen: i32, taps: i32): void {
  const scale = <f64> srcLen / <f64> dstLen;
  const stride = <usize> 8 + (<usize> taps << 2);
  for (let o = 0; o < dstLen; o++) {
    const e = out + <usize> o * stride;
    memory.fill(e, 0, stride);
    if (scale >= 1) {
      const lo = <f64> o * scale;
      const hi = min(<f64> srcLen, lo + scale);
      const first = <i32> Math.floor(lo);
      let count = 0;
      for (let i = first; <f64> i < hi && count < taps; i++) {
        const cover = min(hi, <f64> (i + 1)) - max(lo, <f64> i);
        store<f32>(e + 8 + (<usize> count << 2), <f32> (cover / scale));
        count++;
      }
      store<i32>(e, first);
      store<i32>(e, count, 4);
    } else {
      const centre = (<f64> o + 0.5) * scale - 0.5;
      let first = <i32> Math.floor(centre);
      let f = <f32> (centre - <f64> first);
      if (first < 0) {
        first = 0;
        f = 0;
      }
      if (first >= srcLen - 1) {
        first = srcLen - 1;
        f = 0;
      }
      store<i32>(e, first);
      store<i32>(e, f > 0 ? 2 : 1, 4);
      store<f32>(e + 8, 1 - f);
      store<f32>(e + 12, f);
    }
  }
}

@inline
function pixelF32(p: usize): v128 {
  return f32x4.convert_i32x4_u(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(p))));
}

/**
 * Resamples an RGBA region (srcW × srcH pixels at `src`, row stride `srcStride` bytes) to
 * dstW × dstH at `dst` (row stride `dstStride`), with axis tables from resize_axis (`xs`/`ys`,
 * `xTaps`/`yTaps`). `tmp` holds dstW * srcH * 16 bytes (the horizontal pass, as f32x4).
 */
export function resize_rgba(
  src: usize,
  srcStride: i32,
  srcW: i32,
  srcH: i32,
  dst: usize,
  dstStride: i32,
  dstW: i32,
  dstH: i32,
  xs: usize,
  xTaps: i32,
  ys: usize,
  yTaps: i32,
  tmp: usize,
): void {
  const xStride = <usize> 8 + (<usize> xTaps << 2);
  const yStride = <usize> 8 + (<usize> yTaps << 2);
  const tw = <usize> dstW << 4;
  for (let y = 0; y < srcH; y++) {
    const row = src + <usize> y * <usize> srcStride;
    const t = tmp + <usize> y * tw;
    for (let x = 0; x < dstW; x++) {
      const e = xs + <usize> x * xStride;
      const p = row + (<usize> load<i32>(e) << 2);
      const count = load<i32>(e, 4);
      let acc = f32x4.splat(0);
      for (let k = 0; k < count; k++) {
        acc = f32x4.add(
          acc,
          f32x4.mul(pixelF32(p + (<usize> k << 2)), f32x4.splat(load<f32>(e + 8 + (<usize> k << 2)))),
        );
      }
      v128.store(t + (<usize> x << 4), acc);
    }
  }
  const half = f32x4.splat(0.5);
  for (let y = 0; y < dstH; y++) {
    const e = ys + <usize> y * yStride;
    const first = <usize> load<i32>(e);
    const count = load<i32>(e, 4);
    const out = dst + <usize> y * <usize> dstStride;
    for (let x = 0; x < dstW; x++) {
      let acc = f32x4.splat(0);
      const col = tmp + (<usize> x << 4);
      for (let k = 0; k < count; k++) {
        const v = v128.load(col + (first + <usize> k) * tw);
        acc = f32x4.add(acc, f32x4.mul(v, f32x4.splat(load<f32>(e + 8 + (<usize> k << 2)))));
      }
      const i = i32x4.trunc_sat_f32x4_u(f32x4.add(acc, half));
      const s = i16x8.narrow_i32x4_u(i, i);
      v128.store32_lane(out + (<usize> x << 2), i8x16.narrow_i16x8_u(s, s), 0);
    }
  }
}

/**
 * Box-filter downscale by an integer `factor`: output ceil(w / factor) × ceil(h / factor), each
 * pixel the rounded mean of its factor × factor block (edge blocks average what exists).
 */
export function downscale_box(src: usize, width: i32, height: i32, factor: i32, dst: usize): void {
  const ow = (width + factor - 1) / factor;
  const oh = (height + factor - 1) / factor;
  const stride = <usize> width << 2;
  for (let oy = 0; oy < oh; oy++) {
    const y0 = oy * factor;
    const y1 = min(height, y0 + factor);
    for (let ox = 0; ox < ow; ox++) {
      const x0 = ox * factor;
      const x1 = min(width, x0 + factor);
      let acc = i32x4.splat(0);
      for (let y = y0; y < y1; y++) {
        const row = src + <usize> y * stride;
        for (let x = x0; x < x1; x++) {
          acc = i32x4.add(
            acc,
            i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(row + (<usize> x << 2)))),
          );
        }
      }
      const count = <f32> ((y1 - y0) * (x1 - x0));
      const mean = f32x4.add(f32x4.div(f32x4.convert_i32x4_u(acc), f32x4.splat(count)), f32x4.splat(0.5));
      const i = i32x4.trunc_sat_f32x4_u(mean);
      const s = i16x8.narrow_i32x4_u(i, i);
      v128.store32_lane(dst + ((<usize> oy * <usize> ow + <usize> ox) << 2), i8x16.narrow_i16x8_u(s, s), 0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Perceptual distance

/** BT.601 luma (Y = (77R + 150G + 29B + 128) >> 8) of `n` RGBA pixels into `dst` bytes. */
export function luma_plane(src: usize, n: i32, dst: usize): void {
  for (let i: usize = 0; i < <usize> n; i++) {
    const p = src + (i << 2);
    const y = (77 * <u32> load<u8>(p) + 150 * <u32> load<u8>(p + 1) + 29 * <u32> load<u8>(p + 2) + 128) >> 8;
    store<u8>(dst + i, <u8> y);
  }
}

/**
 * Mean SSIM of two luma planes over non-overlapping win × win windows (constants C1 = (0.01·255)²,
 * C2 = (0.03·255)², population statistics); each window's SSIM is clamped to [0, 1] so that the
 * mean is too. Windows that do not fit at the right/bottom edges are skipped.
 */
export function ssim_mean(a: usize, b: usize, width: i32, height: i32, win: i32): f64 {
  const c1: f64 = 6.5025;
  const c2: f64 = 58.5225;
  const nx = width / win;
  const ny = height / win;
  if (nx == 0 || ny == 0) return 1;
  const count = <f64> (win * win);
  let total: f64 = 0;
  for (let wy = 0; wy < ny; wy++) {
    for (let wx = 0; wx < nx; wx++) {
      let sa: u32 = 0;
      let sb: u32 = 0;
      let saa: u64 = 0;
      let sbb: u64 = 0;
      let sab: u64 = 0;
      for (let y = 0; y < win; y++) {
        const o = <usize> (wy * win + y) * <usize> width + <usize> (wx * win);
        for (let x: usize = 0; x < <usize> win; x++) {
          const va = <u32> load<u8>(a + o + x);
          const vb = <u32> load<u8>(b + o + x);
          sa += va;
          sb += vb;
          saa += <u64> (va * va);
          sbb += <u64> (vb * vb);
          sab += <u64> (va * vb);
        }
      }
      const ma = <f64> sa / count;
      const mb = <f64> sb / count;
      const va = <f64> saa / count - ma * ma;
      const vb = <f64> sbb / count - mb * mb;
      const cov = <f64> sab / count - ma * mb;
      const s = ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      total += min(1, max(0, s));
    }
  }
  return total / <f64> (nx * ny);
}

// ---------------------------------------------------------------------------------------------
// Change accumulation (difference map, motion history)

/**
 * Adds one change mask (per pixel magnitude 0–255, 0 = unchanged) observed at time `t` to the
 * accumulator arrays: count (u32), weight = Σm, Σm·t, Σm·t² (f32), first and last change time
 * (f32, -1 until the pixel first changes). `n` must be a multiple of 16 (padding masks are 0).
 */
export function accumulate(
  mask: usize,
  n: i32,
  t: f32,
  count: usize,
  weight: usize,
  wt: usize,
  wt2: usize,
  first: usize,
  last: usize,
): void {
  for (let p: usize = 0; p < <usize> n; p += 16) {
    if (!v128.any_true(v128.load(mask + p))) continue;
    for (let i = p; i < p + 16; i++) {
      const m = load<u8>(mask + i);
      if (m == 0) continue;
      const w = <f32> m;
      const o = i << 2;
      store<u32>(count + o, load<u32>(count + o) + 1);
      store<f32>(weight + o, load<f32>(weight + o) + w);
      store<f32>(wt + o, load<f32>(wt + o) + w * t);
      store<f32>(wt2 + o, load<f32>(wt2 + o) + w * t * t);
      const f = load<f32>(first + o);
      if (f < 0 || t < f) store<f32>(first + o, t);
      if (t > load<f32>(last + o)) store<f32>(last + o, t);
    }
  }
}

/**
 * Per pixel magnitude-weighted mean change time and its standard deviation (NaN where the pixel
 * never changed), from the accumulate() sums.
 */
export function accumulate_finish(
  n: i32,
  weight: usize,
  wt: usize,
  wt2: usize,
  mean: usize,
  spread: usize,
): void {
  for (let i: usize = 0; i < <usize> n; i++) {
    const o = i << 2;
    const w = load<f32>(weight + o);
    if (w <= 0) {
      store<f32>(mean + o, NaN);
      store<f32>(spread + o, NaN);
      continue;
    }
    const m = load<f32>(wt + o) / w;
    const v = load<f32>(wt2 + o) / w - m * m;
    store<f32>(mean + o, m);
    store<f32>(spread + o, Mathf.sqrt(max<f32>(0, v)));
  }
}

// ---------------------------------------------------------------------------------------------
// Composition

@inline
function lerpPixel(d: v128, s: v128, a: v128): v128 {
  // d + (s - d) * a / 128 per 16-bit lane, a in 0..128 (7 bits keep the product within i16).
  const diff = i16x8.sub(s, d);
  return i16x8.add(d, i16x8.shr_s(i16x8.add(i16x8.mul(diff, a), i16x8.splat(64)), 7));
}

/**
 * Blends a solid colour (rgb packed r | g << 8 | b << 16) over a w × h block at `dst` with
 * `alpha` 0–256. Colour channels move toward the colour; alpha becomes a + dstA·(1 − a).
 */
export function blend_solid(dst: usize, stride: i32, w: i32, h: i32, rgb: i32, alpha: i32): void {
  const colour = i16x8.extend_low_i8x16_u(i32x4.splat(rgb | <i32> 0xff000000));
  const a = i16x8.splat(<i16> ((alpha + 1) >> 1));
  for (let y = 0; y < h; y++) {
    const row = dst + <usize> y * <usize> stride;
    let x = 0;
    for (; x + 2 <= w; x += 2) {
      const p = row + (<usize> x << 2);
      const d = i16x8.extend_low_i8x16_u(v128.load64_zero(p));
      const r = lerpPixel(d, colour, a);
      v128.store64_lane(p, i8x16.narrow_i16x8_u(r, r), 0);
    }
    for (; x < w; x++) {
      const p = row + (<usize> x << 2);
      const d = i16x8.extend_low_i8x16_u(v128.load32_zero(p));
      const r = lerpPixel(d, colour, a);
      v128.store32_lane(p, i8x16.narrow_i16x8_u(r, r), 0);
    }
  }
}

/**
 * Blends a w × h block of `src` over `dst` with per pixel weight srcA · opacity (opacity 0–256):
 * colour channels interpolate, alpha becomes a + dstA·(1 − a). Both blocks are already clipped.
 */
export function blend_image(
  dst: usize,
  dstStride: i32,
  src: usize,
  srcStride: i32,
  w: i32,
  h: i32,
  opacity: i32,
): void {
  for (let y = 0; y < h; y++) {
    const drow = dst + <usize> y * <usize> dstStride;
    const srow = src + <usize> y * <usize> srcStride;
    for (let x = 0; x < w; x++) {
      const p = drow + (<usize> x << 2);
      const sp = srow + (<usize> x << 2);
      const sa = (<i32> load<u8>(sp + 3) * opacity + 127) / 255;
      if (sa == 0) continue;
      const d = i16x8.extend_low_i8x16_u(v128.load32_zero(p));
      // The source alpha lane is forced to 255 so the same lerp yields alpha "over".
      const s = i16x8.extend_low_i8x16_u(v128.or(v128.load32_zero(sp), i32x4(<i32>0xff000000, 0, 0, 0)));
      const r = lerpPixel(d, s, i16x8.splat(<i16> ((sa + 1) >> 1)));
      v128.store32_lane(p, i8x16.narrow_i16x8_u(r, r), 0);
    }
  }
}

/**
 * Maps `n` f32 values to RGBA through a 256-entry RGBA `palette`: index round(255 · (v − lo) /
 * (hi − lo)) clamped to 0–255. NaN (no data) becomes `empty` (packed RGBA, r in the low byte).
 */
export function colorize(
  field: usize,
  n: i32,
  lo: f32,
  hi: f32,
  palette: usize,
  empty: u32,
  dst: usize,
): void {
  const scale: f32 = hi > lo ? 255 / (hi - lo) : 0;
  for (let i: usize = 0; i < <usize> n; i++) {
    const v = load<f32>(field + (i << 2));
    if (v != v) {
      store<u32>(dst + (i << 2), empty);
      continue;
    }
    const k = <i32> min<f32>(255, max<f32>(0, (v - lo) * scale + 0.5));
    store<u32>(dst + (i << 2), load<u32>(palette + (<usize> k << 2)));
  }
}
