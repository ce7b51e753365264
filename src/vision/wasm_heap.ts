/**
 * The WASM pixel kernels' module and memory (AssemblyScript source in wasm/assembly/kernels.ts,
 * bytes in the generated wasm/kernels_wasm.ts). The module is instantiated once per isolate, on first
 * use; each worker gets its own. Inputs are copied into linear memory, results copied out, so callers
 * only ever see plain RgbaImage / typed arrays that stay valid. The typed entry points are beside this
 * file: pixels.ts (difference, perceptual distance), change_accumulator.ts, resample.ts, compose.ts,
 * colormap.ts and png_rows.ts.
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

export class WasmHeap {
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

export function wasm(): WasmHeap {
  if (!heap) {
    heap = new WasmHeap(Uint8Array.fromBase64(KERNELS_WASM_BASE64));
  }
  return heap;
}

// Slot numbers; each names one role so concurrent roles within a call never share memory.
export const S_A = 0;
export const S_B = 1;
export const S_OUT = 2;
export const S_TMP = 3;
export const S_XS = 4;
export const S_YS = 5;
export const S_STATS = 6;
export const S_AUX = 7;
export const S_AUX2 = 8;

/** Pixel counts are padded to 16 so the SIMD loops need no tail code. */
export const pad16 = (n: number) => (n + 15) & ~15;

export function checkImage(img: RgbaImage, what: string): void {
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
export function putImage(h: WasmHeap, slot: number, img: RgbaImage): number {
  const n = img.width * img.height;
  const ptr = h.slot(slot, pad16(n) * 4);
  const bytes = h.bytes;
  bytes.set(img.data, ptr);
  bytes.fill(0, ptr + n * 4, ptr + pad16(n) * 4);
  return ptr;
}

/**
 * Rows per kernel call for whole-image kernels. V8 first runs WASM code in its baseline tier and
 * swaps in optimised code only between calls, so one call over a whole 1080p image would run
 * unoptimised throughout (2–3× slower in the SIMD loops); with bands, later bands pick up the
 * optimised code. A multiple of 16, so every band but the last spans a multiple of 16 pixels.
 */
export const BAND_ROWS = 64;

/** Clips `r` (snapped to whole pixels) to a width × height image; empty when outside. */
export function clipRect(r: Rect, width: number, height: number): Rect {
  const x0 = Math.max(0, Math.floor(r.x));
  const y0 = Math.max(0, Math.floor(r.y));
  const x1 = Math.min(width, Math.floor(r.x + r.width));
  const y1 = Math.min(height, Math.floor(r.y + r.height));
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

/** Frees a block from WasmHeap.alloc; a no-op when the module was never instantiated. */
export function freeBlock(ptr: number): void {
  heap?.k.free(ptr);
}

/** Bytes of WASM linear memory currently reserved (for leak checks and benchmarks). */
export function wasmMemoryBytes(): number {
  return wasm().memoryBytes;
}

/** Frees the reusable scratch buffers (tests; long-lived processes never need to). */
export function releaseScratch(): void {
  heap?.releaseSlots();
}
