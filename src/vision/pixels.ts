/**
 * Typed entry points to the WASM pixel kernels (AssemblyScript source in wasm/assembly/kernels.ts,
 * bytes in the generated wasm/kernels_wasm.ts). The module is instantiated once per isolate, on first
 * use; each worker gets its own. Inputs are copied into linear memory, results copied out, so callers
 * only ever see plain RgbaImage / typed arrays that stay valid.
 *
 * Memory: buffers are allocated by the module's allocator and kept in numbered scratch slots that
 * grow on demand and are reused by later calls, so repeated calls allocate nothing. Views of
 * `memory.buffer` are taken after the last allocation of a call (growth detaches old views).
 */
import type { Rect, RgbaImage } from "./image.ts";
import { KERNELS_WASM_BASE64 } from "./wasm/kernels_wasm.ts";

type Kernel = (...args: number[]) => number;

interface Kernels {
  alloc: Kernel;
  free: Kernel;
  png_unfilter: Kernel;
  png_expand: Kernel;
  rgba_opaque: Kernel;
  png_filter: Kernel;
  diff_rgba: Kernel;
  resize_axis: Kernel;
  resize_rgba: Kernel;
  downscale_box: Kernel;
  luma_plane: Kernel;
  ssim_mean: Kernel;
  accumulate: Kernel;
  accumulate_finish: Kernel;
  blend_solid: Kernel;
  blend_image: Kernel;
  colorize: Kernel;
}

const KERNEL_NAMES: readonly (keyof Kernels)[] = [
  "alloc",
  "free",
  "png_unfilter",
  "png_expand",
  "rgba_opaque",
  "png_filter",
  "diff_rgba",
  "resize_axis",
  "resize_rgba",
  "downscale_box",
  "luma_plane",
  "ssim_mean",
  "accumulate",
  "accumulate_finish",
  "blend_solid",
  "blend_image",
  "colorize",
];

class WasmHeap {
  readonly k: Kernels;
  readonly #memory: WebAssembly.Memory;
  readonly #slots: { ptr: number; size: number }[] = [];
  #view: Uint8Array | undefined;

