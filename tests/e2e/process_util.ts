/** /proc helpers for tests that kill real processes and count what survives (Linux only). */

export interface ProcInfo {
  pid: number;
  ppid: number;
  /** Kernel start time in clock ticks: tells a live pid from a reused one. */
  start: string;
  cmdline: string;
}

export function procInfo(pid: number): ProcInfo | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Fields after the parenthesised command name; the name itself may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" || fields[0] === "X") return null; // exited, not yet reaped
    const cmdline = Deno.readTextFileSync(`/proc/${pid}/cmdline`).replaceAll("\0", " ");
    return { pid, ppid: Number(fields[1]), start: fields[19], cmdline };
  } catch {
    return null;
  }
}

export function allProcs(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const info = procInfo(Number(entry.name));
    if (info) out.push(info);
  }
  return out;
}

/** The pid and every process below it, as a snapshot. */
export function descendants(root: number): ProcInfo[] {
  const procs = allProcs();
  const found: ProcInfo[] = [];
  const frontier = [root];
  while (frontier.length) {
    const parent = frontier.pop();
    for (const p of procs) {
      if (p.ppid === parent) {
        found.push(p);
        frontier.push(p.pid);
      }
    }
  }
  return found;
}

/** Still-running members of a snapshot (same pid and same start time). */
export function survivors(snapshot: ProcInfo[]): ProcInfo[] {
  return snapshot.filter((p) => procInfo(p.pid)?.start === p.start);
}

/** Polls `check` until it returns true or `timeoutMs` passes; resolves with the elapsed ms or null. */
export async function waitFor(check: () => boolean, timeoutMs: number, stepMs = 50): Promise<number | null> {
  const began = performance.now();
  while (performance.now() - began < timeoutMs) {
    if (check()) return Math.round(performance.now() - began);
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return check() ? Math.round(performance.now() - began) : null;
}
