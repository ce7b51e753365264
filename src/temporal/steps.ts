/**
 * Long temporal work (decoding and diffing a range's frames) runs as a generator that yields after
 * each frame. Run in a tool, it gives the event loop back every few milliseconds, so the screencast
 * acknowledgements on the same thread are not held behind it (spec: image analysis never blocks
 * acknowledgement; an ack past its 1 s deadline ends the stream). Tests and benches drain it at once.
 */
import { throwIfCancelled } from "../browser/call_signal.ts";

export type Steps<T> = Generator<void, T, void>;

export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Longest stretch of synchronous work between two turns of the event loop. */
const SLICE_MS = 12;

/** One turn of the event loop: a macrotask, so socket messages (a cancellation among them) get in. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Drains `steps`, yielding to the event loop every `sliceMs`. Each yield is a safe point: a cancelled
 * call (call_signal.ts) stops here with its reason; the generators hold nothing that needs closing.
 */
export async function runStepsYielding<T>(steps: Steps<T>, sliceMs = SLICE_MS): Promise<T> {
  let sliceStart = performance.now();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      throwIfCancelled();
      sliceStart = performance.now();
    }
  }
}
