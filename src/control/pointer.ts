import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { dispatchLeftButton, dispatchMouseMove, dispatchWheel } from "../browser/input.ts";
import { ToolError } from "../errors.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import type { Observation } from "./observation.ts";
import {
  describeElementSource,
  hitTestedPoint,
  pageForTarget,
  type ResolvedTarget,
  resolveTarget,
  type TargetSpec,
} from "./targeting.ts";

type Point = { x: number; y: number };

function rounded(p: Point): Point {
  return { x: Math.round(p.x * 10) / 10, y: Math.round(p.y * 10) / 10 };
}

/** How a resolved target is echoed in results and interaction records (never element text). */
function shownTarget(target: ResolvedTarget, point: Point): Record<string, unknown> {
  return target.kind === "element"
    ? { ref: target.ref, via: target.via, point: rounded(point) }
    : { ...rounded(point), via: "coordinates" };
}

async function pointOf(page: PageTarget, target: ResolvedTarget, operation: string, role?: string) {
  return target.kind === "point"
    ? { x: target.x, y: target.y }
    : await hitTestedPoint(page, target, operation, role ? { role } : {});
}

function addLine(obs: Observation, line: string): void {
  const [head, ...rest] = obs.text.split("\n");
  obs.text = [head, line, ...rest].join("\n");
}

function warn(obs: Observation, warning: string): void {
  const warnings = (obs.structured.warnings as string[] | undefined) ?? [];
  warnings.push(warning);
  obs.structured.warnings = warnings;
}

// ---------------------------------------------------------------------------------------------- hover

/** Moves the mouse to the element's hit-tested centre (or to x/y), so :hover and mouseenter apply. */
export async function hover(env: ActionEnv, spec: TargetSpec, pageId?: string): Promise<Observation> {
  const startedMs = env.session.now();
  const page = usablePage(pageForTarget(env.session, spec, pageId));
  await env.session.ensureVisible(page);
  const target = await resolveTarget(env.session, spec, page.id);
  const point = await pointOf(page, target, "hover");
  const shown = shownTarget(target, point);
  const observation = await interact(env, page, "hover", { target: shown }, async () => {
    await dispatchMouseMove(page, point.x, point.y);
  }, startedMs);
  observation.structured.target = shown;
  return observation;
}

// ----------------------------------------------------------------------------------------------- drag

export interface DragOptions {
  /** Intermediate mouse moves between press and release. */
  steps: number;
}

/** Distance past which Chrome starts an HTML5 drag (its threshold is 4 px). */
const DRAG_THRESHOLD_PX = 5;
/** How long to wait, once, for Chrome to report an intercepted HTML5 drag after crossing the threshold. */
const INTERCEPT_WAIT_MS = 150;

type DragMode = "html5" | "pointer";

/**
 * Press, move in steps, release, as real mouse input. With drag interception on, Chrome reports an
 * HTML5 drag the page starts (draggable elements) instead of running a native drag loop that CDP
 * mouse events cannot drive; the drag then continues with dispatchDragEvent (enter, over, drop)
 * carrying the page's own drag data. Without a drag start, the moves stay plain pointer moves with
 * the button held, which drives pointer-based sliders, sortables and canvases.
 * `interrupted` is true when a dialog opened mid-sequence (the page is blocked; the rest is skipped).
 */
