import type { PageTarget } from "../browser/targets.ts";
import { picturesDiffer } from "../capture/frame_identity.ts";
import {
  JPEG_QUALITY,
  type LatestFrame,
  type PostActionFrameRequest,
  type PostActionFrames,
  wallMs,
} from "../capture/screencast.ts";
import { jpegDimensions } from "../vision/jpeg_size.ts";

export { wallMs };

/** What capture can say about a page after an action (see ScreencastStream.postActionFrame). */
export type FrameSource = (
  pageId: string,
  request: PostActionFrameRequest,
) => Promise<PostActionFrames | undefined>;

const SCREENSHOT_TIMEOUT_MS = 5_000;

/**
 * How long after the dispatch a page the action changed is watched for being replaced (issue 10: a
 * transient error banner shown for ~100 ms). Frames stamped in it reach us ~5–40 ms later; ARRIVAL_MS
 * covers the usual.
 */
export const SETTLE_WINDOW_MS = 150;
const ARRIVAL_MS = 10;

export interface Shot {
  data: string;
  mimeType: "image/png" | "image/jpeg";
  bytes: Uint8Array;
  width: number;
  height: number;
  source: Record<string, unknown>;
  /** Unix ms when it was requested: frames stamped after it are later than the request. */
  sinceMs: number;
}

export function pngSize(bytes: Uint8Array): { width: number; height: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return bytes.byteLength >= 24
    ? { width: view.getUint32(16), height: view.getUint32(20) }
    : { width: 0, height: 0 };
}

/**
 * The post-action image: a screenshot, which Chrome takes from a frame it draws after the request, so it
 * shows the page after the rendezvous (a recorded frame cannot: see capture/frame_identity.ts). While
 * capture runs it is a JPEG at the stream's quality — the same pixels give the same scan bytes as a
 * recorded frame — so later frames compare with it.
 */
export async function postActionImage(page: PageTarget, capture: boolean): Promise<Shot> {
  const sinceMs = wallMs();
  const shot = await page.send(
    "Page.captureScreenshot",
    capture ? { format: "jpeg", quality: JPEG_QUALITY } : { format: "png", optimizeForSpeed: true },
    SCREENSHOT_TIMEOUT_MS,
  );
  const bytes = Uint8Array.fromBase64(shot.data);
  const size = capture ? jpegDimensions(bytes) ?? { width: 0, height: 0 } : pngSize(bytes);
  return {
    data: shot.data,
    mimeType: capture ? "image/jpeg" : "image/png",
    bytes,
    ...size,
    source: { kind: "screenshot" },
    sinceMs,
  };
}

/**
 * Whether the page stayed as pictured: false when a frame stamped after the screenshot was requested shows
 * anything else. A page the action changed is watched until SETTLE_WINDOW_MS after the dispatch; an
 * unchanged one only against the frames already received, so a static page costs nothing.
 */
export async function settledAfter(
  shot: Shot,
  stream: PostActionFrames | undefined,
  dispatchEndMs: number,
): Promise<boolean | undefined> {
  if (!stream || shot.mimeType !== "image/jpeg") return undefined;
  const { before } = stream;
  const changedByAction = !before || picturesDiffer(Uint8Array.fromBase64(before.data), shot.bytes) !== false;
  const until = changedByAction ? dispatchEndMs + SETTLE_WINDOW_MS + ARRIVAL_MS : 0;
  const differs = (f: LatestFrame) => picturesDiffer(Uint8Array.fromBase64(f.data), shot.bytes) === true;
  return await stream.watch(shot.sinceMs, until, differs) === undefined;
}

/** Waits up to `waitMs` for the first frame stamped after `sinceWallMs` (a repaint), when capture runs. */
export async function nextRepaint(
  frames: FrameSource | undefined,
  pageId: string,
  sinceWallMs: number,
  waitMs: number,
): Promise<void> {
  const stream = await frames?.(pageId, { dispatchStartMs: sinceWallMs });
  await stream?.watch(sinceWallMs, sinceWallMs + waitMs, () => true);
}
