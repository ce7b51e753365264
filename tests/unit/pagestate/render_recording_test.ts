import { assert, assertEquals } from "../../assert.ts";
import {
  MAX_NORMAL_SPEED,
  MAX_RENDER_WALL_MS,
  REAL_TIME_UP_TO_MS,
  recordingMsOf,
  renderSpeed,
} from "../../../src/pagestate/render_recording.ts";

Deno.test("render speed: real time up to 60 s, then 60 s of play up to 4×, then at most 4 minutes", () => {
  assertEquals(renderSpeed(0), 1);
  assertEquals(renderSpeed(2_500), 1);
  assertEquals(renderSpeed(REAL_TIME_UP_TO_MS), 1);
  assertEquals(renderSpeed(120_000), 2);
  assertEquals(renderSpeed(240_000), MAX_NORMAL_SPEED);
  assertEquals(renderSpeed(16 * 60_000), MAX_NORMAL_SPEED);
  assertEquals(renderSpeed(20 * 60_000), 5);
  assertEquals(renderSpeed(64 * 60_000), 16);
  // The render's play time never passes the bound, and speed never falls as recordings grow.
  let last = 0;
  for (let d = 1_000; d <= 1e9; d *= 1.7) {
    const s = renderSpeed(d);
    assert(s >= last, `speed falls at ${d} ms`);
    assert(d / s <= Math.max(REAL_TIME_UP_TO_MS, MAX_RENDER_WALL_MS) + 1, `${d} ms plays ${d / s} ms`);
    last = s;
  }
});

Deno.test("render timing: a paint maps onto the recording by speed, clamped to its span", () => {
  const play = 1_700_000_000_000;
  assertEquals(recordingMsOf(play + 100, play, 1, 2_500), 100);
  assertEquals(recordingMsOf(play + 100, play, 4, 2_500), 400);
  assertEquals(recordingMsOf(play - 30, play, 1, 2_500), 0, "painted before play: the first instant");
  assertEquals(recordingMsOf(play + 9_000, play, 1, 2_500), 2_500, "after the end: the last instant");
});
