import { assert, assertEquals } from "../../assert.ts";
import {
  DEFAULT_RECONNECT_WINDOW_MS,
  FIRST_RETRY_DELAY_MS,
  MAX_RECONNECT_WINDOW_MS,
  MAX_RETRY_DELAY_MS,
  MIN_RECONNECT_WINDOW_MS,
  nextRetry,
  retryDelayMs,
} from "../../../src/browser/reconnect_policy.ts";

/**
 * Runs the retry schedule the session's loop follows (wait, then one attempt of `attemptMs`), on a
 * pretend clock, and returns when each attempt started.
 */
function schedule(windowMs: number, attemptMs: number): number[] {
  const starts: number[] = [];
  let now = 0;
  for (let attempt = 1;; attempt++) {
    const delay = nextRetry(attempt, now, windowMs);
    if (delay === undefined) break;
    now += delay;
    starts.push(now);
    now += attemptMs;
  }
  return starts;
}

Deno.test("retry delays back off from 250 ms, doubling, to a 2 s ceiling", () => {
  assertEquals([1, 2, 3, 4, 5, 6].map(retryDelayMs), [250, 500, 1000, 2000, 2000, 2000]);
  assertEquals(retryDelayMs(1), FIRST_RETRY_DELAY_MS);
  // A long outage (hundreds of tries in a 10-minute window) never overflows past the ceiling.
  assertEquals(retryDelayMs(1_000), MAX_RETRY_DELAY_MS);
  assertEquals(retryDelayMs(Number.MAX_SAFE_INTEGER), MAX_RETRY_DELAY_MS);
  // Out-of-range attempt numbers fall back to the first delay rather than to 0 or a fraction.
  assertEquals([0, -3].map(retryDelayMs), [FIRST_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS]);
});

Deno.test("the next retry waits its backoff, is cut to end with the window, and none starts after it", () => {
  assertEquals(nextRetry(1, 0, 15_000), 250);
  assertEquals(nextRetry(4, 3_000, 15_000), 2_000);
  // 600 ms left: the wait ends with the window, so one last attempt is made at its very end.
  assertEquals(nextRetry(9, 14_400, 15_000), 600);
  assertEquals(nextRetry(9, 15_000, 15_000), undefined);
  assertEquals(nextRetry(9, 15_001, 15_000), undefined);
  assertEquals(nextRetry(1, 0, 0), undefined);
});

Deno.test("over a whole window, attempts come early and then every 2 s, the last at the window's end", () => {
  const instant = schedule(15_000, 0);
  assertEquals(instant.slice(0, 5), [250, 750, 1_750, 3_750, 5_750]);
  assertEquals(instant[instant.length - 1], 15_000, "the last wait is cut to end with the window");
  assertEquals(instant.length, 10);
  for (let i = 1; i < instant.length; i++) {
    const gap = instant[i] - instant[i - 1];
    assert(gap > 0 && gap <= MAX_RETRY_DELAY_MS, `attempts ${i}→${i + 1} are ${gap} ms apart`);
  }
  // Slow attempts (a refused or hung discovery) leave fewer tries, and none starts after the window.
  const slow = schedule(15_000, 1_500);
  assert(slow.length < instant.length, `${slow.length} slow attempts`);
  assert(slow.every((t) => t <= 15_000), `every attempt starts within the window: ${slow}`);
  // The default window gives a restarted dev server's browser a dozen or more tries.
  assert(schedule(DEFAULT_RECONNECT_WINDOW_MS, 0).length >= 12);
});

Deno.test("window bounds: the default lies inside the accepted range", () => {
  assert(MIN_RECONNECT_WINDOW_MS <= DEFAULT_RECONNECT_WINDOW_MS);
  assert(DEFAULT_RECONNECT_WINDOW_MS <= MAX_RECONNECT_WINDOW_MS);
  // The shortest window still holds the first retries (250 + 500 ms).
  assert(schedule(MIN_RECONNECT_WINDOW_MS, 0).length >= 2);
});
