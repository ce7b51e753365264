import type { PageTarget } from "../browser/targets.ts";
import { dispatchMouseMove } from "../browser/input.ts";
import { type ActionEnv, interact, usablePage } from "./interaction.ts";
import type { Observation } from "./observation.ts";
import {
  hitTestedPoint,
  pageForTarget,
  type ResolvedTarget,
  resolveTarget,
  type TargetSpec,
} from "./targeting.ts";

/**
 * Where mouse input lands and how that is echoed, shared by the pointer actions (hover here, drag in
 * drag.ts, scroll in scroll.ts), and hover itself: the one pointer action that is only a move.
 */

export type Point = { x: number; y: number };

/** Points are echoed to 0.1 CSS px: enough to locate them, without sub-pixel noise. */
export function roundedPoint(p: Point): Point {
  return { x: Math.round(p.x * 10) / 10, y: Math.round(p.y * 10) / 10 };
}

/** How a resolved target is echoed in results and interaction records (never element text). */
export function shownTarget(target: ResolvedTarget, point: Point): Record<string, unknown> {
  return target.kind === "element"
    ? { ref: target.ref, via: target.via, point: roundedPoint(point) }
    : { ...roundedPoint(point), via: "coordinates" };
}

/** The hit-tested point of an element target (scrolled into view), or the given x/y as is. */
export async function pointOf(
  page: PageTarget,
  target: ResolvedTarget,
  operation: string,
  role?: string,
): Promise<Point & { disabled?: boolean }> {
  return target.kind === "point"
    ? { x: target.x, y: target.y }
    : await hitTestedPoint(page, target, operation, role ? { role } : {});
}

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
