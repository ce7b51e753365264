/**
 * Memory of one MCP server and of the browser it started, read from /proc (Linux): the server process's
 * resident set (VmRSS) and the browser process tree's proportional set (Pss from smaps_rollup), which,
 * unlike RSS, splits each shared page among the processes mapping it, so the processes' figures add up.
 */
import { basename } from "node:path";
import { descendants, rssKb } from "./proc_sampling.ts";
import { mb } from "./table.ts";

/** A `/proc/<pid>/smaps_rollup` field in KiB ("Pss", "Rss"); undefined when unreadable or gone. */
function rollupKb(pid: number, field: string): number | undefined {
  try {
    const m = Deno.readTextFileSync(`/proc/${pid}/smaps_rollup`).match(
      new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m"),
    );
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Proportional set size in KiB (shared pages divided among the processes mapping them). */
export const pssKb = (pid: number) => rollupKb(pid, "Pss");

function cmdline(pid: number): string {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Chromium's own processes (browser, zygotes, renderers, GPU, utilities, crashpad), not shells or Node. */
function isChromium(pid: number): boolean {
  let name: string;
  try {
    name = basename(Deno.readLinkSync(`/proc/${pid}/exe`));
  } catch {
    try {
      name = Deno.readTextFileSync(`/proc/${pid}/comm`).trim();
    } catch {
      return false;
    }
  }
  return /chrom|headless_shell/i.test(name);
}

/**
 * The Chromium processes a server started: its descendants that are Chromium, plus any Chromium process
 * elsewhere (a helper reparented to init, such as crashpad) whose command line names one of their
 * `--user-data-dir`s.
 */
export function browserPids(serverPid: number): number[] {
  const pids = new Set([...descendants(serverPid).keys()].filter(isChromium));
  const dirs = new Set<string>();
  for (const pid of pids) {
    for (const m of cmdline(pid).matchAll(/--user-data-dir=(\S+)/g)) dirs.add(m[1]);
  }
  if (dirs.size > 0) {
    for (const e of Deno.readDirSync("/proc")) {
      const pid = Number(e.name);
      if (!/^\d+$/.test(e.name) || pids.has(pid) || pid === serverPid) continue;
      const line = cmdline(pid);
      if ([...dirs].some((d) => line.includes(d)) && isChromium(pid)) pids.add(pid);
    }
  }
  return [...pids];
}

export interface Memory {
  /** VmRSS of the server process (all its threads share it). */
  serverRssKb?: number;
  /** Number of Chromium processes found. */
  browserProcesses: number;
  /** Sum of their Pss. */
  browserPssKb: number;
  /** Sum of their VmRSS: counts every shared page once per process mapping it, so it overstates. */
  browserRssSumKb: number;
}

/** The server's RSS and its browser tree's PSS (and RSS sum) right now. */
export function memoryOf(serverPid: number): Memory {
  const pids = browserPids(serverPid);
  let pss = 0;
  let rss = 0;
  let n = 0;
  for (const pid of pids) {
    const p = pssKb(pid);
    const r = rssKb(pid);
    if (p === undefined || r === undefined) continue; // ended between the listing and the reading
    pss += p;
    rss += r;
    n++;
  }
  return { serverRssKb: rssKb(serverPid), browserProcesses: n, browserPssKb: pss, browserRssSumKb: rss };
}

/** The memory table's header and one row per system (see memoryOf). */
export function memoryRows(measured: Array<[string, Memory | undefined]>): string[][] {
  return [
    ["system", "server RSS", "browser PSS (processes)", "browser RSS sum"],
    ...measured.map(([name, m]) =>
      m
        ? [
          name,
          m.serverRssKb === undefined ? "—" : mb(m.serverRssKb),
          `${mb(m.browserPssKb)} (${m.browserProcesses})`,
          mb(m.browserRssSumKb),
        ]
        : [name, "—", "—", "—"]
    ),
  ];
}

/** How to read the memory table, printed under it. */
export const MEMORY_NOTE = [
  "server RSS: VmRSS of the MCP server process (krometrail: the deno process, its ingest worker a thread in it;",
  "  the peers: their node process).",
  "browser PSS: the sum of Pss (/proc/<pid>/smaps_rollup) over the Chromium processes that server started;",
  "  shared pages are split among them, so it adds up.",
  "browser RSS sum: the same processes' VmRSS added; it counts every shared page once per process and",
  "  overstates, shown for reference only.",
].join("\n");
