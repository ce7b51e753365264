import { EventType, type eventWithTime, IncrementalSource } from "@rrweb/types";
import { assert, assertEquals } from "../../assert.ts";
import {
  jsonChunks,
  largestViewport,
  MAX_SELECTORS,
  normalizeEvents,
  packChunk,
  selectorProblem,
  spanOf,
} from "../../../src/pagestate/replay_layout.ts";

const meta = (timestamp: number, width = 800, height = 600): eventWithTime => ({
  type: EventType.Meta,
  data: { href: "http://127.0.0.1/", width, height },
  timestamp,
});
const full = (timestamp: number): eventWithTime => ({
  type: EventType.FullSnapshot,
  data: { node: { type: 0, childNodes: [], id: 1 }, initialOffset: { left: 0, top: 0 } },
  timestamp,
});
const resize = (timestamp: number, width: number, height: number): eventWithTime => ({
  type: EventType.IncrementalSnapshot,
  data: { source: IncrementalSource.ViewportResize, width, height },
  timestamp,
});
const text = (timestamp: number, value: string): eventWithTime => ({
  type: EventType.IncrementalSnapshot,
  data: {
    source: IncrementalSource.Mutation,
    texts: [{ id: 5, value }],
    attributes: [],
    removes: [],
    adds: [],
  },
  timestamp,
});

Deno.test("normalizeEvents moves each checkpoint's Meta onto its full snapshot and sorts stably", () => {
  const events = [
    meta(100),
    full(103),
    text(150, "a"),
    text(150, "b"),
    meta(5_100),
    full(5_104),
    text(90, "x"),
  ];
  const out = normalizeEvents(events);
  assertEquals(out.map((e) => [e.type, e.timestamp]), [
    [EventType.IncrementalSnapshot, 90],
    [EventType.Meta, 103],
    [EventType.FullSnapshot, 103],
    [EventType.IncrementalSnapshot, 150],
    [EventType.IncrementalSnapshot, 150],
    [EventType.Meta, 5_104],
    [EventType.FullSnapshot, 5_104],
  ]);
  // Equal timestamps keep their recorded order.
  const texts = out.filter((e) => e.type === EventType.IncrementalSnapshot && e.timestamp === 150);
  assertEquals(texts.map((e) => JSON.stringify(e.data).includes('"a"')), [true, false]);
  // The input is not modified.
  assertEquals(events[0].timestamp, 100);
});

Deno.test("normalizeEvents leaves a Meta that no full snapshot follows where it was", () => {
  const out = normalizeEvents([meta(100), text(101, "a"), full(102)]);
  assertEquals(out.map((e) => e.timestamp), [100, 101, 102]);
});

Deno.test("largestViewport covers Meta and ViewportResize", () => {
  assertEquals(largestViewport([meta(1, 800, 600), resize(2, 1_400, 500), meta(3, 900, 1_000)]), {
    width: 1_400,
    height: 1_000,
  });
  assertEquals(largestViewport([]), { width: 0, height: 0 });
});

Deno.test("spanOf is the first and last timestamp, whatever the order", () => {
  assertEquals(spanOf([text(5, "a"), text(2, "b"), text(9, "c")]), { first: 2, last: 9 });
  assertEquals(spanOf([]), undefined);
});

Deno.test("jsonChunks splits into parseable arrays under the limit, keeping order", () => {
  const events = Array.from({ length: 50 }, (_, i) => text(i, "x".repeat(100)));
  const chunks = jsonChunks(events, 1_000);
  assert(chunks.length > 5, `${chunks.length} chunks`);
  for (const c of chunks) assert(c.length <= 1_000, `chunk of ${c.length}`);
  const back = chunks.flatMap((c) => JSON.parse(c) as eventWithTime[]);
  assertEquals(back.map((e) => e.timestamp), events.map((e) => e.timestamp));
  // One event larger than the limit still travels, alone.
  const big = jsonChunks([text(1, "y".repeat(5_000)), text(2, "z")], 1_000);
  assertEquals(big.length, 2);
  assertEquals(jsonChunks([], 1_000), []);
});

Deno.test("selectorProblem checks shape before anything reaches the page", () => {
  assertEquals(selectorProblem(["#a", "button.primary"]), undefined);
  assert(selectorProblem([])?.includes("at least one"));
  assert(selectorProblem(["  "])?.includes("empty"));
  assert(selectorProblem(["a".repeat(1_001)])?.includes("longer"));
  assert(selectorProblem(Array.from({ length: MAX_SELECTORS + 1 }, () => "a"))?.includes("at most"));
});

Deno.test("packChunk is base64 of gzip that inflates back to the same JSON", async () => {
  const json = JSON.stringify(Array.from({ length: 200 }, (_, i) => text(i, "repeated text ".repeat(20))));
  const packed = await packChunk(json);
  assert(packed.length < json.length / 5, `${packed.length} of ${json.length}`);
  const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  assertEquals(await new Response(stream).text(), json);
});
