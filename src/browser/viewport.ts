import type { PageTarget, TargetOverride } from "./targets.ts";
import { ToolError } from "../errors.ts";
import type { ViewportIntent, ViewportMetrics } from "./viewport_presets.ts";

/**
 * Viewport emulation for one page target: explicit metrics (resolved from a request or preset in
 * viewport_presets.ts) applied with Emulation.setDeviceMetricsOverride and
 * Emulation.setTouchEmulationEnabled, kept on the PageTarget so they are re-applied whenever the
 * target initializes again, and the independently observed CSS viewport that says whether the page
 * sees what was asked for (judged in viewport_report.ts).
 */

/** What the page itself reports about its viewport (the independent observation). */
export interface ObservedViewport {
  inner_width: number;
  inner_height: number;
  visual_viewport: { width: number; height: number; scale: number };
  device_pixel_ratio: number;
  client_width: number;
  client_height: number;
  /** document.documentElement.scrollWidth: content wider than the layout viewport shows here. */
  scroll_width: number;
  /** Content of the first <meta name=viewport>, or null when the page has none. */
  viewport_meta: string | null;
  compat_mode: string;
  touch: { max_touch_points: number; touch_events: boolean; coarse_pointer: boolean };
  url: string;
}

const OBSERVE_EXPRESSION = `(() => {
  const r = (n) => Math.round(n * 100) / 100;
  const vv = window.visualViewport;
  const de = document.documentElement;
  const meta = document.querySelector('meta[name="viewport" i]');
  return {
    inner_width: innerWidth,
    inner_height: innerHeight,
    visual_viewport: vv
      ? { width: r(vv.width), height: r(vv.height), scale: r(vv.scale * 10000) / 10000 }
      : { width: innerWidth, height: innerHeight, scale: 1 },
    device_pixel_ratio: r(devicePixelRatio),
    client_width: de ? de.clientWidth : 0,
    client_height: de ? de.clientHeight : 0,
    scroll_width: de ? de.scrollWidth : 0,
    viewport_meta: meta ? String(meta.getAttribute("content") ?? "").slice(0, 200) : null,
    compat_mode: document.compatMode,
    touch: {
      max_touch_points: navigator.maxTouchPoints,
      touch_events: "ontouchstart" in window,
      coarse_pointer: matchMedia("(pointer: coarse)").matches,
    },
    url: location.href.slice(0, 300),
  };
})()`;

/** Reads the effective CSS viewport from the page (bounded); throws a ToolError when it cannot. */
export async function observeViewport(page: PageTarget, timeoutMs = 3_000): Promise<ObservedViewport> {
  const r = await page.send("Runtime.evaluate", {
    expression: OBSERVE_EXPRESSION,
    returnByValue: true,
  }, timeoutMs);
  const value = r.result.value as ObservedViewport | undefined;
  if (r.exceptionDetails || !value || typeof value.inner_width !== "number") {
    throw new ToolError({
      code: "viewport_unobservable",
      message: "The page did not report its viewport.",
      retry: "safe",
      recovery: "Wait for the page to finish loading (snapshot_page), then call set_viewport again.",
      affected: { page_id: page.id },
    });
  }
  return value;
}

/** The override kept on the target; its commands are re-sent whenever the target initializes. */
export class ViewportOverride implements TargetOverride {
  constructor(
    readonly intent: ViewportIntent,
    readonly metrics: Readonly<ViewportMetrics>,
    /** What the page showed before the first override, so clear can say whether it came back. */
    readonly original?: ObservedViewport,
  ) {}

  apply(page: PageTarget, timeoutMs?: number): Array<Promise<unknown>> {
    const m = this.metrics;
    const portrait = m.height >= m.width;
    return [
      page.send("Emulation.setDeviceMetricsOverride", {
        width: m.width,
        height: m.height,
        deviceScaleFactor: m.device_scale_factor,
        mobile: m.mobile,
        screenWidth: m.width,
        screenHeight: m.height,
        ...(m.mobile
          ? {
            screenOrientation: portrait
              ? { type: "portraitPrimary" as const, angle: 0 }
              : { type: "landscapePrimary" as const, angle: 90 },
          }
          : {}),
      }, timeoutMs),
      page.send(
        "Emulation.setTouchEmulationEnabled",
        m.touch ? { enabled: true, maxTouchPoints: m.max_touch_points } : { enabled: false },
        timeoutMs,
      ),
    ];
  }
}

/** The slot in PageTarget.overrides that holds this target's viewport override. */
const OVERRIDE_KEY = "viewport";

export function currentOverride(page: PageTarget): ViewportOverride | undefined {
  const o = page.overrides.get(OVERRIDE_KEY);
  return o instanceof ViewportOverride ? o : undefined;
}

/**
 * Applies metrics to the page and keeps them on its target. The override is recorded only once
 * Chrome accepted it, so a refused override is never re-applied later.
 */
export async function applyViewport(
  page: PageTarget,
  intent: ViewportIntent,
  metrics: ViewportMetrics,
): Promise<ViewportOverride> {
  const previous = currentOverride(page);
  const original = previous ? previous.original : await observeViewport(page).catch(() => undefined);
  const override = new ViewportOverride(intent, { ...metrics }, original);
  await Promise.all(override.apply(page));
  page.overrides.set(OVERRIDE_KEY, override);
  return override;
}

/** Removes both device metrics and touch emulation; returns the override that was in force. */
export async function clearViewport(page: PageTarget): Promise<ViewportOverride | undefined> {
  const previous = currentOverride(page);
  await Promise.all([
    page.send("Emulation.clearDeviceMetricsOverride"),
    page.send("Emulation.setTouchEmulationEnabled", { enabled: false }),
  ]);
  page.overrides.delete(OVERRIDE_KEY);
  return previous;
}
