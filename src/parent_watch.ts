/** How often the server checks that the process that launched it is still alive. */
export const PARENT_POLL_MS = 500;

/**
 * Calls `onOrphaned` once when the process that launched this one dies, and returns a stop function.
 *
 * Why: an MCP client often launches a wrapper (`deno task start`, a shell, a package runner) that
 * spawns the real server. Killing the wrapper with SIGKILL leaves the server running, and stdin
 * closing is no signal because the client may still hold the pipe. On POSIX a dead parent means the
 * kernel reparents us (to init or a subreaper), so a changed parent pid is the death notice; reading
 * it needs no extra permission (prctl's PR_SET_PDEATHSIG would need FFI). A server started with no
 * real parent (ppid 0 or 1, e.g. as a container's entrypoint) has nothing to watch.
 */
export function watchParent(onOrphaned: (detail: { was: number; now: number }) => void): () => void {
  const original = currentParent();
  if (original === null || original <= 1) return () => {};
  const timer = setInterval(() => {
    const now = currentParent();
    if (now === null || now === original) return;
    clearInterval(timer);
    onOrphaned({ was: original, now });
  }, PARENT_POLL_MS);
  // The watch must never be what keeps the process alive.
  Deno.unrefTimer(timer);
  return () => clearInterval(timer);
}

function currentParent(): number | null {
  try {
    return Deno.ppid;
  } catch {
    return null;
  }
}
