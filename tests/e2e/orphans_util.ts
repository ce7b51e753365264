/** Helpers for the browser-lifetime tests: counting a profile's Chromium processes from /proc. */

const decoder = new TextDecoder();

function cmdlines(): Array<{ pid: number; args: string[] }> {
  const out: Array<{ pid: number; args: string[] }> = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const raw = decoder.decode(Deno.readFileSync(`/proc/${entry.name}/cmdline`));
      // Zombies (and kernel threads) have an empty command line: they run nothing.
      if (raw.length === 0) continue;
      out.push({ pid: Number(entry.name), args: raw.split("\0").filter((a) => a.length > 0) });
    } catch { /* exited while listing */ }
  }
  return out;
}

/**
 * Live processes whose command line carries exactly `--user-data-dir=<dir>`: Chromium's processes.
 * Chromium's helpers rewrite their title into one space-joined string, so the arguments are
 * matched joined, with the flag ending at a space or at the end.
 */
export function chromiumProcessesOf(profileDir: string): number[] {
  const flag = `--user-data-dir=${profileDir}`;
  return cmdlines().filter((p) => {
    const joined = p.args.join(" ");
    const at = joined.indexOf(flag);
    return at >= 0 && (joined.length === at + flag.length || joined[at + flag.length] === " ");
  }).map((p) => p.pid);
}

/** The krometrail watchdog shell guarding that profile's browser. */
export function watchdogsOf(profileDir: string): number[] {
  return cmdlines().filter((p) => p.args.includes("krometrail-watchdog") && p.args.includes(profileDir))
    .map((p) => p.pid);
}

/** Polls until `cond` holds or `timeoutMs` passes; returns the elapsed ms, or undefined on timeout. */
export async function waitUntil(
  cond: () => boolean,
  timeoutMs: number,
  stepMs = 50,
): Promise<number | undefined> {
  const t0 = performance.now();
  while (performance.now() - t0 <= timeoutMs) {
    if (cond()) return Math.round(performance.now() - t0);
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return cond() ? Math.round(performance.now() - t0) : undefined;
}

export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The single temporary profile directory a server created under its private TMPDIR. */
export function tempProfileIn(tmpDir: string): string | undefined {
  const names = [...Deno.readDirSync(tmpDir)].map((e) => e.name).filter((n) =>
    n.startsWith("krometrail-profile-")
  );
  return names.length === 1 ? `${tmpDir}/${names[0]}` : undefined;
}

export function killHard(pid: number): void {
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* already gone */ }
}
