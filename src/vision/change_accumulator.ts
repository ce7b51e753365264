/**
 * Per-pixel change accumulated over a frame sequence (count, magnitude, timing), kept in WASM memory
 * between steps; the difference itself is pixels.ts's.
 */
import type { RgbaImage } from "./image.ts";
import { type DiffResult, runDiff } from "./pixels.ts";
import {
  checkImage,
  freeBlock,
  pad16,
  putImage,
  S_A,
  S_AUX,
  S_B,
  S_OUT,
  wasm,
  type WasmHeap,
} from "./wasm_heap.ts";

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
  for (const ptr of ptrs) freeBlock(ptr);
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
