import { join, relative, resolve, sep } from "node:path";
import { hostname } from "node:os";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { pidAlive } from "./pid.ts";
import { recoverInstance, type RecoveryReport } from "./recovery.ts";
import type { PageSpan } from "./protection.ts";
import {
  type BrowserRecord,
  clearBrowserRecord,
  readBrowserRecord,
  reapBrowser,
  writeBrowserRecord,
} from "./browser_record.ts";

const log = logger("store");

export const EVIDENCE_SCHEME = "krometrail://evidence/";
const EVIDENCE_PATH = /^[a-z0-9_-]+(\/[A-Za-z0-9_.-]+){1,3}$/;

interface OwnerRecord {
  pid: number;
  host: string;
  started_at: string;
}

/**
 * The process-owned instance root under <data>/instances/<uuid>. Evidence written here is
 * addressable as krometrail://evidence/<kind>/<file> for the lifetime of this process.
 */
export class InstanceStore {
  /**
   * The instance root this process opened. A process owns exactly one (spec: instance isolation),
   * so the browser layer records its launched browser here without being handed the store.
   */
  static current?: InstanceStore;
  readonly id = crypto.randomUUID();
  readonly root: string;
  /** Crashed instances found and reclaimed at startup, with what their evidence looked like. */
  readonly recovered: RecoveryReport[] = [];
  #lock?: Deno.FsFile;
  #seq = 0;
  /**
   * Told of every evidence file this process writes, so its bytes count against the instance's
   * share (the recorder forwards them to the ingest worker, which owns the budget).
   */
  onEvidence?: (path: string, bytes: number) => void;
  /**
   * Judges a file against the shared budget before it counts (the recorder sets it); throws the
   * structured refusal. `span` is an artifact's source, put under artifact grace.
   */
  admission?: (what: string, bytes: number, span?: PageSpan) => Promise<void>;

  private constructor(readonly dataDir: string) {
    this.root = join(dataDir, "instances", this.id);
  }

  static async open(dataDir: string): Promise<InstanceStore> {
    const store = new InstanceStore(dataDir);
    await Deno.mkdir(join(store.root, "evidence"), { recursive: true });
    const owner: OwnerRecord = { pid: Deno.pid, host: hostname(), started_at: new Date().toISOString() };
    await Deno.writeTextFile(join(store.root, "owner.json"), JSON.stringify(owner));
    store.#lock = await Deno.open(join(store.root, ".lock"), { create: true, write: true });
    await store.#lock.lock(true);
    store.recovered.push(...await reclaimAbandoned(dataDir, store.id));
    InstanceStore.current = store;
    return store;
  }

  /** Remembers the launched browser so a later process can reap it if this one dies first. */
  recordBrowser(record: BrowserRecord): Promise<void> {
    return writeBrowserRecord(this.root, record);
  }

  forgetBrowser(): Promise<void> {
    return clearBrowserRecord(this.root);
  }

  /** Writes one evidence file, once the budget admits it, and returns its resource URI. */
  async writeEvidence(
    kind: string,
    ext: string,
    bytes: Uint8Array,
    span?: PageSpan,
  ): Promise<{ uri: string; bytes: number }> {
    await this.admission?.(evidenceNoun(kind), bytes.byteLength, span);
    const { path, uri } = await this.reserveEvidence(kind, ext);
    await Deno.writeFile(path, bytes);
    this.onEvidence?.(path, bytes.byteLength);
    return { uri, bytes: bytes.byteLength };
  }

  /**
   * Counts a file another program wrote into a reserved name (ffmpeg's video). One the budget
   * refuses is removed, so nothing over the share stays on disk.
   */
  async adoptEvidence(kind: string, path: string, span?: PageSpan): Promise<number> {
    const bytes = (await Deno.stat(path)).size;
    try {
      await this.admission?.(evidenceNoun(kind), bytes, span);
    } catch (err) {
      await Deno.remove(path).catch(() => {});
      throw err;
    }
    this.onEvidence?.(path, bytes);
    return bytes;
  }

  /** A fresh evidence file name for a writer that produces the file itself (e.g. ffmpeg). */
  async reserveEvidence(kind: string, ext: string): Promise<{ path: string; uri: string }> {
    const name = `${Date.now().toString(36)}-${(++this.#seq).toString(36)}.${ext}`;
    const dir = join(this.root, "evidence", kind);
    await Deno.mkdir(dir, { recursive: true });
    return { path: join(dir, name), uri: `${EVIDENCE_SCHEME}${kind}/${name}` };
  }

  /** Reads an evidence resource; the path is validated so it can never leave the evidence folder. */
  async readEvidence(path: string): Promise<{ bytes: Uint8Array; mimeType: string }> {
    const base = join(this.root, "evidence");
    const full = resolve(base, path);
    if (!EVIDENCE_PATH.test(path) || relative(base, full).startsWith("..") || !full.startsWith(base + sep)) {
      throw evidenceNotFound(path);
    }
    try {
      return { bytes: await Deno.readFile(full), mimeType: mimeOf(path) };
    } catch {
      throw evidenceNotFound(path);
    }
  }

