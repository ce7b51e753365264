import type { PageTarget, TargetOverride } from "./targets.ts";
import { ToolError } from "../errors.ts";

/**
 * Viewport emulation for one page target: explicit metrics (or a named preset that materializes
 * into them) applied with Emulation.setDeviceMetricsOverride and Emulation.setTouchEmulationEnabled,
 * kept on the PageTarget so they are re-applied whenever the target initializes again, and the
 * independently observed CSS viewport that says whether the page sees what was asked for.
 */

/** The explicit metrics an override applies; presets materialize into exactly these. */
export interface ViewportMetrics {
  /** CSS pixels. */
  width: number;
  height: number;
  device_scale_factor: number;
  /** Mobile layout: viewport metadata, page scale and overlay scrollbars as on a phone. */
  mobile: boolean;
  touch: boolean;
  /** navigator.maxTouchPoints while touch is on; 0 without touch. */
  max_touch_points: number;
}

export type PresetName = "desktop" | "laptop" | "tablet" | "mobile" | "mobile_small";
export const PRESET_NAMES = ["desktop", "laptop", "tablet", "mobile", "mobile_small"] as const;

/** Responsive-CSS widths (desktop layout) and mobile devices. None implies user-agent emulation. */
export const VIEWPORT_PRESETS: Readonly<Record<PresetName, Readonly<ViewportMetrics>>> = {
  desktop: {
    width: 1280,
    height: 800,
    device_scale_factor: 1,
    mobile: false,
    touch: false,
    max_touch_points: 0,
  },
  laptop: {
    width: 1440,
    height: 900,
    device_scale_factor: 1,
    mobile: false,
    touch: false,
    max_touch_points: 0,
  },
  tablet: {
    width: 768,
    height: 1024,
    device_scale_factor: 2,
    mobile: true,
    touch: true,
    max_touch_points: 5,
  },
  mobile: { width: 390, height: 844, device_scale_factor: 3, mobile: true, touch: true, max_touch_points: 5 },
  mobile_small: {
    width: 360,
    height: 740,
    device_scale_factor: 3,
    mobile: true,
    touch: true,
    max_touch_points: 5,
  },
};

/** One line per preset for the tool description. */
export function presetSummary(): string {
  return PRESET_NAMES.map((name) => {
    const m = VIEWPORT_PRESETS[name];
    return `${name} ${m.width}x${m.height}@${m.device_scale_factor}${m.mobile ? " mobile+touch" : ""}`;
  }).join(", ");
}

/** Bounds on explicit metrics: sides in CSS px, and the device-pixel size Chrome must paint. */
export const VIEWPORT_LIMITS = {
  min_side: 1,
  max_side: 4096,
  min_scale: 0.5,
  max_scale: 4,
  max_device_pixels_per_side: 8192,
  max_touch_points: 16,
} as const;

export type ViewportIntent =
  | { kind: "preset"; preset: PresetName; class: "responsive_desktop" | "mobile_device" }
  | { kind: "custom"; class: "custom_desktop" | "custom_mobile" }
  | { kind: "clear" };

export interface ViewportRequest {
  preset?: PresetName;
  width?: number;
  height?: number;
  device_scale_factor?: number;
  mobile?: boolean;
  touch?: boolean;
  max_touch_points?: number;
  clear?: boolean;
}

function invalidViewport(
  message: string,
  recovery: string,
  argument?: string,
  details?: Record<string, unknown>,
) {
  return new ToolError({
    code: "invalid_viewport",
    message,
    retry: "never",
    recovery,
    ...(argument ? { affected: { argument } } : {}),
    ...(details ? { details } : {}),
  });
}

const EXPLICIT_FIELDS = [
  "width",
  "height",
  "device_scale_factor",
  "mobile",
  "touch",
  "max_touch_points",
] as const;

/**
 * Turns a request into one intent and its explicit metrics (none for clear). Exactly one of
 * preset, explicit metrics or clear; explicit metrics need width and height; every value is
 * checked against VIEWPORT_LIMITS, including the device-pixel size width × scale.
 */
