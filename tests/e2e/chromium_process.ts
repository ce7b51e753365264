import { chromeArgs } from "../../src/browser/launch.ts";
import { usesProfileDir } from "../../src/store/pid.ts";

/**
 * Real-process helpers shared by the e2e tests that start their own Chromium (reconnect, renderer crash,
 * Electron stand-in): the browser in a process group of its own, its profile's processes, a free port and a
 * bounded condition poll.
 */

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bound on a condition poll: generous for a loaded 2-core box, never a fixed sleep. */
export const POLL_MS = 20_000;

/** Probes until it gives a value (not undefined), backing off to 250 ms; throws naming `what` past the cap. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  capMs = POLL_MS,
): Promise<T> {
  const deadline = performance.now() + capMs;
  for (let delay = 50;; delay = Math.min(delay * 2, 250)) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${capMs} ms waiting for ${what}`);
    await wait(delay);
  }
}

/** Probes until `done` holds or the cap passes, and returns the last probe (the caller asserts on it). */
export async function pollUntil<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  capMs: number,
): Promise<T> {
  const deadline = performance.now() + capMs;
  let value = await probe();
  while (!done(value) && performance.now() < deadline) {
    await wait(100);
    value = await probe();
  }
  return value;
}

/** A port free a moment ago (a race with other processes: prefer port 0 where no fixed port is needed). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Pids of the live processes whose command line names `profile` (the browser and every helper of it). */
export function profileProcesses(profile: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      // Helpers rewrite their argv as one space-joined title, so the line is matched as a whole.
      const line = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ").trimEnd();
      if (!usesProfileDir(line, profile)) continue;
      // A zombie (killed, not yet reaped) runs nothing and holds nothing.
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      found.push(Number(entry.name));
    } catch { /* it ended while we looked */ }
  }
  return found;
}

/** The browser process (not a helper: those carry --type=) whose profile is `profile` or under it. */
export function browserPid(profileOrParent: string): number | undefined {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let args: string[];
    try {
      args = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).split("\0");
    } catch {
      continue;
    }
    if (
      args.some((a) => a.startsWith(`--user-data-dir=${profileOrParent}`)) &&
      !args.some((a) => a.startsWith("--type="))
    ) {
      return Number(entry.name);
    }
  }
  return undefined;
}

export interface ChromiumOptions {
  /** A fixed debugging port (a restart on the same port); without it Chromium picks one (port 0). */
  port?: number;
  /** A profile to reuse, as a restarted dev browser reuses its own (its lock is stale); else a new temp dir. */
  profile?: string;
  /** The first tab's URL (default about:blank). */
  url?: string;
  /** `url` opens as an app window (--app, no tab strip); "none": no window at all (--no-startup-window). */
  window?: "tab" | "app" | "none";
  windowSize?: { width: number; height: number };
}

/** A Chromium in a process group of its own (setsid), so the whole browser dies with one SIGKILL. */
export interface TestChromium {
  pid: number;
  port: number;
  profile: string;
  child: Deno.ChildProcess;
  /** SIGKILLs the group (idempotent), waits for the leader, removes the profile unless it is kept. */
  kill(opts?: { keepProfile?: boolean }): Promise<void>;
}

/** Thrown when a fixed port was taken: Chromium then listens on [::1] or nowhere, never on 127.0.0.1. */
export class PortTaken extends Error {}

const STARTUP_MS = 30_000;

export async function startChromium(opts: ChromiumOptions = {}): Promise<TestChromium> {
  const executable = Deno.env.get("KROMETRAIL_CHROME") ?? Deno.env.get("CHROME_BIN") ?? "/usr/bin/chromium";
  const profile = opts.profile ?? await Deno.makeTempDir({ prefix: "krometrail-test-chrome-" });
  const first = opts.window === "none"
    ? "--no-startup-window"
    : opts.window === "app"
    ? `--app=${opts.url ?? "about:blank"}`
    : opts.url ?? "about:blank";
  const args = chromeArgs({
    executable,
    userDataDir: profile,
    profileLabel: "test",
    headless: true,
    windowSize: opts.windowSize,
  })
    .map((a) => a === "--remote-debugging-port=0" ? `--remote-debugging-port=${opts.port ?? 0}` : a)
    .map((a) => a === "about:blank" ? first : a);
  // setsid (not a group leader already, so it execs in place): the child's pid is the group's id.
  const child = new Deno.Command("setsid", { args: [executable, ...args], stdout: "null", stderr: "piped" })
    .spawn();
  // Chrome says where DevTools listens on stderr; the rest is drained so it never blocks on a full pipe.
  let listening: (endpoint: string) => void = () => {};
  const endpoint = new Promise<string>((r) => (listening = r));
  let tail = "";
  const reading = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-8192);
      const m = /DevTools listening on ws:\/\/([^/\s]+)\//.exec(tail);
      if (m) listening(m[1]);
    }
  })().catch(() => {});
  let killed = false;
  const chrome: TestChromium = {
    pid: child.pid,
    port: 0,
    profile,
    child,
    async kill(killOpts) {
      if (!killed) {
        killed = true;
        // The group outlives its leader when a helper lingers, so it is signalled either way.
        try {
          Deno.kill(-child.pid, "SIGKILL");
        } catch { /* already gone */ }
      }
      await child.status;
      await reading;
      if (!killOpts?.keepProfile) await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
  const timer = new Promise<undefined>((r) => setTimeout(() => r(undefined), STARTUP_MS));
  const exited = child.status.then(() => undefined);
  const at = await Promise.race([endpoint, timer, exited]);
  if (at === undefined) {
    await chrome.kill({ keepProfile: opts.profile !== undefined });
    throw new Error(
      `Chromium did not open its DevTools endpoint within ${STARTUP_MS} ms: ${tail.slice(-600)}`,
    );
  }
  const port = Number(at.slice(at.lastIndexOf(":") + 1));
  if (!at.startsWith("127.0.0.1:") || (opts.port && port !== opts.port)) {
    await chrome.kill({ keepProfile: opts.profile !== undefined });
    throw new PortTaken(`Chromium could not listen on 127.0.0.1:${opts.port ?? 0} (it listens on ${at})`);
  }
  chrome.port = port;
  // The endpoint answers HTTP once it has said so; wait for that rather than assume it.
  await until("the DevTools HTTP endpoint", async () => {
    const r = await fetch(`http://127.0.0.1:${port}/json/version`).catch(() => undefined);
    await r?.body?.cancel();
    return r?.ok ? true : undefined;
  }, STARTUP_MS);
  return chrome;
}

/**
 * A Chromium on a fixed port picked now (for tests that restart it on the same port); a port some other
 * process took in between is given up for another, a few times.
 */
export async function startChromiumOnFixedPort(
  opts: Omit<ChromiumOptions, "port"> = {},
): Promise<TestChromium> {
  for (let tries = 1;; tries++) {
    try {
      return await startChromium({ ...opts, port: freePort() });
    } catch (err) {
      if (!(err instanceof PortTaken) || tries >= 4) throw err;
    }
  }
}
