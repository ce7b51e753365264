/**
 * How an attached session retries its endpoint after the connection drops (spec: "a disconnected
 * browser enters reconnecting state"). Pure: the session owns the clock and the sockets.
 */

/** How long an attached session keeps retrying before it ends (KROMETRAIL_RECONNECT_WINDOW_MS). */
export const DEFAULT_RECONNECT_WINDOW_MS = 30_000;
export const MIN_RECONNECT_WINDOW_MS = 1_000;
export const MAX_RECONNECT_WINDOW_MS = 600_000;
/** The first retry comes quickly (a dev server's Chrome restarts in about a second), then backs off. */
export const FIRST_RETRY_DELAY_MS = 250;
export const MAX_RETRY_DELAY_MS = 2_000;

/** The wait before attempt `attempt` (1-based): 250, 500, 1000, 2000, 2000, … ms. */
export function retryDelayMs(attempt: number): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 10));
  return Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 2 ** exponent);
}

/**
 * The wait before the next attempt, or undefined when the window has no room left for one: an attempt
 * is never started after the window closes, and the last wait is cut to end with the window.
 */
export function nextRetry(attempt: number, elapsedMs: number, windowMs: number): number | undefined {
  const left = windowMs - elapsedMs;
  if (left <= 0) return undefined;
  return Math.min(retryDelayMs(attempt), left);
}