export function resolveViewport(req: ViewportRequest): { intent: ViewportIntent; metrics?: ViewportMetrics } {
  const explicit = EXPLICIT_FIELDS.filter((f) => req[f] !== undefined);
  const modes = [req.preset !== undefined, explicit.length > 0, req.clear === true].filter(Boolean).length;
  if (req.clear === false && modes === 0) {
    throw invalidViewport(
      "clear: false asks for nothing.",
      "Pass clear: true to remove the override, a preset, or width and height.",
      "clear",
    );
  }
  if (modes === 0) {
    throw invalidViewport(
      "set_viewport needs a preset, explicit width and height, or clear: true.",
      `Pass one of: preset (${
        PRESET_NAMES.join(", ")
      }), width + height (+ device_scale_factor, mobile, touch), or clear: true.`,
    );
  }
  if (modes > 1) {
    throw invalidViewport(
      `Choose one of preset, explicit metrics or clear; got ${
        [req.preset !== undefined ? "preset" : "", ...explicit, req.clear ? "clear" : ""].filter(Boolean)
          .join(", ")
      }.`,
      "A preset materializes into explicit metrics (the result lists them); to change one of them, pass all explicit metrics without the preset.",
      req.preset !== undefined ? "preset" : "clear",
    );
  }
  if (req.clear) return { intent: { kind: "clear" } };
  if (req.preset !== undefined) {
    const metrics = Object.hasOwn(VIEWPORT_PRESETS, req.preset) ? VIEWPORT_PRESETS[req.preset] : undefined;
    if (!metrics) {
      throw invalidViewport(
        `Unknown viewport preset ${JSON.stringify(String(req.preset).slice(0, 40))}.`,
        `Use one of ${PRESET_NAMES.join(", ")}, or explicit width and height.`,
        "preset",
      );
    }
    return {
      intent: {
        kind: "preset",
        preset: req.preset,
        class: metrics.mobile ? "mobile_device" : "responsive_desktop",
      },
      metrics: { ...metrics },
    };
  }
  if (req.width === undefined || req.height === undefined) {
    throw invalidViewport(
      `Explicit metrics need both width and height (missing ${
        req.width === undefined ? "width" : "height"
      }).`,
      "Pass width and height in CSS pixels, or use a preset.",
      req.width === undefined ? "width" : "height",
    );
  }
  const L = VIEWPORT_LIMITS;
  const scale = req.device_scale_factor ?? 1;
  for (const [name, value] of [["width", req.width], ["height", req.height]] as const) {
    if (!Number.isInteger(value) || value < L.min_side || value > L.max_side) {
      throw invalidViewport(
        `${name} ${value} is outside ${L.min_side}-${L.max_side} CSS px.`,
        `Pass an integer ${name} from ${L.min_side} to ${L.max_side}; to remove the override, pass clear: true.`,
        name,
        { [name]: value, min: L.min_side, max: L.max_side },
      );
    }
  }
  if (!Number.isFinite(scale) || scale < L.min_scale || scale > L.max_scale) {
    throw invalidViewport(
      `device_scale_factor ${scale} is outside ${L.min_scale}-${L.max_scale}.`,
      `Pass a device_scale_factor from ${L.min_scale} to ${L.max_scale}.`,
      "device_scale_factor",
      { device_scale_factor: scale, min: L.min_scale, max: L.max_scale },
    );
  }
  const devicePixels = Math.max(req.width, req.height) * scale;
  if (devicePixels > L.max_device_pixels_per_side) {
    throw invalidViewport(
      `${req.width}x${req.height} at scale ${scale} paints ${
        Math.ceil(devicePixels)
      } device px on a side, over the limit of ${L.max_device_pixels_per_side}.`,
      `Lower the size or the device_scale_factor so width and height × scale stay within ${L.max_device_pixels_per_side}.`,
      "device_scale_factor",
      { device_pixels: Math.ceil(devicePixels), limit: L.max_device_pixels_per_side },
    );
  }
  const mobile = req.mobile ?? false;
  const touch = req.touch ?? mobile;
  if (!touch && req.max_touch_points !== undefined && req.max_touch_points > 0) {
    throw invalidViewport(
      "max_touch_points needs touch: true.",
      "Pass touch: true with max_touch_points, or drop max_touch_points.",
      "max_touch_points",
    );
  }
  const points = touch ? req.max_touch_points ?? 5 : 0;
  if (!Number.isInteger(points) || points < (touch ? 1 : 0) || points > L.max_touch_points) {
    throw invalidViewport(
      `max_touch_points ${points} is outside 1-${L.max_touch_points}.`,
      `Pass max_touch_points from 1 to ${L.max_touch_points}.`,
      "max_touch_points",
    );
  }
  return {
    intent: { kind: "custom", class: mobile ? "custom_mobile" : "custom_desktop" },
    metrics: {
      width: req.width,
      height: req.height,
      device_scale_factor: scale,
      mobile,
      touch,
      max_touch_points: points,
    },
  };
}

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

export function sameMetrics(a: Readonly<ViewportMetrics> | undefined, b: Readonly<ViewportMetrics>): boolean {
  return a !== undefined && (Object.keys(b) as Array<keyof ViewportMetrics>).every((k) => a[k] === b[k]);
}

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

export interface ViewportGuidance {
  code:
    | "override_not_honored"
    | "device_scale_not_honored"
    | "missing_viewport_meta"
    | "viewport_meta_layout"
    | "content_overflow"
    | "scrollbar_reserve"
    | "touch_events_after_reload"
    | "original_not_restored";
  message: string;
}

