import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { join } from "node:path";
import { CACHE_MEMBERS, INDEX_FILE, INDEX_FORMAT_VERSION } from "./format.ts";

const SCHEMA = `
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sessions(
  id TEXT PRIMARY KEY, ordinal INTEGER NOT NULL, mode TEXT NOT NULL, profile TEXT NOT NULL,
  browser TEXT, protocol TEXT, started_at TEXT NOT NULL, ended_at TEXT, end_reason TEXT,
  every_nth_frame INTEGER NOT NULL, focus TEXT NOT NULL, capabilities TEXT NOT NULL, stats TEXT,
  record_dom INTEGER NOT NULL DEFAULT 1);
CREATE TABLE targets(
  session_id TEXT NOT NULL, page_id TEXT NOT NULL, target_id TEXT NOT NULL, opener_page_id TEXT,
  created_ns INTEGER NOT NULL, closed_ns INTEGER, PRIMARY KEY(session_id, page_id));
CREATE TABLE segments(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT NOT NULL, path TEXT NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER, bytes INTEGER NOT NULL DEFAULT 0,
  frames INTEGER NOT NULL DEFAULT 0, sealed INTEGER NOT NULL DEFAULT 0,
  kind TEXT NOT NULL DEFAULT 'frames');
CREATE TABLE frames(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT NOT NULL, ordinal INTEGER NOT NULL,
  chrome_ts REAL, recv_ns INTEGER NOT NULL, format TEXT NOT NULL, width INTEGER NOT NULL,
  height INTEGER NOT NULL, viewport_width REAL, viewport_height REAL, device_scale REAL,
  segment_id INTEGER NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL, warnings TEXT,
  changed_proportion REAL, change_bounds TEXT, mean_abs_diff REAL, signature BLOB);
CREATE INDEX frames_by_time ON frames(session_id, page_id, recv_ns, ordinal);
CREATE TABLE gaps(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT NOT NULL, kind TEXT NOT NULL,
  start_ns INTEGER NOT NULL, end_ns INTEGER, ordinal INTEGER, cause TEXT);
CREATE TABLE interactions(
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT NOT NULL, operation TEXT NOT NULL,
  params TEXT NOT NULL, started_ns INTEGER NOT NULL, dispatched_ns INTEGER, completed_ns INTEGER,
  observed_ns INTEGER, outcome TEXT NOT NULL, navigation TEXT, warnings TEXT, batch_id TEXT,
  error_code TEXT);
CREATE TABLE events(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT, kind TEXT NOT NULL,
  at_ns INTEGER NOT NULL, interaction_id TEXT, level TEXT, text TEXT, data TEXT);
CREATE INDEX events_by_time ON events(session_id, at_ns);
CREATE TABLE dom_chunks(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT NOT NULL, segment_id INTEGER NOT NULL,
  offset INTEGER NOT NULL, length INTEGER NOT NULL, first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL,
  events INTEGER NOT NULL, checkpoint INTEGER NOT NULL, clock_offset_ms REAL NOT NULL,
  raw_bytes INTEGER NOT NULL, href TEXT);
CREATE INDEX dom_chunks_by_time ON dom_chunks(session_id, page_id, first_ns);
CREATE TABLE dom_gaps(
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT NOT NULL, start_ns INTEGER NOT NULL,
  end_ns INTEGER, cause TEXT NOT NULL);
CREATE TABLE markers(
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, page_id TEXT, at_ns INTEGER NOT NULL, label TEXT,
  data TEXT);
`;

export type IndexClassification = "empty" | "current" | "unversioned" | "older" | "newer";

/** Classifies an index file before any schema mutation. */
export function classifyIndex(db: DatabaseSync): IndexClassification {
  const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
  const tables =
    (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
  if (version === 0) return tables === 0 ? "empty" : "unversioned";
  if (version === INDEX_FORMAT_VERSION) return "current";
  return version < INDEX_FORMAT_VERSION ? "older" : "newer";
}

/** Removes only the recording cache of an instance root: never profiles, config or diagnostics. */
export function clearRecordingCache(root: string): void {
  for (const member of CACHE_MEMBERS) {
    try {
      Deno.removeSync(join(root, member), { recursive: true });
    } catch { /* absent */ }
  }
}

function configure(db: DatabaseSync): void {
  // The WAL counts against the disk budget: checkpoint it every ~1 MB and truncate it back after.
  db.exec(
    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; " +
      "PRAGMA wal_autocheckpoint = 256; PRAGMA journal_size_limit = 1048576;",
  );
}

export interface OpenedIndex {
  db: DatabaseSync;
  /** What was found on disk before opening; anything but empty/current means the cache was reset. */
  found: IndexClassification;
}

/**
 * Opens (creating if needed) the index of an instance root in the one current format. A foreign
 * format clears the disposable recording cache and starts fresh; there is no migration.
 */
export function openIndex(root: string): OpenedIndex {
  const path = join(root, INDEX_FILE);
  let db = new DatabaseSync(path);
  const found = classifyIndex(db);
  if (found !== "empty" && found !== "current") {
    db.close();
    clearRecordingCache(root);
    db = new DatabaseSync(path);
  }
  configure(db);
  if (found !== "current") {
    db.exec("BEGIN");
    db.exec(SCHEMA);
    db.prepare("INSERT INTO meta(key, value) VALUES ('format', ?)").run(String(INDEX_FORMAT_VERSION));
    db.exec(`PRAGMA user_version = ${INDEX_FORMAT_VERSION}`);
    db.exec("COMMIT");
  }
  return { db, found };
}

/** A read-only connection for queries from another thread; WAL readers never block the writer. */
export function openIndexReader(root: string): DatabaseSync {
  const db = new DatabaseSync(join(root, INDEX_FILE), { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000;");
  return db;
}

export type Row = Record<string, SQLInputValue>;

const statements = new WeakMap<DatabaseSync, Map<string, StatementSync>>();

/**
 * Inserts a row into a table by its column names (names come from our own code, never input).
 * Statements are prepared once per table and column set: this runs for every ingested frame.
 */
export function insertRow(db: DatabaseSync, table: string, row: Row): void {
  const cols = Object.keys(row);
  const key = `${table}(${cols.join(",")})`;
  let cache = statements.get(db);
  if (!cache) {
    cache = new Map();
    statements.set(db, cache);
  }
  let stmt = cache.get(key);
  if (!stmt) {
    stmt = db.prepare(`INSERT OR REPLACE INTO ${key} VALUES (${cols.map(() => "?").join(",")})`);
    cache.set(key, stmt);
  }
  stmt.run(...cols.map((c) => row[c]));
}
