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
 * The post-action image is therefore a screenshot; frames tell whether the action changed the page and
 * whether it kept changing, by picture identity (picturesDiffer).
 */

export interface StampedFrame {
  ordinal: number;
  recvNs: number;
  /** Chrome's frame time (metadata.timestamp) in Unix ms; undefined when Chrome sent none. */
  stampMs?: number;
  /** Base64 JPEG as Chrome sent it. */
  data: string;
}

/** The newest frame stamped before `ms`: the picture on screen when the action began. */
export function frameBefore(frames: readonly StampedFrame[], ms: number): StampedFrame | undefined {
  let best: StampedFrame | undefined;
  for (const f of frames) {
    if (f.stampMs !== undefined && f.stampMs < ms && (!best || f.stampMs > (best.stampMs ?? 0))) best = f;
  }
  return best;
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

/**
 * Whether two JPEGs show different pictures. Chrome encodes screencast frames and JPEG screenshots with the
 * same encoder: the same pixels give the same scan bytes (measured), only the screenshot adds an ICC
 * segment. Undefined when they cannot be compared (malformed, or different sizes).
 */
export function picturesDiffer(a: Uint8Array, b: Uint8Array): boolean | undefined {
  const x = jpegScan(a);
  const y = jpegScan(b);
  if (!x || !y || x.width !== y.width || x.height !== y.height) return undefined;
  if (x.scan.length !== y.scan.length) return true;
  for (let i = 0; i < x.scan.length; i++) if (x.scan[i] !== y.scan[i]) return true;
  return false;
}
