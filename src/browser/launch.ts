import { join } from "node:path";
import { ToolError } from "../errors.ts";
import { readProfileLock } from "../store/profiles.ts";
import { killRecordedBrowser } from "../store/browser_record.ts";
import { armWatchdog, sessionLeaderLauncher } from "./watchdog.ts";

export interface LaunchOptions {
  executable: string;
  userDataDir: string;
  profileLabel: string;
  headless: boolean;
  windowSize?: { width: number; height: number };
  startupTimeoutMs?: number;
  /** A temporary profile: the watchdog removes it if the server dies. */
  temporary?: boolean;
  /** Flags added after the project's own (the replay target's network lockdown). */
  extraArgs?: readonly string[];
  /** Called once Chrome's pid is known, before anything waits on it (the instance records it). */
  onSpawn?: (pid: number, group: boolean) => Promise<void>;
}

export interface LaunchedChrome {
  process: Deno.ChildProcess;
  port: number;
  browserWsUrl: string;
  /** Chrome leads its own process group, so its helpers can be found and killed with it. */
  group: boolean;
  /** Last bytes Chrome wrote to stderr, for launch diagnostics (never logged with paths). */
  stderrTail(): string;
  /** Kills whatever is left of this browser (verified by its profile dir) and disarms its watchdog. */
  terminate(): Promise<void>;
}

/** Flags that keep a managed Chrome quiet on closed networks and free of first-run UI. */
export function chromeArgs(opts: LaunchOptions): string[] {
  const args = [
    "--remote-debugging-port=0",
    "--remote-debugging-address=127.0.0.1",
    `--user-data-dir=${opts.userDataDir}`,
    "--no-first-run",
    "--test-type", // no "unsupported flag" infobar (--no-sandbox) eating viewport height
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-default-apps",
    "--disable-features=Translate,MediaRouter,OptimizationHints",
    "--password-store=basic",
    "--use-mock-keychain",
    `--window-size=${opts.windowSize?.width ?? 1280},${opts.windowSize?.height ?? 720}`,
  ];
  if (opts.headless) args.push("--headless", "--hide-scrollbars", "--mute-audio");
  if (Deno.build.os === "linux" && Deno.uid() === 0) args.push("--no-sandbox");
  if (opts.extraArgs) args.push(...opts.extraArgs);
  args.push("about:blank");
  return args;
}

/** `holder`: what holds the profile, Chrome itself or another krometrail process that claimed it. */
export function profileInUseError(
  profileLabel: string,
  pid?: number,
  holder: "chrome" | "krometrail" = "chrome",
): ToolError {
  const by = holder === "krometrail" ? "another krometrail process" : "another Chrome process";
  return new ToolError({
    code: "profile_in_use",
    message: `The browser profile "${profileLabel}" is already in use by ${by}${pid ? ` (pid ${pid})` : ""}.`,
    retry: "after_recovery",
    recovery: holder === "krometrail"
      ? `Stop the browser in that krometrail process (stop_browser), or start with another profile (profile: "<name>"), or a temporary one (temporary: true).`
      : `Close that Chrome window, or start with another profile (profile: "<name>"), or a temporary one (temporary: true), or attach to the running Chrome with attach_browser.`,
    affected: { profile: profileLabel },
    ...(pid ? { details: { holder, pid } } : { details: { holder } }),
  });
}

/**
 * A headed Chrome on Linux needs an X11 or Wayland display. Without one it exits at once with a
 * message about $DISPLAY, which would otherwise surface as a bare launch failure.
 */
function noDisplay(): ToolError {
  return new ToolError({
    code: "display_unavailable",
    message: "A headed browser needs a display, and none is set (DISPLAY and WAYLAND_DISPLAY are empty).",
    retry: "after_recovery",
    recovery:
      "Pass headless: true to start_browser, or set KROMETRAIL_HEADLESS=1 in the server's environment (for example in the MCP client's config).",
    details: { headless: false, platform: Deno.build.os },
  });
}

/** Checked before a headed launch: on Linux a display must be named in the environment. */
function displayMissing(): boolean {
  if (Deno.build.os !== "linux") return false;
  return !Deno.env.get("DISPLAY") && !Deno.env.get("WAYLAND_DISPLAY");
}

const NO_DISPLAY_STDERR = /Missing X server|\$DISPLAY|cannot open display|Ozone platform/i;

export async function launchChrome(opts: LaunchOptions): Promise<LaunchedChrome> {
  if (!opts.headless && displayMissing()) throw noDisplay();
  await Deno.mkdir(opts.userDataDir, { recursive: true });
  const lock = readProfileLock(opts.userDataDir);
  if (lock?.live) throw profileInUseError(opts.profileLabel, lock.pid || undefined);
  const portFile = join(opts.userDataDir, "DevToolsActivePort");
  await Deno.remove(portFile).catch(() => {});

  const leader = sessionLeaderLauncher();
  const child = new Deno.Command(leader ?? opts.executable, {
    args: leader ? [opts.executable, ...chromeArgs(opts)] : chromeArgs(opts),
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const group = leader !== undefined;
  const watchdog = armWatchdog({
    pid: child.pid,
    group,
    profileDir: opts.userDataDir,
    temporary: opts.temporary ?? false,
  });
  // Once Chrome itself has exited its pid may be reused; the watchdog must not act on it then.
  child.status.then(() => watchdog?.disarm(), () => watchdog?.disarm());
  const terminate = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status.catch(() => {});
    await killRecordedBrowser({ pid: child.pid, group, profile_dir: opts.userDataDir });
    await watchdog?.disarm();
  };
  await opts.onSpawn?.(child.pid, group).catch(() => {});
  let tail = "";
  const decoder = new TextDecoder();
  (async () => {
    try {
      for await (const chunk of child.stderr) {
        tail = (tail + decoder.decode(chunk, { stream: true })).slice(-4096);
      }
    } catch { /* process gone */ }
  })();
  let exited = false;
  child.status.then(() => (exited = true));

  const deadline = Date.now() + (opts.startupTimeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (exited) break;
    try {
      const [portLine, path] = (await Deno.readTextFile(portFile)).split("\n");
      const port = Number(portLine);
      if (port > 0 && path) {
        return {
          process: child,
          port,
          browserWsUrl: `ws://127.0.0.1:${port}${path}`,
          group,
          stderrTail: () => tail,
          terminate,
        };
      }
    } catch { /* not written yet */ }
    await new Promise((r) => setTimeout(r, 25));
  }
  const exitedEarly = exited;
  // Helpers Chrome forked may outlive its browser process and keep writing into the profile.
  await terminate();
  if (/existing browser session|ProcessSingleton|profile appears to be in use/i.test(tail)) {
    throw profileInUseError(opts.profileLabel);
  }
  if (!opts.headless && NO_DISPLAY_STDERR.test(tail)) throw noDisplay();
  throw new ToolError({
    code: "browser_launch_failed",
    message: exitedEarly
      ? "Chrome exited before opening its DevTools endpoint."
      : "Chrome did not open its DevTools endpoint in time.",
    retry: "safe",
    recovery:
      "Check that the executable is a working Chrome or Chromium (KROMETRAIL_CHROME); on Linux as root it must accept --no-sandbox. Run `krometrail doctor` for a test launch and the fix.",
    details: { stderr_tail: tail.replace(/\/[^\s:'"]+/g, "<path>").slice(-600) },
  });
}
