import { join } from "node:path";
import { assert, assertEquals, assertThrows } from "../../assert.ts";
import { openIndex } from "../../../src/store/index_db.ts";
import {
  frameHeader,
  type PersistenceCause,
  PersistenceError,
  readFrame,
  realIo,
  scanSegment,
  SegmentWriter,
} from "../../../src/store/segments.ts";
import { SEGMENT_MAX_AGE_NS } from "../../../src/store/format.ts";

function setup() {
  const root = Deno.makeTempDirSync();
  const { db } = openIndex(root);
  const dir = join(root, "segments", "s", "p1");
  return { root, db, dir, cleanup: () => Deno.removeSync(root, { recursive: true }) };
}

function causeOf(fn: () => unknown): PersistenceCause {
  try {
    fn();
  } catch (err) {
    if (err instanceof PersistenceError) return err.persistence;
    throw err;
  }
  throw new Error("expected a persistence failure");
}

const bytes = (n: number, fill: number) => new Uint8Array(n).fill(fill);

Deno.test("frames append, read back byte-exact, and seal into .seg files by age", () => {
  const { db, dir, cleanup } = setup();
  try {
    const w = new SegmentWriter(db, dir, "s", "p1");
    const a = w.append(1, 1_000, bytes(100, 1));
    const b = w.append(2, 2_000, bytes(50, 2));
    assertEquals(a.segmentId, b.segmentId);
    const later = w.append(3, 2_000 + SEGMENT_MAX_AGE_NS + 1, bytes(10, 3));
    assert(later.segmentId !== a.segmentId, "an old segment is sealed and a new one opened");
    const sealed = db.prepare("SELECT path, sealed, frames FROM segments WHERE id = ?").get(a.segmentId) as {
      path: string;
      sealed: number;
      frames: number;
    };
    assertEquals([sealed.sealed, sealed.frames, sealed.path.endsWith(".seg")], [1, 2, true]);
    assertEquals(readFrame(sealed.path, b.offset, b.length), bytes(50, 2));
    w.close(3_000 + SEGMENT_MAX_AGE_NS);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(names.every((n) => n.endsWith(".seg")), true, names.join(","));
  } finally {
    cleanup();
  }
});

Deno.test("a crash tail is dropped by the scan: only complete records survive", () => {
  const { db, dir, cleanup } = setup();
  try {
    const w = new SegmentWriter(db, dir, "s", "p1");
    w.append(1, 10, bytes(64, 7));
    w.append(2, 20, bytes(64, 8));
    w.close(30);
    const path = (db.prepare("SELECT path FROM segments").get() as { path: string }).path;
    const full = Deno.readFileSync(path);
    const torn = full.subarray(0, full.length - 10);
    const scan = scanSegment(torn);
    assertEquals(scan.records.map((r) => r.ordinal), [1]);
    assertEquals(scan.validBytes, 24 + 64);
    const corrupt = full.slice();
    corrupt[corrupt.length - 1] ^= 0xff;
    assertEquals(scanSegment(corrupt).records.length, 1, "a checksum mismatch ends the valid prefix");
  } finally {
    cleanup();
  }
});

Deno.test("record checksums are standard CRC-32, so segments written before the switch still verify", () => {
  const check = (payload: Uint8Array) => new DataView(frameHeader(1, 0, payload).buffer).getUint32(20);
  assertEquals(check(new TextEncoder().encode("123456789")), 0xcbf43926, "the CRC-32 check value");
  assertEquals(check(new Uint8Array(0)), 0);
  // A record laid out by hand with the table-loop CRC the writer used before scans as complete.
  const payload = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31 + (i >> 8)) & 255);
  let c = 0xffffffff;
  for (const b of payload) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  const record = new Uint8Array(24 + payload.length);
  record.set(frameHeader(9, 5, payload));
  new DataView(record.buffer).setUint32(20, (c ^ 0xffffffff) >>> 0);
  record.set(payload, 24);
  assertEquals(scanSegment(record).records.map((r) => [r.ordinal, r.length]), [[9, payload.length]]);
});

Deno.test("a write failure is terminal for the writer", () => {
  const { db, dir, cleanup } = setup();
  try {
    const failing = {
      ...realIo,
      write: () => {
        throw new Deno.errors.BadResource("disk gone");
      },
    };
    const w = new SegmentWriter(db, dir, "s", "p1", failing);
    const cause = causeOf(() => w.append(1, 1, bytes(8, 1)));
    assertEquals(cause.operation, "write");
    assertEquals(cause.recoverability, "writer_terminal");
    assertEquals(causeOf(() => w.append(2, 2, bytes(8, 1))).recoverability, "writer_terminal");
    assertEquals(JSON.stringify(cause).includes(dir), false, "causes carry no paths");
  } finally {
    cleanup();
  }
});

Deno.test("a directory-sync failure after rename rejects only that append; the writer stays usable", () => {
  const { db, dir, cleanup } = setup();
  try {
    let failNextDirSync = true;
    const io = {
      ...realIo,
      syncDir: (d: string) => {
        if (failNextDirSync) {
          failNextDirSync = false;
          throw new Error("EIO");
        }
        realIo.syncDir(d);
      },
    };
    const w = new SegmentWriter(db, dir, "s", "p1", io);
    w.append(1, 1, bytes(8, 1));
    const cause = causeOf(() => w.append(2, 2 + SEGMENT_MAX_AGE_NS, bytes(8, 2)));
    assertEquals([cause.operation, cause.recoverability], ["dir_sync", "writer_usable"]);
    assertEquals(w.terminal, undefined);
    const next = w.append(3, 3 + SEGMENT_MAX_AGE_NS, bytes(8, 3));
    const segs = db.prepare("SELECT id, sealed FROM segments ORDER BY id").all() as Array<
      { id: number; sealed: number }
    >;
    assertEquals(segs.length, 2, "the sealed segment stays, the next append opened a distinct one");
    assertEquals(next.segmentId, segs[1].id);
    assertEquals(segs[0].sealed, 1);
  } finally {
    cleanup();
  }
});

Deno.test("reading a frame whose record does not match fails", () => {
  const { db, dir, cleanup } = setup();
  try {
    const w = new SegmentWriter(db, dir, "s", "p1");
    const a = w.append(1, 1, bytes(16, 1));
    w.close(2);
    const path = (db.prepare("SELECT path FROM segments").get() as { path: string }).path;
    const file = Deno.readFileSync(path);
    file[a.offset] ^= 0xff;
    Deno.writeFileSync(path, file);
    assertThrows(() => readFrame(path, a.offset, a.length), "does not match");
  } finally {
    cleanup();
  }
});
