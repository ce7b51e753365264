import { assert, assertEquals } from "../../assert.ts";
import { OutageGaps } from "../../../src/capture/outage_gaps.ts";

Deno.test("outage gaps: one open gap per page and kind; a second open is refused", () => {
  const g = new OutageGaps();
  assert(g.open("p1", "disconnected", 10));
  assert(!g.open("p1", "disconnected", 20), "already open");
  assert(g.open("p1", "crashed", 15));
  assert(g.open("p2", "disconnected", 10));
  assertEquals(g.list(), [
    { page_id: "p1", kind: "disconnected", start_ns: 10 },
    { page_id: "p1", kind: "crashed", start_ns: 15 },
    { page_id: "p2", kind: "disconnected", start_ns: 10 },
  ]);
  assertEquals(g.interruption("p1"), "disconnected");
  assert(g.end("p1", "disconnected"));
  assert(!g.end("p1", "disconnected"), "ended once");
  assertEquals(g.interruption("p1"), "crashed");
  assertEquals(g.interruption("p3"), undefined);
});

Deno.test("outage gaps: a re-adopted page's gap ends at its last re-adoption, only when the reconnection completes", () => {
  const g = new OutageGaps();
  g.open("p1", "disconnected", 1_000);
  g.open("p2", "disconnected", 1_000);
  g.readopted("p1", 2_000);
  // An attempt that failed after re-adopting: the page comes back again later, the gap is still open.
  assert(g.isOpen("p1", "disconnected"));
  g.readopted("p1", 3_000);
  assertEquals(g.resumed(), [{ page_id: "p1", end_ns: 3_000 }]);
  assert(!g.isOpen("p1", "disconnected"));
  // p2 was not re-adopted: its gap stays open until it is dropped or the session ends.
  assert(g.isOpen("p2", "disconnected"));
  assertEquals(g.resumed(), []);
  assertEquals(g.endPage("p2"), ["disconnected"]);
  assertEquals(g.list(), []);
});

Deno.test("outage gaps: readopted() without an open outage gap records nothing", () => {
  const g = new OutageGaps();
  g.readopted("p1", 5);
  assertEquals(g.resumed(), []);
});

Deno.test("outage gaps: a crash gap ends at the first frame after recovery, never before it", () => {
  const g = new OutageGaps();
  g.open("p1", "crashed", 100);
  assert(!g.frameEndsCrash("p1"), "a frame in flight before the reload does not end it");
  g.recovered("p1");
  assert(g.frameEndsCrash("p1"));
  assert(!g.isOpen("p1", "crashed"));
  assert(!g.frameEndsCrash("p1"), "ended once");
  // Recovery without an open crash gap (already ended by the outage) is ignored.
  g.recovered("p1");
  assert(!g.frameEndsCrash("p1"));
});

Deno.test("outage gaps: endAll returns and closes every open gap", () => {
  const g = new OutageGaps();
  g.open("p1", "disconnected", 1);
  g.open("p2", "crashed", 2);
  g.recovered("p2");
  assertEquals(g.endAll().map((x) => `${x.page_id}:${x.kind}`), ["p1:disconnected", "p2:crashed"]);
  assertEquals(g.list(), []);
  assert(!g.frameEndsCrash("p2"), "recovery state cleared with the gap");
});
