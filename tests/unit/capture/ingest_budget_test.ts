/**
 * The worker's budget against a real index and real segment files, without a browser: frames are
 * appended as the worker appends them, and each decision is the one a frame would get.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../assert.ts";
import { StoreBudget } from "../../../src/capture/ingest_budget.ts";
import { InstanceCounter } from "../../../src/store/budget.ts";
import { insertRow, openIndex } from "../../../src/store/index_db.ts";
import { FRAME_HEADER_BYTES } from "../../../src/store/format.ts";
import { SegmentWriter } from "../../../src/store/segments.ts";

const FRAME = 10_000;
const MS = 1e6;

async function store(total: number) {
  const dataDir = await Deno.makeTempDir();
  const root = join(dataDir, "instances", "self");
  await Deno.mkdir(root, { recursive: true });
  const lock = await Deno.open(join(root, ".lock"), { create: true, write: true });
  await lock.lock(true);
  const { db } = openIndex(root);
  insertRow(db, "sessions", {
    id: "s",
    ordinal: 1,
    mode: "launched",
    profile: "temporary",
    started_at: new Date().toISOString(),
    every_nth_frame: 1,
    focus: "foreground",
    capabilities: "{}",
  });
  // The budget asks for the open segment; the writer is made after it, so it is read through a holder.
  const held: { writer?: SegmentWriter } = {};
  const budget = new StoreBudget(
    db,
    root,
    total,
    0,
    new InstanceCounter(join(dataDir, "instances"), "self"),
    () => {
      const span = held.writer?.openSpan;
      return span ? [{ session_id: "s", page_id: "p1", startNs: span.startNs, bytes: span.bytes }] : [];
    },
  );
  const writer = new SegmentWriter(db, join(root, "segments", "s", "p1"), "s", "p1", undefined, {
    maxBytes: () => 4 * (FRAME + FRAME_HEADER_BYTES),
    onSealed: (seg) => budget.sealed("s", "p1", seg),
  });
  held.writer = writer;
  let ordinal = 0;
  /** One frame at `ms`, as the worker takes it: a budget decision, then the append. */
  const frame = (ms: number) => {
    const size = FRAME + FRAME_HEADER_BYTES;
    const decision = budget.admit(size, () => {});
    if (!decision.admitted) return decision;
    const placed = writer.append(++ordinal, ms * MS, new Uint8Array(FRAME).fill(ordinal % 255));
    budget.stored("s", size);
    insertRow(db, "frames", {
      session_id: "s",
      page_id: "p1",
      ordinal,
      recv_ns: ms * MS,
      format: "jpeg",
      width: 1,
      height: 1,
      segment_id: placed.segmentId,
      offset: placed.offset,
      length: placed.length,
    });
    return decision;
  };
  const frameTimes = () =>
    (db.prepare("SELECT recv_ns FROM frames ORDER BY recv_ns").all() as Array<{ recv_ns: number }>).map((r) =>
      r.recv_ns / MS
    );
  const cleanup = async () => {
    db.close();
    lock.close();
    await Deno.remove(dataDir, { recursive: true });
  };
  return { budget, frame, frameTimes, cleanup };
}

Deno.test("a pinned range outlives reclaim that passes it; the oldest unpinned frames go first", async () => {
  const s = await store(200_000);
  try {
    for (let t = 0; t < 8; t++) s.frame(t * 10);
    const pin = s.budget.pin(
      { session_id: "s", page_id: "p1", start_ns: 45 * MS, end_ns: 65 * MS },
      "x",
      () => {},
    );
    assert(pin.bytes > 0 && pin.segments >= 1, JSON.stringify(pin));
    for (let t = 8; t < 80; t++) assert(s.frame(t * 10).admitted, `frame ${t} admitted`);
    const kept = s.frameTimes();
    // Segments hold four frames: [0–30] and [40–70]. The frame on screen at 45 ms arrived at 40 ms.
    for (const t of [40, 50, 60, 70]) assert(kept.includes(t), `pinned frame at ${t} ms kept: ${kept}`);
    assert(!kept.includes(0) && !kept.includes(100), `unpinned old frames went: ${kept}`);
    assert(kept.includes(790), "the newest frame is stored");
    const st = s.budget.status(["s"]);
    assert(st.used_bytes <= 200_000, JSON.stringify(st));
    assertEquals([st.pins, st.pinned_bytes > 0], [1, true]);
  } finally {
    await s.cleanup();
  }
});

Deno.test("when pins fill the share, frames are refused and nothing protected is deleted; unpinning resumes", async () => {
  const s = await store(200_000);
  try {
    s.budget.pin({ session_id: "s", page_id: "p1", start_ns: 0, end_ns: 1e12 }, undefined, () => {});
    let refused;
    for (let t = 0; t < 40 && !refused; t++) {
      const d = s.frame(t * 10);
      if (!d.admitted) refused = d;
    }
    assert(refused, "capture pauses at the share");
    assertEquals(refused.refused, "pinned");
    const before = s.frameTimes();
    assertEquals(before[0], 0, "the oldest pinned frame is still there");
    assert(!s.frame(1_000).admitted, "still paused");
    assertEquals(s.frameTimes(), before, "nothing protected was deleted");
    const st = s.budget.status(["s"]);
    assertEquals([st.recording_blocked, st.eviction_blocked, st.blocked_reason], [true, true, "pinned"]);
    s.budget.pins.remove(s.budget.pins.views().map((p) => p.pin_id));
    assert(s.frame(1_010).admitted, "unpinned: reclaim makes room again");
    assert(s.frameTimes()[0] > 0, "and the oldest frames went first");
  } finally {
    await s.cleanup();
  }
});

Deno.test("artifact grace keeps a fresh artifact's source under pressure, and is dropped only to avoid a stall", async () => {
  const s = await store(200_000);
  try {
    for (let t = 0; t < 8; t++) s.frame(t * 10);
    // An artifact made from the oldest frames: its source is now under grace.
    assert(
      s.budget.admitArtifact(
        1_000,
        { session_id: "s", page_id: "p1", start_ns: 0, end_ns: 35 * MS },
        () => {},
      ).admitted,
    );
    for (let t = 8; t < 40; t++) assert(!s.frame(t * 10).grace_overridden, "newer evidence was left to take");
    assert(s.frameTimes().includes(0), "under pressure the graced source stayed while newer frames went");
    // An artifact over everything recorded so far and to come: only the grace is left to take.
    s.budget.admitArtifact(1_000, { session_id: "s", page_id: "p1", start_ns: 0, end_ns: 1e12 }, () => {});
    let overridden = false;
    for (let t = 40; t < 80 && !overridden; t++) {
      const d = s.frame(t * 10);
      assert(d.admitted, `frame ${t} stored`);
      overridden = d.grace_overridden;
    }
    assert(overridden, "the grace was dropped rather than stalling capture");
    assert(!s.frameTimes().includes(0), "the graced frames went");
    const first = s.budget.status(["s"]).grace_overridden_through;
    assert(first?.at && first.session_id === "s" && (first.session_time_ms ?? 0) > 0, JSON.stringify(first));
    s.frame(5_000);
    assertEquals(s.budget.status(["s"]).grace_overridden_through?.at, first.at, "sticky across polls");
  } finally {
    await s.cleanup();
  }
});

Deno.test("a write larger than the share is refused with the bytes, the share and N", async () => {
  const s = await store(50_000);
  try {
    const d = s.budget.admitArtifact(60_000, undefined, () => {});
    assertEquals([d.admitted, d.refused, d.share, d.count.instances], [false, "over_share", 50_000, 1]);
  } finally {
    await s.cleanup();
  }
});
