/**
 * The shared disk budget (spec: "Instance isolation and the shared budget", "Reclaim"): the
 * configured total divided by N, the number of instance roots currently held under advisory lock,
 * and the pure decisions the ingest worker takes at every write.
 */
import { basename, dirname, join } from "node:path";
import type { Retained } from "./protection.ts";

/** Where N came from: a fresh count, the last count this process proved, or the spec's assumption. */
export type InstanceCountSource = "counted" | "last_counted" | "assumed";

export interface InstanceCount {
  instances: number;
  source: InstanceCountSource;
  /** Roots whose lock nobody holds: abandoned, or a peer in its first instant. */
  unheld?: string[];
}

/** With no evidence about peers at all, an instance must not conclude it is alone. */
export const ASSUMED_INSTANCES = 4;
/** Reclaim starts when usage would pass this share of the allowance... */
export const HIGH_WATER = 0.9;
/** ...and trims down to this, so a long recording trims in steps instead of at every frame. */
export const LOW_WATER = 0.7;

/**
 * Counts live instance roots by probing each one's lock without blocking and without reading any
 * of its data. A root whose lock cannot be probed (no lock file yet: a peer still starting) is not
 * counted; this process's own root always is.
 */
export class InstanceCounter {
  #lastProven?: number;

  constructor(
    readonly instancesDir: string,
    readonly selfId: string,
    private readonly readDir: (dir: string) => Iterable<Deno.DirEntry> = Deno.readDirSync,
  ) {}

  count(): InstanceCount {
    let n = 0;
    const unheld: string[] = [];
    try {
      for (const entry of this.readDir(this.instancesDir)) {
        if (!entry.isDirectory) continue;
        const root = join(this.instancesDir, entry.name);
        if (entry.name === this.selfId || lockHeld(join(root, ".lock"))) n++;
        else unheld.push(root);
      }
    } catch {
      return this.#lastProven !== undefined
        ? { instances: this.#lastProven, source: "last_counted" }
        : { instances: ASSUMED_INSTANCES, source: "assumed" };
    }
    this.#lastProven = Math.max(1, n);
    return { instances: this.#lastProven, source: "counted", ...(unheld.length > 0 ? { unheld } : {}) };
  }
}

/** The counter for an instance root, with the test fault that blinds enumeration (messages.ts). */
export function instanceCounterFor(
  root: string,
  faults: { instances_unreadable?: boolean },
): InstanceCounter {
  return new InstanceCounter(
    dirname(root),
    basename(root),
    faults.instances_unreadable
      ? () => {
        throw new Deno.errors.PermissionDenied("instances/ unreadable (injected)");
      }
      : undefined,
  );
}

/** True when another open file description holds the lock exclusively (its owner is alive). */
export function lockHeld(lockPath: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(lockPath, { read: true });
  } catch {
    return false;
  }
  try {
    // A shared probe: it fails only against an exclusive holder and never excludes a peer for long.
    const got = file.tryLockSync(false);
    if (got) file.unlockSync();
    return !got;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/**
 * Deletes an instance root only while holding its lock exclusively, which proves no process owns
 * it. A lock file younger than minAgeMs may belong to a peer between creating and locking it, so
 * that root is stepped over; so is one without a lock file. Returns whether the root went.
 */
export function reclaimIfAbandoned(root: string, minAgeMs: number, nowMs = Date.now()): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(join(root, ".lock"), { read: true });
  } catch {
    return false;
  }
  try {
    if (!file.tryLockSync(true)) return false;
    const mtime = file.statSync().mtime?.getTime() ?? nowMs;
    if (nowMs - mtime < minAgeMs) return false;
    Deno.removeSync(root, { recursive: true });
    return true;
  } catch {
    return false;
  } finally {
    file.close();
  }
}

/** Bytes each live instance may hold; an unlimited total stays unlimited. */
export function shareOf(totalBytes: number, instances: number): number {
  if (!Number.isFinite(totalBytes) || totalBytes <= 0) return Number.POSITIVE_INFINITY;
  return Math.floor(totalBytes / Math.max(1, instances));
}

/**
 * Segment size under a share: small enough that several sealed segments fit (reclaim can only
 * delete sealed ones), never below a floor that would make every frame its own file.
 */
export function segmentBytesFor(share: number, max: number): number {
  if (!Number.isFinite(share)) return max;
  return Math.min(max, Math.max(64 * 1024, Math.floor(share / 8)));
}

/** Something the walk may reclaim in this instance's own storage: a sealed segment, a file or an artifact. */
export interface ReclaimCandidate extends Retained {
  id: number;
  bytes: number;
  /** Wall-clock ms when it became immutable (sealed or written): the age its newest content has. */
  sealed_at_ms: number;
}

export interface ReclaimPlan {
  /** Candidates to delete: artifacts, then evidence oldest first. */
  evict: ReclaimCandidate[];
  /** Segments among `evict` that went for age rather than room. */
  expired: number;
  /** How many of `evict` were under artifact grace, dropped because nothing else was left. */
  grace_overridden: number;
  /** Usage after the plan runs. */
  used_after: number;
  /** The write still does not fit in the share after everything reclaimable went. */
  blocked: boolean;
}

export interface ReclaimInput {
  used: number;
  incoming: number;
  share: number;
  /** Generated artifacts, oldest first: reclaimed before recorded evidence (they can be regenerated). */
  artifacts?: ReclaimCandidate[];
  /** Recorded evidence in retention order (oldest first). */
  candidates: ReclaimCandidate[];
  nowMs: number;
  /** 0 disables age-out. */
  maxAgeMs: number;
  /** Protected from budget pressure and age-out alike. */
  isPinned?: (c: ReclaimCandidate) => boolean;
  /** Protected from budget pressure only, and only while something unprotected is left. */
  inGrace?: (c: ReclaimCandidate) => boolean;
}

/**
 * One ordered walk over this instance's own storage: expired evidence first (age-out holds even well
 * inside the budget); then, if the write would pass the high-water mark, artifacts and the oldest
 * evidence until usage is back at the low-water mark, stepping over pins and artifact grace; and
 * only if the write still would not fit, the grace is dropped rather than stalling capture.
 */
export function planReclaim(input: ReclaimInput): ReclaimPlan {
  const { share, incoming, nowMs, maxAgeMs } = input;
  const pinned = input.isPinned ?? (() => false);
  const grace = input.inGrace ?? (() => false);
  const ordered = [...(input.artifacts ?? []), ...input.candidates];
  const chosen = new Set<ReclaimCandidate>();
  let used = input.used;
  const take = (c: ReclaimCandidate) => {
    chosen.add(c);
    used -= c.bytes;
  };
  let expired = 0;
  if (maxAgeMs > 0) {
    for (const c of ordered) {
      if (pinned(c) || nowMs - c.sealed_at_ms <= maxAgeMs) continue;
      take(c);
      if (c.kind === "segment") expired++;
    }
  }
  let overridden = 0;
  if (used + incoming > share * HIGH_WATER) {
    const target = share * LOW_WATER;
    for (const c of ordered) {
      if (used + incoming <= target) break;
      if (!chosen.has(c) && !pinned(c) && !grace(c)) take(c);
    }
    if (used + incoming > share) {
      for (const c of ordered) {
        if (used + incoming <= share * HIGH_WATER) break;
        if (!chosen.has(c) && !pinned(c)) {
          take(c);
          overridden++;
        }
      }
    }
  }
  return {
    evict: ordered.filter((c) => chosen.has(c)),
    expired,
    grace_overridden: overridden,
    used_after: Math.max(0, used),
    blocked: used + incoming > share,
  };
}
