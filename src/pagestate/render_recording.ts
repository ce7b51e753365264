/**
 * Renders a loaded rrweb recording into the ordinary frame store: a dedicated headless Chromium (the
 * replay browser of replay_browser.ts: temporary profile, every request failed in the Fetch domain,
 * REPLAYER_BUNDLE in about:blank) sized to the recording's Meta viewport plays the events with rrweb's
 * Replayer under Page.startScreencast, and every screencast frame becomes a frame of the recording's
 * session and page, timed on the recording's clock, through the same handoff live frames take. Recorded
 * scripts never run (rrweb's replay iframe is sandboxed without allow-scripts).
 *
 * Timing: a frame Chrome painted at wall time W shows the recording at (W − play start) × speed ms, where
 * play start is the page's wall clock when Replayer.play(0) ran; Chrome stamps screencast frames on the
 * same system clock. Frames are timed there (recv_ns) and their chrome_ts is that instant plus the
 * recording's first wall time, so inPaintOrder (temporal/frames.ts) finds one constant offset and keeps
 * them in paint order.
 *
 * Speed rule: real time up to 60 s of recording; longer recordings are played in 60 s, at most 4×; beyond
 * 4 minutes, 4× until the play would take 4 minutes (a 16-minute recording), then whatever fits 4 minutes.
 * Measured on a page changing every 20 ms (1000×700, headless, on a box shared with other browsers): the
 * screencast delivered 18.5 frames/s at 1×, 9.4-15 frames/s at 4× and 8×, i.e. 2.4 frames per recorded
 * second at 4× and 1.8 at 8×; 4× keeps at least ~2 (≈ 4 on an idle box) while the page changes. Past
 * 16 minutes fewer, and the answer says the speed.
 */
import type { eventWithTime } from "@rrweb/types";
import type { FrameMessage } from "../capture/messages.ts";
import { JPEG_QUALITY } from "../capture/screencast.ts";
import { logger } from "../log.ts";
import { packChunk } from "./replay_layout.ts";
import {
  launchReplayBrowser,
  type ReplayBrowser,
  replayFailed,
  shutdownReplayBrowser,
} from "./replay_browser.ts";
import { neutralizeEvent } from "./replay_sanitize.ts";

const log = logger("pagestate", "render");

export const REAL_TIME_UP_TO_MS = 60_000;
export const MAX_NORMAL_SPEED = 4;
export const MAX_RENDER_WALL_MS = 240_000;
/** Events per staged chunk (gzipped on the way, as the replay target does). */
const STAGE_EVENTS = 2_000;
/** After the Replayer finishes: the last paints still on their way. */
const TAIL_MS = 400;
/** How long frames refused by a full ingestion queue are retried before they count as dropped. */
const DRAIN_MS = 10_000;

/** The speed a recording of `durationMs` is played at (see the module comment). */
export function renderSpeed(durationMs: number): number {
  if (durationMs <= REAL_TIME_UP_TO_MS) return 1;
  const fit = durationMs / REAL_TIME_UP_TO_MS;
  if (fit <= MAX_NORMAL_SPEED) return fit;
  return Math.max(MAX_NORMAL_SPEED, durationMs / MAX_RENDER_WALL_MS);
}

/**
 * Recording ms a frame painted at `paintWallMs` shows, from the page's play start, clamped to the
 * recording (a frame painted before play began shows its first instant).
 */
export function recordingMsOf(
  paintWallMs: number,
  playWallMs: number,
  speed: number,
  durationMs: number,
): number {
  return Math.min(durationMs, Math.max(0, (paintWallMs - playWallMs) * speed));
}

