/**
 * The scenario's deterministic browser settings, applied to every page of the run in its initialization
 * round (before it runs), and again whenever a target reattaches.
 *
 * The viewport reuses the session's own machinery: a ViewportOverride (browser/viewport.ts) kept in the
 * page's "viewport" override slot, so set_viewport, browser_status and the viewport report see the
 * scenario's metrics as the page's current override instead of a second override fighting it.
 * Locale, timezone and media features are separate Emulation overrides. Emulation.setLocaleOverride sets
 * the ICU locale (Intl, toLocaleString) only; navigator.language(s) and Accept-Language come from
 * setUserAgentOverride's acceptLanguage, sent with an empty userAgent, which Chromium 156 reads as "keep
 * the browser's own user agent". Color scheme "no-preference" is emulated as given; Chromium then matches
 * `(prefers-color-scheme: light)`, not dark and not no-preference (measured).
 */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget, TargetOverride } from "../browser/targets.ts";
import { ViewportOverride } from "../browser/viewport.ts";
import { logger } from "../log.ts";
import { tolerated } from "./guard.ts";

const log = logger("scenario", "environment");

export interface EnvironmentPlan {
  viewport: { width: number; height: number; device_scale_factor: number };
  locale: string;
  timezone: string;
  color_scheme: "light" | "dark" | "no-preference";
  reduced_motion: "reduce" | "no-preference";
}

/** The slot browser/viewport.ts keeps a page's viewport override in (its currentOverride reads it). */
const VIEWPORT_SLOT = "viewport";
const ENVIRONMENT_SETUP = "scenario_environment";
const ALL_PAGES = (_page: PageTarget) => true;

/** The media features emulated, each value as the plan gives it. */
export function mediaFeatures(plan: EnvironmentPlan): { name: string; value: string }[] {
  return [
    { name: "prefers-color-scheme", value: plan.color_scheme },
    { name: "prefers-reduced-motion", value: plan.reduced_motion },
  ];
}

export function viewportOverride(plan: EnvironmentPlan): ViewportOverride {
  const v = plan.viewport;
  return new ViewportOverride({ kind: "custom", class: "custom_desktop" }, {
    width: v.width,
    height: v.height,
    device_scale_factor: v.device_scale_factor,
    mobile: false,
    touch: false,
    max_touch_points: 0,
  });
}

/**
 * Installs the environment on every page of the session, now and later (only those `pages` accepts, when
 * given: in connect mode, the scenario's page and what it opens). Call before session.start().
 */
export function installEnvironment(
  session: BrowserSession,
  plan: EnvironmentPlan,
  pages: (page: PageTarget) => boolean = ALL_PAGES,
): void {
  const viewport = viewportOverride(plan);
  const scopedViewport: TargetOverride = {
    apply: (page, timeoutMs) => pages(page) ? viewport.apply(page, timeoutMs) : [],
  };
  const emulation: TargetOverride = {
    apply(page: PageTarget, timeoutMs?: number): Array<Promise<unknown>> {
      if (!pages(page)) return [];
      // A setting Chrome refuses is a warning, not a page that never initializes.
      const refused = (method: string) => (message: string) =>
        log.warn("{method} refused on {page}: {message}", { method, page: page.id, message });
      return [
        tolerated(
          page.send("Emulation.setLocaleOverride", { locale: plan.locale }, timeoutMs),
          refused("Emulation.setLocaleOverride"),
        ),
        tolerated(
          page.send(
            "Emulation.setUserAgentOverride",
            { userAgent: "", acceptLanguage: plan.locale },
            timeoutMs,
          ),
          refused("Emulation.setUserAgentOverride"),
        ),
        tolerated(
          page.send("Emulation.setTimezoneOverride", { timezoneId: plan.timezone }, timeoutMs),
          refused("Emulation.setTimezoneOverride"),
        ),
        tolerated(
          page.send("Emulation.setEmulatedMedia", { media: "", features: mediaFeatures(plan) }, timeoutMs),
          refused("Emulation.setEmulatedMedia"),
        ),
      ];
    },
  };
  // Unscoped, the override itself goes in the slot, so currentOverride() reads its metrics.
  session.addPageSetup(VIEWPORT_SLOT, pages === ALL_PAGES ? viewport : scopedViewport);
  session.addPageSetup(ENVIRONMENT_SETUP, emulation);
}
