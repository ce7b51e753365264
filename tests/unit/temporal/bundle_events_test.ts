import { assertEquals } from "../../assert.ts";
import type { EventView } from "../../../src/capture/events_query.ts";
import { sanitizeUrl } from "../../../src/browser/privacy.ts";
import { eventsNearChanges } from "../../../src/temporal/bundle.ts";

const MS = 1_000_000;

function ev(id: number, kind: string, tMs: number, level: string | null = null): EventView {
  return {
    event_id: id,
    page_id: "p1",
    kind,
    session_time_ns: tMs * MS,
    session_time_ms: tMs,
    interaction_id: null,
    level,
    text: `${kind} ${id}`,
    data: null,
  };
}

const idsOf = (r: { events: EventView[] }) => r.events.map((e) => e.event_id);

Deno.test("eventsNearChanges: errors, then failed requests, then navigation, then dialogs and warnings, then the rest", () => {
  const events = [
    ev(1, "console", 1000, "info"),
    ev(2, "navigation", 1000),
    ev(3, "request_failed", 1000),
    ev(4, "exception", 1000),
    ev(5, "console", 1000, "error"),
    ev(6, "dialog", 1000),
    ev(7, "console", 1000, "warning"),
    ev(8, "request", 1000),
  ];
  const r = eventsNearChanges(events, [1000 * MS], 20);
  assertEquals(idsOf(r), [4, 5, 3, 2, 6, 7, 1, 8]);
  assertEquals(r.omitted, 0);
  assertEquals(r.events.map((e) => e.nearest_change_ms), [0, 0, 0, 0, 0, 0, 0, 0]);
});

Deno.test("eventsNearChanges: rank beats distance", () => {
  const events = [ev(1, "navigation", 1001), ev(2, "exception", 5000), ev(3, "request_failed", 3000)];
  assertEquals(idsOf(eventsNearChanges(events, [1000 * MS], 10)), [2, 3, 1]);
});

Deno.test("eventsNearChanges: within a rank, nearest to any change first, with the distance in ms", () => {
  const events = [
    ev(1, "exception", 500), // 400 from 100, 500 from 1000
    ev(2, "console", 900, "error"), // 100 from 1000
    ev(3, "exception", 1250), // 250 from 1000
    ev(4, "exception", 120), // 20 from 100
  ];
  const r = eventsNearChanges(events, [100 * MS, 1000 * MS], 10);
  assertEquals(idsOf(r), [4, 2, 3, 1]);
  assertEquals(r.events.map((e) => e.nearest_change_ms), [20, 100, 250, 400]);
  assertEquals(r.events[0].text, "exception 4", "the event's own fields are kept");
});

Deno.test("eventsNearChanges: equal distance breaks by time, then by id", () => {
  const events = [
    ev(9, "navigation", 110), // 10 after the change
    ev(3, "navigation", 90), // 10 before it
    ev(7, "navigation", 110), // same time as 9, lower id
  ];
  assertEquals(idsOf(eventsNearChanges(events, [100 * MS], 10)), [3, 7, 9]);
});

Deno.test("eventsNearChanges: without change times, rank then time then id, and no distance", () => {
  const events = [
    ev(5, "navigation", 300),
    ev(2, "navigation", 100),
    ev(1, "other", 50),
    ev(4, "exception", 900),
  ];
  const r = eventsNearChanges(events, [], 10);
  assertEquals(idsOf(r), [4, 2, 5, 1]);
  assertEquals(r.events.map((e) => e.nearest_change_ms), [null, null, null, null]);
});

Deno.test("eventsNearChanges: the limit keeps the head and counts the rest exactly", () => {
  const events = Array.from(
    { length: 7 },
    (_, i) => ev(i + 1, i % 2 ? "exception" : "console", i * 100, "info"),
  );
  const r = eventsNearChanges(events, [0], 3);
  assertEquals(idsOf(r), [2, 4, 6]);
  assertEquals(r.omitted, 4);
  assertEquals(eventsNearChanges(events, [0], 7).omitted, 0);
  assertEquals(eventsNearChanges(events, [0], 50).omitted, 0);
  assertEquals(eventsNearChanges(events, [0], 0), { events: [], omitted: 7 });
  assertEquals(eventsNearChanges([], [0], 5), { events: [], omitted: 0 });
});

Deno.test("eventsNearChanges: the browser's favicon requests are never ranked", () => {
  const favicon = (id: number, kind: string, url: string): EventView => ({
    ...ev(id, kind, 1000, "error"),
    text: `GET ${url} 404`,
    data: { url, method: "GET" },
  });
  const events = [
    favicon(1, "request", "http://127.0.0.1:8000/favicon.ico"),
    favicon(2, "request_failed", "http://127.0.0.1:8000/favicon.ico?v=2"),
    favicon(3, "request", "http://127.0.0.1:8000/api/favicon.json"),
    ev(4, "navigation", 1200),
    // As recorded: the path is hashed for privacy.
    favicon(5, "request", sanitizeUrl("http://127.0.0.1:8000/favicon.ico").redacted),
    favicon(6, "request", sanitizeUrl("http://127.0.0.1:8000/app.js").redacted),
  ];
  const r = eventsNearChanges(events, [1000 * MS], 10);
  assertEquals(idsOf(r), [4, 3, 6], "navigation ranks above a plain request");
  assertEquals(r.omitted, 0);
});
