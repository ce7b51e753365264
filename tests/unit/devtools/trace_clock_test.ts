import { assert, assertEquals } from "../../assert.ts";
import {
  bestClock,
  findSyncStamp,
  firstStampTs,
  syncStampToken,
  traceClock,
} from "../../../src/devtools/trace_clock.ts";
import { loadTraceFixture } from "./trace_fixture.ts";

Deno.test("traceClock: the stamp sits at the midpoint of its round trip; later trace times follow it", () => {
  // Stamped at trace 20_000_000 µs, between session 500 ms and 510 ms.
  const clock = traceClock(20_000_000, 500, 510);
  assertEquals(clock.toSessionMs(20_000_000), 505);
  assertEquals(clock.toSessionMs(20_250_000), 755);
  assertEquals(clock.toSessionMs(19_999_000), 504);
  assertEquals(clock.toSessionNs(20_250_500), 755_500_000);
  assertEquals(clock.uncertaintyMs, 5);
  // Bounds given the wrong way round mean the same span.
  assertEquals(traceClock(20_000_000, 510, 500).toSessionMs(20_000_000), 505);
});

Deno.test("traceClock: real trace magnitudes (TimeTicks of a long-running box) keep µs precision", () => {
  const clock = traceClock(987_654_321_123, 12_345.5, 12_345.7);
  assertEquals(clock.toSessionMs(987_654_321_123 + 1_234), 12_346.834);
  assertEquals(clock.toSessionNs(987_654_321_123 + 1_234), 12_346_834_000);
});

Deno.test("findSyncStamp / bestClock: the token's TimeStamp event, the tightest round trip wins", () => {
  const token = syncStampToken("s1", 1);
  const other = syncStampToken("s1", 2);
  const events = [
    { name: "TimeStamp", ts: 100, args: { data: { message: "someone else" } } },
    { name: "Paint", ts: 150 },
    { name: "TimeStamp", ts: 200, args: { data: { message: token } } },
    { name: "TimeStamp", ts: 1_200, args: { data: { name: other } } },
  ];
  assertEquals(findSyncStamp(events, token), 200);
  assertEquals(findSyncStamp(events, other), 1_200);
  assertEquals(findSyncStamp(events, "missing"), undefined);
  const clock = bestClock(events, [
    { token, beforeMs: 10, afterMs: 90 }, // 80 ms round trip
    { token: other, beforeMs: 95, afterMs: 97 }, // 2 ms: this one
    { token: "never-recorded", beforeMs: 98, afterMs: 98 },
  ]);
  assert(clock, "a clock from the recorded stamps");
  assertEquals(clock.uncertaintyMs, 1);
  assertEquals(clock.toSessionMs(1_200), 96);
  assertEquals(bestClock(events, [{ token: "never-recorded", beforeMs: 1, afterMs: 2 }]), undefined);
  const stamps = [{ token: other, beforeMs: 0, afterMs: 0 }, { token, beforeMs: 0, afterMs: 0 }];
  assertEquals(firstStampTs(events, stamps), 200);
  assertEquals(firstStampTs(events, [{ token: "never-recorded", beforeMs: 0, afterMs: 0 }]), undefined);
});

Deno.test("findSyncStamp: Chrome records the stamp of a real trace", async () => {
  const events = await loadTraceFixture("shift_reload");
  const ts = findSyncStamp(events, "krometrail-sync-1");
  assert(ts !== undefined && ts > 0, "the recorded stamp is found");
});
