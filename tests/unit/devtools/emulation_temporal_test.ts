import { assert, assertEquals } from "../../assert.ts";
import type { EventView } from "../../../src/capture/events_query.ts";
import { openIndex } from "../../../src/store/index_db.ts";
import { emulationLine } from "../../../src/temporal/artifact_text.ts";
import { emulationView, eventsNearChanges, layoutShiftLine } from "../../../src/temporal/bundle_events.ts";
import { emulationIn, markersIn, type Prepared } from "../../../src/temporal/prepare.ts";
import type { ResolvedRange } from "../../../src/temporal/range.ts";

const MS = 1_000_000;
const SLOW = "network Slow 3G (2000 ms, 400/400 kbps)";

/** A range over [startMs, endMs] anchored at its start (only what the temporal queries read). */
function range(startMs: number, endMs: number, page = "p1"): ResolvedRange {
  return {
    resolved: true,
    session_id: "s1",
    page_id: page,
    start_ns: startMs * MS,
    end_ns: endMs * MS,
    start_ms: startMs,
    end_ms: endMs,
    duration_ms: endMs - startMs,
    anchor: { kind: "session_time", at_ns: startMs * MS, at_ms: startMs },
    requested: { start_ns: startMs * MS, end_ns: endMs * MS },
    complete: true,
    warnings: [],
    gaps: [],
  };
}

function withIndex(body: (db: ReturnType<typeof openIndex>["db"]) => void): void {
  const root = Deno.makeTempDirSync({ prefix: "h2-emulation-temporal-" });
  const { db } = openIndex(root);
  const insert = db.prepare(
    "INSERT INTO events(session_id, page_id, kind, at_ns, text, data) VALUES ('s1', ?, ?, ?, ?, ?)",
  );
  const emulation = (page: string, atMs: number, text: string, summary: string) =>
    insert.run(
      page,
      "emulation",
      atMs * MS,
      `emulation: ${text}`,
      JSON.stringify({ changed: {}, state: {}, summary }),
    );
  emulation("p1", 1_000, SLOW, SLOW);
  emulation("p2", 1_500, "cpu 4×", "cpu 4×");
  insert.run(
    "p1",
    "layout_shift",
    2_500 * MS,
    "layout shift 0.21: div#banner moved",
    JSON.stringify({ score: 0.21 }),
  );
  emulation("p1", 3_000, "cleared (network)", "none");
  try {
    body(db);
  } finally {
    db.close();
    Deno.removeSync(root, { recursive: true });
  }
}

function prepared(r: ResolvedRange, emulation: Prepared["emulation"]): Prepared {
  return {
    range: r,
    epochs: [],
    chosen: [],
    analyses: [],
    markers: [],
    emulation,
    truncated: false,
    earlier_document_frames: 0,
  };
}

Deno.test("emulationIn: the state at each end of the range and the changes inside it, on the range's page", () => {
  withIndex((db) => {
    assertEquals(emulationIn(db, range(0, 500)), undefined, "never emulated up to the end");
    assertEquals(emulationIn(db, range(1_500, 2_800)), { at_start: SLOW, at_end: SLOW, changes: [] });
    assertEquals(emulationIn(db, range(2_000, 4_000)), {
      at_start: SLOW,
      at_end: "none",
      changes: [{ at_ns: 3_000 * MS, text: "cleared (network)" }],
    });
    assertEquals(emulationIn(db, range(0, 2_000, "p2"))?.at_end, "cpu 4×");
  });
});

Deno.test("emulationLine: names the emulation a range ran under, or its changes; nothing when none", () => {
  withIndex((db) => {
    const throughout = range(1_500, 2_800);
    assertEquals(
      emulationLine(prepared(throughout, emulationIn(db, throughout))),
      `under emulation: ${SLOW}`,
    );
    const changed = range(2_000, 4_000);
    assertEquals(
      emulationLine(prepared(changed, emulationIn(db, changed))),
      `emulation: ${SLOW} at start; changed +1,000 ms cleared (network); none at end`,
    );
    const after = range(3_500, 4_000);
    assertEquals(
      emulationLine(prepared(after, emulationIn(db, after))),
      undefined,
      "cleared before the range",
    );
    assertEquals(emulationLine(prepared(after, undefined)), undefined);
  });
});

Deno.test("emulationView: the range's emulation in session ms and offsets from its anchor", () => {
  withIndex((db) => {
    const r = range(2_000, 4_000);
    assertEquals(emulationView(prepared(r, emulationIn(db, r))), {
      at_start: SLOW,
      at_end: "none",
      changes: [{ at_ms: 3_000, offset_ms: 1_000, text: "cleared (network)" }],
    });
    assertEquals(emulationView(prepared(r, undefined)), undefined);
  });
});

Deno.test("markersIn: a layout shift and an emulation change inside the range are storyboard markers", () => {
  withIndex((db) => {
    const markers = markersIn(db, range(2_000, 4_000));
    assertEquals(markers.map((m) => [m.kind, m.at_ns / MS, m.label]), [
      ["layout_shift", 2_500, "layout shift 0.21: div#banner moved"],
      ["emulation", 3_000, "emulation: cleared (network)"],
    ]);
    assertEquals(markersIn(db, range(0, 2_000, "p2")).map((m) => m.kind), ["emulation"]);
  });
});

function ev(
  id: number,
  kind: string,
  tMs: number,
  text: string,
  data: Record<string, unknown> | null = null,
): EventView {
  return {
    event_id: id,
    page_id: "p1",
    kind,
    session_time_ns: tMs * MS,
    session_time_ms: tMs,
    interaction_id: null,
    level: null,
    text,
    data,
  };
}

Deno.test("bundle: a layout shift ranks beside failed requests, above navigation and the rest", () => {
  const events = [
    ev(1, "request", 1_000, "GET /a"),
    ev(2, "navigation", 1_000, "navigation"),
    ev(3, "long_task", 1_000, "long task 210 ms", { duration_ms: 210 }),
    ev(4, "layout_shift", 1_400, "layout shift 0.21: div#banner moved", { score: 0.21 }),
    ev(5, "emulation", 1_000, "emulation: cpu 4×"),
  ];
  const ranked = eventsNearChanges(events, [1_000 * MS], 10).events.map((e) => e.event_id);
  assertEquals(ranked, [4, 2, 5, 3, 1]);
});

Deno.test("layoutShiftLine: how many shifts, their total, and the largest with its words and time", () => {
  const events = [
    ev(1, "layout_shift", 1_300, "layout shift 0.05: p#intro moved", { score: 0.05 }),
    ev(2, "layout_shift", 1_310, "layout shift 0.21: div#banner moved", { score: 0.21 }),
    ev(3, "request", 1_000, "GET /a"),
  ];
  assertEquals(
    layoutShiftLine(events, 1_000 * MS),
    "- layout shifts: 2 (total score 0.26); largest at +310 ms: layout shift 0.21: div#banner moved",
  );
  assert(layoutShiftLine(events.slice(2), 0) === undefined);
});
