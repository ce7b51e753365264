import { join, relative, resolve, sep } from "node:path";
import { hostname } from "node:os";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { pidAlive } from "./pid.ts";
import { recoverInstance, type RecoveryReport } from "./recovery.ts";
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

  /** Writes one evidence file and returns its resource URI. */
  async writeEvidence(kind: string, ext: string, bytes: Uint8Array): Promise<{ uri: string; bytes: number }> {
    const { path, uri } = await this.reserveEvidence(kind, ext);
    await Deno.writeFile(path, bytes);
    this.onEvidence?.(path, bytes.byteLength);
    return { uri, bytes: bytes.byteLength };
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

  close(): void {
    try {
      this.#lock?.close();
    } catch { /* already closed */ }
  }
}

function mimeOf(path: string): string {
  if (path.endsWith(".png")) return "image/png";
  if (path.endsWith(".jpg") || path.endsWith(".jpeg")) return "image/jpeg";
  if (path.endsWith(".json")) return "application/json";
  if (path.endsWith(".mp4")) return "video/mp4";
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
 * Removes instance roots whose owning process is gone. Only provable on this host;
 * anything we cannot prove abandoned is left alone.
 */
async function reclaimAbandoned(dataDir: string, selfId: string): Promise<RecoveryReport[]> {
  const reports: RecoveryReport[] = [];
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
      // The crashed process's browser goes first: it still holds the profile (SingletonLock) and
      // may still be writing into its temporary profile.
      const browserRecord = await readBrowserRecord(root);
      const browser = browserRecord ? await reapBrowser(browserRecord) : undefined;
      const report: RecoveryReport = {
        ...recoverInstance(root, entry.name),
        ...(browser ? { browser } : {}),
      };
      reports.push(report);
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
    }
  } catch { /* no instances folder yet */ }
  return reports;
}
