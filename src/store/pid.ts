/**
 * Whether a local process id is alive. Deno refuses /proc without --allow-all, so this asks
 * `kill -0`, which sends nothing; any doubt counts as alive so nothing live is ever reclaimed.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    const out = new Deno.Command("kill", { args: ["-0", String(pid)], stdout: "null", stderr: "piped" })
      .outputSync();
    if (out.success) return true;
    return !/no such process/i.test(new TextDecoder().decode(out.stderr));
  } catch {
    return true;
  }
}