export interface ViewportAssessment {
  /** The surface acknowledged as exact: layout for desktop overrides, visual for mobile ones. */
  acknowledged?: {
    surface: "layout_viewport" | "visual_viewport";
    requested: { width: number; height: number };
    observed: { width: number; height: number };
    exact: boolean;
  };
  layout: { width: number; height: number };
  visual_content: { width: number; height: number };
  guidance: ViewportGuidance[];
}

/** Layout and visual content may differ by rounding; past this they "materially" differ. */
const MATERIAL_PX = 2;

const near = (a: number, b: number, tol = 1) => Math.abs(a - b) <= tol;

/**
 * Compares the request with what the page reports. Desktop overrides acknowledge the exact layout
 * viewport (innerWidth × innerHeight) and report visual content separately (scrollbars narrow it);
 * mobile overrides acknowledge the exact visual viewport (visualViewport size × scale), since
 * viewport metadata and page scale decide the layout there.
 */
export function assessViewport(
  intent: ViewportIntent,
  metrics: ViewportMetrics | undefined,
  observed: ObservedViewport,
  previous?: ViewportOverride,
): ViewportAssessment {
  const vv = observed.visual_viewport;
  const layout = { width: observed.inner_width, height: observed.inner_height };
  const visible = {
    width: Math.round(vv.width * vv.scale * 100) / 100,
    height: Math.round(vv.height * vv.scale * 100) / 100,
  };
  const guidance: ViewportGuidance[] = [];
  let acknowledged: ViewportAssessment["acknowledged"];
  if (metrics && !metrics.mobile) {
    const exact = layout.width === metrics.width && layout.height === metrics.height;
    acknowledged = {
      surface: "layout_viewport",
      requested: { width: metrics.width, height: metrics.height },
      observed: layout,
      exact,
    };
    if (!exact) {
      guidance.push({
        code: "override_not_honored",
        message:
          `The page lays out at ${layout.width}x${layout.height}, not the requested ${metrics.width}x${metrics.height}; an extension, page zoom or a browser window smaller than the override can cause this. Call set_viewport again, or clear it and check browser zoom.`,
      });
    }
    const narrowW = layout.width - Math.round(vv.width);
    const narrowH = layout.height - Math.round(vv.height);
    if (vv.scale === 1 && (narrowW >= MATERIAL_PX || narrowH >= MATERIAL_PX)) {
      guidance.push({
        code: "scrollbar_reserve",
        message: `Visible content is ${Math.round(vv.width)}x${Math.round(vv.height)}: Chrome reserves ${
          Math.max(0, narrowW)
        } px across and ${
          Math.max(0, narrowH)
        } px down for scrollbars. Width media queries and layout still use ${layout.width} px; screenshots show the narrower content area.`,
      });
    }
  } else if (metrics) {
    const exact = near(visible.width, metrics.width) && near(visible.height, metrics.height);
    acknowledged = {
      surface: "visual_viewport",
      requested: { width: metrics.width, height: metrics.height },
      observed: visible,
      exact,
    };
    if (!exact) {
      guidance.push({
        code: "override_not_honored",
        message:
          `The visual viewport is ${visible.width}x${visible.height} CSS px, not the requested ${metrics.width}x${metrics.height}. Call set_viewport again; if it persists, reload_page.`,
      });
    }
    if (!near(layout.width, metrics.width, MATERIAL_PX)) {
      const scale = Math.round(vv.scale * 100) / 100;
      if (observed.viewport_meta === null) {
        guidance.push({
          code: "missing_viewport_meta",
          message:
            `The page has no <meta name="viewport">, so mobile Chrome lays it out at ${layout.width} CSS px (innerWidth) and zooms out to scale ${scale} to fit the ${metrics.width} px screen; width media queries see ${layout.width} px, not ${metrics.width}. Add <meta name="viewport" content="width=device-width, initial-scale=1"> to lay it out at the device width.`,
        });
      } else if (/width\s*=\s*device-width/i.test(observed.viewport_meta)) {
        guidance.push({
          code: "content_overflow",
          message:
            `The page asks for width=device-width, but content ${observed.scroll_width} px wide overflows the ${metrics.width} px device, so Chrome widened the layout to ${layout.width} px and zoomed out to scale ${scale}. Find the element wider than the viewport (fixed widths, long unbroken text, wide images).`,
        });
      } else {
        guidance.push({
          code: "viewport_meta_layout",
          message: `The page's <meta name="viewport" content=${
            JSON.stringify(observed.viewport_meta)
          }> lays it out at ${layout.width} CSS px rather than the ${metrics.width} px device width (scale ${scale}); width media queries see ${layout.width} px. Use width=device-width to follow the device.`,
        });
      }
    }
  }
  if (metrics && Math.abs(observed.device_pixel_ratio - metrics.device_scale_factor) > 0.01) {
    guidance.push({
      code: "device_scale_not_honored",
      message:
        `devicePixelRatio is ${observed.device_pixel_ratio}, not the requested ${metrics.device_scale_factor}; browser zoom multiplies it. Reset the page zoom (Control+0) or call set_viewport again.`,
    });
  }
  if (metrics && metrics.touch !== observed.touch.touch_events) {
    guidance.push({
      code: "touch_events_after_reload",
      message:
        `navigator.maxTouchPoints is ${observed.touch.max_touch_points} already, but touch event handlers ('ontouchstart' in window) ${
          metrics.touch ? "appear" : "disappear"
        } only in documents created after the change: reload_page (or navigate) to apply them to this document.`,
    });
  }
  if (intent.kind === "clear") {
    if (previous?.metrics.touch && observed.touch.touch_events) {
      guidance.push({
        code: "touch_events_after_reload",
        message:
          "Touch emulation is off, but this document keeps its touch event handlers ('ontouchstart' in window) until reload_page or navigation.",
      });
    }
    const original = previous?.original;
    if (
      original &&
      (original.inner_width !== observed.inner_width || original.inner_height !== observed.inner_height ||
        original.device_pixel_ratio !== observed.device_pixel_ratio)
    ) {
      guidance.push({
        code: "original_not_restored",
        message:
          `The page now reports ${observed.inner_width}x${observed.inner_height}@${observed.device_pixel_ratio}, not the ${original.inner_width}x${original.inner_height}@${original.device_pixel_ratio} it had before the override; the browser window may have been resized meanwhile.`,
      });
    }
  }
  return {
    ...(acknowledged ? { acknowledged } : {}),
    layout,
    visual_content: { width: Math.round(vv.width * 100) / 100, height: Math.round(vv.height * 100) / 100 },
    guidance,
  };
}