async function dispatchDrag(
  session: BrowserSession,
  page: PageTarget,
  from: Point,
  to: Point,
  steps: number,
): Promise<{ mode: DragMode; interrupted: boolean }> {
  let data: Protocol.Input.DragData | undefined;
  let notify: (() => void) | undefined;
  const off = session.onPageEvent("Input.dragIntercepted", (p, params) => {
    if (p !== page) return;
    data = params.data;
    notify?.();
  });
  const intercepted = (waitMs: number) =>
    data ? Promise.resolve(true) : new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(data !== undefined), waitMs);
      notify = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  const mode = (): DragMode => (data ? "html5" : "pointer");
  let pressed = false;
  let released = false;
  try {
    await page.send("Input.setInterceptDrags", { enabled: true });
    if (await dispatchMouseMove(page, from.x, from.y)) return { mode: mode(), interrupted: true };
    pressed = true;
    if (await dispatchLeftButton(page, "mousePressed", from.x, from.y)) {
      return { mode: mode(), interrupted: true };
    }
    let waited = false;
    let entered = false;
    const dragEvent = async (type: "dragEnter" | "dragOver" | "drop", p: Point) =>
      await page.sendInput("Input.dispatchDragEvent", {
        type,
        x: p.x,
        y: p.y,
        data: data as Protocol.Input.DragData,
      });
    for (let i = 1; i <= steps; i++) {
      const p = { x: from.x + ((to.x - from.x) * i) / steps, y: from.y + ((to.y - from.y) * i) / steps };
      if (!data) {
        if (await dispatchMouseMove(page, p.x, p.y, 1)) return { mode: mode(), interrupted: true };
        const far = Math.hypot(p.x - from.x, p.y - from.y) > DRAG_THRESHOLD_PX;
        if (far && !waited) {
          waited = true;
          await intercepted(INTERCEPT_WAIT_MS);
        }
      }
      if (data) {
        if (await dragEvent(entered ? "dragOver" : "dragEnter", p)) {
          return { mode: mode(), interrupted: true };
        }
        if (!entered) {
          entered = true;
          if (await dragEvent("dragOver", p)) return { mode: mode(), interrupted: true };
        }
      }
    }
    if (data) {
      if (!entered && (await dragEvent("dragEnter", to))) return { mode: mode(), interrupted: true };
      if (await dragEvent("dragOver", to)) return { mode: mode(), interrupted: true };
      if (await dragEvent("drop", to)) return { mode: mode(), interrupted: true };
    }
    released = true;
    const interrupted = await dispatchLeftButton(page, "mouseReleased", to.x, to.y);
    return { mode: mode(), interrupted };
  } finally {
    off();
    notify = undefined;
    // A sequence that failed midway must not leave the button held (a dialog blocks input anyway).
    if (pressed && !released && !page.dialog) {
      if (data) {
        page.send("Input.dispatchDragEvent", { type: "dragCancel", x: to.x, y: to.y, data }).catch(() => {});
      }
      page.send("Input.dispatchMouseEvent", { type: "mouseReleased", x: to.x, y: to.y, button: "left" })
        .catch(() => {});
    }
    page.send("Input.setInterceptDrags", { enabled: false }).catch(() => {});
  }
}

/** Drags from a target (element or x/y) to a target (element or x/y) with real mouse input. */
export async function drag(
  env: ActionEnv,
  fromSpec: TargetSpec,
  toSpec: TargetSpec,
  opts: DragOptions,
  pageId?: string,
): Promise<Observation> {
  const startedMs = env.session.now();
  const page = usablePage(pageForTarget(env.session, fromSpec, pageId));
  // A destination ref must name the same page as the source.
  pageForTarget(env.session, toSpec, page.id);
  await env.session.ensureVisible(page);
  const source = await resolveTarget(env.session, fromSpec, page.id);
  const dest = await resolveTarget(env.session, toSpec, page.id);
  // The destination comes into view first, then the source (closest to the pointer's start); both
  // must then be in the viewport together, since a drag cannot leave it.
  if (dest.kind === "element") {
    await page.send("DOM.scrollIntoViewIfNeeded", { backendNodeId: dest.backendNodeId }).catch(() => {});
  }
  const from = await pointOf(page, source, "drag", "source");
  const to = dest.kind === "point"
    ? { x: dest.x, y: dest.y }
    : await hitTestedPoint(page, dest, "drag", { scroll: false, role: "destination" });
  const shownFrom = shownTarget(source, from);
  const shownTo = shownTarget(dest, to);
  let result: { mode: DragMode; interrupted: boolean } = { mode: "pointer", interrupted: false };
  const observation = await interact(
    env,
    page,
    "drag",
    { from: shownFrom, to: shownTo, steps: opts.steps },
    async () => {
      result = await dispatchDrag(env.session, page, from, to, opts.steps);
    },
    startedMs,
  );
  observation.structured.target = shownFrom;
  observation.structured.drag = {
    from: shownFrom,
    to: shownTo,
    steps: opts.steps,
    mode: result.mode,
    ...(result.interrupted ? { interrupted_by_dialog: true } : {}),
  };
  addLine(
    observation,
    `drag ${result.mode === "html5" ? "HTML5 drag-and-drop" : "pointer"} from ${rounded(from).x},${
      rounded(from).y
    } to ${rounded(to).x},${rounded(to).y}${result.interrupted ? " (interrupted by a dialog)" : ""}`,
  );
  return observation;
}

// --------------------------------------------------------------------------------------------- scroll

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
    ? { ...rounded(point), via: "viewport_center" }
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
  if (!settled) warn(observation, "scroll_not_settled: the scroll position was still changing");
  if (!anyMoved && !dialogOpen) {
    warn(
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
