import type { DatabaseSync } from "node:sqlite";
import { assert, assertEquals } from "../../assert.ts";
import type { AppContext } from "../../../src/mcp/context.ts";
import { indexWithSession } from "./index_fixture.ts";
import { insertRow } from "../../../src/store/index_db.ts";
import { FRAME_LIST_LIMIT, listSessions, timeline } from "../../../src/viewer/api_timeline.ts";

const MS = 1e6;

async function fixture(): Promise<{ db: DatabaseSync; app: AppContext; close: () => Promise<void> }> {
  const index = await indexWithSession("2026-12-02T10:01:00.000Z");
  const db = index.db;
  insertRow(db, "targets", { session_id: "s1", page_id: "p1", target_id: "T1", created_ns: 100 * MS });
  // The app the viewer reads: the index, no live browser, nothing to flush.
  const app = {
    recorder: { flush: () => Promise.resolve(), reader: () => db, captures: new Map() },
    browsers: { current: undefined },
  } as unknown as AppContext;
  return {
    db,
    app,
    close: index.close,
  };
}

function frame(db: DatabaseSync, id: number, ordinal: number, atMs: number, page = "p1"): void {
  insertRow(db, "frames", {
    id,
    session_id: "s1",
    page_id: page,
    ordinal,
    recv_ns: Math.round(atMs * MS),
    format: "jpeg",
    width: 800,
    height: 600,
    segment_id: 1,
    offset: 0,
    length: 1,
  });
}

Deno.test("a page's timeline: ordinals in time order, the interaction's frame, only events worth a tick", async () => {
  const { db, app, close } = await fixture();
  try {
    // Inserted out of time order: ordinals follow time, not insertion or Chrome's per-target numbers.
    frame(db, 3, 30, 900);
    frame(db, 1, 10, 200);
    frame(db, 2, 20, 500);
    frame(db, 4, 1, 400, "p2");
    insertRow(db, "interactions", {
      id: "s1-i1",
      session_id: "s1",
      page_id: "p1",
      operation: "click",
      params: "{}",
      started_ns: 450 * MS,
      dispatched_ns: 460 * MS,
      completed_ns: 470 * MS,
      observed_ns: 600 * MS,
      outcome: "ok",
    });
    const event = (kind: string, level: string | null, atMs: number, text: string) =>
      insertRow(db, "events", { session_id: "s1", page_id: "p1", kind, at_ns: atMs * MS, level, text });
    event("navigation", null, 150, "http://127.0.0.1/a");
    event("console", "log", 300, "just a log");
    event("console", "error", 320, "boom");
    event("request", "info", 330, "GET / 200");
    event("request", "error", 340, "GET /x 500");
    event("request_failed", "error", 350, "GET /y failed");
    event("lifecycle", null, 360, "load");
    insertRow(db, "markers", {
      id: "m-1",
      session_id: "s1",
      page_id: "p1",
      at_ns: 700 * MS,
      label: "look here",
      data: JSON.stringify({ author: "human", severity: "warn" }),
    });
    insertRow(db, "gaps", {
      session_id: "s1",
      page_id: "p1",
      kind: "stall",
      start_ns: 910 * MS,
      cause: "quiet",
    });

    const t = await timeline(app, "s1", "p1");
    assert(t, "a timeline");
    assertEquals(t.frame_count, 3);
    assertEquals(t.frames.map((f) => [f.ordinal, f.frame_id, f.at_ms]), [[0, 1, 200], [1, 2, 500], [
      2,
      3,
      900,
    ]]);
    assertEquals(t.frames_sampled, false);
    // On screen when the observation ended (600 ms): the frame painted at 500 ms.
    assertEquals(t.interactions, [{
      interaction_id: "s1-i1",
      tool: "click",
      outcome: "ok",
      at_ms: 460,
      end_ms: 600,
      frame_ordinal: 1,
    }]);
    assertEquals(t.events.map((e) => `${e.kind}/${e.level}@${e.at_ms}`), [
      "navigation/null@150",
      "console/error@320",
      "request/error@340",
      "request_failed/error@350",
    ]);
    assertEquals([t.event_count, t.interaction_count], [4, 1]);
    assertEquals(t.markers, [{
      marker_id: "m-1",
      at_ms: 700,
      label: "look here",
      author: "human",
      severity: "warn",
    }]);
    // From the page's creation to its last fact: here an open gap after the last frame.
    assertEquals([t.start_ms, t.end_ms], [100, 910]);
    assertEquals(t.gaps, [{ start_ms: 910, end_ms: 910, reason: "quiet" }]);
    assertEquals(t.page_state, false);

    const other = await timeline(app, "s1", "p2");
    assertEquals([other?.frame_count, other?.interactions.length], [1, 0]);
    assertEquals(await timeline(app, "s1", "p9"), undefined, "a page the session never had");
    // Without a page: the page with the most frames.
    assertEquals((await timeline(app, "s1", undefined))?.page_id, "p1");

    const { sessions } = await listSessions(app);
    assertEquals(sessions.length, 1);
    assertEquals(sessions[0].live, false);
    assertEquals(
      sessions[0].pages.map((p) => [p.page_id, p.frames, p.url]),
      [["p1", 3, "http://127.0.0.1/a"], ["p2", 1, null]],
    );
  } finally {
    await close();
  }
});

Deno.test("past the list limit the frames are an even sample and the count stays exact", async () => {
  const { db, app, close } = await fixture();
  try {
    const n = FRAME_LIST_LIMIT * 2 + 5;
    db.exec("BEGIN");
    for (let i = 0; i < n; i++) frame(db, i + 1, i + 1, 200 + i);
    db.exec("COMMIT");
    const t = await timeline(app, "s1", "p1");
    assert(t, "a timeline");
    assertEquals(t.frame_count, n);
    assert(t.frames_sampled, "sampled");
    assert(t.frames.length <= FRAME_LIST_LIMIT, `${t.frames.length} listed`);
    assertEquals(t.frames[0].ordinal, 0);
    const step = t.frames[1].ordinal - t.frames[0].ordinal;
    assertEquals(step, 3);
    assert(
      t.frames.every((f, i) => f.ordinal === i * step && f.frame_id === f.ordinal + 1),
      "even, true ordinals",
    );
  } finally {
    await close();
  }
});
