/**
 * Pure half of the replay target: the shapes measure_layout answers with, the event normalization done
 * before events reach rrweb's Replayer, and the viewport a recording needs. Nothing here knows CDP.
 */
import { EventType, type eventWithTime, IncrementalSource } from "@rrweb/types";
import { neutralizeEvent } from "./replay_sanitize.ts";

/** CSS px of the recorded viewport (the replay iframe is sized to it). */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface CoveredBy {
  /** tag#id.class of the topmost element found over the measured one (never a positional selector). */
  selector_hint: string;
  tag: string;
  /** Share (0..1) of the sampled points inside the element's on-screen box where that element is on top. */
  coverage: number;
}

export interface MeasuredElement {
  selector: string;
  found: boolean;
  /** How many elements match; the first in document order is measured. */
  count: number;
  box: Box | null;
  /** A non-empty box, not display:none, visibility visible and no opacity 0 on it or an ancestor. */
  visible: boolean;
  display: string | null;
  visibility: string | null;
  opacity: number | null;
  z_index: string | null;
  position: string | null;
  /** The box intersects the recorded viewport (at the recorded scroll position). */
  in_viewport: boolean;
  covered_by?: CoveredBy;
}

export interface Overlap {
  a: string;
  b: string;
  area: number;
  box: Box;
  /** One contains the other in the DOM (a child inside its container), not a stacking question. */
  nested: boolean;
  /** Which of the two is hit at the centre of the intersection; null when neither (or it is off-viewport). */
  on_top: string | null;
  /** What is on top there instead, when it is neither of the two. */
  on_top_other?: string;
}

export interface LayoutAt {
  /** The instant asked for, on the events' clock (rrweb `timestamp`, ms). */
  timestamp_ms: number;
  /** The last applied event's timestamp (every event at or before the instant is applied, none after). */
  applied_through_ms: number | null;
  next_event_ms: number | null;
  viewport: { width: number; height: number };
  results: MeasuredElement[];
  overlaps: Overlap[];
  elapsed_ms: number;
}

/**
 * A copy of the events sorted by time, with what would reach the network neutralized (replay_sanitize.ts)
 * and every checkpoint's Meta moved onto the full snapshot that follows it. rrweb starts a seek from the last Meta at or before the instant; an instant between a Meta
 * and its snapshot (rrweb emits them a few ms apart) would otherwise start from a Meta whose document
 * is not built yet and show nothing. The Meta carries only the URL and viewport, so moving it a few ms
 * later changes no answer.
 */
export function normalizeEvents(events: readonly eventWithTime[]): eventWithTime[] {
  const sorted = events.map((e, i) => ({ e, i })).sort((a, b) => a.e.timestamp - b.e.timestamp || a.i - b.i)
    .map(({ e }) => neutralizeEvent(e));
  const out: eventWithTime[] = [];
  for (let i = 0; i < sorted.length; i++) {
    const e = sorted[i];
    const next = sorted[i + 1];
    if (e.type === EventType.Meta && next?.type === EventType.FullSnapshot && next.timestamp > e.timestamp) {
      out.push({ ...e, timestamp: next.timestamp });
    } else {
      out.push(e);
    }
  }
  return out;
}

/** The largest viewport the recording ever had (Meta and ViewportResize), so the replay page can hold it. */
export function largestViewport(events: readonly eventWithTime[]): { width: number; height: number } {
  let width = 0;
  let height = 0;
  for (const e of events) {
    if (e.type === EventType.Meta) {
      width = Math.max(width, e.data.width);
      height = Math.max(height, e.data.height);
    } else if (
      e.type === EventType.IncrementalSnapshot && e.data.source === IncrementalSource.ViewportResize
    ) {
      width = Math.max(width, e.data.width);
      height = Math.max(height, e.data.height);
    }
  }
  return { width, height };
}

/** The events' time span, or undefined when empty. */
export function spanOf(events: readonly eventWithTime[]): { first: number; last: number } | undefined {
  if (events.length === 0) return undefined;
  let first = Infinity;
  let last = -Infinity;
  for (const e of events) {
    first = Math.min(first, e.timestamp);
    last = Math.max(last, e.timestamp);
  }
  return { first, last };
}

/** Splits events into JSON array strings of at most ~`maxChars` (one oversized event still goes alone). */
export function jsonChunks(events: readonly eventWithTime[], maxChars: number): string[] {
  const chunks: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const e of events) {
    const text = JSON.stringify(e);
    if (parts.length > 0 && size + text.length + 1 > maxChars) {
      chunks.push(`[${parts.join(",")}]`);
      parts = [];
      size = 2;
    }
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) chunks.push(`[${parts.join(",")}]`);
  return chunks;
}

/**
 * A JSON chunk as base64 of its gzip. Chrome takes ~0.2-0.5 s per MB of CDP message and recordings
 * compress well (checkpoints repeat most of a document), so shipping them compressed and inflating them
 * in the page (DecompressionStream) makes a load several times faster. Deno's native CompressionStream
 * is used: fflate took longer than the transfer it saved.
 */
export async function packChunk(json: string): Promise<string> {
  const stream = new Blob([json]).stream().pipeThrough(new CompressionStream("gzip"));
  const packed = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  const STEP = 0x8000;
  for (let i = 0; i < packed.length; i += STEP) {
    binary += String.fromCharCode(...packed.subarray(i, i + STEP));
  }
  return btoa(binary);
}

export const MAX_SELECTORS = 20;
export const MAX_SELECTOR_CHARS = 1_000;

/** Shape checks done before anything reaches the page; the page itself judges CSS syntax. */
export function selectorProblem(selectors: readonly string[]): string | undefined {
  if (selectors.length === 0) return "at least one selector is needed";
  if (selectors.length > MAX_SELECTORS) return `at most ${MAX_SELECTORS} selectors per call`;
  for (const s of selectors) {
    if (s.trim().length === 0) return "a selector is empty";
    if (s.length > MAX_SELECTOR_CHARS) return `a selector is longer than ${MAX_SELECTOR_CHARS} characters`;
  }
  return undefined;
}
