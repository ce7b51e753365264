import type { PageTarget } from "../browser/targets.ts";
import { pictureComparer } from "../capture/frame_identity.ts";
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
 * The settle watch (issue 10: a transient error banner replaced ~100 ms after the click). Frames are
 * compared with the screenshot until the snapshot is done; on a page already painting, until the stream
 * has delivered a frame drawn after the screenshot's (CATCH_UP_MS at most); and until requests the action
 * started have finished and had RESULT_PAINT_MS to paint (SETTLE_CAP_MS after the dispatch at most). A
 * static page that started no request costs nothing beyond the snapshot; a timer that replaces the page
 * later than that is not seen.
 */
const CATCH_UP_MS = 300;
/**
 * Moving: two new pictures within three of the page's frame intervals (66 ms at least) before the
 * dispatch — an animation, not a single paint such as a focus ring or the previous action's result.
 */
const MOVING_MS = 66;
/** Beyond a frame interval and a delivery, a moving page's next frame gets this much slack. */
const SLACK_MS = 10;
/** A request's result gets this long (plus a delivery) to be painted after the request finished. */
const RESULT_PAINT_MS = 60;
export const SETTLE_CAP_MS = 500;

export interface Shot {
  data: string;
  mimeType: "image/png" | "image/jpeg";
  bytes: Uint8Array;
  width: number;
  height: number;
  source: Record<string, unknown>;
  /** Unix ms when it was requested and when it arrived: its frame was drawn between the two. */
  sinceMs: number;
  takenMs: number;
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
  const takenMs = wallMs();
  const bytes = Uint8Array.fromBase64(shot.data);
  const size = capture ? jpegDimensions(bytes) ?? { width: 0, height: 0 } : pngSize(bytes);
  return {
    data: shot.data,
    mimeType: capture ? "image/jpeg" : "image/png",
    bytes,
    ...size,
    source: { kind: "screenshot" },
    sinceMs,
    takenMs,
  };
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/**
 * Whether the page stayed as pictured: false when a frame drawn after the screenshot's own shows anything
 * else (beyond a caret or cursor; see visibleChange). Frames stamped between the request and the
 * screenshot's frame are the pipeline catching up — one showed the page from before a click 6 ms after
 * the request — so the baseline is the recorded twin of the screenshot (same scan bytes), or the reply
 * when no twin arrives. Undefined without capture.
 */
export async function settledAfter(
  shot: Shot,
  frames: FrameSource | undefined,
  pageId: string,
  watch: {
    observed: Promise<unknown>;
    /** When the last request the action started finished (Unix ms), once none is loading. */
    requestsQuiet: Promise<number | undefined>;
    /** Unix ms when the input was sent, and the watch's limit. */
    dispatchStartMs: number | undefined;
    capWallMs: number;
  },
): Promise<boolean | undefined> {
  if (shot.mimeType !== "image/jpeg") return undefined;
  const stream = await frames?.(pageId, { afterMs: shot.sinceMs });
  if (!stream) return undefined;
  const compare = pictureComparer(shot.bytes);
  const seen: Array<{ stamp: number; visible: boolean }> = [];
  let twin: number | undefined;
  // Whether any frame showed what the page did after the screenshot: its twin, or one drawn later.
  let evidence = false;
  let moving = false;
  let caughtUp = () => {};
  const caught = new Promise<void>((r) => (caughtUp = r));
  const start = watch.dispatchStartMs;
  const pace = stream.pace(start ?? shot.sinceMs);
  const judge = (f: LatestFrame) => {
    const change = compare(Uint8Array.fromBase64(f.data));
    const stamp = f.stampMs ?? 0;
    if (change === "same" && (twin === undefined || stamp < twin)) {
      twin = stamp;
      evidence = true;
      // No frame after the twin within a frame and a delivery of it: the page stopped moving.
      setTimeout(caughtUp, 1.5 * pace.intervalMs + Math.max(pace.latencyMs, wallMs() - stamp) + SLACK_MS);
    }
    const visible = change === "visible";
    seen.push({ stamp, visible });
    // Caught up: a frame drawn after the screenshot's own has arrived (or the page went quiet, above).
    if (stamp > (twin ?? shot.takenMs)) {
      evidence = true;
      caughtUp();
    }
    return stamp > (twin ?? shot.takenMs) && visible;
  };
  const painted = watch.requestsQuiet.then((at) =>
    at === undefined ? undefined : delay(at + RESULT_PAINT_MS + pace.latencyMs - wallMs())
  );
  const until = (async () => {
    await Promise.all([watch.observed, Promise.race([painted, delay(watch.capWallMs - wallMs())])]);
    // Catching up costs a frame's delivery: only for a page that was painting before the dispatch (judged
    // now, when more of its late-delivered frames are in).
    // Or pictures kept changing around the screenshot: frames stamped before it, each unlike it, are
    // late deliveries of a page in motion (the frames from before the dispatch may not be in yet).
    moving = start !== undefined &&
      (stream.newPictures(start - Math.max(MOVING_MS, 3 * pace.intervalMs), start) >= 2 ||
        seen.filter((f) => f.visible).length >= 2);
    if (start === undefined || moving) await Promise.race([caught, delay(CATCH_UP_MS)]);
  })();
  if (await stream.watch(until, judge)) return false;
  // A page painting before the dispatch whose frames since have not arrived (delivery lags on a loaded
  // machine) is not shown to have stopped: settled is a claim the frames must support.
  if (moving && !evidence) return false;
  // Frames judged before the twin arrived (delivery is out of order), against the final baseline.
  const baseline = twin ?? shot.takenMs;
  return !seen.some((f) => f.stamp > baseline && f.visible);
}

/** Waits up to `waitMs` for the first frame stamped after `sinceWallMs` (a repaint), when capture runs. */
export async function nextRepaint(
  frames: FrameSource | undefined,
  pageId: string,
  sinceWallMs: number,
  waitMs: number,
): Promise<void> {
  const stream = await frames?.(pageId, { afterMs: sinceWallMs });
  await stream?.watch(delay(waitMs), () => true);
}
