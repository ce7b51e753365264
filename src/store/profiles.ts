import { join } from "node:path";
import { hostname } from "node:os";
import { ToolError } from "../errors.ts";
import { pidAlive } from "./pid.ts";

/** Managed profiles live under <data>/profiles/<name>; "default" is the reusable one. */
export const DEFAULT_PROFILE = "default";
const PROFILE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function profilesRoot(dataDir: string): string {
  return join(dataDir, "profiles");
}

export function managedProfileDir(dataDir: string, name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new ToolError({
      code: "invalid_argument",
      message: `Profile name ${JSON.stringify(name.slice(0, 80))} is not allowed.`,
      retry: "never",
      recovery: "Use 1-64 letters, digits, '-' or '_', starting with a letter or digit.",
      affected: { argument: "profile" },
    });
  }
  return join(profilesRoot(dataDir), name);
}

export interface ProfileLockHolder {
  host: string;
  pid: number;
  live: boolean;
}

/**
 * Chrome marks a profile in use with a SingletonLock symlink to "<host>-<pid>". A lock from
 * another host is treated as live: we cannot prove it is not.
 */
export function readProfileLock(profileDir: string): ProfileLockHolder | undefined {
  let target: string;
  try {
    target = Deno.readLinkSync(join(profileDir, "SingletonLock"));
  } catch {
    return undefined;
  }
  const dash = target.lastIndexOf("-");
  const host = dash > 0 ? target.slice(0, dash) : target;
  const pid = Number(target.slice(dash + 1));
  if (!Number.isInteger(pid) || pid <= 0) return { host, pid: 0, live: true };
  const live = host === hostname() ? pidAlive(pid) : true;
  return { host, pid, live };
}

/** A held claim on a managed profile; released when the session using it ends. */
export type ProfileClaim = { ok: true; release: () => void } | { ok: false; holderPid?: number };

function claimPath(dataDir: string, name: string): string {
  // Beside the profile, not inside it: Chrome owns the profile directory's contents.
  return join(profilesRoot(dataDir), `.${name}.claim`);
}

/**
 * Claims a managed profile for this process before Chrome is launched, so two servers sharing a
 * data dir cannot both launch it (Chrome's own SingletonLock is taken too late to stop the second
 * one reporting "Started."). An advisory lock (flock) is atomic and the kernel drops it when its
 * holder dies, so a crashed owner never leaves a stale claim. The holder's pid is written for the
 * loser's error message only; the lock, not the file, is the claim.
 */
export function claimManagedProfile(dataDir: string, name: string): ProfileClaim {
  Deno.mkdirSync(profilesRoot(dataDir), { recursive: true });
  const path = claimPath(dataDir, name);
  const file = Deno.openSync(path, { read: true, write: true, create: true });
  let locked: boolean;
  try {
    locked = file.tryLockSync(true);
  } catch {
    // A filesystem without advisory locks: fall back to Chrome's own SingletonLock check.
    file.close();
    return { ok: true, release: () => {} };
  }
  if (!locked) {
    file.close();
    return { ok: false, holderPid: claimHolderPid(path) };
  }
  try {
    file.truncateSync(0);
    file.writeSync(new TextEncoder().encode(JSON.stringify({ pid: Deno.pid, host: hostname() })));
  } catch { /* the lock is what counts */ }
  let held = true;
  return {
    ok: true,
    release: () => {
      if (!held) return;
      held = false;
      try {
        file.unlockSync();
      } catch { /* closing drops it anyway */ }
      try {
        file.close();
      } catch { /* already closed */ }
    },
  };
}

function claimHolderPid(path: string): number | undefined {
  try {
    const pid = JSON.parse(Deno.readTextFileSync(path))?.pid;
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether some process (this one included) holds the profile's claim. */
function claimHeld(dataDir: string, name: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(claimPath(dataDir, name), { read: true });
  } catch {
    return false;
  }
  try {
    if (!file.tryLockSync(true)) return true;
    file.unlockSync();
    return false;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

export interface ManagedProfileInfo {
  name: string;
  in_use: boolean;
  last_modified?: string;
}

export function listManagedProfiles(dataDir: string): ManagedProfileInfo[] {
  const out: ManagedProfileInfo[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(profilesRoot(dataDir))];
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!entry.isDirectory || !PROFILE_NAME.test(entry.name)) continue;
    const dir = join(profilesRoot(dataDir), entry.name);
    let last: string | undefined;
    try {
      last = Deno.statSync(dir).mtime?.toISOString();
    } catch { /* vanished between listing and stat */ }
    out.push({
      name: entry.name,
      in_use: claimHeld(dataDir, entry.name) || (readProfileLock(dir)?.live ?? false),
      last_modified: last,
    });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
