import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The cancellation signal of the tool call whose work is running, carried by async context so
 * every CDP send a handler makes (however deep, through whichever module) can be cancelled when
 * the call's deadline passes, the client cancels it or the server shuts down, without threading a
 * parameter through every function. A lower layer
 * cannot import mcp/, so the scope lives here and mcp/deadlines.ts enters it.
 */
const scope = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` as part of a call cancelled by `signal` (nested calls, e.g. batch steps, chain). */
export function runInCall<T>(signal: AbortSignal, work: () => T): T {
  const outer = scope.getStore();
  return scope.run(outer ? AbortSignal.any([outer, signal]) : signal, work);
}

/**
 * Runs `work` outside any call: CDP event listeners (their context is whichever call opened the
 * socket) and the deadline's own probe must not be cancelled with a call that timed out.
 */
export function outsideCall<T>(work: () => T): T {
  return scope.exit(work);
}

/** The signal of the call this code runs for, if any. */
export function currentCallSignal(): AbortSignal | undefined {
  return scope.getStore();
}

/**
 * A safe point in long work (decoding frames, writing files): throws the call's abort reason once
 * its call was cancelled (deadline, client cancellation, shutdown), so the work stops and frees
 * what it holds instead of running on with its result already dropped.
 */
export function throwIfCancelled(): void {
  scope.getStore()?.throwIfAborted();
}

/**
 * Sleeps `ms`; inside a call, a cancellation ends the sleep at once with the call's abort reason.
 * `wake` (e.g. the next frame of a stream) ends it early, resolved, so a wait for a condition sleeps
 * only until something could have changed it.
 */
export function sleepInCall(ms: number, wake?: Promise<unknown>): Promise<void> {
  const signal = scope.getStore();
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (settle: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      settle();
    };
    const onAbort = () => finish(() => reject(signal?.reason));
    const timer = setTimeout(() => finish(resolve), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    wake?.then(() => finish(resolve), () => finish(resolve));
  });
}