  constructor(bytes: Uint8Array<ArrayBuffer>) {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
      env: {
        abort: () => {
          throw new Error("WASM pixel kernel aborted (out of memory?)");
        },
      },
    });
    const memory = instance.exports.memory;
    if (!(memory instanceof WebAssembly.Memory)) throw new Error("WASM pixel kernels export no memory");
    this.#memory = memory;
    const k: Partial<Record<keyof Kernels, Kernel>> = {};
    for (const name of KERNEL_NAMES) {
      const fn = instance.exports[name];
      if (typeof fn !== "function") {
        throw new Error(`WASM pixel kernels lack "${name}"; run \`deno task build:wasm\``);
      }
      k[name] = fn as Kernel;
    }
    this.k = k as Kernels;
  }

  /** A scratch buffer of at least `size` bytes, reused across calls (contents undefined). */
  slot(index: number, size: number): number {
    const s = this.#slots[index] ?? { ptr: 0, size: 0 };
    this.#slots[index] = s;
    if (s.size < size) {
      if (s.ptr) this.k.free(s.ptr);
      // 1/8 headroom so slowly growing inputs do not reallocate every call.
      s.size = Math.max(64, Math.ceil(size * 1.125 / 16) * 16);
      s.ptr = this.alloc(s.size);
    }
    return s.ptr;
  }

  alloc(size: number): number {
    const ptr = this.k.alloc(size) >>> 0;
    if (ptr === 0) throw new Error(`WASM pixel kernels could not allocate ${size} bytes`);
    return ptr;
  }

  /** Releases every scratch slot (tests use it to check that calls leave nothing behind). */
  releaseSlots(): void {
    for (const s of this.#slots) if (s.ptr) this.k.free(s.ptr);
    this.#slots.length = 0;
  }

  get bytes(): Uint8Array {
    if (!this.#view || this.#view.buffer !== this.#memory.buffer) {
      this.#view = new Uint8Array(this.#memory.buffer);
    }
    return this.#view;
  }

  get memoryBytes(): number {
    return this.#memory.buffer.byteLength;
  }

  // Copies out as bytes (new + Uint8Array.set, a memcpy). On views of WASM memory V8 takes a slow
  // path for TypedArray.slice() and for set() between wider element types: ~30–80× slower.
  copyBytes(ptr: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    out.set(new Uint8Array(this.#memory.buffer, ptr, length));
    return out;
  }

  copyF32(ptr: number, length: number): Float32Array {
    return new Float32Array(this.copyBytes(ptr, length * 4).buffer);
  }

  copyU32(ptr: number, length: number): Uint32Array {
    return new Uint32Array(this.copyBytes(ptr, length * 4).buffer);
  }

  f32(ptr: number, length: number): Float32Array {
    return new Float32Array(this.#memory.buffer, ptr, length);
  }

  u32(ptr: number, length: number): Uint32Array {
    return new Uint32Array(this.#memory.buffer, ptr, length);
  }

  f64(ptr: number, length: number): Float64Array {
    return new Float64Array(this.#memory.buffer, ptr, length);
  }
}

let heap: WasmHeap | undefined;

function wasm(): WasmHeap {
  if (!heap) {
    const text = atob(KERNELS_WASM_BASE64);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    heap = new WasmHeap(bytes);
  }
  return heap;
}

// Slot numbers; each names one role so concurrent roles within a call never share memory.
const S_A = 0;
const S_B = 1;
const S_OUT = 2;
const S_TMP = 3;
const S_XS = 4;
const S_YS = 5;
const S_STATS = 6;
const S_AUX = 7;
const S_AUX2 = 8;

/** Pixel counts are padded to 16 so the SIMD loops need no tail code. */
const pad16 = (n: number) => (n + 15) & ~15;

function checkImage(img: RgbaImage, what: string): void {
  if (
    !Number.isInteger(img.width) || !Number.isInteger(img.height) || img.width < 0 || img.height < 0 ||
    img.data.length !== img.width * img.height * 4
  ) {
    throw new Error(
      `${what}: ${img.width}×${img.height} image needs ${
        img.width * img.height * 4
      } RGBA bytes, has ${img.data.length}`,
    );
  }
}

/** Copies an image into a slot, zeroing the padding up to a multiple of 16 pixels. */
function putImage(h: WasmHeap, slot: number, img: RgbaImage): number {
  const n = img.width * img.height;
  const ptr = h.slot(slot, pad16(n) * 4);
  const bytes = h.bytes;
  bytes.set(img.data, ptr);
  bytes.fill(0, ptr + n * 4, ptr + pad16(n) * 4);
  return ptr;
}

// ---------------------------------------------------------------------------------------------
// Difference

export interface DiffOptions {
  /** Pixels whose largest channel difference is ≤ this (0–255) count as unchanged. Default 0. */
  noiseFloor?: number;
  /**
   * true: return a fresh per-pixel change-magnitude mask (width × height bytes, 0 = unchanged);
   * a Uint8Array of that length: fill it instead.
   */
  mask?: boolean | Uint8Array;
}

export interface DiffResult {
  changedPixels: number;
  /** changedPixels / pixel count, 0–1. */
  changedProportion: number;
  /** Smallest rectangle holding every changed pixel; null when none changed. */
  bounds: Rect | null;
  /** Mean over all pixels of the largest channel difference (unchanged pixels count 0), 0–255. */
  meanAbsDiff: number;
  /** Mean over all pixels of |ΔY|, BT.601 luma (0.299R + 0.587G + 0.114B), 0–255. */
  meanLumaDiff: number;
  /** Mean over all pixels of max(|ΔCb|, |ΔCr|) (BT.601 chroma), 0–255. */
  meanColorDiff: number;
  /** Largest channel difference of any changed pixel, 0–255 (0 when none changed). */
  maxDiff: number;
  mask?: Uint8Array;
}

/** Compares two same-size RGBA images pixel by pixel; throws when the sizes differ. */
export function diffImages(a: RgbaImage, b: RgbaImage, options: DiffOptions = {}): DiffResult {
  checkImage(a, "diffImages");
  checkImage(b, "diffImages");
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`diffImages: sizes differ (${a.width}×${a.height} vs ${b.width}×${b.height})`);
  }
  const h = wasm();
  const n = a.width * a.height;
  const wantMask = options.mask !== undefined && options.mask !== false;
  if (options.mask instanceof Uint8Array && options.mask.length !== n) {
    throw new Error(`diffImages: mask needs ${n} bytes, has ${options.mask.length}`);
  }
  const maskPtr = wantMask ? h.slot(S_OUT, pad16(n)) : 0;
  const pa = putImage(h, S_A, a);
  const pb = putImage(h, S_B, b);
  const result = runDiff(h, pa, pb, a.width, a.height, options.noiseFloor ?? 0, maskPtr);
  if (wantMask) {
    const view = h.bytes.subarray(maskPtr, maskPtr + n);
    if (options.mask instanceof Uint8Array) options.mask.set(view);
    result.mask = options.mask instanceof Uint8Array ? options.mask : h.copyBytes(maskPtr, n);
  }
  return result;
}

/**
 * Rows per kernel call for whole-image kernels. V8 first runs WASM code in its baseline tier and
 * swaps in optimised code only between calls, so one call over a whole 1080p image would run
 * unoptimised throughout (2–3× slower in the SIMD loops); with bands, later bands pick up the
 * optimised code. A multiple of 16, so every band but the last spans a multiple of 16 pixels.
 */
const BAND_ROWS = 64;

/** Diffs two padded images already in WASM memory, band by band, merging the band statistics. */
function runDiff(
  h: WasmHeap,
  pa: number,
  pb: number,
  w: number,
  height: number,
  noiseFloor: number,
  maskPtr: number,
): DiffResult {
  const n = w * height;
  const stats = h.slot(S_STATS, 9 * 8);
  const floor = Math.max(0, Math.min(255, Math.round(noiseFloor)));
  let changed = 0;
  let sumAbs = 0;
  let sumY = 0;
  let sumC = 0;
  let maxDiff = 0;
  let minX = w;
  let minY = -1;
  let maxX = -1;
  let maxY = -1;
  for (let y0 = 0; y0 < height; y0 += BAND_ROWS) {
    const first = y0 * w;
    const count = pad16(Math.min(height - y0, BAND_ROWS) * w);
    h.k.diff_rgba(pa + first * 4, pb + first * 4, count, w, floor, maskPtr ? maskPtr + first : 0, stats);
    const s = h.f64(stats, 9);
    if (s[0] === 0) continue;
    changed += s[0];
    sumAbs += s[1];
    sumY += s[2];
    sumC += s[3];
    maxDiff = Math.max(maxDiff, s[4]);
    minX = Math.min(minX, s[5]);
    if (minY < 0) minY = y0 + s[6];
    maxX = Math.max(maxX, s[7]);
    maxY = y0 + s[8];
  }
  const total = Math.max(1, n);
  return {
    changedPixels: changed,
    changedProportion: n ? changed / n : 0,
    bounds: changed > 0 ? { x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1 } : null,
    meanAbsDiff: sumAbs / total,
    meanLumaDiff: sumY / 256 / total,
    meanColorDiff: sumC / 256 / total,
    maxDiff,
  };
}

// ---------------------------------------------------------------------------------------------
// Change accumulation

export interface AccumulatedChange {
  width: number;
  height: number;
  /** Masks (frame-to-frame steps) accumulated so far. */
  steps: number;
  /** Per pixel: in how many masks it changed. */
  count: Uint32Array;
  /** Per pixel: Σ change magnitude (0–255 per mask). */
  weight: Float32Array;
  /** Per pixel: magnitude-weighted mean change time, NaN where it never changed. */
  meanTime: Float32Array;
  /** Per pixel: magnitude-weighted standard deviation of change times (0 for a single moment), NaN if never. */
  spread: Float32Array;
  /** Per pixel: earliest change time, -1 where it never changed. */
  firstTime: Float32Array;
  /** Per pixel: latest change time (motion history), -1 where it never changed. */
  lastTime: Float32Array;
}

const accumulatorCleanup = new FinalizationRegistry<number[]>((ptrs) => {
  for (const ptr of ptrs) heap?.k.free(ptr);
});

/**
 * Accumulates successive frame-to-frame change masks over a W×H grid: per pixel change count, Σ
 * magnitude, magnitude-weighted Σt and Σt² (mean and spread of change times), first and last change
 * time. Times are in [0, 1] (the caller normalises over the range). Feed it masks (add), frame pairs
 * (addDiff) or a frame sequence (addFrame, which keeps the previous frame in WASM memory so each step
 * copies one frame in, not two). State lives in WASM memory until dispose() (or garbage collection).
 */
export class ChangeAccumulator {
  readonly width: number;
  readonly height: number;
  #steps = 0;
  #ptr: number;
  /** Two frame buffers for addFrame, allocated on first use; #latest indexes the newest frame. */
  #frameBufs = 0;
  #latest = -1;
  readonly #n: number;
  readonly #token = {};
  readonly #owned: number[] = [];

  constructor(width: number, height: number) {
    if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
      throw new Error(`ChangeAccumulator: bad size ${width}×${height}`);
    }
    this.width = width;
    this.height = height;
    this.#n = pad16(width * height);
    const h = wasm();
    this.#ptr = h.alloc(this.#n * 4 * 6);
    const bytes = h.bytes;
    bytes.fill(0, this.#ptr, this.#ptr + this.#n * 4 * 4);
    h.f32(this.#array(4), this.#n * 2).fill(-1);
    this.#owned.push(this.#ptr);
    accumulatorCleanup.register(this, this.#owned, this.#token);
  }

  /** Masks (frame-to-frame steps) accumulated so far. */
  get steps(): number {
    return this.#steps;
  }

  #array(i: number): number {
    if (!this.#ptr) throw new Error("ChangeAccumulator used after dispose()");
    return this.#ptr + i * this.#n * 4;
  }

  #accumulate(h: WasmHeap, maskPtr: number, t: number): void {
    if (!(t >= 0 && t <= 1)) throw new Error(`ChangeAccumulator: time ${t} is outside [0, 1]`);
    h.k.accumulate(
      maskPtr,
      this.#n,
      t,
      this.#array(0),
      this.#array(1),
      this.#array(2),
      this.#array(3),
      this.#array(4),
      this.#array(5),
    );
    this.#steps++;
  }

  /** Adds a change mask (width × height magnitudes, 0 = unchanged) observed at time t. */
  add(mask: Uint8Array, t: number): void {
    const n = this.width * this.height;
    if (mask.length !== n) {
      throw new Error(`ChangeAccumulator.add: mask needs ${n} bytes, has ${mask.length}`);
    }
    const h = wasm();
    const ptr = h.slot(S_OUT, this.#n);
    const bytes = h.bytes;
    bytes.set(mask, ptr);
    bytes.fill(0, ptr + n, ptr + this.#n);
    this.#accumulate(h, ptr, t);
  }

  /** Diffs two frames and adds the change mask at time t without copying the mask out of WASM. */
  addDiff(prev: RgbaImage, next: RgbaImage, t: number, noiseFloor = 0): DiffResult {
    if (prev.width !== this.width || prev.height !== this.height) {
      throw new Error(
        `ChangeAccumulator.addDiff: frame is ${prev.width}×${prev.height}, accumulator ${this.width}×${this.height}`,
      );
    }
    checkImage(prev, "ChangeAccumulator.addDiff");
    checkImage(next, "ChangeAccumulator.addDiff");
    if (next.width !== prev.width || next.height !== prev.height) {
      throw new Error(
        `ChangeAccumulator.addDiff: sizes differ (${prev.width}×${prev.height} vs ${next.width}×${next.height})`,
      );
    }
    const h = wasm();
    const maskPtr = h.slot(S_OUT, this.#n);
    const pa = putImage(h, S_A, prev);
    const pb = putImage(h, S_B, next);
    const result = runDiff(h, pa, pb, this.width, this.height, noiseFloor, maskPtr);
    this.#accumulate(h, maskPtr, t);
    return result;
  }

  /**
   * Adds the next frame of a sequence: from the second call on, diffs it against the previous frame
   * and accumulates the change at time t (the time of this frame). Returns that diff, or null for the
   * first frame.
   */
  addFrame(frame: RgbaImage, t: number, noiseFloor = 0): DiffResult | null {
    checkImage(frame, "ChangeAccumulator.addFrame");
    if (frame.width !== this.width || frame.height !== this.height) {
      throw new Error(
        `ChangeAccumulator.addFrame: frame is ${frame.width}×${frame.height}, accumulator ${this.width}×${this.height}`,
      );
    }
    if (this.#latest >= 0 && !(t >= 0 && t <= 1)) {
      throw new Error(`ChangeAccumulator: time ${t} is outside [0, 1]`);
    }
    const h = wasm();
    if (!this.#frameBufs) {
      this.#array(0); // throws after dispose
      this.#frameBufs = h.alloc(this.#n * 4 * 2);
      this.#owned.push(this.#frameBufs);
    }
    const maskPtr = h.slot(S_OUT, this.#n);
    const slot = this.#latest === 0 ? 1 : 0;
    const ptr = this.#frameBufs + slot * this.#n * 4;
    const bytes = h.bytes;
    bytes.set(frame.data, ptr);
    bytes.fill(0, ptr + frame.data.length, ptr + this.#n * 4);
    const prev = this.#latest;
    this.#latest = slot;
    if (prev < 0) return null;
    const prevPtr = this.#frameBufs + prev * this.#n * 4;
    const result = runDiff(h, prevPtr, ptr, this.width, this.height, noiseFloor, maskPtr);
    this.#accumulate(h, maskPtr, t);
    return result;
  }

  /** Copies the accumulated fields out (the accumulator keeps going). */
  result(): AccumulatedChange {
    const h = wasm();
    const n = this.width * this.height;
    const out = h.slot(S_AUX, this.#n * 8);
    h.k.accumulate_finish(this.#n, this.#array(1), this.#array(2), this.#array(3), out, out + this.#n * 4);
    return {
      width: this.width,
      height: this.height,
      steps: this.#steps,
      count: h.copyU32(this.#array(0), n),
      weight: h.copyF32(this.#array(1), n),
      meanTime: h.copyF32(out, n),
      spread: h.copyF32(out + this.#n * 4, n),
      firstTime: h.copyF32(this.#array(4), n),
      lastTime: h.copyF32(this.#array(5), n),
    };
  }

  dispose(): void {
    if (!this.#ptr) return;
    accumulatorCleanup.unregister(this.#token);
    for (const ptr of this.#owned) wasm().k.free(ptr);
    this.#owned.length = 0;
    this.#ptr = 0;
    this.#frameBufs = 0;
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

// ---------------------------------------------------------------------------------------------
// Resampling

/** Box-filter downscale by an integer factor: ceil(w/f) × ceil(h/f), edge blocks average what exists. */
export function downscaleBox(img: RgbaImage, factor: number): RgbaImage {
  checkImage(img, "downscaleBox");
  if (!Number.isInteger(factor) || factor < 1) {
    throw new Error(`downscaleBox: factor ${factor} must be an integer ≥ 1`);
  }
  const ow = Math.ceil(img.width / factor);
  const oh = Math.ceil(img.height / factor);
  const h = wasm();
  const src = h.slot(S_A, img.data.length);
  const dst = h.slot(S_OUT, ow * oh * 4);
  h.bytes.set(img.data, src);
  h.k.downscale_box(src, img.width, img.height, factor, dst);
  return { width: ow, height: oh, data: h.copyBytes(dst, ow * oh * 4) };
}

function clipRect(r: Rect, width: number, height: number): Rect {
  const x0 = Math.max(0, Math.floor(r.x));
  const y0 = Math.max(0, Math.floor(r.y));
  const x1 = Math.min(width, Math.floor(r.x + r.width));
  const y1 = Math.min(height, Math.floor(r.y + r.height));
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/**
 * Resamples `src` (already in slot S_A, `stride` bytes per row; the region `r`) to dw × dh into
 * slot `outSlot`, packed. Area averaging when shrinking an axis, bilinear when enlarging it.
 */
function resampleInWasm(
  h: WasmHeap,
  stride: number,
  r: Rect,
  dw: number,
  dh: number,
  outSlot: number,
): number {
  const xTaps = r.width >= dw ? Math.ceil(r.width / dw) + 1 : 2;
  const yTaps = r.height >= dh ? Math.ceil(r.height / dh) + 1 : 2;
  const xs = h.slot(S_XS, dw * (8 + 4 * xTaps));
  const ys = h.slot(S_YS, dh * (8 + 4 * yTaps));
  const tmp = h.slot(S_TMP, dw * r.height * 16);
  const dst = h.slot(outSlot, dw * dh * 4);
  const src = h.slot(S_A, 0);
  h.k.resize_axis(xs, r.width, dw, xTaps);
  h.k.resize_axis(ys, r.height, dh, yTaps);
  h.k.resize_rgba(
    src + r.y * stride + r.x * 4,
    stride,
    r.width,
    r.height,
    dst,
    dw * 4,
    dw,
    dh,
    xs,
    xTaps,
    ys,
    yTaps,
    tmp,
  );
  return dst;
}

/**
 * Resizes an image (or the `source` region of it) to width × height: exact area averaging on axes
 * that shrink (good for tiles and thumbnails), bilinear on axes that grow.
 */
export function resizeImage(img: RgbaImage, width: number, height: number, source?: Rect): RgbaImage {
  checkImage(img, "resizeImage");
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new Error(`resizeImage: bad target size ${width}×${height}`);
  }
  const r = clipRect(source ?? { x: 0, y: 0, width: img.width, height: img.height }, img.width, img.height);
  if (r.width === 0 || r.height === 0) throw new Error("resizeImage: the source region is empty");
  const h = wasm();
  h.slot(S_A, img.data.length);
  h.slot(S_OUT, width * height * 4);
  h.slot(S_TMP, width * r.height * 16);
  h.bytes.set(img.data, h.slot(S_A, 0));
  const dst = resampleInWasm(h, img.width * 4, r, width, height, S_OUT);
  return { width, height, data: h.copyBytes(dst, width * height * 4) };
}

// ---------------------------------------------------------------------------------------------
// Perceptual distance

/** Longest side of the luma planes SSIM compares: UI-scale structure survives, noise and cost do not. */
const SSIM_SIDE = 256;
const SSIM_WINDOW = 8;

/**
 * Perceptual distance of two same-size images, in [0, 1]: 1 − mean SSIM, where both images are first
 * area-averaged so the longer side is ≤ 256 px, converted to BT.601 luma, and SSIM is taken over
 * non-overlapping 8×8 windows (standard C1/C2 constants), each window's value clamped to [0, 1].
 * 0 = structurally identical; ≈1 = unrelated content.
 */
export function perceptualDistance(a: RgbaImage, b: RgbaImage): number {
  checkImage(a, "perceptualDistance");
  checkImage(b, "perceptualDistance");
  if (a.width !== b.width || a.height !== b.height) {
    throw new Error(`perceptualDistance: sizes differ (${a.width}×${a.height} vs ${b.width}×${b.height})`);
  }
  if (a.width === 0 || a.height === 0) return 0;
  const scale = Math.min(1, SSIM_SIDE / Math.max(a.width, a.height));
  const w = Math.max(1, Math.round(a.width * scale));
  const hgt = Math.max(1, Math.round(a.height * scale));
  const h = wasm();
  const lumaA = h.slot(S_AUX, w * hgt);
  const lumaB = h.slot(S_AUX2, w * hgt);
  for (const [img, luma] of [[a, lumaA], [b, lumaB]] as const) {
    h.slot(S_A, img.data.length);
    h.slot(S_OUT, w * hgt * 4);
    h.slot(S_TMP, w * img.height * 16);
    h.bytes.set(img.data, h.slot(S_A, 0));
    const small = scale < 1
      ? resampleInWasm(h, img.width * 4, { x: 0, y: 0, width: img.width, height: img.height }, w, hgt, S_OUT)
      : h.slot(S_A, 0);
    h.k.luma_plane(small, w * hgt, luma);
  }
  const win = Math.max(1, Math.min(SSIM_WINDOW, w, hgt));
  const ssim = h.k.ssim_mean(lumaA, lumaB, w, hgt, win);
  return Math.min(1, Math.max(0, 1 - ssim));
}

// ---------------------------------------------------------------------------------------------
// Composition

export interface BlitOptions {
  /** Region of the source to copy; default the whole source. */
  source?: Rect;
  /** Target size on the destination; default the source region's size (no scaling). */
  width?: number;
  height?: number;
}

/**
 * Copies `src` (or its `source` region) into `dst` at (dx, dy), scaled to width × height when given
 * (area average when shrinking, bilinear when enlarging), clipped to `dst`. Mutates `dst`.
 * Unscaled copies are row memcpys on the JS side: routing them through WASM memory would only add
 * two copies.
 */
export function blit(
  dst: RgbaImage,
  src: RgbaImage,
  dx: number,
  dy: number,
  options: BlitOptions = {},
): void {
  checkImage(dst, "blit");
  checkImage(src, "blit");
  const r = clipRect(
    options.source ?? { x: 0, y: 0, width: src.width, height: src.height },
    src.width,
    src.height,
  );
  const tw = Math.round(options.width ?? r.width);
  const th = Math.round(options.height ?? r.height);
  dx = Math.round(dx);
  dy = Math.round(dy);
  if (r.width === 0 || r.height === 0 || tw < 1 || th < 1) return;
  // The part of the target rectangle that lands on dst.
  const x0 = Math.max(0, dx);
  const y0 = Math.max(0, dy);
  const x1 = Math.min(dst.width, dx + tw);
  const y1 = Math.min(dst.height, dy + th);
  if (x1 <= x0 || y1 <= y0) return;
  let rows: Uint8Array;
  let rowsStride: number;
  let base: number;
  if (tw === r.width && th === r.height) {
    rows = src.data;
    rowsStride = src.width * 4;
    base = r.y * rowsStride + r.x * 4;
  } else {
    const h = wasm();
    h.slot(S_A, src.data.length);
    h.slot(S_OUT, tw * th * 4);
    h.slot(S_TMP, tw * r.height * 16);
    h.bytes.set(src.data, h.slot(S_A, 0));
    base = resampleInWasm(h, src.width * 4, r, tw, th, S_OUT);
    rows = h.bytes;
    rowsStride = tw * 4;
  }
  const bytes = (x1 - x0) * 4;
  for (let y = y0; y < y1; y++) {
    const from = base + (y - dy) * rowsStride + (x0 - dx) * 4;
    dst.data.set(rows.subarray(from, from + bytes), (y * dst.width + x0) * 4);
  }
}

/** Copies a clipped dst region into a WASM slot (packed), runs `kernel` on it and copies it back. */
function editRegion(dst: RgbaImage, r: Rect, kernel: (h: WasmHeap, ptr: number) => void): void {
  const h = wasm();
  const ptr = h.slot(S_OUT, r.width * r.height * 4);
  const into = h.bytes;
  for (let y = 0; y < r.height; y++) {
    const from = ((r.y + y) * dst.width + r.x) * 4;
    into.set(dst.data.subarray(from, from + r.width * 4), ptr + y * r.width * 4);
  }
  kernel(h, ptr);
  const bytes = h.bytes;
  for (let y = 0; y < r.height; y++) {
    const at = ptr + y * r.width * 4;
    dst.data.set(bytes.subarray(at, at + r.width * 4), ((r.y + y) * dst.width + r.x) * 4);
  }
}

const opacity256 = (opacity: number) => Math.round(Math.max(0, Math.min(1, opacity)) * 256);

/**
 * Blends a solid colour over `rect` of `dst` (clipped) with `opacity` 0–1, e.g. to subdue a reference
 * frame or tint a region. Mutates `dst`.
 */
export function blendColor(
  dst: RgbaImage,
  rect: Rect,
  rgb: readonly [number, number, number],
  opacity: number,
): void {
  checkImage(dst, "blendColor");
  const r = clipRect(rect, dst.width, dst.height);
  if (r.width === 0 || r.height === 0) return;
  const packed = (rgb[0] & 255) | ((rgb[1] & 255) << 8) | ((rgb[2] & 255) << 16);
  editRegion(
    dst,
    r,
    (h, ptr) => h.k.blend_solid(ptr, r.width * 4, r.width, r.height, packed, opacity256(opacity)),
  );
}

/**
 * Blends `overlay` over `dst` at (dx, dy), clipped, each pixel weighted by its alpha × `opacity` (0–1),
 * e.g. a tinted heatmap over a subdued frame. Mutates `dst`.
 */
export function blendImage(
  dst: RgbaImage,
  overlay: RgbaImage,
  dx: number,
  dy: number,
  opacity: number,
): void {
  checkImage(dst, "blendImage");
  checkImage(overlay, "blendImage");
  dx = Math.round(dx);
  dy = Math.round(dy);
  const r = clipRect({ x: dx, y: dy, width: overlay.width, height: overlay.height }, dst.width, dst.height);
  if (r.width === 0 || r.height === 0) return;
  const h = wasm();
  const src = h.slot(S_A, r.width * r.height * 4);
  editRegion(dst, r, (hh, ptr) => {
    const bytes = hh.bytes;
    for (let y = 0; y < r.height; y++) {
      const from = ((r.y - dy + y) * overlay.width + (r.x - dx)) * 4;
      bytes.set(overlay.data.subarray(from, from + r.width * 4), src + y * r.width * 4);
    }
    hh.k.blend_image(ptr, r.width * 4, src, r.width * 4, r.width, r.height, opacity256(opacity));
  });
}

// ---------------------------------------------------------------------------------------------
// Colour maps

/** A 256-entry RGBA palette (1024 bytes). */
export type Palette = Uint8Array;

function paletteFrom(stops: readonly (readonly [number, number, number])[]): Palette {
  const p = new Uint8Array(1024);
  for (let i = 0; i < 256; i++) {
    const pos = (i / 255) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(pos));
    const f = pos - k;
    for (let c = 0; c < 3; c++) p[i * 4 + c] = Math.round(stops[k][c] * (1 - f) + stops[k + 1][c] * f);
    p[i * 4 + 3] = 255;
  }
  return p;
}

/**
 * Ready palettes: `gray` (black → white, intensity), `time` (viridis-like dark violet → yellow, for
 * "when": early is dark, late is bright, and it stays readable in grayscale), `heat` (black → red →
 * yellow → white).
 */
export const PALETTES: { readonly gray: Palette; readonly time: Palette; readonly heat: Palette } = {
  gray: paletteFrom([[0, 0, 0], [255, 255, 255]]),
  time: paletteFrom([[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]]),
  heat: paletteFrom([[0, 0, 0], [200, 30, 0], [255, 200, 0], [255, 255, 255]]),
};

export interface ColorizeOptions {
  /** Value mapped to the first palette entry; default 0. */
  min?: number;
  /** Value mapped to the last palette entry; default 1. */
  max?: number;
  /** RGBA for NaN (no data); default transparent black. */
  empty?: readonly [number, number, number, number];
}

/**
 * Maps a width × height scalar field to RGBA through `palette` (values clamped to [min, max]; NaN →
 * `empty`). Integer fields (e.g. change counts) are converted to f32 first.
 */
export function colorizeField(
  field: Float32Array | Uint32Array | Uint16Array | Uint8Array,
  width: number,
  height: number,
  palette: Palette,
  options: ColorizeOptions = {},
): RgbaImage {
  const n = width * height;
  if (field.length !== n) {
    throw new Error(`colorizeField: field has ${field.length} values, ${width}×${height} needs ${n}`);
  }
  if (palette.length !== 1024) {
    throw new Error(`colorizeField: palette has ${palette.length} bytes, needs 1024`);
  }
  const h = wasm();
  const f = h.slot(S_AUX, n * 4);
  const pal = h.slot(S_STATS, 1024);
  const out = h.slot(S_OUT, n * 4);
  h.f32(f, n).set(field); // writing into WASM memory converts element types at memcpy speed
  h.bytes.set(palette, pal);
  const [r, g, b, a] = options.empty ?? [0, 0, 0, 0];
  const empty = ((r & 255) | ((g & 255) << 8) | ((b & 255) << 16) | ((a & 255) << 24)) >>> 0;
  h.k.colorize(f, n, options.min ?? 0, options.max ?? 1, pal, empty, out);
  return { width, height, data: h.copyBytes(out, n * 4) };
}

// ---------------------------------------------------------------------------------------------
// PNG rows (png.ts builds the container around these)

/** PNG filter choice for encoding: a fixed type for every row, or per-row adaptive (Sub/Up/Paeth). */
export type PngFilter = "none" | "sub" | "up" | "average" | "paeth" | "adaptive";
const FILTER_MODES: Record<PngFilter, number> = { none: 0, sub: 1, up: 2, average: 3, paeth: 4, adaptive: 5 };

/**
 * Filters an RGBA image into PNG scanlines (filter byte + pixels per row), dropping alpha when every
 * pixel is opaque, and hands them to `use` while they are still in WASM memory (no copy out). The
 * view is only valid inside `use`, and `use` must not call other functions of this module.
 */
export function withPngScanlines<T>(
  img: RgbaImage,
  filter: PngFilter,
  use: (scanlines: Uint8Array, channels: 3 | 4) => T,
): T {
  checkImage(img, "PNG encode");
  const h = wasm();
  const n = img.width * img.height;
  const rowBytes = img.width * 4;
  const src = h.slot(S_A, pad16(n) * 4);
  const tmp = h.slot(S_TMP, 5 * (rowBytes + 16));
  const dst = h.slot(S_OUT, img.height * (rowBytes + 1));
  h.bytes.set(img.data, src);
  const channels = h.k.rgba_opaque(src, n) === 1 ? 3 : 4;
  const outRow = img.width * channels + 1;
  for (let y0 = 0; y0 < img.height; y0 += BAND_ROWS) {
    const y1 = Math.min(img.height, y0 + BAND_ROWS);
    h.k.png_filter(src, img.width, y0, y1, channels, FILTER_MODES[filter], dst + y0 * outRow, tmp);
  }
  return use(h.bytes.subarray(dst, dst + img.height * outRow), channels);
}

/**
 * Reverses PNG filtering in place of a copy: `filtered` holds `height` rows of (filter byte +
 * rowBytes); `bpp` is bytes per pixel (1–8). Returns height × rowBytes bytes.
 */
export function unfilterScanlines(
  filtered: Uint8Array,
  height: number,
  rowBytes: number,
  bpp: number,
): Uint8Array {
  const h = wasm();
  const dst = unfilterInWasm(h, filtered, height, rowBytes, bpp);
  return h.copyBytes(dst, height * rowBytes);
}

function unfilterInWasm(
  h: WasmHeap,
  filtered: Uint8Array,
  height: number,
  rowBytes: number,
  bpp: number,
): number {
  if (!Number.isInteger(bpp) || bpp < 1 || bpp > 8) throw new Error(`PNG: ${bpp} bytes per pixel is not 1–8`);
  const need = height * (rowBytes + 1);
  if (filtered.length < need) {
    throw new Error(`PNG image data is truncated: ${filtered.length} bytes, ${height} rows need ${need}`);
  }
  // 16 bytes of slack: the RGB fast path reads and writes one byte past a row.
  const src = h.slot(S_B, need + 16);
  const dst = h.slot(S_A, height * rowBytes + 16);
  h.bytes.set(filtered.subarray(0, need), src);
  for (let y0 = 0; y0 < height; y0 += BAND_ROWS) {
    const rows = Math.min(height - y0, BAND_ROWS);
    const out = dst + y0 * rowBytes;
    const status = h.k.png_unfilter(
      src + y0 * (rowBytes + 1),
      out,
      rows,
      rowBytes,
      bpp,
      y0 ? out - rowBytes : 0,
    );
    if (status < 0) {
      const row = y0 - status - 1;
      throw new Error(`PNG row ${row} has unknown filter type ${filtered[row * (rowBytes + 1)]}`);
    }
  }
  return dst;
}

/** Colour types of 8-bit PNGs: 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA. */
export type PngColorType = 0 | 2 | 3 | 4 | 6;
const CHANNELS: Record<PngColorType, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export interface PngPixelsInput {
  width: number;
  height: number;
  colorType: PngColorType;
  /** Inflated IDAT data: filtered scanlines. */
  filtered: Uint8Array;
  /** For colour type 3: RGBA entries (4 bytes each, tRNS applied), at most 256. */
  palette?: Uint8Array;
  /** tRNS key for gray (value) or RGB (r | g << 8 | b << 16); -1 when none. */
  transparentKey?: number;
}

/** Unfilters 8-bit scanlines and expands them to RGBA. Throws on bad filter types or palette indexes. */
export function pngScanlinesToRgba(input: PngPixelsInput): RgbaImage {
  const { width, height, colorType } = input;
  const channels = CHANNELS[colorType];
  const h = wasm();
  const n = width * height;
  // Reserve everything before taking a view: allocation may grow memory and detach views.
  const pal = h.slot(S_STATS, 1024);
  const out = h.slot(S_OUT, n * 4);
  const rows = unfilterInWasm(h, input.filtered, height, width * channels, channels);
  const bytes = h.bytes;
  bytes.fill(0, pal, pal + 1024);
  const entries = input.palette ? input.palette.length / 4 : 0;
  if (input.palette) bytes.set(input.palette.subarray(0, 1024), pal);
  const maxIndex = h.k.png_expand(rows, out, n, colorType, pal, input.transparentKey ?? -1);
  if (colorType === 3 && maxIndex >= entries) {
    throw new Error(`PNG pixel uses palette index ${maxIndex} but the palette has ${entries} entries`);
  }
  return { width, height, data: h.copyBytes(out, n * 4) };
}

/** Bytes of WASM linear memory currently reserved (for leak checks and benchmarks). */
export function wasmMemoryBytes(): number {
  return wasm().memoryBytes;
}

/** Frees the reusable scratch buffers (tests; long-lived processes never need to). */
export function releaseScratch(): void {
  heap?.releaseSlots();
}
