import { basename, join } from "node:path";
import { killQuietly, listProcesses, type ProcessInfo, usesProfileDir } from "./pid.ts";

/** Prefix of every temporary profile directory; only such directories are ever removed wholesale. */
export const TEMP_PROFILE_PREFIX = "krometrail-profile-";

const RECORD_FILE = "browser.json";

/**
 * What an instance root remembers about the browser it launched, so a later process can end that
 * browser if this one dies without doing so (the watchdog is the first line; this is the second).
 */
export interface BrowserRecord {
  /** Chrome's browser process; 0 while the launch has not spawned it yet. */
  pid: number;
  /** True when Chrome leads its own process group (pgid == pid), so the group can be swept. */
  group: boolean;
  profile_dir: string;
  temporary: boolean;
  started_at: string;
}

/** What reclaiming a crashed instance did to the browser it had launched. */
export interface BrowserReap {
  /** Processes verified as that browser's (its --user-data-dir on their command line) and killed. */
  processes_killed: number;
  /** Processes still alive after the bound (should be 0). */
  processes_remaining: number;
  temporary_profile_removed: boolean;
}

export function isTemporaryProfileDir(path: string): boolean {
  return basename(path).startsWith(TEMP_PROFILE_PREFIX);
}

export async function writeBrowserRecord(root: string, record: BrowserRecord): Promise<void> {
  // Write-then-rename so a crash mid-write never leaves a record the next process cannot parse.
  const tmp = join(root, `${RECORD_FILE}.tmp`);
  await Deno.writeTextFile(tmp, JSON.stringify(record));
  await Deno.rename(tmp, join(root, RECORD_FILE));
}

export async function clearBrowserRecord(root: string): Promise<void> {
  await Deno.remove(join(root, RECORD_FILE)).catch(() => {});
}

export async function readBrowserRecord(root: string): Promise<BrowserRecord | undefined> {
  try {
    const raw = JSON.parse(await Deno.readTextFile(join(root, RECORD_FILE)));
    if (typeof raw?.profile_dir !== "string" || !Number.isInteger(raw?.pid)) return undefined;
    return {
      pid: raw.pid,
      group: raw.group === true,
      profile_dir: raw.profile_dir,
      temporary: raw.temporary === true,
      started_at: String(raw.started_at ?? ""),
    };
  } catch {
    return undefined;
  }
}

/**
 * The recorded browser's live processes: the recorded pid, and (when Chrome led its own group)
 * members of that group, each only if its command line still names the recorded profile dir.
 * A reused pid never matches, and neither does another process's Chrome on the same profile
 * (it has another group). Undefined when processes cannot be listed.
 */
export function recordedBrowserProcesses(record: BrowserIdentity): ProcessInfo[] | undefined {
  if (record.pid <= 1) return [];
  const all = listProcesses();
  if (!all) return undefined;
  return all.filter((p) =>
    (p.pid === record.pid || (record.group && p.pgid === record.pid)) &&
    usesProfileDir(p.args, record.profile_dir)
  );
}

/** The parts of a record that identify a browser's processes. */
export type BrowserIdentity = Pick<BrowserRecord, "pid" | "group" | "profile_dir">;

/** Kills the recorded browser's verified processes and waits (bounded) until none is alive. */
export async function killRecordedBrowser(
  record: BrowserIdentity,
  waitMs = 3_000,
): Promise<{ killed: number; remaining: number }> {
  const victims = recordedBrowserProcesses(record);
  if (!victims) {
    // Without a process list nothing can be verified, so nothing is killed.
    return { killed: 0, remaining: 0 };
  }
  for (const p of victims) killQuietly(p.pid);
  let remaining = victims.length;
  const deadline = Date.now() + waitMs;
  while (remaining > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    const live = new Set((recordedBrowserProcesses(record) ?? []).map((p) => p.pid));
    remaining = victims.filter((p) => live.has(p.pid)).length;
  }
  return { killed: victims.length, remaining };
}

/** Kills the recorded browser (verified, see above), then removes its temporary profile. */
export async function reapBrowser(record: BrowserRecord, waitMs = 3_000): Promise<BrowserReap> {
  const { killed, remaining } = await killRecordedBrowser(record, waitMs);
  let removed = false;
  if (record.temporary && isTemporaryProfileDir(record.profile_dir) && remaining === 0) {
    removed = await removeProfileDir(record.profile_dir);
  }
  return { processes_killed: killed, processes_remaining: remaining, temporary_profile_removed: removed };
}

/**
 * Removes a profile directory, retrying briefly: a helper that was still exiting can recreate a
 * file between the walk and the final rmdir, which would otherwise leak the whole tree.
 */
export async function removeProfileDir(dir: string): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await Deno.remove(dir, { recursive: true });
      return true;
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return attempt > 0;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}
