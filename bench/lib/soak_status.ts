/**
 * What the soak benchmark reads besides tool results: the instance root's size on disk, and the
 * retention figures of browser_status. Those figures are still growing (share, N, usage, pins land in
 * stages), so they are found by name anywhere in the status instead of at one fixed path, and a figure
 * the server does not report yet is left undefined and printed as "—".
 */
import { join } from "node:path";

export interface DirSize {
  /** Sum of file lengths (what a budget counts). */
  bytes: number;
  /** Allocated blocks (what `du` shows). */
  allocated: number;
  files: number;
}

/** Recursive size of a directory; files that vanish mid-walk (reclaim at work) are skipped. */
export async function dirSize(path: string): Promise<DirSize> {
  const out: DirSize = { bytes: 0, allocated: 0, files: 0 };
  const walk = async (dir: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.isFile) {
        try {
          const st = await Deno.lstat(p);
          out.bytes += st.size;
          out.allocated += (st.blocks ?? 0) * 512;
          out.files++;
        } catch { /* removed while walking */ }
      }
    }
  };
  await walk(path);
  return out;
}

/**
 * The server's own instance root under <data>/instances/: the one whose owner.json names its pid, or
 * the only one there.
 */
export async function findInstanceRoot(dataDir: string, pid: number): Promise<string | undefined> {
  const base = join(dataDir, "instances");
  const roots: string[] = [];
  try {
    for await (const e of Deno.readDir(base)) if (e.isDirectory) roots.push(join(base, e.name));
  } catch {
    return undefined;
  }
  for (const r of roots) {
    try {
      const owner = JSON.parse(await Deno.readTextFile(join(r, "owner.json"))) as { pid?: number };
      if (owner.pid === pid) return r;
    } catch { /* not an instance root, or being written */ }
  }
  return roots.length === 1 ? roots[0] : undefined;
}

type Leaf = [path: string, value: number | string | boolean];

/** Every scalar in an object tree as a dotted path (arrays other than short scalar lists are skipped). */
export function leaves(value: unknown, prefix = "", depth = 0): Leaf[] {
  if (depth > 5 || value === null || value === undefined) return [];
  if (typeof value === "number" || typeof value === "string" || typeof value === "boolean") {
    return [[prefix, value]];
  }
  if (Array.isArray(value)) return [];
  if (typeof value !== "object") return [];
  return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
    leaves(v, prefix ? `${prefix}.${k}` : k, depth + 1)
  );
}

const last = (path: string) => path.slice(path.lastIndexOf(".") + 1);
/** Paths that hold storage accounting rather than, say, a page's byte counts. */
const RETENTION_PATH = /budget|retention|storage|disk|reclaim|usage|share|pin/i;

/** The first number whose own key matches, preferring the retention status over older fields. */
function pick(all: Leaf[], key: RegExp, scope = RETENTION_PATH): number | undefined {
  const hits = all.filter(([p, v]) => typeof v === "number" && key.test(last(p)) && scope.test(p));
  const hit = hits.find(([p]) => /retention/i.test(p)) ?? hits[0];
  return hit ? hit[1] as number : undefined;
}

export interface RetentionFigures {
  budgetBytes?: number;
  shareBytes?: number;
  instances?: number;
  usedBytes?: number;
  pinnedBytes?: number;
  /** Bytes reclaim has given back so far (segments, artifacts, abandoned roots). */
  reclaimedBytes?: number;
  /** Whether capture or eviction says it is blocked or paused. */
  blocked?: string;
  /** The worker's own memory when status reports it (a thread has no RSS of its own). */
  workerHeapBytes?: number;
  /** Every retention-looking scalar, for the notes. */
  seen: Leaf[];
}

/** The retention figures browser_status reports today, wherever in the result they are. */
export function retentionFigures(status: Record<string, unknown>): RetentionFigures {
  const all = leaves(status);
  const blockedLeaf = all.find(([p, v]) =>
    /blocked|paused/i.test(last(p)) && v !== false && v !== "none" && RETENTION_PATH.test(p)
  );
  return {
    budgetBytes: pick(all, /^(budget_bytes|configured_bytes|configured|total_bytes|budget)$/),
    shareBytes: pick(all, /^share(_bytes)?$/),
    instances: pick(all, /^(n|instances|instance_count|live_instances|instances_live|divisor)$/),
    usedBytes: pick(all, /^(used_bytes|usage_bytes|used|usage|current_usage|current_usage_bytes)$/),
    pinnedBytes: pick(all, /^pinned(_usage)?(_bytes)?$/),
    reclaimedBytes: pick(all, /^bytes$/, /reclaim/i),
    blocked: blockedLeaf ? `${blockedLeaf[0]}=${String(blockedLeaf[1])}` : undefined,
    workerHeapBytes: pick(all, /heap_used(_bytes)?$|^used_heap_size$/, /worker/i),
    seen: all.filter(([p]) => RETENTION_PATH.test(p) || /worker|heap/i.test(p)),
  };
}

/** Frame counters the loss equation subtracts besides stored/dropped/rejected/over budget. */
export function evictedFrames(capture: Record<string, unknown>): Array<[string, number]> {
  return Object.entries(capture).filter(([k, v]) =>
    typeof v === "number" && /^frames_(evicted|reclaimed|trimmed|expired|aged_out|deleted)$/.test(k)
  ) as Array<[string, number]>;
}
