/**
 * Doctor's launch check: a real headless launch with the server's flags (src/browser/launch.ts) and a
 * temporary profile, which must deliver one screencast frame. Every step is bounded; the browser is
 * closed and its profile removed whatever happens.
 */
import type { CandidateSource } from "../browser/discovery.ts";
import { launchChrome, type LaunchedChrome } from "../browser/launch.ts";
import { CdpConnection } from "../browser/cdp.ts";
import { ToolError } from "../errors.ts";
import { removeProfileDir, TEMP_PROFILE_PREFIX } from "../store/browser_record.ts";
import { sanitizeDiagnostics } from "../temporal/ffmpeg.ts";
import type { CheckResult } from "./doctor_report.ts";

/**
 * Chrome under load on a busy 2-core machine opens its endpoint in 1–4 s and paints its first frame in
 * 1–5 s; the bounds are several times that, so only a browser that will not work fails (not a slow one).
 */
const LAUNCH_TIMEOUT_MS = 14_000;
const COMMAND_TIMEOUT_MS = 3_000;
const FRAME_TIMEOUT_MS = 10_000;
const CLOSE_GRACE_MS = 2_000;
/** Everything from spawn to the first frame; past it the browser is killed (doctor stays under ~30 s). */
export const LAUNCH_CHECK_BUDGET_MS = 24_000;

/** How to get a browser on this platform. */
export const INSTALL_HINT = Deno.build.os === "darwin"
  ? "brew install --cask google-chrome (or chromium)"
  : Deno.build.os === "windows"
  ? "install Google Chrome"
  : "apt install chromium, or your distribution's chromium package";

export class DoctorTimeout extends Error {}

/** `promise`, or a DoctorTimeout(what) after `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
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
