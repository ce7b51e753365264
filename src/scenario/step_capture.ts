import type { PageTarget } from "../browser/targets.ts";
import { pngSize } from "../control/post_action_image.ts";
import type { InstanceStore } from "../store/instance.ts";
import type {
  ArtifactKind,
  CaptureState,
  HistoryArtifact,
  ScreenshotArtifact,
  StepArtifacts,
  TextArtifact,
} from "./capture.ts";
import { currentUrl, readDomLines, withCaretHidden } from "./step_capture_page.ts";
import { captureStorage } from "./step_capture_storage.ts";
import { withinLimit } from "./time_limit.ts";
import {
  type AxFrame,
  domText,
  type Redactor,
  renderAxTree,
  sha256Hex,
  textArtifact,
} from "./step_capture_text.ts";

export { type Redactor, textArtifact };

export interface CaptureContext {
  page: PageTarget;
  store: InstanceStore;
  redactor: Redactor;
  allowedOrigins: string[];
  /** The runner's URL treatment: userinfo removed, secret values as references. */
  durableUrl: (raw: string) => string;
  /** Take a second picture to confirm the first (default true; see captureScreenshot). */
  confirmScreenshot?: boolean;
}

/** Each artifact is bounded on its own: one slow kind leaves the others captured. */
export const ARTIFACT_TIMEOUT_MS = 5_000;

class ArtifactTimeout extends Error {}

function bounded<T>(kind: ArtifactKind, work: (timeoutMs: number) => Promise<T>): Promise<CaptureState<T>> {
  return withinLimit(work(ARTIFACT_TIMEOUT_MS), ARTIFACT_TIMEOUT_MS, () => new ArtifactTimeout()).then(
    (value): CaptureState<T> => ({ state: "captured", value }),
    (err: unknown): CaptureState<T> => ({
      state: "missing",
      reason: err instanceof ArtifactTimeout
        ? `${kind} capture did not finish within ${ARTIFACT_TIMEOUT_MS} ms (the per-artifact limit)`
        : `${kind} capture failed: ${
          err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300)
        }`,
    }),
  );
}

/**
 * The artifacts of one step. Kinds not asked for are `not_requested`; a kind that fails or outlasts its
 * limit is `missing` with the reason, never a throw, so the step record stays whole. Every text is
 * redacted before it leaves here.
 */
export async function captureArtifacts(
  ctx: CaptureContext,
  kinds: ReadonlySet<ArtifactKind>,
): Promise<StepArtifacts> {
  const run = <T>(kind: ArtifactKind, work: (timeoutMs: number) => Promise<T>): Promise<CaptureState<T>> =>
    kinds.has(kind) ? bounded(kind, work) : Promise.resolve({ state: "not_requested" });
  const [screenshot, dom, accessibility, url, history, storage] = await Promise.all([
    run("screenshot", (t) => captureScreenshot(ctx, t)),
    run("dom", (t) => captureDom(ctx, t)),
    run("accessibility", (t) => captureAccessibility(ctx, t)),
    run("url", (t) => currentUrl(ctx.page, t).then(ctx.durableUrl)),
    run("history", (t) => captureHistory(ctx, t)),
    run("storage", (t) => captureStorage(ctx, t)),
  ]);
  return { screenshot, dom, accessibility, url, history, storage };
}

/** Most pictures taken to see the page hold still (a page animating forever costs this many, no more). */
export const SCREENSHOT_SHOTS = 3;

/**
 * A PNG of the viewport. Chrome's PNG encoder is deterministic (measured: equal bytes over repeated
 * captures and in a fresh browser); the blinking caret is not, so it is hidden for the capture. A picture
 * counts once the next one is byte-identical (a transition still running would give each run its own
 * digest); a page that never holds still within SCREENSHOT_SHOTS gives its last picture.
 */
async function captureScreenshot(ctx: CaptureContext, timeoutMs: number): Promise<ScreenshotArtifact> {
  const shots = ctx.confirmScreenshot === false ? 1 : SCREENSHOT_SHOTS;
  const data = await withCaretHidden(ctx.page, timeoutMs, async () => {
    let last: string | undefined;
    for (let i = 0; i < shots; i++) {
      const { data } = await ctx.page.send("Page.captureScreenshot", { format: "png" }, timeoutMs);
      if (data === last) break;
      last = data;
    }
    return last ?? "";
  });
  const bytes = Uint8Array.fromBase64(data);
  const { width, height } = pngSize(bytes);
  // A budget refusal is this artifact's missing reason (bounded() keeps its message).
  const saved = await ctx.store.writeEvidence("screenshots", "png", bytes);
  return {
    sha256: sha256Hex(bytes),
    mime_type: "image/png",
    width,
    height,
    bytes: bytes.byteLength,
    uri: saved.uri,
    data_base64: data,
  };
}

async function captureDom(ctx: CaptureContext, timeoutMs: number): Promise<TextArtifact> {
  return textArtifact(domText(await readDomLines(ctx.page, timeoutMs), ctx.redactor));
}

async function captureAccessibility(ctx: CaptureContext, timeoutMs: number): Promise<TextArtifact> {
  const [{ nodes }, frames] = await Promise.all([
    ctx.page.send("Accessibility.getFullAXTree", {}, timeoutMs),
    childFrameTrees(ctx.page, timeoutMs),
  ]);
  return textArtifact(ctx.redactor.text(renderAxTree(nodes, frames)));
}

/** Every child frame's AX tree with its owner element; an out-of-process frame's tree is not on this session. */
async function childFrameTrees(page: PageTarget, timeoutMs: number): Promise<AxFrame[]> {
  const { frameTree } = await page.send("Page.getFrameTree", undefined, timeoutMs);
  const ids: string[] = [];
  const walk = (t: typeof frameTree) => {
    for (const c of t.childFrames ?? []) {
      ids.push(c.frame.id);
      walk(c);
    }
  };
  walk(frameTree);
  const frames = await Promise.all(ids.map(async (frameId): Promise<AxFrame | undefined> => {
    const owner = await page.send("DOM.getFrameOwner", { frameId }, timeoutMs).catch(() => undefined);
    if (!owner) return undefined;
    const tree = await page.send("Accessibility.getFullAXTree", { frameId }, timeoutMs).catch(() =>
      undefined
    );
    return { ownerBackendId: owner.backendNodeId, nodes: tree?.nodes ?? null };
  }));
  return frames.filter((f): f is AxFrame => f !== undefined);
}

/** How long the browser's session history may take to catch up with the document's own URL. */
export const HISTORY_AGREEMENT_MS = 500;

/**
 * The browser keeps the session history and learns of a same-document navigation (pushState) after the
 * renderer made it, so the history is read again, briefly, until its current entry is the document's URL.
 * An error page's entry keeps the URL that failed: after the wait its history is taken as it is.
 */
async function captureHistory(ctx: CaptureContext, timeoutMs: number): Promise<HistoryArtifact> {
  const read = () => ctx.page.send("Page.getNavigationHistory", undefined, timeoutMs);
  const [first, url] = await Promise.all([read(), currentUrl(ctx.page, timeoutMs)]);
  let h = first;
  for (
    const end = Date.now() + HISTORY_AGREEMENT_MS;
    h.entries[h.currentIndex]?.url !== url && Date.now() < end;
  ) {
    await new Promise((r) => setTimeout(r, 25));
    h = await read();
  }
  return {
    length: h.entries.length,
    current_index: h.currentIndex,
    entries: h.entries.map((e) => ({ url: ctx.durableUrl(e.url), transition: e.transitionType })),
  };
}
