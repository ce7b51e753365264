import type { RecordSummary } from "../../../src/cli/events_md.ts";

/** A summary with hostile text in every field a page or a person controls. */
export function hostileSummary(): RecordSummary {
  return {
    url: 'http://127.0.0.1:9/a?q=<script>alert("x")</script>&b=1',
    session_id: "s-1",
    started_at: "2026-12-02T10:00:00.000Z",
    range: { start_ms: 100, end_ms: 5100, page_id: "p1" },
    frames: 42,
    bytes: 123_456,
    steps: [
      {
        index: 1,
        description: "open http://127.0.0.1:9/",
        started_ms: 100,
        duration_ms: 812.4,
        status: "ok",
      },
      {
        index: 2,
        description: 'click "<img src=https://evil.test/x onerror=alert(1)>"',
        started_ms: 1000,
        duration_ms: 300,
        status: "failed",
        message: "locator_no_match: No element | matches",
      },
      { index: 3, description: "wait 500 ms", started_ms: 1300, duration_ms: 0, status: "skipped" },
    ],
    interactions: [
      {
        interaction_id: "s1-i2",
        operation: "click",
        page_id: "p1",
        at_ms: 1002,
        outcome: "failed",
        target: 'click "Show | details"',
        error_code: "locator_no_match",
      },
    ],
    events: [
      { at_ms: 1002, kind: "console", level: "error", text: "boom <b>bold</b>\nsecond line" },
      { at_ms: 500, kind: "request", level: "info", text: "GET http://127.0.0.1:9/~abcd1234 200" },
    ],
    events_total: 7,
    notes: ["video.mp4 skipped: ffmpeg not qualified (not found)"],
  };
}
