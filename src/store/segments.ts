import { join } from "node:path";
// Native CRC32 (the one png.ts uses too): ~50× a table loop, which matters when recovery rescans segments.
import { crc32 } from "node:zlib";
import type { DatabaseSync } from "node:sqlite";
import { FRAME_HEADER_BYTES, FRAME_MAGIC, SEGMENT_MAX_AGE_NS, SEGMENT_MAX_BYTES } from "./format.ts";

/** Which step of segment publication failed, and whether the writer can go on. */
export interface PersistenceCause {
  operation: "open" | "write" | "sync" | "rename" | "dir_sync";
  category: "no_space" | "permission" | "io" | "other";
  recoverability: "writer_usable" | "writer_terminal";
}

export class PersistenceError extends Error {
  constructor(readonly persistence: PersistenceCause) {
    super(`segment ${persistence.operation} failed (${persistence.category}, ${persistence.recoverability})`);
  }
}

/** The file operations segments use; tests substitute failing ones. */
export interface SegmentIo {
  open(path: string): Deno.FsFile;
  write(file: Deno.FsFile, bytes: Uint8Array): void;
  sync(file: Deno.FsFile): void;
  rename(from: string, to: string): void;
  syncDir(dir: string): void;
}

export const realIo: SegmentIo = {
  open: (path) => Deno.openSync(path, { create: true, write: true, truncate: true }),
  write: (file, bytes) => {
    let done = 0;
    while (done < bytes.length) done += file.writeSync(bytes.subarray(done));
  },
  sync: (file) => file.syncSync(),
  rename: (from, to) => Deno.renameSync(from, to),
  syncDir: (dir) => {
    const d = Deno.openSync(dir, { read: true });
    try {
      d.syncSync();
    } finally {
      d.close();
    }
  },
};

function categorize(err: unknown): PersistenceCause["category"] {
  if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
    return "permission";
  }
  const text = err instanceof Error ? err.message : String(err);
  if (/no space|ENOSPC|quota/i.test(text)) return "no_space";
  return err instanceof Error && "code" in err ? "io" : "other";
}

export function frameHeader(ordinal: number, recvNs: number, payload: Uint8Array): Uint8Array {
  const header = new Uint8Array(FRAME_HEADER_BYTES);
  const view = new DataView(header.buffer);
  view.setUint32(0, FRAME_MAGIC);
  view.setUint32(4, ordinal);
  view.setFloat64(8, recvNs);
  view.setUint32(16, payload.length);
  view.setUint32(20, crc32(payload));
  return header;
}

interface OpenSegment {
  id: number;
  file: Deno.FsFile;
  openPath: string;
  sealedPath: string;
  startNs: number;
  bytes: number;
  frames: number;
  lastNs: number;
}

/** A segment that was just sealed: from now on it is immutable and reclaimable. */
export interface SealedSegment {
  id: number;
  path: string;
  bytes: number;
  /** The first and last frame's receipt times, session-relative. */
  startNs: number;
  lastNs: number;
  endNs: number;
}

export interface SegmentLimits {
  /** Bytes after which the open segment is sealed; read at each append, since the share moves with N. */
  maxBytes?: () => number;
  /** Age after which the open segment is sealed; age-out can only remove whole sealed segments. */
  maxAgeNs?: number;
  onSealed?: (segment: SealedSegment) => void;
}

export interface AppendResult {
  segmentId: number;
  offset: number;
  length: number;
}

/**
 * Time-based immutable segments for one session/target. A segment is written as `<n>.open`,
 * then synced, renamed to `<n>.seg` and its directory synced. Failures whose outcome on disk is
 * ambiguous (write, sync, rename) make the writer terminal; a directory-sync failure after a
 * completed rename rejects only the triggering append and leaves the writer usable.
 */
export class SegmentWriter {
  #current?: OpenSegment;
  #terminal?: PersistenceCause;
  #seq = 0;

  constructor(
    private readonly db: DatabaseSync,
    private readonly dir: string,
    private readonly sessionId: string,
    private readonly pageId: string,
    private readonly io: SegmentIo = realIo,
    private readonly limits: SegmentLimits = {},
    /** What the records are: screencast frames, or compressed DOM event chunks (src/capture/ingest_dom.ts). */
    private readonly kind: "frames" | "dom" = "frames",
  ) {
    Deno.mkdirSync(dir, { recursive: true });
  }

  get terminal(): PersistenceCause | undefined {
    return this.#terminal;
  }

