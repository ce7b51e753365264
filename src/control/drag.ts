import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { dispatchLeftButton, dispatchMouseMove } from "../browser/input.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import { addLine, type Observation } from "./observation.ts";
import { type Point, pointOf, roundedPoint, shownTarget } from "./pointer.ts";
import { hitTestedPoint, pageForTarget, resolveTarget, type TargetSpec } from "./targeting.ts";

/**
 * drag: press, move and release as real mouse input, which becomes an HTML5 drag-and-drop when the
 * page starts one and stays a held-button pointer drag otherwise (sliders, sortables, canvases).
 */

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
    `drag ${result.mode === "html5" ? "HTML5 drag-and-drop" : "pointer"} from ${roundedPoint(from).x},${
      roundedPoint(from).y
    } to ${roundedPoint(to).x},${roundedPoint(to).y}${
      result.interrupted ? " (interrupted by a dialog)" : ""
    }`,
  );
  return observation;
}
