import type { ObservedViewport, ViewportOverride } from "./viewport.ts";
import type { ViewportIntent, ViewportMetrics } from "./viewport_presets.ts";

/**
 * Judging an override by what the page reports: which surface is acknowledged as exact, the
 * guidance codes that explain a mismatch (page metadata, scrollbars, zoom, touch handlers), and the
 * viewport block of the set_viewport result. Pure, so every guidance case is testable without Chrome.
 */

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
