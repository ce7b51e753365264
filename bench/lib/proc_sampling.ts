/**
 * Linux /proc readings for one process: RSS, CPU per thread, the CPU of its descendants (Chromium),
 * finding a pid, and killing what a process left running.
 */
import { sleep } from "./wait.ts";

/** RSS is read this often during a window, for the trail and the maximum. */
export const RSS_EVERY_MS = 1_000;

/** Clock ticks per second, the unit of /proc CPU times (100 on almost every Linux, hence the fallback). */
const CLK_TCK = await (async () => {
  try {
    const out = await new Deno.Command("getconf", { args: ["CLK_TCK"], stdout: "piped" }).output();
    const n = Number(new TextDecoder().decode(out.stdout).trim());
    return n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

export interface Stat {
  comm: string;
  /** R, S, D, Z, … */
  state: string;
  ppid: number;
  /** utime + stime in clock ticks. */
  ticks: number;
  /** Start time in ticks since boot: with the pid, identifies a process across samples. */
  start: number;
}

/** Parses /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat (comm may hold spaces and parentheses). */
function readStat(path: string): Stat | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(")");
  const f = text.slice(close + 2).split(" "); // f[0] is field 3 (state)
  return {
    comm: text.slice(text.indexOf("(") + 1, close),
    state: f[0],
    ppid: Number(f[1]),
    ticks: Number(f[11]) + Number(f[12]),
    start: Number(f[19]),
  };
}

/** VmRSS in KiB; undefined once the process is gone. */
export function rssKb(pid: number): number | undefined {
  try {
    const m = Deno.readTextFileSync(`/proc/${pid}/status`).match(/^VmRSS:\s+(\d+)\s+kB/m);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

interface Thread {
  name: string;
  ticks: number;
}

export interface Sample {
  at: number;
  rssKb: number;
  ticks: number;
  threads: Map<number, Thread>;
  /** Descendant processes (Chromium and its helpers): pid → stat. */
  tree: Map<number, Stat>;
}

/** Every process below `root`, found by walking parent pids over one pass of /proc. */
export function descendants(root: number): Map<number, Stat> {
  const all = new Map<number, Stat>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const s = readStat(`/proc/${e.name}/stat`);
    if (s) all.set(Number(e.name), s);
  }
  const out = new Map<number, Stat>();
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift() ?? 0;
    for (const [pid, s] of all) {
      if (s.ppid === parent && !out.has(pid)) {
        out.set(pid, s);
        queue.push(pid);
      }
    }
  }
  return out;
}

export function sample(pid: number): Sample {
  const stat = readStat(`/proc/${pid}/stat`);
  const rss = rssKb(pid);
  if (!stat || rss === undefined) throw new Error(`process ${pid} is gone`);
  const threads = new Map<number, Thread>();
  for (const e of Deno.readDirSync(`/proc/${pid}/task`)) {
    const t = readStat(`/proc/${pid}/task/${e.name}/stat`);
    if (t) threads.set(Number(e.name), { name: t.comm, ticks: t.ticks });
  }
  return { at: performance.now(), rssKb: rss, ticks: stat.ticks, threads, tree: descendants(pid) };
}

export interface ThreadCpu {
  tid: number;
  name: string;
  seconds: number;
}

export interface Usage {
  windowSeconds: number;
  totalSeconds: number;
  mainSeconds: number;
  /** Non-main threads, busiest first (threads that ended during the window are not counted). */
  threads: ThreadCpu[];
  /** CPU of the descendant process tree (Chromium) in the window. */
  chromiumSeconds: number;
  chromiumProcesses: number;
  rssStartKb: number;
  rssEndKb: number;
  rssMaxKb: number;
  rssTrailKb: number[];
}

/** What `pid` used between two samples; `trail` is the RSS read in between (see watchRss). */
export function usage(pid: number, start: Sample, end: Sample, trail: number[]): Usage {
  const sec = (ticks: number) => ticks / CLK_TCK;
  const threads: ThreadCpu[] = [];
  let mainSeconds = 0;
  for (const [tid, t] of end.threads) {
    const seconds = sec(t.ticks - (start.threads.get(tid)?.ticks ?? 0));
    if (tid === pid) mainSeconds = seconds;
    else threads.push({ tid, name: t.name, seconds });
  }
  threads.sort((a, b) => b.seconds - a.seconds);
  let chromiumTicks = 0;
  for (const [p, s] of end.tree) {
    const before = start.tree.get(p);
    // A reused pid (different start time) is a new process: all its ticks fall in the window.
    chromiumTicks += s.ticks - (before && before.start === s.start ? before.ticks : 0);
  }
  const all = [start.rssKb, ...trail, end.rssKb];
  return {
    windowSeconds: (end.at - start.at) / 1000,
    totalSeconds: sec(end.ticks - start.ticks),
    mainSeconds,
    threads,
    chromiumSeconds: sec(chromiumTicks),
    chromiumProcesses: end.tree.size,
    rssStartKb: start.rssKb,
    rssEndKb: end.rssKb,
    rssMaxKb: Math.max(...all),
    rssTrailKb: all,
  };
}

/** Waits `ms`, reading the process's RSS every RSS_EVERY_MS. */
export async function watchRss(pid: number, ms: number): Promise<number[]> {
  const trail: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    await sleep(Math.min(RSS_EVERY_MS, until - performance.now()));
    const r = rssKb(pid);
    if (r !== undefined) trail.push(r);
  }
  return trail;
}

/**
 * Processes from a sample's tree (same pid and start time) still alive `graceMs` after close are killed;
 * returns them as "name pid" for the report. Zombies are left to their parent.
 */
export async function reap(tree: Map<number, Stat>, graceMs = 2_000): Promise<string[]> {
  const alive = () =>
    [...tree].filter(([pid, s]) => {
      const now = readStat(`/proc/${pid}/stat`);
      return now !== undefined && now.start === s.start && now.state !== "Z";
    });
  const until = performance.now() + graceMs;
  while (alive().length > 0 && performance.now() < until) await sleep(100);
  const killed: string[] = [];
  for (const [pid, s] of alive()) {
    try {
      Deno.kill(pid, "SIGKILL");
      killed.push(`${s.comm} ${pid}`);
    } catch { /* already gone */ }
  }
  return killed;
}

/** The first process whose environment contains `entry` ("NAME=value"), when nothing else names its pid. */
export function pidWithEnvEntry(entry: string): number | undefined {
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const env = Deno.readTextFileSync(`/proc/${e.name}/environ`);
      if (env.includes(`${entry}\0`)) return Number(e.name);
    } catch { /* not ours or gone */ }
  }
  return undefined;
}

/** The 1, 5 and 15 minute load averages, e.g. "0.52 0.61 0.70". */
export const loadAverage = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
