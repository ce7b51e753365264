import { assert, assertEquals } from "../../assert.ts";
import type { ObservedViewport } from "../../../src/browser/viewport.ts";
import {
  PRESET_NAMES,
  type PresetName,
  resolveViewport,
  sameMetrics,
  VIEWPORT_LIMITS,
  VIEWPORT_PRESETS,
  type ViewportRequest,
} from "../../../src/browser/viewport_presets.ts";
import { assessViewport } from "../../../src/browser/viewport_report.ts";
import { ToolError } from "../../../src/errors.ts";

function observed(over: Partial<ObservedViewport> = {}): ObservedViewport {
  return {
    inner_width: 1280,
    inner_height: 800,
    visual_viewport: { width: 1280, height: 800, scale: 1 },
    device_pixel_ratio: 1,
    client_width: 1280,
    client_height: 800,
    scroll_width: 1280,
    viewport_meta: "width=device-width, initial-scale=1",
    compat_mode: "CSS1Compat",
    touch: { max_touch_points: 0, touch_events: false, coarse_pointer: false },
    url: "http://127.0.0.1/",
    ...over,
  };
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert(err instanceof ToolError, String(err));
    assertEquals(err.retry, "never");
    assert(err.recovery, "every rejection says what to do next");
    return err.code;
  }
  throw new Error("did not throw");
}

Deno.test("presets materialize into explicit metrics and name their class", () => {
  for (const name of PRESET_NAMES) {
    const { intent, metrics } = resolveViewport({ preset: name });
    assertEquals(metrics, VIEWPORT_PRESETS[name]);
    assertEquals(intent, {
      kind: "preset",
      preset: name,
      class: VIEWPORT_PRESETS[name].mobile ? "mobile_device" : "responsive_desktop",
    });
    const m = VIEWPORT_PRESETS[name];
    assertEquals(m.touch, m.mobile, `${name}: touch goes with mobile`);
    assert(Math.max(m.width, m.height) * m.device_scale_factor <= VIEWPORT_LIMITS.max_device_pixels_per_side);
  }
});

Deno.test("explicit metrics: defaults, touch follows mobile, and stable meanings", () => {
  assertEquals(resolveViewport({ width: 800, height: 600 }), {
    intent: { kind: "custom", class: "custom_desktop" },
    metrics: {
      width: 800,
      height: 600,
      device_scale_factor: 1,
      mobile: false,
      touch: false,
      max_touch_points: 0,
    },
  });
  assertEquals(resolveViewport({ width: 400, height: 800, mobile: true, device_scale_factor: 2 }).metrics, {
    width: 400,
    height: 800,
    device_scale_factor: 2,
    mobile: true,
    touch: true,
    max_touch_points: 5,
  });
  assertEquals(
    resolveViewport({ width: 400, height: 800, touch: true, max_touch_points: 2 }).metrics?.max_touch_points,
    2,
  );
  assertEquals(resolveViewport({ clear: true }), { intent: { kind: "clear" } });
});

Deno.test("invalid requests are refused as invalid_viewport before anything is sent", () => {
  const bad: ViewportRequest[] = [
    {},
    { clear: false },
    { width: 0, height: 600 },
    { width: 800, height: 100_000 },
    { width: 800.5, height: 600 },
    { width: 800, height: 600, device_scale_factor: 0 },
    { width: 800, height: 600, device_scale_factor: Number.NaN },
    { width: 4000, height: 3000, device_scale_factor: 4 },
    { width: 800 },
    { height: 600 },
    { preset: "mobile", width: 400 },
    { preset: "mobile", clear: true },
    { width: 800, height: 600, clear: true },
    { preset: "phablet" as PresetName },
    { preset: "__proto__" as PresetName },
    { width: 800, height: 600, touch: false, max_touch_points: 3 },
  ];
  for (const req of bad) {
    assertEquals(code(() => resolveViewport(req)), "invalid_viewport", JSON.stringify(req));
  }
});

Deno.test("desktop overrides acknowledge the exact layout and report narrower visual content", () => {
  const { intent, metrics } = resolveViewport({ preset: "desktop" });
  const exact = assessViewport(intent, metrics, observed());
  assertEquals(exact.acknowledged?.surface, "layout_viewport");
  assertEquals(exact.acknowledged?.exact, true);
  assertEquals(exact.guidance, []);
  const scrollbars = assessViewport(
    intent,
    metrics,
    observed({ visual_viewport: { width: 1265, height: 800, scale: 1 }, client_width: 1265 }),
  );
  assertEquals(scrollbars.acknowledged?.exact, true, "scrollbars do not make the layout inexact");
  assertEquals(scrollbars.visual_content.width, 1265);
  assertEquals(scrollbars.guidance.map((g) => g.code), ["scrollbar_reserve"]);
  assertEquals(
    assessViewport(intent, metrics, observed({ device_pixel_ratio: 1.25 })).guidance.map((g) => g.code),
    ["device_scale_not_honored"],
  );
  const off = assessViewport(intent, metrics, observed({ inner_width: 1000 }));
  assertEquals(off.acknowledged?.exact, false);
  assert(off.guidance.some((g) => g.code === "override_not_honored"));
});

Deno.test("mobile overrides acknowledge the visual viewport and explain a wide layout", () => {
  const { intent, metrics } = resolveViewport({ preset: "mobile" });
  const touch = { max_touch_points: 5, touch_events: true, coarse_pointer: true };
  const fits = assessViewport(
    intent,
    metrics,
    observed({
      inner_width: 390,
      inner_height: 844,
      visual_viewport: { width: 390, height: 844, scale: 1 },
      device_pixel_ratio: 3,
      touch,
    }),
  );
  assertEquals([fits.acknowledged?.surface, fits.acknowledged?.exact], ["visual_viewport", true]);
  assertEquals(fits.guidance, []);
  const zoomedOut = {
    inner_width: 980,
    inner_height: 2121,
    visual_viewport: { width: 980, height: 2120.82, scale: 0.397959 },
    device_pixel_ratio: 3,
    scroll_width: 980,
    touch,
  };
  const noMeta = assessViewport(intent, metrics, observed({ ...zoomedOut, viewport_meta: null }));
  assertEquals(noMeta.acknowledged?.exact, true, "the visual viewport is the device even when zoomed out");
  assertEquals(noMeta.layout.width, 980);
  assertEquals(noMeta.guidance.map((g) => g.code), ["missing_viewport_meta"]);
  assertEquals(
    assessViewport(intent, metrics, observed({ ...zoomedOut, viewport_meta: "width=980" })).guidance.map((
      g,
    ) => g.code),
    ["viewport_meta_layout"],
  );
  assertEquals(
    assessViewport(intent, metrics, observed({ ...zoomedOut, scroll_width: 980 })).guidance.map((g) =>
      g.code
    ),
    ["content_overflow"],
  );
  const stale = assessViewport(
    intent,
    metrics,
    observed({
      inner_width: 390,
      visual_viewport: { width: 390, height: 844, scale: 1 },
      inner_height: 844,
      device_pixel_ratio: 3,
    }),
  );
  assertEquals(stale.guidance.map((g) => g.code), ["touch_events_after_reload"]);
});

Deno.test("sameMetrics compares every field", () => {
  const m = VIEWPORT_PRESETS.mobile;
  assert(sameMetrics({ ...m }, m));
  assert(!sameMetrics(undefined, m));
  assert(!sameMetrics({ ...m, touch: false }, m));
});
