/**
 * Doctor's browser checks: every discovery candidate with its outcome (the server's own discovery,
 * src/browser/discovery.ts), the chosen browser's version, and a real headless launch with the
 * server's flags that must deliver one screencast frame. Every step is bounded; the browser is closed
 * and its temporary profile removed whatever happens.
 */
import {
  type CandidateDiagnostic,
  type CandidateSource,
  discoverChrome,
  type Discovered,
} from "../browser/discovery.ts";
import { launchChrome, type LaunchedChrome } from "../browser/launch.ts";
import { CdpConnection } from "../browser/cdp.ts";
import { ToolError } from "../errors.ts";
import { removeProfileDir, TEMP_PROFILE_PREFIX } from "../store/browser_record.ts";
import { sanitizeDiagnostics } from "../temporal/ffmpeg.ts";
import { sessionLeaderLauncher } from "../browser/watchdog.ts";
import type { CheckResult } from "./doctor_report.ts";

type Env = (k: string) => string | undefined;

/** Debian's chromium is a wrapper script that starts the real binary; under load that takes seconds. */
const VERSION_TIMEOUT_MS = 8_000;
/** Chrome under load on a busy 2-core machine opens its endpoint in 1–4 s; 10 s means it will not. */
const LAUNCH_TIMEOUT_MS = 10_000;
const COMMAND_TIMEOUT_MS = 3_000;
const FRAME_TIMEOUT_MS = 4_000;
const CLOSE_GRACE_MS = 2_000;
/** Everything from spawn to the first frame; past it the browser is killed. */
export const LAUNCH_CHECK_BUDGET_MS = 15_000;

const INSTALL_HINT = Deno.build.os === "darwin"
  ? "brew install --cask google-chrome (or chromium)"
  : Deno.build.os === "windows"
  ? "install Google Chrome"
  : "apt install chromium, or your distribution's chromium package";

function sourceLabel(source: CandidateSource, ordinal: number): string {
  if (source === "argument") return "--executable";
  if (source === "platform_default") return ordinal > 0 ? "platform default" : "discovery";
  return source;
}

function outcomeText(outcome: CandidateDiagnostic["outcome"]): string {
  switch (outcome) {
    case "found":
      return "found";
    case "missing":
      return "does not exist";
    case "not_executable":
      return "is not an executable file";
    case "skipped":
      return "not probed (discovery time budget spent)";
  }
}

export interface BrowserCheck {
  checks: CheckResult[];
  chosen?: Discovered;
}

/**
 * The candidates in the server's order. An explicit or environment choice that fails stops discovery
 * there (the server does not fall back either); the fix then says what unsetting it would give.
 */
export function checkBrowserCandidates(explicit: string | undefined, env: Env): BrowserCheck {
  const pathOf = (source: CandidateSource, found?: Discovered): string | undefined =>
    source === "argument" ? explicit : source === "platform_default" ? found?.path : env(source);
  let found: Discovered;
  try {
    found = discoverChrome({ ...(explicit ? { explicit } : {}), env });
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    const diagnostics = (err.details?.diagnostics ?? []) as CandidateDiagnostic[];
    const checks: CheckResult[] = diagnostics.map((d) => {
      const path = pathOf(d.source) ?? "(platform default)";
      return {
        section: "browser",
        name: sourceLabel(d.source, d.ordinal),
        status: d.outcome === "found" ? "ok" : "fail",
        detail: `${path} ${outcomeText(d.outcome)}`,
        needed: true,
      };
    });
    const failed = diagnostics.find((d) => d.outcome !== "found" && d.source !== "platform_default");
    if (failed) {
      const name = failed.source === "argument" ? "--executable" : failed.source;
      const path = pathOf(failed.source) ?? "";
      const without = fallbackWithout(failed.source, env);
      const row = checks.find((c) => c.name === sourceLabel(failed.source, failed.ordinal));
      const instead = without
        ? `unset it (then ${without.path}, ${
          without.source === "platform_default" ? "found on this system" : `named by ${without.source}`
        }, is used)`
        : `unset it`;
      const fix =
        `${name} points at ${path}, which ${outcomeText(failed.outcome)}: ${instead} or point it at a ` +
        `Chrome/Chromium binary${without ? "" : ` (${INSTALL_HINT})`}`;
      if (row) row.fix = fix;
      return { checks };
    }
    checks.push({
      section: "browser",
      name: "discovery",
      status: "fail",
      detail: `no Chrome or Chromium found (${
        err.details?.probed ?? 0
      } locations probed on PATH and the platform defaults)`,
      needed: true,
      fix:
        `no Chrome or Chromium is installed where krometrail looks: ${INSTALL_HINT}, or set KROMETRAIL_CHROME to a ` +
        "Chrome/Chromium binary",
    });
    return { checks };
  }
  const checks: CheckResult[] = [
    ...unsetRows(explicit, env, found.diagnostics),
    ...found.diagnostics.map((d): CheckResult => ({
      section: "browser",
      name: sourceLabel(d.source, d.ordinal),
      status: d.outcome === "found" ? "ok" : "warn",
      detail: `${pathOf(d.source, found) ?? "(platform default)"} ${outcomeText(d.outcome)}${
        d.outcome === "found" ? " (chosen)" : ""
      }`,
      needed: d.outcome === "found",
    })),
  ];
  return { checks, chosen: found };
}

