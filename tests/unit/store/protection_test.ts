import { assert, assertEquals } from "../../assert.ts";
import {
  type GraceSpan,
  inGrace,
  keptEventSpans,
  type Pin,
  pinnedBy,
  pinView,
} from "../../../src/store/protection.ts";

const pin = (start: number, end: number, holdFrom = start): Pin => ({
  pin_id: "pin-1",
  session_id: "s",
  page_id: "p1",
  start_ns: start,
  end_ns: end,
  hold_from_ns: holdFrom,
  created_at: "2026-12-02T00:00:00.000Z",
});
const segment = (start: number, end: number, page = "p1") => ({
  kind: "segment" as const,
  session_id: "s",
  page_id: page,
  start_ns: start,
  end_ns: end,
});

Deno.test("a pin holds the segments its range overlaps, and the one on screen at its start", () => {
  // The range starts at 100; the frame on screen then arrived at 80, in the segment ending at 90.
  const p = pin(100, 200, 80);
  assert(pinnedBy(segment(60, 90), [p]), "the segment holding the frame on screen at the start");
  assert(pinnedBy(segment(150, 300), [p]), "a segment overlapping the range");
  assert(!pinnedBy(segment(0, 70), [p]), "a segment wholly before");
  assert(!pinnedBy(segment(201, 300), [p]), "a segment wholly after");
  assert(!pinnedBy(segment(150, 160, "p2"), [p]), "another page's segment");
  assert(!pinnedBy({ kind: "file" }, [p]), "a file is never held by a pin");
});

Deno.test("grace protects only until it lapses", () => {
  const grace: GraceSpan[] = [{
    session_id: "s",
    page_id: "p1",
    start_ns: 100,
    end_ns: 200,
    until_ms: 1_000,
  }];
  assert(inGrace(segment(150, 250), grace, 999));
  assert(!inGrace(segment(150, 250), grace, 1_000), "lapsed");
  assert(!inGrace(segment(250, 300), grace, 0), "outside the span");
});

Deno.test("events inside pins and live grace survive an older segment's eviction", () => {
  const grace: GraceSpan[] = [
    { session_id: "s", page_id: "p1", start_ns: 500, end_ns: 600, until_ms: 10 },
    { session_id: "s", page_id: "p1", start_ns: 700, end_ns: 800, until_ms: 1 },
    { session_id: "other", page_id: "p1", start_ns: 0, end_ns: 900, until_ms: 10 },
  ];
  assertEquals(keptEventSpans("s", [pin(100, 200, 80)], grace, 5), [
    { from_ns: 80, to_ns: 200 },
    { from_ns: 500, to_ns: 600 },
  ]);
});

Deno.test("a pin's view is in milliseconds with what it holds", () => {
  const view = pinView({ ...pin(1_234_567_890, 2_000_000_000), label: "checkout" }, {
    segments: 2,
    bytes: 4096,
  });
  assertEquals([view.start_ms, view.end_ms, view.segments, view.bytes, view.label], [
    1234.57,
    2000,
    2,
    4096,
    "checkout",
  ]);
});
