/**
 * Child processes read from /proc (tests only: the server itself lists processes through `ps`). Used by the
 * cancellation tests to see that a cancelled video's encoder has exited.
 */

/** Pids of `parentPid`'s ffmpeg children that encode frames fed on stdin (`pipe:0`). */
export async function ffmpegEncoders(parentPid: number): Promise<number[]> {
  const found: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      // The command name is in parentheses and may hold spaces: fields after it are split from its end.
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (ppid !== parentPid || comm !== "ffmpeg") continue;
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      if (cmdline.split("\0").includes("pipe:0")) found.push(Number(entry.name));
    } catch { /* it ended while we looked */ }
  }
  return found;
}
