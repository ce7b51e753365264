import type { PageTarget } from "../browser/targets.ts";
import { dispatchWheel } from "../browser/input.ts";
import { ToolError } from "../errors.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import { addLine, addWarning, type Observation } from "./observation.ts";
import { type Point, pointOf, roundedPoint, shownTarget } from "./pointer.ts";
import { describeElementSource, pageForTarget, resolveTarget, type TargetSpec } from "./targeting.ts";

/**
 * scroll: by an offset with the mouse wheel, or to bring an element into view, then waiting for the
 * compositor to finish so the reported before/after positions (page and scroll container) are final.
 */

type ScrollPos = { x: number; y: number };

const PAGE_SCROLL = "({ x: window.scrollX, y: window.scrollY })";

/** The element that scrolls for this target: itself or its nearest scrollable ancestor, never the document. */
const SCROLL_CONTAINER = `function() {
  const root = document.scrollingElement || document.documentElement;
  for (let n = this; n && n.nodeType === 1; n = n.parentElement || (n.getRootNode && n.getRootNode().host)) {
    if (n === root || n === document.body) return null;
    const s = getComputedStyle(n);
    const scrollsY = /(auto|scroll|overlay)/.test(s.overflowY) && n.scrollHeight > n.clientHeight;
    const scrollsX = /(auto|scroll|overlay)/.test(s.overflowX) && n.scrollWidth > n.clientWidth;
    if (scrollsY || scrollsX) return n;
  }
  return null;
}`;

const SCROLL_GROUP = "krometrail-scroll";

const ELEMENT_SCROLL = "function() { return { x: this.scrollLeft, y: this.scrollTop }; }";

/**
 * Centres the element unless it is already wholly visible in the viewport and in every clipping
 * scroll ancestor. Instant, so a page's smooth scroll-behavior cannot leave it mid-animation.
 */
const SCROLL_TO_TARGET = `function() {
  const r = this.getBoundingClientRect();
  if (r.width === 0 && r.height === 0 && this.getClientRects().length === 0) return { box: false };
  const inside = (c) => r.top >= c.top - 0.5 && r.left >= c.left - 0.5 && r.bottom <= c.bottom + 0.5 && r.right <= c.right + 0.5;
  let visible = inside({ top: 0, left: 0, bottom: innerHeight, right: innerWidth });
  for (let n = this.parentElement; visible && n && n !== document.body && n !== document.documentElement; n = n.parentElement) {
    const s = getComputedStyle(n);
    if (/(auto|scroll|hidden|clip|overlay)/.test(s.overflowX + s.overflowY)) visible = inside(n.getBoundingClientRect());
  }
  if (!visible) this.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
  const a = this.getBoundingClientRect();
  return {
    box: true,
    scrolled: !visible,
    rect: { x: Math.round(a.x), y: Math.round(a.y), width: Math.round(a.width), height: Math.round(a.height) },
    in_viewport: a.top >= 0 && a.left >= 0 && a.bottom <= innerHeight && a.right <= innerWidth,
  };
}`;

/** Scrolling is applied by the compositor (and may animate): poll until it rests. */
const SETTLE_POLL_MS = 20;
const SETTLE_STABLE_READS = 3;
const SETTLE_NO_MOVE_MS = 300;
const SETTLE_CAP_MS = 2_000;
/** A position read that takes longer is blocked (a dialog); it must not hold the action for 30 s. */
const READ_TIMEOUT_MS = 1_000;

async function settleScroll(page: PageTarget, read: () => Promise<string>, before: string): Promise<boolean> {
  const start = Date.now();
  let last = before;
  let stable = 0;
  let moved = false;
  while (Date.now() - start < SETTLE_CAP_MS) {
    await new Promise((r) => setTimeout(r, SETTLE_POLL_MS));
    // A dialog a scroll handler opened blocks the page: the scroll is over as far as we can tell.
    if (page.dialog) return true;
    const now = await read().catch(() => undefined);
    if (now === undefined) return page.dialog !== undefined;
    if (now !== before) moved = true;
    stable = now === last ? stable + 1 : 0;
    last = now;
    if (moved && stable >= SETTLE_STABLE_READS) return true;
    if (!moved && Date.now() - start >= SETTLE_NO_MOVE_MS) return true;
  }
  return false;
}

export interface ScrollRequest {
  dx?: number;
  dy?: number;
}

/**
 * Scrolls by an offset (mouse wheel at the target's centre, at x/y, or at the viewport centre) or,
 * without an offset, brings an element target to the centre of the viewport. Reports the page's
 * scroll position before and after, and the target's scroll container when one scrolls instead.
 */
export async function scroll(
  env: ActionEnv,
  spec: TargetSpec | undefined,
  request: ScrollRequest,
  pageId?: string,
): Promise<Observation> {
  // The scroll container's handle is held across the action; it is released however the call ends.
  const holding: PageTarget[] = [];
  try {
    return await scrollAction(env, spec, request, pageId, holding);
  } finally {
    for (const page of holding) {
      page.send("Runtime.releaseObjectGroup", { objectGroup: SCROLL_GROUP }).catch(() => {});
    }
  }
}

