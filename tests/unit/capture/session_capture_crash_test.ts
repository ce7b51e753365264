/**
 * SessionCapture across a renderer crash, alone or with a connection outage, against a fake session and
 * recorder: the crashed gap, the screencast restart, and the per-page ordinals.
 */
import { assertEquals } from "../../assert.ts";
import { FakePage, settle, setup } from "./capture_fakes.ts";

Deno.test("capture crash: a crashed gap on that page only, ended by its first frame after recovery; the screencast restarts and ordinals continue", async () => {
  const p1 = new FakePage("p1", "T1");
  const p2 = new FakePage("p2", "T2");
  const { session, recorder, capture } = setup(p1, p2);
  session.frame(p1);
  session.frame(p2);
  session.clockMs = 200;
  session.crash(p1);
  const gaps = recorder.of("gap");
  assertEquals(gaps.map((g) => [g.row.page_id, g.row.kind, g.row.start_ns]), [["p1", "crashed", 2e8]]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), ["crashed", undefined]);
  const crash = recorder.events("crash");
  assertEquals(crash.map((e) => [e.page_id, e.level, e.text, e.at_ns]), [[
    "p1",
    "error",
    "renderer crashed (crashed)",
    2e8,
  ]]);
  assertEquals(JSON.parse(String(crash[0].data)), { status: "crashed", error_code: 7 });
  session.clockMs = 250;
  session.frame(p2);
  session.frame(p1); // in flight before the reload: does not end the gap
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "crashed").length, 0);
  const starts = p1.sent.filter((m) => m === "Page.startScreencast").length;
  session.clockMs = 400;
  session.recover(p1);
  await settle();
  assertEquals(p1.sent.filter((m) => m === "Page.startScreencast").length, starts + 1);
  session.clockMs = 450;
  session.frame(p1);
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "crashed").map((g) => g.end_ns), [4.5e8]);
  assertEquals(recorder.of("frame").filter((f) => f.page_id === "p1").map((f) => f.ordinal), [1, 2, 3]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), [undefined, undefined]);
  await capture.stop();
});

Deno.test("capture crash: a crashed page closed before it recovered ends its gap at the close", () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 50;
  session.crash(p1);
  session.clockMs = 80;
  session.remove(p1);
  assertEquals(recorder.of("gap_end").map((g) => [g.kind, g.end_ns]), [["crashed", 8e7]]);
});

Deno.test("capture crash: Chrome keeping its screencast across the crash ('already active') is no stream error; the gap still ends at the first frame", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.crash(p1);
  p1.refuseStart = "Screencast is already active";
  session.clockMs = 300;
  session.recover(p1);
  await settle();
  await settle();
  assertEquals(recorder.of("gap").map((g) => g.row.kind), ["crashed"]);
  session.clockMs = 350;
  session.frame(p1);
  assertEquals(recorder.of("gap_end").map((g) => [g.kind, g.end_ns]), [["crashed", 3.5e8]]);
});

Deno.test("capture crash: a screencast that cannot start again ends the crash gap at the recovery and opens a stream_error gap", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.crash(p1);
  p1.refuseStart = "Internal error";
  session.clockMs = 300;
  session.recover(p1);
  for (let i = 0; i < 10; i++) await settle();
  assertEquals(recorder.of("gap_end").map((g) => [g.kind, g.end_ns]), [["crashed", 3e8]]);
  const kinds = recorder.of("gap").map((g) => [g.row.kind, g.row.start_ns]);
  assertEquals(kinds, [["crashed", 1e8], ["stream_error", 3e8]]);
});

Deno.test("capture crash: a page re-adopted still crashed gets its crash gap again from the resume; no screencast until it recovers", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  session.frame(p1);
  session.clockMs = 200;
  session.crash(p1);
  session.clockMs = 500;
  session.lose();
  // The same target re-adopted: the registry carried its crash (Chrome's renderer is still gone).
  const again = new FakePage("p1", "T1");
  again.crash = { at_ms: 200, status: "crashed", error_code: 7 };
  session.clockMs = 900;
  session.add(again, "readopted");
  await settle();
  assertEquals(again.sent.filter((m) => m === "Page.startScreencast").length, 0, "nothing renders yet");
  session.clockMs = 950;
  session.reconnected({ lost_at_ms: 500, attempts: 1, readopted: ["p1"], closed: [], added: [] });
  const gaps = recorder.of("gap").map((g) => [g.row.kind, g.row.start_ns]);
  assertEquals(gaps, [["crashed", 2e8], ["disconnected", 5e8], ["crashed", 9e8]]);
  const ends = recorder.of("gap_end").map((g) => [g.kind, g.end_ns]);
  assertEquals(ends, [["crashed", 5e8], ["disconnected", 9e8]]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), ["crashed"]);
  // A reload: the screencast starts, and the first frame ends the reopened gap.
  again.crash = undefined;
  session.clockMs = 1_200;
  session.recover(again);
  await settle();
  assertEquals(again.sent.filter((m) => m === "Page.startScreencast").length, 1);
  session.clockMs = 1_300;
  session.frame(again);
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "crashed").map((g) => g.end_ns), [5e8, 1.3e9]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), [undefined]);
  await capture.stop();
});

Deno.test("capture crash: a page re-adopted crashed that recovered before the resume completes starts its screencast then", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  session.crash(p1);
  session.clockMs = 500;
  session.lose();
  const again = new FakePage("p1", "T1");
  again.crash = { at_ms: 0, status: "crashed", error_code: 7 };
  session.add(again, "readopted");
  again.crash = undefined; // its document committed before the reconnection completed
  session.clockMs = 900;
  session.reconnected({ lost_at_ms: 500, attempts: 1, readopted: ["p1"], closed: [], added: [] });
  await settle();
  assertEquals(again.sent.filter((m) => m === "Page.startScreencast").length, 1);
  assertEquals(recorder.of("gap").map((g) => g.row.kind), ["crashed", "disconnected"]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), [undefined]);
  await capture.stop();
});
