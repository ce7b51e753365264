/**
 * What one side of the capture benchmark (krometrail or Playwright tracing) reports, and the two
 * measurements both sides derive the same way: the page's own frame rate and the stored-frame intervals.
 */
import type { CaptureStatus } from "../../src/capture/recorder.ts";
import type { Usage } from "./proc_sampling.ts";

export interface Report {
  name: string;
  version?: string;
  /** What the process columns measure. */
  process: string;
  usage?: Usage;
  page?: PageWindow;
  framesReceived?: number;
  framesReceivedWindow?: number;
  framesStored?: number;
  framesStoredWindow?: number;
  framesDropped?: number;
  framesRejected?: number;
  gaps?: number;
  gapKinds?: string;
  acksSuperseded?: number;
  missingOrdinals?: number;
  ack?: CaptureStatus["ack_latency_ms"];
  observedFps?: number;
  bytesStored?: number;
  /** Size of the whole artifact (the trace zip for Playwright). */
  artifactBytes?: number;
  jpeg?: string;
  intervals?: Intervals;
  stopMs?: number;
  notes: string[];
  error?: string;
}

/** `window.benchStats()` of fixtures/site/animation.html. */
export interface PageStats {
  frames: number;
  long_frames: number;
  ms: number;
  width: number;
  height: number;
}

/** What the page itself did in the window: its animation-frame rate and frames over 50 ms apart. */
export interface PageWindow {
  viewport: string;
  fps: number;
  longFrames: number;
}

export function pageWindow(a: PageStats, b: PageStats): PageWindow {
  return {
    viewport: `${b.width}×${b.height}`,
    fps: (b.frames - a.frames) / Math.max(0.001, (b.ms - a.ms) / 1000),
    longFrames: b.long_frames - a.long_frames,
  };
}

/** Intervals between consecutive stored frames, in ms (receive time). */
export interface Intervals {
  max: number;
  over100: number;
  over250: number;
}

export function intervals(times: number[]): Intervals | undefined {
  if (times.length < 2) return undefined;
  const s = [...times].sort((a, b) => a - b);
  let max = 0, over100 = 0, over250 = 0;
  for (let i = 1; i < s.length; i++) {
    const d = s[i] - s[i - 1];
    max = Math.max(max, d);
    if (d > 100) over100++;
    if (d > 250) over250++;
  }
  return { max, over100, over250 };
}
