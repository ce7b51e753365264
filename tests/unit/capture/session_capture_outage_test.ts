/**
 * SessionCapture across a connection outage, against a fake session and recorder: which rows it sends,
 * in which order, and how the per-page ordinals and counters continue.
 */
import { assert, assertEquals } from "../../assert.ts";
import { FakePage, settle, setup } from "./capture_fakes.ts";

Deno.test("capture outage: one disconnected gap per page from the loss to its re-adoption; ordinals and counters continue, no second target row", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  for (let t = 1; t <= 3; t++) {
    session.clockMs = t * 100;
    session.frame(p1);
  }
  session.clockMs = 1_000;
  session.lose();
  // A frame delivered for the orphaned object (it cannot happen on a dead socket) feeds nothing.
  session.frame(p1);
  const lost = recorder.of("gap");
  assertEquals(lost.length, 1);
  assertEquals(lost[0].row.kind, "disconnected");
  assertEquals(lost[0].row.start_ns, 1e9);
  assertEquals(lost[0].row.ordinal, 3);
  assert(String(lost[0].row.cause).includes("connection dropped"), String(lost[0].row.cause));
  assertEquals(capture.status().streams[0].interrupted, "disconnected");
  assertEquals(recorder.events("connection").map((e) => [e.level, e.at_ns, e.page_id]), [[
    "warning",
    1e9,
    null,
  ]]);

  session.clockMs = 1_500;
  const back = new FakePage("p1", "T1");
  session.add(back, "readopted");
  await settle();
  assert(back.sent.includes("Page.startScreencast"), back.sent.join());
  assertEquals(recorder.of("target").length, 1, "the page keeps its one target row");
  // The gap waits for the reconnection to complete.
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "disconnected").length, 0);
  session.clockMs = 1_600;
  session.reconnected({ lost_at_ms: 1_000, attempts: 2, readopted: ["p1"], closed: [], added: [] });
  const ends = recorder.of("gap_end").filter((g) => g.kind === "disconnected");
  assertEquals(ends.map((g) => [g.page_id, g.end_ns]), [["p1", 1.5e9]]);

  session.clockMs = 1_700;
  session.frame(back);
  const frames = recorder.of("frame");
  assertEquals(frames.map((f) => f.ordinal), [1, 2, 3, 4]);
  const st = capture.status();
  assertEquals(st.frames_received, 4);
  assertEquals(st.streams.length, 1);
  assertEquals(st.streams[0].interrupted, undefined);
  const reattached = recorder.events("target").find((e) => e.text === "page reattached");
  assert(reattached, JSON.stringify(recorder.events("target")));
  assertEquals(JSON.parse(String(reattached.data)).same_target, true);
  const resumed = recorder.events("connection").find((e) => e.level === "info");
  assertEquals(resumed?.text, "reconnected after 600 ms (2 attempts)");
  assertEquals(JSON.parse(String(resumed?.data)), {
    outage_ms: 600,
    attempts: 2,
    readopted: ["p1"],
    closed: [],
    added: [],
  });
  await capture.stop();
});

Deno.test("capture outage: a re-adoption in an attempt that failed moves the gap's end to the final one; ordinals go on from the latest stream", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.lose();
  session.clockMs = 200;
  const first = new FakePage("p1", "T1");
  session.add(first, "readopted");
  session.frame(first);
  first.markClosed(); // the attempt failed after re-adopting: the session closes the page again
  session.clockMs = 900;
  const second = new FakePage("p1", "T9");
  session.add(second, "readopted");
  session.frame(second);
  session.reconnected({ lost_at_ms: 100, attempts: 3, readopted: ["p1"], closed: [], added: [] });
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "disconnected").map((g) => g.end_ns), [9e8]);
  assertEquals(recorder.of("frame").map((f) => f.ordinal), [1, 2, 3]);
  const reattached = recorder.events("target").filter((e) => e.text === "page reattached");
  assertEquals(reattached.map((e) => JSON.parse(String(e.data)).same_target), [true, false]);
  await settle();
});

Deno.test("capture outage: a page that did not come back ends its gap when dropped; an added page gets its own target row", () => {
  const p1 = new FakePage("p1", "T1");
  const p2 = new FakePage("p2", "T2");
  const { session, recorder } = setup(p1, p2);
  session.clockMs = 100;
  session.lose();
  assertEquals(recorder.of("gap").map((g) => g.row.page_id), ["p1", "p2"]);
  session.clockMs = 300;
  session.add(new FakePage("p1", "T1"), "readopted");
  session.remove(p2);
  session.add(new FakePage("p3", "T3"));
  session.clockMs = 400;
  session.reconnected({ lost_at_ms: 100, attempts: 1, readopted: ["p1"], closed: ["p2"], added: ["p3"] });
  const ends = recorder.of("gap_end").filter((g) => g.kind === "disconnected");
  assertEquals(ends.map((g) => [g.page_id, g.end_ns]), [["p2", 3e8], ["p1", 3e8]]);
  assertEquals(recorder.of("target_closed").map((t) => t.page_id), ["p2"]);
  assertEquals(recorder.of("target").map((t) => t.row.page_id), ["p1", "p2", "p3"]);
  assertEquals(recorder.events("target").filter((e) => e.text === "page closed").map((e) => e.page_id), [
    "p2",
  ]);
});

Deno.test("capture outage: when the window runs out, the reconnect-failed event and every open gap's end precede the flush and session_end", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.lose();
  session.clockMs = 5_100;
  if (session.connection.state === "reconnecting") {
    session.connection.attempts = 9;
    session.connection.last_error = "connect ECONNREFUSED 127.0.0.1:9222";
  }
  session.end("reconnect_window_exhausted");
  await settle();
  await capture.stop();
  const order = recorder.log.map((m) => m.type);
  const gapEnd = recorder.log.findIndex((m) => m.type === "gap_end" && m.kind === "disconnected");
  const failed = recorder.log.findIndex((m) => m.type === "event" && m.row.level === "error");
  const flush = order.indexOf("flush");
  const end = order.indexOf("session_end");
  assert(failed >= 0 && gapEnd >= 0 && failed < flush && gapEnd < flush && flush < end, order.join());
  const gapEndRow = recorder.log[gapEnd];
  assertEquals(gapEndRow.type === "gap_end" ? gapEndRow.end_ns : -1, 5.1e9);
  const ev = recorder.events("connection").find((e) => e.level === "error");
  assert(
    String(ev?.text).startsWith("reconnect failed: the browser did not come back within 5000 ms (9 attempts"),
  );
  assertEquals(JSON.parse(String(ev?.data)).outage_ms, 5_000);
  const sessionEnd = recorder.of("session_end")[0];
  assertEquals(sessionEnd.end_reason, "reconnect_window_exhausted");
});

Deno.test("capture: a browser that went away without a reconnection is one connection event before the flush; a stop is none", async () => {
  const exited = setup(new FakePage("p1", "T1"));
  exited.session.end("browser_exited");
  await exited.capture.stop();
  const ev = exited.recorder.events("connection");
  assertEquals(ev.map((e) => [e.level, e.text]), [["error", "the browser process exited; session ended"]]);
  const order = exited.recorder.log.map((m) => m.type);
  assert(order.indexOf("event") < order.indexOf("flush"), order.join());

  const stopped = setup(new FakePage("p1", "T1"));
  stopped.session.end("stopped");
  await stopped.capture.stop();
  assertEquals(stopped.recorder.events("connection"), []);
});
