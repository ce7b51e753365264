/**
 * The wait for a live window's tail ends on the condition, not a fixed sleep: a frame painted at or
 * after the window's end, or a stream that can send nothing more; a page that sends no frame is waited
 * for TAIL_MARGIN_MS past the end and never longer. sleepInCall's wake ends a sleep early, and a
 * cancellation still ends it with the call's reason.
 */
import { assert, assertEquals } from "../../assert.ts";
import { TAIL_MARGIN_MS, tailStep } from "../../../src/temporal/tail_wait.ts";
import { runInCall, sleepInCall } from "../../../src/browser/call_signal.ts";

const END = 10_000;

Deno.test("tail wait: while the window is open it sleeps to its end, whatever frames say", () => {
  assertEquals(tailStep({ nowMs: END - 400, endMs: END, streaming: true }), {
    done: false,
    sleepMs: 400,
    onFrame: false,
  });
  // A stamp at or past the end before the end (clock skew) does not end the wait early.
  assertEquals(tailStep({ nowMs: END - 5, endMs: END, latestStampMs: END + 1, streaming: true }).done, false);
});

Deno.test("tail wait: a frame painted at or after the end ends it", () => {
  for (const stamp of [END, END + 16]) {
    assertEquals(tailStep({ nowMs: END + 20, endMs: END, latestStampMs: stamp, streaming: true }), {
      done: true,
      why: "painted_after_end",
    });
  }
});

Deno.test("tail wait: frames painted before the end keep it waiting, for the margin at most", () => {
  const step = tailStep({ nowMs: END + 30, endMs: END, latestStampMs: END - 1, streaming: true });
  assertEquals(step, { done: false, sleepMs: TAIL_MARGIN_MS - 30, onFrame: true });
  assertEquals(tailStep({ nowMs: END + TAIL_MARGIN_MS, endMs: END, streaming: true }), {
    done: true,
    why: "margin_elapsed",
  });
  assertEquals(
    tailStep({ nowMs: END + TAIL_MARGIN_MS + 1, endMs: END, latestStampMs: END - 500, streaming: true }).done,
    true,
  );
});

Deno.test("tail wait: a stream that can send nothing more is not waited for", () => {
  assertEquals(tailStep({ nowMs: END - 400, endMs: END, streaming: false }), {
    done: true,
    why: "not_streaming",
  });
});

Deno.test("sleepInCall: a wake ends the sleep early, resolved", async () => {
  let wake = () => {};
  const woken = new Promise<void>((r) => (wake = r));
  const t0 = performance.now();
  const slept = sleepInCall(5_000, woken);
  setTimeout(wake, 10);
  await slept;
  assert(performance.now() - t0 < 1_000, "the wake ended the sleep");
});

Deno.test("sleepInCall: a cancellation ends a sleep with a wake pending, with the call's reason", async () => {
  const controller = new AbortController();
  const never = new Promise<void>(() => {});
  const reason = new Error("cancelled");
  const slept = runInCall(controller.signal, () => sleepInCall(5_000, never));
  setTimeout(() => controller.abort(reason), 10);
  let caught: unknown;
  await slept.catch((err) => (caught = err));
  assertEquals(caught, reason);
  // Already cancelled: it never starts.
  let again: unknown;
  await runInCall(controller.signal, () => sleepInCall(5_000)).catch((err) => (again = err));
  assertEquals(again, reason);
});