  #fail(operation: PersistenceCause["operation"], err: unknown, terminal: boolean): never {
    const cause: PersistenceCause = {
      operation,
      category: categorize(err),
      recoverability: terminal ? "writer_terminal" : "writer_usable",
    };
    if (terminal) this.#terminal = cause;
    throw new PersistenceError(cause);
  }

  #open(startNs: number): OpenSegment {
    const n = ++this.#seq;
    const name = `${String(n).padStart(6, "0")}-${Math.round(startNs)}`;
    const openPath = join(this.dir, `${name}.open`);
    let file: Deno.FsFile;
    try {
      file = this.io.open(openPath);
    } catch (err) {
      this.#fail("open", err, true);
    }
    const id = Number(
      this.db.prepare(
        "INSERT INTO segments(session_id, page_id, path, start_ns, kind) VALUES (?, ?, ?, ?, ?)",
      ).run(this.sessionId, this.pageId, openPath, Math.round(startNs), this.kind).lastInsertRowid,
    );
    return {
      id,
      file,
      openPath,
      sealedPath: join(this.dir, `${name}.seg`),
      startNs,
      bytes: 0,
      frames: 0,
      lastNs: startNs,
    };
  }

  /** Seals the open segment; a failed directory sync throws a writer-usable error. */
  #seal(endNs: number): void {
    const seg = this.#current;
    if (!seg) return;
    this.#current = undefined;
    try {
      this.io.sync(seg.file);
    } catch (err) {
      seg.file.close();
      this.#fail("sync", err, true);
    }
    seg.file.close();
    try {
      this.io.rename(seg.openPath, seg.sealedPath);
    } catch (err) {
      this.#fail("rename", err, true);
    }
    this.db.prepare(
      "UPDATE segments SET path = ?, end_ns = ?, bytes = ?, frames = ?, sealed = 1 WHERE id = ?",
    )
      .run(seg.sealedPath, Math.round(Math.max(endNs, seg.lastNs)), seg.bytes, seg.frames, seg.id);
    this.limits.onSealed?.({
      id: seg.id,
      path: seg.sealedPath,
      bytes: seg.bytes,
      startNs: Math.round(seg.startNs),
      lastNs: Math.round(seg.lastNs),
      endNs: Math.round(Math.max(endNs, seg.lastNs)),
    });
    try {
      this.io.syncDir(this.dir);
    } catch (err) {
      // The sealed path is already authoritative; only this append is rejected.
      this.#fail("dir_sync", err, false);
    }
  }

  append(ordinal: number, recvNs: number, payload: Uint8Array): AppendResult {
    if (this.#terminal) throw new PersistenceError(this.#terminal);
    const cur = this.#current;
    const maxBytes = this.limits.maxBytes?.() ?? SEGMENT_MAX_BYTES;
    if (
      cur && cur.frames > 0 &&
      (recvNs - cur.startNs > (this.limits.maxAgeNs ?? SEGMENT_MAX_AGE_NS) ||
        cur.bytes + payload.length > maxBytes)
    ) {
      this.#seal(recvNs);
    }
    const seg = this.#current ??= this.#open(recvNs);
    const header = frameHeader(ordinal, recvNs, payload);
    try {
      this.io.write(seg.file, header);
      this.io.write(seg.file, payload);
    } catch (err) {
      this.#fail("write", err, true);
    }
    const offset = seg.bytes + FRAME_HEADER_BYTES;
    seg.bytes += FRAME_HEADER_BYTES + payload.length;
    seg.frames++;
    seg.lastNs = recvNs;
    return { segmentId: seg.id, offset, length: payload.length };
  }

  /** Bytes in the open (not yet reclaimable) segment. */
  get openBytes(): number {
    return this.#current?.bytes ?? 0;
  }

  /** The open segment's extent, for what a pin holds before it is sealed. */
  get openSpan(): { startNs: number; bytes: number } | undefined {
    const cur = this.#current;
    return cur ? { startNs: cur.startNs, bytes: cur.bytes } : undefined;
  }

  /** Flushes and seals whatever is open (session stop). */
  close(endNs: number): void {
    if (this.#terminal) {
      try {
        this.#current?.file.close();
      } catch { /* already closed */ }
      this.#current = undefined;
      return;
    }
    this.#seal(endNs);
  }
}

/** Reads one frame payload back, checking the record header it sits behind. */
export function readFrame(path: string, offset: number, length: number): Uint8Array {
  const file = Deno.openSync(path, { read: true });
  try {
    const buf = new Uint8Array(FRAME_HEADER_BYTES + length);
    file.seekSync(offset - FRAME_HEADER_BYTES, Deno.SeekMode.Start);
    let got = 0;
    while (got < buf.length) {
      const n = file.readSync(buf.subarray(got));
      if (n === null || n === 0) throw new Error("segment ends before the frame");
      got += n;
    }
    const view = new DataView(buf.buffer);
    const payload = buf.subarray(FRAME_HEADER_BYTES);
    if (
      view.getUint32(0) !== FRAME_MAGIC || view.getUint32(16) !== length ||
      view.getUint32(20) !== crc32(payload)
    ) {
      throw new Error("frame record does not match its index row");
    }
    return payload;
  } finally {
    file.close();
  }
}

export interface ScannedRecord {
  ordinal: number;
  recvNs: number;
  offset: number;
  length: number;
}

/** Walks a segment's complete records; stops at the first incomplete or corrupt one (a crash tail). */
export function scanSegment(bytes: Uint8Array): { records: ScannedRecord[]; validBytes: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: ScannedRecord[] = [];
  let pos = 0;
  while (pos + FRAME_HEADER_BYTES <= bytes.length) {
    if (view.getUint32(pos) !== FRAME_MAGIC) break;
    const length = view.getUint32(pos + 16);
    const end = pos + FRAME_HEADER_BYTES + length;
    if (end > bytes.length) break;
    if (crc32(bytes.subarray(pos + FRAME_HEADER_BYTES, end)) !== view.getUint32(pos + 20)) break;
    records.push({
      ordinal: view.getUint32(pos + 4),
      recvNs: view.getFloat64(pos + 8),
      offset: pos + FRAME_HEADER_BYTES,
      length,
    });
    pos = end;
  }
  return { records, validBytes: pos };
}
