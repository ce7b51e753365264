import { join } from "node:path";
import { assertEquals } from "../../assert.ts";
import { insertRow, openIndex } from "../../../src/store/index_db.ts";
import { readFrame, SegmentWriter } from "../../../src/store/segments.ts";
import { recoverInstance } from "../../../src/store/recovery.ts";

Deno.test("recovery keeps complete indexed frames and drops the uncommitted and torn tail", () => {
  const root = Deno.makeTempDirSync();
  try {
    const { db } = openIndex(root);
    insertRow(db, "sessions", {
      id: "s",
      ordinal: 1,
      mode: "launched",
      profile: "{}",
      started_at: "x",
      every_nth_frame: 1,
      focus: "foreground",
      capabilities: "{}",
    });
    const w = new SegmentWriter(db, join(root, "segments", "s", "p1"), "s", "p1");
    const frame = (ordinal: number) => {
      const placed = w.append(ordinal, ordinal * 1e6, new Uint8Array(100).fill(ordinal));
      return { placed, ordinal };
    };
    const indexed = [frame(1), frame(2)];
    frame(3); // appended, but its index batch never committed
    for (const { placed, ordinal } of indexed) {
      insertRow(db, "frames", {
        session_id: "s",
        page_id: "p1",
        ordinal,
        recv_ns: ordinal * 1e6,
        format: "jpeg",
        width: 1,
        height: 1,
        segment_id: placed.segmentId,
        offset: placed.offset,
        length: placed.length,
      });
    }
    const segPath = (db.prepare("SELECT path FROM segments").get() as { path: string }).path;
    db.close();
    // A torn record at the very end, as a kill -9 mid-write leaves it.
    const file = Deno.openSync(segPath, { append: true });
    file.writeSync(new Uint8Array([0x4b, 0x54, 0x46]));
    file.close();

    const report = recoverInstance(root, "dead-instance");
    assertEquals(report.index, "current");
    assertEquals(report.sessions, 1);
    assertEquals(report.frames_complete, 2);
    assertEquals(report.frames_dropped_uncommitted, 1);
    assertEquals(report.frames_dropped_torn, 0);
    assertEquals(report.bytes_dropped, 24 + 100 + 3);
    assertEquals(readFrame(segPath, indexed[1].placed.offset, 100), new Uint8Array(100).fill(2));
    assertEquals(Deno.statSync(segPath).size, 2 * (24 + 100));
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("recovery of a root without an index reports it and touches nothing", () => {
  const root = Deno.makeTempDirSync();
  assertEquals(recoverInstance(root, "x").index, "absent");
  Deno.removeSync(root, { recursive: true });
});
