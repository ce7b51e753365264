/**
 * What recorded frames can and cannot say about the page after an action (issue 10).
 *
 * Measured on Chromium 156 headless: a screencast frame's `metadata.timestamp` (Unix seconds, the system
 * clock) sits on the vsync grid — the same instants as requestAnimationFrame's frame times, within 0.2 ms —
 * and rises in capture order, while frames reach us 5–400 ms later and out of order. So "received after the
 * dispatch" says nothing about what a frame shows: a frame painted before a click but delivered 4–33 ms
 * after it stood as the "observed" image. Neither does the stamp prove a frame shows the input's effect:
 * the pipeline from a commit to its frame is one or two frames deep (measured on a native button: the
 * frame stamped one frame after the click's commit still showed its pressed state in 6 of 25 clicks), and
 * while a compositor animation runs, frames stamped after the dispatch showed the page from before it.
 * The post-action image is therefore a screenshot; later frames tell whether the page kept changing
 * (pictureComparer).
 */

import { decodeJpeg } from "../vision/jpeg_decode.ts";

export interface StampedFrame {
  ordinal: number;
  recvNs: number;
  /** Chrome's frame time (metadata.timestamp) in Unix ms; undefined when Chrome sent none. */
  stampMs?: number;
  /** Base64 JPEG as Chrome sent it. */
  data: string;
  /** How long after its stamp it reached us (ms); undefined without a stamp. */
  latencyMs?: number;
}

/**
 * How many frames stamped in [fromMs, toMs) show a new picture: data that differs from the frame stamped
 * before it (any change counts, a caret blinking too). A frame with no known predecessor counts as new; a
 * repaint of the same picture does not.
 */
export function newPictures(frames: readonly StampedFrame[], fromMs: number, toMs: number): number {
  const sorted = frames.filter((f) => f.stampMs !== undefined).sort((a, b) =>
    (a.stampMs ?? 0) - (b.stampMs ?? 0)
  );
  return sorted.filter((f, i) =>
    (f.stampMs ?? 0) >= fromMs && (f.stampMs ?? 0) < toMs && (i === 0 || sorted[i - 1].data !== f.data)
  ).length;
}

const FRAME_MS = 1000 / 60;
/** Gaps up to this are an animation's pace (15 fps and up); longer ones are separate paints. */
const ANIMATION_GAP_MS = 70;

/**
 * How fast a stream paints and delivers just now: the median gap between the last frames stamped before
 * `beforeMs` (only gaps of an animation's pace: longer ones are separate paints) and the slowest delivery
 * among the last 8 frames received. Under CPU load both grow several-fold (measured: 5–400 ms deliveries), so waits for "the next
 * frame" scale with them.
 */
export function streamPace(
  frames: readonly StampedFrame[],
  beforeMs: number,
): { intervalMs: number; latencyMs: number } {
  const stamps = frames.flatMap((f) => f.stampMs !== undefined && f.stampMs < beforeMs ? [f.stampMs] : []);
  stamps.sort((a, b) => a - b);
  const gaps = stamps.slice(1).map((t, i) => t - stamps[i]).filter((g) => g > 0 && g <= ANIMATION_GAP_MS)
    .slice(-6);
  gaps.sort((a, b) => a - b);
  const latencies = frames.slice(-8).map((f) => f.latencyMs).filter((l): l is number => l !== undefined);
  return {
    intervalMs: gaps.length > 0 ? Math.max(FRAME_MS, gaps[gaps.length >> 1]) : FRAME_MS,
    latencyMs: Math.min(250, Math.max(0, ...latencies)),
  };
}

/** The entropy-coded part of a JPEG (from its start-of-scan marker on) and its size; undefined if malformed. */
export function jpegScan(b: Uint8Array): { width: number; height: number; scan: Uint8Array } | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  let width = 0;
  let height = 0;
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1];
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker === 0xda) return width > 0 ? { width, height, scan: b.subarray(i) } : undefined;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return undefined;
      height = (b[i + 5] << 8) | b[i + 6];
      width = (b[i + 7] << 8) | b[i + 8];
    }
    i += 2 + ((b[i + 2] << 8) | b[i + 3]);
  }
  return undefined;
}

/** A DC block (8×8 px) whose colour moved by more than this (summed over R, G, B) has changed. */
const BLOCK_DELTA = 24;

/** How a picture differs from a base: not at all, slightly (a caret blinking), or visibly. */
export type PictureChange = "same" | "slight" | "visible";

/**
 * Whether changed 8×8 blocks (by their DC colours) amount to the page changing: a region at least 3
 * blocks wide and 2 tall, or 8 blocks anywhere. A caret (1–2 blocks wide) or a cursor is slight; a
 * 40 px spinner, a line of new text or a banner is visible.
 */
export function visibleChange(blocks: ReadonlyArray<{ x: number; y: number }>): boolean {
  if (blocks.length >= 8) return true;
  if (blocks.length === 0) return false;
  const xs = blocks.map((b) => b.x);
  const ys = blocks.map((b) => b.y);
  return Math.max(...xs) - Math.min(...xs) >= 2 && Math.max(...ys) - Math.min(...ys) >= 1;
}

/**
 * Compares JPEGs with `base`. Identical scan bytes are the same picture at once — Chrome encodes
 * screencast frames and JPEG screenshots alike, so the same pixels give the same scan (measured; the
 * screenshot only adds an ICC segment). Otherwise the DC colours of their 8×8 blocks are compared.
 * Undefined when a picture cannot be compared (malformed, or another size).
 */
export function pictureComparer(base: Uint8Array): (other: Uint8Array) => PictureChange | undefined {
  const baseScan = jpegScan(base);
  let baseBlocks: Uint8Array | undefined;
  return (other) => {
    const scan = jpegScan(other);
    if (!baseScan || !scan || scan.width !== baseScan.width || scan.height !== baseScan.height) {
      return undefined;
    }
    if (sameBytes(scan.scan, baseScan.scan)) return "same";
    try {
      baseBlocks ??= decodeJpeg(base, { scale: 8 }).data;
      const image = decodeJpeg(other, { scale: 8 });
      const changed: Array<{ x: number; y: number }> = [];
      for (let i = 0; i < image.data.length; i += 4) {
        const delta = Math.abs(image.data[i] - baseBlocks[i]) +
          Math.abs(image.data[i + 1] - baseBlocks[i + 1]) +
          Math.abs(image.data[i + 2] - baseBlocks[i + 2]);
        if (delta > BLOCK_DELTA) {
          changed.push({ x: (i / 4) % image.width, y: Math.floor(i / 4 / image.width) });
        }
      }
      return visibleChange(changed) ? "visible" : "slight";
    } catch {
      return undefined;
    }
  };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