async function scrollAction(
  env: ActionEnv,
  spec: TargetSpec | undefined,
  request: ScrollRequest,
  pageId: string | undefined,
  holding: PageTarget[],
): Promise<Observation> {
  const startedMs = env.session.now();
  const byOffset = request.dx !== undefined || request.dy !== undefined;
  const page = usablePage(spec ? pageForTarget(env.session, spec, pageId) : env.session.page(pageId));
  if (!byOffset && (!spec || spec.x !== undefined || spec.y !== undefined)) {
    throw new ToolError({
      code: "invalid_arguments",
      message:
        "scroll needs an offset (dx and/or dy) or an element target (ref, locator or selector) to scroll to.",
      retry: "never",
      recovery: 'Pass dy (e.g. {"dy": 600}) to scroll down, or a ref to bring that element into view.',
      affected: { argument: "dy" },
    });
  }
  await env.session.ensureVisible(page);
  const target = spec ? await resolveTarget(env.session, spec, page.id) : undefined;
  const readPage = async (): Promise<ScrollPos> =>
    (await page.send("Runtime.evaluate", { expression: PAGE_SCROLL, returnByValue: true }, READ_TIMEOUT_MS))
      .result.value as ScrollPos;

  let container: { objectId: string; description: string } | undefined;
  if (target?.kind === "element") {
    holding.push(page);
    const found = await page.send("Runtime.callFunctionOn", {
      objectId: target.objectId,
      functionDeclaration: SCROLL_CONTAINER,
      objectGroup: SCROLL_GROUP,
    });
    if (found.result.objectId && found.result.subtype !== "null") {
      const described = await page.send("Runtime.callFunctionOn", {
        objectId: found.result.objectId,
        functionDeclaration: describeElementSource,
        returnByValue: true,
      });
      container = { objectId: found.result.objectId, description: String(described.result.value) };
    }
  }
  const readContainer = async (): Promise<ScrollPos | undefined> =>
    container
      ? (await page.send("Runtime.callFunctionOn", {
        objectId: container.objectId,
        functionDeclaration: ELEMENT_SCROLL,
        returnByValue: true,
      }, READ_TIMEOUT_MS)).result.value as ScrollPos
      : undefined;
  const readAll = async () => JSON.stringify([await readPage(), await readContainer()]);

  const pageBefore = await readPage();
  const containerBefore = await readContainer();
  let point: Point | undefined;
  if (byOffset) {
    if (target) point = await pointOf(page, target, "scroll");
    else {
      const vv = (await page.send("Page.getLayoutMetrics")).cssVisualViewport;
      point = { x: vv.clientWidth / 2, y: vv.clientHeight / 2 };
    }
  }
  const dx = request.dx ?? 0;
  const dy = request.dy ?? 0;
  const mode = byOffset ? "by_offset" : "to_target";
  const shown = target && point
    ? shownTarget(target, point)
    : target?.kind === "element"
    ? { ref: target.ref, via: target.via }
    : point
    ? { ...roundedPoint(point), via: "viewport_center" }
    : undefined;
  let reveal: { box: boolean; scrolled?: boolean; rect?: unknown; in_viewport?: boolean } | undefined;
  let settled = true;
  const params = { mode, ...(byOffset ? { dx, dy } : {}), ...(shown ? { target: shown } : {}) };
  const observation = await interact(env, page, "scroll", params, async () => {
    const before = await readAll();
    if (point) {
      if (await dispatchWheel(page, point.x, point.y, dx, dy)) return;
    } else if (target?.kind === "element") {
      reveal = (await page.send("Runtime.callFunctionOn", {
        objectId: target.objectId,
        functionDeclaration: SCROLL_TO_TARGET,
        returnByValue: true,
      })).result.value as typeof reveal;
      if (!reveal?.box) {
        throw new ToolError({
          code: "element_not_visible",
          message: "The element has no box to scroll to (it is not rendered).",
          retry: "after_recovery",
          recovery: "Wait until it is rendered (check with snapshot_page), or target a rendered element.",
          affected: { page_id: page.id, ref: target.ref },
        });
      }
    }
    settled = await settleScroll(page, readAll, before);
  }, startedMs);

  const dialogOpen = page.dialog !== undefined;
  const pageAfter = dialogOpen ? undefined : await readPage().catch(() => undefined);
  const containerAfter = dialogOpen ? undefined : await readContainer().catch(() => undefined);
  const moved = (a?: ScrollPos, b?: ScrollPos) => !!a && !!b && (a.x !== b.x || a.y !== b.y);
  const anyMoved = moved(pageBefore, pageAfter) || moved(containerBefore, containerAfter);
  const result: Record<string, unknown> = {
    mode,
    ...(byOffset ? { requested: { dx, dy } } : {}),
    page: { before: pageBefore, ...(pageAfter ? { after: pageAfter } : {}) },
    ...(container
      ? {
        container: {
          element: container.description,
          before: containerBefore,
          ...(containerAfter ? { after: containerAfter } : {}),
        },
      }
      : {}),
    moved: anyMoved,
    ...(reveal?.box ? { target_rect: reveal.rect, target_in_viewport: reveal.in_viewport } : {}),
    ...(settled ? {} : { settled: false }),
  };
  observation.structured.scroll = result;
  if (shown) observation.structured.target = shown;
  if (!settled) addWarning(observation, "scroll_not_settled: the scroll position was still changing");
  if (!anyMoved && !dialogOpen) {
    addWarning(
      observation,
      mode === "to_target"
        ? "scroll_no_effect: the element was already in view"
        : "scroll_no_effect: nothing scrolled (already at the edge, or nothing scrollable under the pointer)",
    );
  }
  const fmt = (p?: ScrollPos) => (p ? `${Math.round(p.x)},${Math.round(p.y)}` : "?");
  addLine(
    observation,
    `scroll ${mode}: page ${fmt(pageBefore)} -> ${fmt(pageAfter)}${
      container ? `; ${container.description} ${fmt(containerBefore)} -> ${fmt(containerAfter)}` : ""
    }`,
  );
  return observation;
}
