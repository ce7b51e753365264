import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { classifyIndex } from "./index_db.ts";
import { INDEX_FILE } from "./format.ts";
import { scanSegment } from "./segments.ts";
import type { BrowserReap } from "./browser_record.ts";

/** What a crashed instance left behind, as found when a later process reclaims it. */
export interface RecoveryReport {
  instance_id: string;
  index: "current" | "absent" | "foreign_format" | "unreadable";
  sessions: number;
  /** Indexed frames whose segment records are complete and match their checksum. */
  frames_complete: number;
  /** Index rows pointing past the valid end of their segment (torn writes). */
  frames_dropped_torn: number;
  /** Records written to a segment whose index batch never committed (the crash tail). */
  frames_dropped_uncommitted: number;
  bytes_dropped: number;
  /** Indexed DOM chunks whose records are complete, and those dropped as torn or never committed. */
  dom_chunks_complete: number;
  dom_chunks_dropped: number;
  /** Present when the crashed instance had launched a browser: what reaping it did. */
  browser?: BrowserReap;
}

/**
 * Checks an abandoned instance root after a crash: the index opens, complete records are counted,
 * and the incomplete tail (torn records, and frames whose index rows never committed) is dropped:
 * rows deleted, segment files truncated to their last indexed record.
 */
export function recoverInstance(root: string, instanceId: string): RecoveryReport {
  const report: RecoveryReport = {
    instance_id: instanceId,
    index: "absent",
    sessions: 0,
    frames_complete: 0,
    frames_dropped_torn: 0,
    frames_dropped_uncommitted: 0,
    bytes_dropped: 0,
    dom_chunks_complete: 0,
    dom_chunks_dropped: 0,
  };
  const path = join(root, INDEX_FILE);
  try {
    Deno.statSync(path);
  } catch {
    return report;
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(path);
  } catch {
    report.index = "unreadable";
    return report;
  }
  try {
    if (classifyIndex(db) !== "current") {
      report.index = "foreign_format";
      return report;
    }
    report.index = "current";
    report.sessions = (db.prepare("SELECT count(*) AS n FROM sessions").get() as { n: number }).n;
    const segments = db.prepare("SELECT id, path, kind FROM segments").all() as Array<
      { id: number; path: string; kind: string }
    >;
    for (const seg of segments) {
      // DOM segments hold compressed event chunks indexed by dom_chunks; their records are framed alike.
      const dom = seg.kind === "dom";
      const table = dom ? "dom_chunks" : "frames";
      const rows = db.prepare(`SELECT id, offset, length FROM ${table} WHERE segment_id = ? ORDER BY offset`)
        .all(seg.id) as Array<
          { id: number; offset: number; length: number }
        >;
      let bytes: Uint8Array;
      try {
        bytes = Deno.readFileSync(seg.path);
      } catch {
        bytes = new Uint8Array(0);
      }
      const scan = scanSegment(bytes);
      const records = new Map(scan.records.map((r) => [r.offset, r.length]));
      let keepUntil = 0;
      for (const row of rows) {
        if (records.get(row.offset) === row.length) {
          if (dom) report.dom_chunks_complete++;
          else report.frames_complete++;
          keepUntil = Math.max(keepUntil, row.offset + row.length);
        } else {
          if (dom) report.dom_chunks_dropped++;
          else report.frames_dropped_torn++;
          db.prepare(`DELETE FROM ${table} WHERE id = ?`).run(row.id);
        }
      }
      const uncommitted = scan.records.filter((r) => r.offset + r.length > keepUntil).length;
      if (dom) report.dom_chunks_dropped += uncommitted;
      else report.frames_dropped_uncommitted += uncommitted;
      if (bytes.length > keepUntil) {
        report.bytes_dropped += bytes.length - keepUntil;
        try {
          Deno.truncateSync(seg.path, keepUntil);
        } catch { /* the root is reclaimed next anyway */ }
      }
    }
  } finally {
    db.close();
  }
  return report;
}