/** The page half: stages events, builds a Replayer at the page's origin, plays it and reports. */
const RENDER_PAGE_SOURCE = String.raw`(() => {
  if (globalThis.__krometrailRender) return;
  const Replayer = globalThis.__krometrailRrweb.Replayer;
  const style = document.createElement("style");
  style.textContent = "html,body{margin:0;padding:0;overflow:hidden;background:#fff}" +
    ".krometrail-render{position:absolute;left:0;top:0}" +
    ".krometrail-render .replayer-wrapper{position:relative}" +
    ".krometrail-render iframe{position:absolute;left:0;top:0;border:0}" +
    ".krometrail-render .replayer-mouse{display:none}";
  document.head.appendChild(style);
  const quiet = { log() {}, warn() {} };
  const events = [];
  let replayer = null;
  let finished = false;
  let playWall = 0;
  const wall = () => performance.timeOrigin + performance.now();
  const frames = (n) => new Promise((resolve) => {
    const step = () => (n-- <= 0 ? resolve() : requestAnimationFrame(step));
    step();
  });
  globalThis.__krometrailRender = {
    async stage(packed) {
      const binary = atob(packed);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      for (const e of JSON.parse(await new Response(stream).text())) events.push(e);
      return { ok: true, count: events.length };
    },
    async prepare() {
      const root = document.createElement("div");
      root.className = "krometrail-render";
      document.body.appendChild(root);
      try {
        replayer = new Replayer(events, { root, mouseTail: false, showWarning: false, showDebug: false,
          triggerFocus: false, UNSAFE_replayCanvas: false, pauseAnimation: true, speed: 1, skipInactive: false,
          logger: quiet });
      } catch (err) {
        return { ok: false, reason: "replayer_failed: " + String(err && err.message || err).slice(0, 300) };
      }
      replayer.on("finish", () => { finished = true; });
      // The constructor builds the first snapshot on timers; let them run, then show the first instant.
      await new Promise((resolve) => setTimeout(resolve, 5));
      replayer.pause(0);
      await frames(2);
      const frame = replayer.iframe;
      return { ok: true, count: events.length, width: Number(frame.getAttribute("width")) || 0,
        height: Number(frame.getAttribute("height")) || 0 };
    },
    play(speed) {
      replayer.setConfig({ speed });
      finished = false;
      playWall = wall();
      replayer.play(0);
      return { ok: true, play_wall_ms: playWall };
    },
    status() {
      return { ok: true, finished, elapsed_ms: wall() - playWall, current_ms: replayer ? replayer.getCurrentTime() : 0 };
    },
    stop() {
      if (replayer) replayer.pause();
      return { ok: true };
    },
  };
})()`;

export interface RenderInput {
  session_id: string;
  page_id: string;
  events: readonly eventWithTime[];
  /** The first event's timestamp (wall ms): the recording's session clock starts there. */
  first_timestamp: number;
  duration_ms: number;
  viewport: { width: number; height: number };
  executable?: string;
  /** The bounded frame handoff (Recorder.handoff): false when the ingestion queue is full. */
  handoff: (frame: FrameMessage) => boolean;
}

export interface RenderResult {
  frames: number;
  /** Frames the ingestion queue never took within the drain window. */
  dropped: number;
  speed: number;
  speed_rule: string;
  render_wall_ms: number;
  /** Where the wall time went: launch, stage + prepare, first frame, play, stop, drain. */
  phases_ms: Record<string, number>;
  viewport: { width: number; height: number };
  /** Requests the replayed document tried to make (all refused). */
  blocked_requests: number;
  /** False when the Replayer never reported the end and the render stopped at its time bound. */
  finished: boolean;
}

export const SPEED_RULE =
  "real time up to 60 s of recording; longer ones played in 60 s (at most 4×, which kept ≥ ~2 frames per recorded second on a busy box); beyond 16 minutes faster, to keep the play within 4 minutes";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function viewportOf(v: { width: number; height: number }): { width: number; height: number } {
  const size = (
    n: number,
    fallback: number,
  ) => (Number.isFinite(n) && n >= 1 ? Math.min(Math.round(n), 4096) : fallback);
  return { width: size(v.width, 1280), height: size(v.height, 720) };
}

async function stageAll(b: ReplayBrowser, events: readonly eventWithTime[]): Promise<void> {
  for (let i = 0; i < events.length; i += STAGE_EVENTS) {
    const chunk = events.slice(i, i + STAGE_EVENTS).map(neutralizeEvent);
    const reply = await callRender(b, "stage", [await packChunk(JSON.stringify(chunk))]);
    if (!reply.ok) throw replayFailed(`The render page refused the events (${reply.reason}).`);
  }
}