  /** Whether a URI this process returned still names a file (reclaim may have taken it). */
  evidenceExists(uri: string): boolean {
    if (!uri.startsWith(EVIDENCE_SCHEME)) return false;
    const path = uri.slice(EVIDENCE_SCHEME.length);
    if (!EVIDENCE_PATH.test(path)) return false;
    try {
      return Deno.statSync(join(this.root, "evidence", path)).isFile;
    } catch {
      return false;
    }
  }

  close(): void {
    try {
      this.#lock?.close();
    } catch { /* already closed */ }
  }
}

function evidenceNoun(kind: string): string {
  return kind === "screenshots" ? "screenshot" : kind === "videos" ? "video" : "artifact";
}

function mimeOf(path: string): string {
  if (path.endsWith(".png")) return "image/png";
  if (path.endsWith(".jpg") || path.endsWith(".jpeg")) return "image/jpeg";
  if (path.endsWith(".json")) return "application/json";
  if (path.endsWith(".mp4")) return "video/mp4";
  if (path.endsWith(".pdf")) return "application/pdf";
  if (path.endsWith(".json.gz")) return "application/gzip";
  return "application/octet-stream";
}

export function evidenceNotFound(path: string): ToolError {
  return new ToolError({
    code: "evidence_not_found",
    message: `No evidence resource ${EVIDENCE_SCHEME}${path.slice(0, 120)} exists in this process.`,
    retry: "never",
    recovery:
      "Evidence URIs are valid only in the process that returned them; take a new screenshot or re-run the query.",
  });
}

function ownerAlive(owner: OwnerRecord): boolean {
  return owner.host !== hostname() || pidAlive(owner.pid);
}

/**
 * Removes instance roots whose owning process is gone. A root is deleted only while this process
 * holds its `.lock` exclusively (spec: "Instance isolation and the shared budget": exclusive
 * ownership proved by flock), and only after owner.json shows its pid dead on this host. Anything
 * not proved abandoned is left alone: a foreign host, a live pid, an unreadable owner.json, or a
 * lock someone holds (pid dead but lock held: a process we cannot see, or a peer's counting probe at
 * that instant). Such a root is stepped over, not retried; a later start or the worker's reclaim
 * walk gets another chance. On a host without flock nothing is reclaimed.
 */
async function reclaimAbandoned(dataDir: string, selfId: string): Promise<RecoveryReport[]> {
  const reports: RecoveryReport[] = [];
  if (Deno.build.os !== "linux" && Deno.build.os !== "darwin") return reports;
  const instances = join(dataDir, "instances");
  try {
    for await (const entry of Deno.readDir(instances)) {
      if (!entry.isDirectory || entry.name === selfId) continue;
      const root = join(instances, entry.name);
      let owner: OwnerRecord;
      try {
        owner = JSON.parse(await Deno.readTextFile(join(root, "owner.json")));
      } catch {
        continue;
      }
      if (ownerAlive(owner)) continue;
      const lock = await lockAbandonedRoot(root);
      if (!lock) {
        log.info("stepped over an abandoned instance root whose lock is held: {root}", { root });
        continue;
      }
      try {
        reports.push(await reclaimLockedRoot(root, entry.name));
      } finally {
        lock.close();
      }
    }
  } catch { /* no instances folder yet */ }
  return reports;
}

/**
 * Takes a dead owner's `.lock` exclusively without waiting; undefined when that cannot be had now.
 * A root with no lock file predates the lock or lost its owner between writing owner.json and
 * creating the lock (open() writes them in that order), so nobody ever held it: the lock file is
 * created here and taken like any other, which also keeps two starts from reclaiming one root at once.
 */
async function lockAbandonedRoot(root: string): Promise<Deno.FsFile | undefined> {
  const path = join(root, ".lock");
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) return undefined;
    try {
      file = await Deno.open(path, { write: true, create: true });
    } catch {
      return undefined;
    }
  }
  try {
    if (await file.tryLock(true)) return file;
  } catch { /* cannot lock: not proved */ }
  file.close();
  return undefined;
}

/** Reaps the dead owner's browser, reports what its evidence looked like, and deletes the root. */
async function reclaimLockedRoot(root: string, id: string): Promise<RecoveryReport> {
  // The crashed process's browser goes first: it still holds the profile (SingletonLock) and
  // may still be writing into its temporary profile.
  const browserRecord = await readBrowserRecord(root);
  const browser = browserRecord ? await reapBrowser(browserRecord) : undefined;
  const report: RecoveryReport = {
    ...recoverInstance(root, id),
    ...(browser ? { browser } : {}),
  };
  if (browser && (browser.processes_killed > 0 || browser.temporary_profile_removed)) {
    log.info(
      "reaped an abandoned instance's browser: {killed} processes, temporary profile removed: {removed}",
      {
        killed: browser.processes_killed,
        removed: browser.temporary_profile_removed,
      },
    );
  }
  log.info(
    "reclaimed an abandoned instance: {complete} complete frames, {torn} torn and {uncommitted} uncommitted dropped",
    {
      complete: report.frames_complete,
      torn: report.frames_dropped_torn,
      uncommitted: report.frames_dropped_uncommitted,
    },
  );
  await Deno.remove(root, { recursive: true }).catch(() => {});
  return report;
}
