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
    out.push({ name: entry.name, in_use: readProfileLock(dir)?.live ?? false, last_modified: last });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}