/** Plays the recording under a screencast and hands every frame to the frame store. */
export async function renderRecording(input: RenderInput): Promise<RenderResult> {
  const started = performance.now();
  const phases: Record<string, number> = {};
  let mark = started;
  const phase = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - mark);
    mark = now;
  };
  const speed = renderSpeed(input.duration_ms);
  const viewport = viewportOf(input.viewport);
  let blocked = 0;
  let gone = false;
  const b = await launchReplayBrowser({
    executable: input.executable,
    onBlocked: () => blocked++,
    onGone: () => (gone = true),
  });
  phase("launch_ms");
  const queue: FrameMessage[] = [];
  let ordinal = 0;
  let handed = 0;
  let playWallMs: number | undefined;
  /** Frames received before the play start is known wait here with their paint times. */
  const early: Array<{ paintWallMs: number; params: { data: string; w: number; h: number; scale: number } }> =
    [];
  const pump = () => {
    while (queue.length > 0 && input.handoff(queue[0])) {
      queue.shift();
      handed++;
    }
  };
  const emit = (paintWallMs: number, f: { data: string; w: number; h: number; scale: number }) => {
    if (playWallMs === undefined) {
      early.push({ paintWallMs, params: f });
      return;
    }
    const ms = recordingMsOf(paintWallMs, playWallMs, speed, input.duration_ms);
    const ns = Math.round(ms * 1e6);
    queue.push({
      type: "frame",
      session_id: input.session_id,
      page_id: input.page_id,
      ordinal: ++ordinal,
      recv_ns: ns,
      chrome_ts: (input.first_timestamp + ms) / 1000,
      data: f.data,
      viewport_width: f.w,
      viewport_height: f.h,
      device_scale: f.scale,
    });
    pump();
  };
  const off = b.conn.on("Page.screencastFrame", (params, sid) => {
    if (sid !== b.sessionId) return;
    b.conn.send("Page.screencastFrameAck", { sessionId: params.sessionId }, b.sessionId).catch(() => {});
    const m = params.metadata;
    emit(m.timestamp !== undefined ? m.timestamp * 1000 : performance.timeOrigin + performance.now(), {
      data: params.data,
      w: m.deviceWidth,
      h: m.deviceHeight,
      scale: m.pageScaleFactor,
    });
  });
  let finished = false;
  try {
    await b.conn.send("Emulation.setDeviceMetricsOverride", {
      ...viewport,
      deviceScaleFactor: 1,
      mobile: false,
    }, b.sessionId);
    b.viewport = { ...viewport };
    const { exceptionDetails } = await b.conn.send(
      "Runtime.evaluate",
      { expression: RENDER_PAGE_SOURCE },
      b.sessionId,
    );
    if (exceptionDetails) throw replayFailed(`The render page could not be set up: ${exceptionDetails.text}`);
    await b.conn.send("Page.enable", {}, b.sessionId);
    await stageAll(b, input.events);
    const ready = await callRender(b, "prepare", []);
    if (!ready.ok) throw replayFailed(`The recording could not be replayed (${ready.reason}).`);
    phase("prepare_ms");
    await b.conn.send(
      "Page.startScreencast",
      { format: "jpeg", quality: JPEG_QUALITY, everyNthFrame: 1 },
      b.sessionId,
    );
    // The first frame shows the first instant; wait for it (bounded) so the render starts with a picture.
    for (let i = 0; i < 50 && early.length === 0; i++) await sleep(20);
    const played = await callRender(b, "play", [speed]);
    if (!played.ok || typeof played.play_wall_ms !== "number") {
      throw replayFailed("The Replayer did not start.");
    }
    playWallMs = played.play_wall_ms;
    phase("first_frame_ms");
    for (const e of early.splice(0)) emit(e.paintWallMs, e.params);
    const bound = input.duration_ms / speed + 5_000;
    const playStart = performance.now();
    while (!gone && performance.now() - playStart < bound) {
      await sleep(100);
      const status = await callRender(b, "status", []);
      if (status.finished === true) {
        finished = true;
        break;
      }
    }
    phase("play_ms");
    await sleep(TAIL_MS);
    await b.conn.send("Page.stopScreencast", {}, b.sessionId).catch(() => {});
    await callRender(b, "stop", []).catch(() => {});
  } finally {
    off();
    await shutdownReplayBrowser(b).catch(() => {});
  }
  phase("stop_ms");
  const drainStart = performance.now();
  while (queue.length > 0 && performance.now() - drainStart < DRAIN_MS) {
    pump();
    if (queue.length > 0) await sleep(10);
  }
  const result: RenderResult = {
    frames: handed,
    dropped: queue.length,
    speed: Math.round(speed * 100) / 100,
    speed_rule: SPEED_RULE,
    render_wall_ms: Math.round(performance.now() - started),
    phases_ms: { ...phases, drain_ms: Math.round(performance.now() - mark) },
    viewport,
    blocked_requests: blocked,
    finished,
  };
  log.debug("rendered {frames} frames at {speed}x in {ms} ms", {
    frames: handed,
    speed: result.speed,
    ms: result.render_wall_ms,
  });
  return result;
}

/** Calls `__krometrailRender[method](...args)` in the render page (arguments as JSON values only). */
async function callRender(b: ReplayBrowser, method: string, args: unknown[]) {
  const { result, exceptionDetails } = await b.conn.send(
    "Runtime.callFunctionOn",
    {
      objectId: b.globalId,
      functionDeclaration: "function(method, args) { return this.__krometrailRender[method](...args); }",
      arguments: [{ value: method }, { value: args }],
      returnByValue: true,
      awaitPromise: true,
    },
    b.sessionId,
    20_000,
  );
  if (exceptionDetails) {
    const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw replayFailed(`The render page failed in ${method}: ${String(text).slice(0, 300)}`);
  }
  const value = result.value as ({ ok: boolean } & Record<string, unknown>) | undefined;
  if (!value || typeof value !== "object") throw replayFailed(`The render page gave no answer to ${method}.`);
  return value;
}
