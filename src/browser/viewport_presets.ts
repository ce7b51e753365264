import { ToolError } from "../errors.ts";

/**
 * What set_viewport may ask for, before any browser is involved: the explicit metrics an override
 * applies, the named presets that materialize into them, the limits they must stay within, and the
 * check that turns one request into exactly one intent. Kept apart from the CDP side (viewport.ts)
 * so the whole request contract is testable without Chrome.
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

/** Whether two metrics are identical, field by field (no metrics yet counts as different). */
export function sameMetrics(a: Readonly<ViewportMetrics> | undefined, b: Readonly<ViewportMetrics>): boolean {
  return a !== undefined && (Object.keys(b) as Array<keyof ViewportMetrics>).every((k) => a[k] === b[k]);
}