/** The environment choices a person can make, shown when unset so they learn the knobs. */
function unsetRows(explicit: string | undefined, env: Env, seen: CandidateDiagnostic[]): CheckResult[] {
  const rows: CheckResult[] = [];
  // Discovery stops at the explicit argument; the variables after it were not consulted.
  if (explicit) return rows;
  for (const source of ["KROMETRAIL_CHROME", "CHROME_BIN"] as const) {
    if (env(source) || seen.some((d) => d.source === source)) continue;
    rows.push({ section: "browser", name: source, status: "ok", detail: "not set", needed: false });
  }
  return rows;
}

/** What discovery would choose with this source unset (and the explicit argument dropped). */
function fallbackWithout(source: CandidateSource, env: Env): Discovered | undefined {
  try {
    return discoverChrome({ env: (k) => k === source ? undefined : env(k) });
  } catch {
    return undefined;
  }
}

/**
 * Runs `path --version` as the leader of its own process group (setsid, as the launch does), so the
 * deadline kills whatever it forked too: a wrapper script's child would otherwise hold the output
 * pipe open past the kill.
 */
async function versionOutput(path: string): Promise<{ code: number; stdout: string; timedOut: boolean }> {
  const leader = sessionLeaderLauncher();
  const child = new Deno.Command(leader ?? path, {
    args: leader ? [path, "--version"] : ["--version"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      if (leader) Deno.kill(-child.pid, "SIGKILL");
      else child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, VERSION_TIMEOUT_MS);
  try {
    // The pipe may still outlive the kill (a child that left the group): stop waiting for it then.
    const out = await within(child.output(), VERSION_TIMEOUT_MS + 1_000, "version");
    return { code: out.code, stdout: new TextDecoder().decode(out.stdout), timedOut };
  } catch (err) {
    if (err instanceof DoctorTimeout) return { code: -1, stdout: "", timedOut: true };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** `chrome --version`, bounded; a warning when it says nothing (the launch check decides). */
export async function checkBrowserVersion(path: string): Promise<CheckResult> {
  const base = { section: "browser", name: "version", needed: false } as const;
  try {
    const run = await versionOutput(path);
    const line = (run.stdout.split(/\r?\n/).find((l) => l.trim() !== "") ?? "").trim();
    // Debian's wrapper appends "built on …"; the name and number are what matter.
    const version = sanitizeDiagnostics(line.replace(/\s+built on .*$/i, ""), 120);
    if (run.timedOut) {
      return { ...base, status: "warn", detail: `--version did not answer within ${VERSION_TIMEOUT_MS} ms` };
    }
    if (run.code !== 0 || !version) {
      return {
        ...base,
        status: "warn",
        detail: `--version failed (exit ${run.code}); the launch check decides`,
      };
    }
    return { ...base, status: "ok", detail: version, data: { version } };
  } catch (err) {
    return { ...base, status: "warn", detail: `--version could not be run (${(err as Error).name})` };
  }
}

class DoctorTimeout extends Error {}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DoctorTimeout(what)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

interface LaunchTiming {
  launch_ms: number;
  frame_ms: number;
  total_ms: number;
  frame_width: number;
  frame_height: number;
  frame_bytes: number;
}

/** A page with something to paint, so the compositor has a frame to send. */
const PROBE_PAGE =
  "data:text/html,<title>krometrail doctor</title><body style='background:%23286'><h1>krometrail";

/**
 * The server's launch path with a temporary profile and the screencast the recorder starts, measured.
 * `state.launched` is set as soon as Chrome is up, so a caller past its budget can kill it.
 */
async function launchAndFrame(
  executable: string,
  profileDir: string,
  state: { launched?: LaunchedChrome; conn?: CdpConnection },
): Promise<LaunchTiming> {
  const t0 = performance.now();
  state.launched = await launchChrome({
    executable,
    userDataDir: profileDir,
    profileLabel: "temporary",
    headless: true,
    temporary: true,
    startupTimeoutMs: LAUNCH_TIMEOUT_MS,
  });
  const launchMs = performance.now() - t0;
  const conn = await CdpConnection.connect(state.launched.browserWsUrl);
  state.conn = conn;
  const { targetId } = await conn.send(
    "Target.createTarget",
    { url: PROBE_PAGE },
    undefined,
    COMMAND_TIMEOUT_MS,
  );
  const { sessionId } = await conn.send(
    "Target.attachToTarget",
    { targetId, flatten: true },
    undefined,
    COMMAND_TIMEOUT_MS,
  );
  let off = () => {};
  const frame = new Promise<{ w: number; h: number; bytes: number }>((resolve) => {
    off = conn.on("Page.screencastFrame", (p, sid) => {
      if (sid !== sessionId) return;
      conn.send("Page.screencastFrameAck", { sessionId: p.sessionId }, sessionId).catch(() => {});
      resolve({
        w: Math.round(p.metadata.deviceWidth),
        h: Math.round(p.metadata.deviceHeight),
        bytes: Math.floor(p.data.length * 3 / 4),
      });
    });
  });
  try {
    await conn.send("Page.enable", undefined, sessionId, COMMAND_TIMEOUT_MS);
    const t1 = performance.now();
    await conn.send(
      "Page.startScreencast",
      { format: "jpeg", quality: 60, everyNthFrame: 1 },
      sessionId,
      COMMAND_TIMEOUT_MS,
    );
    const first = await within(frame, FRAME_TIMEOUT_MS, "frame");
    const now = performance.now();
    return {
      launch_ms: Math.round(launchMs),
      frame_ms: Math.round(now - t1),
      total_ms: Math.round(now - t0),
      frame_width: first.w,
      frame_height: first.h,
      frame_bytes: first.bytes,
    };
  } finally {
    off();
  }
}

async function closeBrowser(state: { launched?: LaunchedChrome; conn?: CdpConnection }): Promise<void> {
  const launched = state.launched;
  const closing = state.conn?.send("Browser.close", undefined, undefined, 1_000).catch(() => {});
  // A browser that exits on its own removes its own temp files; only one that will not is killed.
  if (launched && closing) {
    await closing;
    await within(launched.process.status, CLOSE_GRACE_MS, "close").catch(() => {});
  }
  await state.conn?.close().catch(() => {});
  await launched?.terminate().catch(() => {});
}

/** How a person picks another browser, given where this one came from. */
function otherBrowser(source: CandidateSource): string {
  if (source === "argument") return "pass another --executable";
  if (source === "platform_default") return "set KROMETRAIL_CHROME to another Chrome/Chromium";
  return `point ${source} at another Chrome/Chromium`;
}

function launchFailure(path: string, source: CandidateSource, err: unknown): { detail: string; fix: string } {
  const other = otherBrowser(source);
  if (err instanceof DoctorTimeout) {
    return err.message === "frame"
      ? {
        detail: `the browser started but sent no screencast frame within ${FRAME_TIMEOUT_MS} ms`,
        fix: `${path} starts headless but its compositor sends no frames: use a current Chrome or Chromium ` +
          `(${INSTALL_HINT}) and ${
            source === "argument" ? "pass it as --executable" : "point KROMETRAIL_CHROME at it"
          }`,
      }
      : {
        detail: `no answer within ${LAUNCH_CHECK_BUDGET_MS} ms; the browser was killed`,
        fix:
          `${path} hangs on a headless start: check that it runs (${path} --headless --dump-dom about:blank), ` +
          `or ${other}`,
      };
  }
  if (err instanceof ToolError) {
    const tail = typeof err.details?.stderr_tail === "string" ? err.details.stderr_tail : "";
    const last = tail.trim().split("\n").filter((l) => l.trim() !== "").pop();
    const detail = `${err.message}${last ? ` Its last words: ${sanitizeDiagnostics(last, 200)}` : ""}`;
    const root = Deno.build.os === "linux" && Deno.uid() === 0 ? " (as root it gets --no-sandbox)" : "";
    return {
      detail,
      fix:
        `${path} did not start headless${root}: check that it runs (${path} --headless --dump-dom about:blank), ` +
        `or ${other} (${INSTALL_HINT})`,
    };
  }
  const message = sanitizeDiagnostics(err instanceof Error ? err.message : String(err), 200);
  return {
    detail: `the DevTools connection failed: ${message}`,
    fix:
      `${path} started but its DevTools endpoint did not answer (${message}): check that nothing on this ` +
      `machine blocks 127.0.0.1 connections, or ${other}`,
  };
}

/** One real headless launch with one screencast frame, under LAUNCH_CHECK_BUDGET_MS in all. */
export async function checkHeadlessLaunch(
  path: string,
  source: CandidateSource = "platform_default",
): Promise<CheckResult> {
  const base = { section: "launch", name: "launch + frame", needed: true } as const;
  const profileDir = await Deno.makeTempDir({ prefix: `${TEMP_PROFILE_PREFIX}doctor-` });
  const state: { launched?: LaunchedChrome; conn?: CdpConnection } = {};
  const attempt = launchAndFrame(path, profileDir, state);
  try {
    const t = await within(attempt, LAUNCH_CHECK_BUDGET_MS, "launch");
    return {
      ...base,
      status: "ok",
      detail:
        `first screencast frame (${t.frame_width}×${t.frame_height} JPEG, ${
          Math.round(t.frame_bytes / 1000)
        } kB) ` +
        `${t.total_ms} ms after spawn (DevTools up in ${t.launch_ms} ms, frame ${t.frame_ms} ms after startScreencast)`,
      data: { ...t },
    };
  } catch (err) {
    return { ...base, status: "fail", ...launchFailure(path, source, err) };
  } finally {
    await closeBrowser(state);
    // A launch still under way when the budget ran out ends on its own deadline; it is killed then.
    await within(attempt.catch(() => {}), 2_000, "settle").catch(() => {});
    await closeBrowser(state);
    await removeProfileDir(profileDir);
  }
}
