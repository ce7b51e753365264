/**
 * Whether a local process id is alive. Deno refuses /proc without --allow-all, so this asks
 * `kill -0`, which sends nothing; any doubt counts as alive so nothing live is ever reclaimed.
 * A zombie (killed, not yet reaped by its new parent) is dead: it holds nothing and runs nothing,
 * yet `kill -0` still succeeds on it.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    const out = new Deno.Command("kill", { args: ["-0", String(pid)], stdout: "null", stderr: "piped" })
      .outputSync();
    if (out.success) return !isZombie(pid);
    return !/no such process/i.test(new TextDecoder().decode(out.stderr));
  } catch {
    return true;
  }
}

function isZombie(pid: number): boolean {
  try {
    const out = new Deno.Command("ps", {
      args: ["-o", "stat=", "-p", String(pid)],
      stdout: "piped",
      stderr: "null",
    })
      .outputSync();
    return out.success && new TextDecoder().decode(out.stdout).trim().startsWith("Z");
  } catch {
    return false;
  }
}

export interface ProcessInfo {
  pid: number;
  pgid: number;
  args: string;
}

/**
 * Every live (non-zombie) process with its group and full command line, from `ps` (reading /proc
 * directly needs --allow-all). Undefined when `ps` is unavailable, so callers can tell "none" from
 * "cannot know".
 */
export function listProcesses(): ProcessInfo[] | undefined {
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("ps", {
      args: ["-ww", "-A", "-o", "pid=", "-o", "pgid=", "-o", "stat=", "-o", "args="],
      stdout: "piped",
      stderr: "null",
    }).outputSync();
  } catch {
    return undefined;
  }
  if (!out.success) return undefined;
  const list: ProcessInfo[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (!m || m[3].startsWith("Z")) continue;
    list.push({ pid: Number(m[1]), pgid: Number(m[2]), args: m[4] });
  }
  return list;
}

/** Whether a command line carries exactly this `--user-data-dir` (not a longer path sharing its prefix). */
export function usesProfileDir(args: string, profileDir: string): boolean {
  const flag = `--user-data-dir=${profileDir}`;
  let at = args.indexOf(flag);
  while (at >= 0) {
    const next = args[at + flag.length];
    if (next === undefined || next === " ") return true;
    at = args.indexOf(flag, at + 1);
  }
  return false;
}

/** SIGKILL, ignoring a process that is already gone. */
export function killQuietly(pid: number): void {
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* already gone */ }
}