export interface ViewportReport {
  structured: Record<string, unknown>;
  lines: string[];
}

/** The viewport block of a set_viewport result and its text lines. */
export function describeViewport(
  intent: ViewportIntent,
  metrics: ViewportMetrics | undefined,
  observed: ObservedViewport | undefined,
  assessment: ViewportAssessment | undefined,
  previous?: ViewportOverride,
): ViewportReport {
  const intentText = intent.kind === "preset"
    ? `preset ${intent.preset} (${intent.class})`
    : intent.kind === "custom"
    ? intent.class.replace("_", " ")
    : "clear";
  const lines: string[] = [];
  lines.push(
    metrics
      ? `viewport ${intentText}: applied ${metrics.width}x${metrics.height} @${metrics.device_scale_factor} mobile=${metrics.mobile} touch=${metrics.touch}${
        metrics.touch ? ` (${metrics.max_touch_points} points)` : ""
      }`
      : `viewport cleared: device metrics and touch emulation removed${
        previous ? ` (was ${previous.metrics.width}x${previous.metrics.height})` : " (none was set)"
      }`,
  );
  if (observed) {
    const vv = observed.visual_viewport;
    lines.push(
      `observed: inner ${observed.inner_width}x${observed.inner_height}, visual ${vv.width}x${vv.height} scale ${vv.scale}, dpr ${observed.device_pixel_ratio}, clientWidth ${observed.client_width}, maxTouchPoints ${observed.touch.max_touch_points}${
        observed.viewport_meta === null ? ", no viewport meta" : ""
      }`,
    );
  }
  if (assessment?.acknowledged) {
    const a = assessment.acknowledged;
    lines.push(
      `${a.surface.replace("_", " ")} ${a.observed.width}x${a.observed.height} ${
        a.exact ? "matches" : "DIFFERS FROM"
      } the requested ${a.requested.width}x${a.requested.height}`,
    );
  }
  for (const g of assessment?.guidance ?? []) lines.push(`guidance ${g.code}: ${g.message}`);
  const structured: Record<string, unknown> = {
    intent,
    applied: metrics ? { ...metrics } : null,
    ...(intent.kind === "clear" ? { cleared: previous ? { ...previous.metrics } : null } : {}),
    ...(observed ? { observed } : {}),
    ...(assessment
      ? {
        ...(assessment.acknowledged ? { acknowledged: assessment.acknowledged } : {}),
        layout: assessment.layout,
        visual_content: assessment.visual_content,
        guidance: assessment.guidance,
      }
      : {}),
    ...(intent.kind === "clear" && previous?.original
      ? {
        original: {
          inner_width: previous.original.inner_width,
          inner_height: previous.original.inner_height,
          device_pixel_ratio: previous.original.device_pixel_ratio,
        },
      }
      : {}),
    user_agent: "unchanged (presets do not emulate a user agent)",
  };
  return { structured, lines };
}
