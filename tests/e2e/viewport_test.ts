import { assert, assertEquals, assertMatch } from "../assert.ts";
import { CdpConnection } from "../../src/browser/cdp.ts";
import { discoverChrome } from "../../src/browser/discovery.ts";
import { launchChrome } from "../../src/browser/launch.ts";
import { BrowserSession, nextSessionOrdinal } from "../../src/browser/session.ts";
import type { PageTarget } from "../../src/browser/targets.ts";
import { applyViewport, currentOverride } from "../../src/browser/viewport.ts";
import { resolveViewport, type ViewportMetrics } from "../../src/browser/viewport_presets.ts";
import {
  e2e,
  errorCode,
  type ServerHandle,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";

interface Metrics {
  inner_width: number;
  inner_height: number;
  dpr: number;
  narrow: boolean;
  breakpoint: string;
  max_touch_points: number;
  touch_events: boolean;
}

const METRICS = `({
  inner_width: innerWidth,
  inner_height: innerHeight,
  dpr: devicePixelRatio,
  narrow: matchMedia("(max-width: 599px)").matches,
  breakpoint: window.activeBreakpoint ? activeBreakpoint() : "",
  max_touch_points: navigator.maxTouchPoints,
  touch_events: "ontouchstart" in window,
})`;

async function metrics(server: ServerHandle, pageId?: string): Promise<Metrics> {
  const r = await server.call("evaluate_page", {
    expression: METRICS,
    ...(pageId ? { page_id: pageId } : {}),
  });
  assert(!r.isError, textOf(r));
  return structured(r).value as Metrics;
}

interface ViewportBlock {
  intent: { kind: string; preset?: string; class?: string };
  applied:
    | { width: number; height: number; device_scale_factor: number; mobile: boolean; touch: boolean }
    | null;
  observed: { inner_width: number; device_pixel_ratio: number; visual_viewport: { scale: number } };
  acknowledged?: { surface: string; exact: boolean; observed: { width: number; height: number } };
  layout: { width: number; height: number };
  visual_content: { width: number; height: number };
  guidance: Array<{ code: string; message: string }>;
}

function viewportOf(result: ToolResult): ViewportBlock {
  assert(!result.isError, textOf(result));
  return structured(result).viewport as ViewportBlock;
}

interface FrameRow {
  page_id: string;
  session_time_ms: number;
  width: number;
  height: number;
  viewport: { width: number; height: number };
}

/** The page's recorded frames from `sinceMs` on (session time), newest last. */
async function framesSince(server: ServerHandle, pageId: string, sinceMs: number): Promise<FrameRow[]> {
  const first = structured(await server.call("list_source_frames", { page_id: pageId, max_frames: 1 }));
  const total = first.total_frame_count as number;
  const listed = structured(
    await server.call("list_source_frames", {
      page_id: pageId,
      offset: Math.max(0, total - 200),
      max_frames: 200,
    }),
  );
  return (listed.frames as FrameRow[]).filter((f) => f.session_time_ms >= sinceMs);
}

Deno.test({
  name:
    "set_viewport: explicit metrics, mobile preset with touch, navigation, no leak to another page, clear, guidance, errors, recorded frame size",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/responsive.html` });
      const original = await metrics(server);
      assertEquals(original.breakpoint, "wide", JSON.stringify(original));
      assertEquals(original.max_touch_points, 0);

      // Explicit desktop metrics: exact layout geometry, scale and media queries.
      const custom = await server.call("set_viewport", { width: 500, height: 700, device_scale_factor: 2 });
      const vp = viewportOf(custom);
      assertEquals(vp.intent, { kind: "custom", class: "custom_desktop" });
      assertEquals(vp.applied?.width, 500);
      assertEquals(vp.applied?.device_scale_factor, 2);
      assertEquals(vp.acknowledged?.surface, "layout_viewport");
      assertEquals(vp.acknowledged?.exact, true, JSON.stringify(vp));
      assertEquals([vp.observed.inner_width, vp.observed.device_pixel_ratio], [500, 2]);
      assertEquals(vp.visual_content.width <= vp.layout.width, true);
      assert(custom.content.some((c) => c.type === "image"), "one viewport image inline by default");
      assertEquals(custom.content.filter((c) => c.type === "image").length, 1);
      // The image shows the page at its new size, not a frame from before the override.
      const shot = structured(custom).screenshot as { width: number; height: number };
      assertEquals(
        Math.round(shot.width / shot.height * 100),
        Math.round(500 / 700 * 100),
        JSON.stringify(shot),
      );
      assertMatch(textOf(custom), /viewport custom desktop: applied 500x700 @2/);
      const dispatchedMs = (structured(custom).timing_ms as { dispatch: number }).dispatch;
      let m = await metrics(server);
      assertEquals([m.inner_width, m.inner_height, m.dpr, m.narrow, m.breakpoint], [
        500,
        700,
        2,
        true,
        "narrow",
      ]);
      const quiet = await server.call("set_viewport", { width: 500, height: 700, inline_images: false });
      assert(!quiet.content.some((c) => c.type === "image"), "inline_images: false suppresses pixels");

      // The override survives ordinary navigation and reload.
      await server.call("navigate_page", { url: `${site.origin}/index.html` });
      await server.call("navigate_page", { url: `${site.origin}/responsive.html` });
      m = await metrics(server);
      assertEquals([m.inner_width, m.breakpoint], [500, "narrow"], "after navigate_page");
      await server.call("reload_page");
      m = await metrics(server);
      assertEquals(
        [m.inner_width, m.inner_height, m.dpr],
        [500, 700, 1],
        "after reload_page (last set scale 1)",
      );
      // A cross-site navigation swaps the renderer process; the override stays with the target.
      const crossSite = site.origin.replace("127.0.0.1", "localhost");
      const swapped = await server.call("navigate_page", { url: `${crossSite}/responsive.html` });
      assert(!swapped.isError, textOf(swapped));
      m = await metrics(server);
      assertEquals([m.inner_width, m.breakpoint], [500, "narrow"], "after a cross-site navigation");

      // Recording goes on: frames after the override carry the new viewport size.
      await new Promise((r) => setTimeout(r, 500));
      const frames = await framesSince(server, "p1", dispatchedMs);
      assert(frames.length > 0, "frames were recorded after the override");
      const last = frames[frames.length - 1];
      assertEquals([last.viewport.width, last.viewport.height], [500, 700], JSON.stringify(last));
      assertEquals(
        Math.round(last.width / last.height * 100),
        Math.round(500 / 700 * 100),
        JSON.stringify(last),
      );

      // Another target never sees it.
      const created = structured(await server.call("create_page", { url: `${site.origin}/responsive.html` }));
      const other = created.page_id as string;
      const otherMetrics = await metrics(server, other);
      assertEquals(
        [otherMetrics.inner_width, otherMetrics.dpr, otherMetrics.breakpoint],
        [original.inner_width, original.dpr, "wide"],
      );
      await server.call("select_page", { page_id: "p1" });

      // A mobile preset: exact visual viewport, touch, mobile scale.
      const mobile = await server.call("set_viewport", { preset: "mobile" });
      const mvp = viewportOf(mobile);
      assertEquals(mvp.intent, { kind: "preset", preset: "mobile", class: "mobile_device" });
      assertEquals(
        mvp.applied,
        {
          width: 390,
          height: 844,
          device_scale_factor: 3,
          mobile: true,
          touch: true,
          max_touch_points: 5,
        } as ViewportBlock["applied"],
      );
      assertEquals(mvp.acknowledged?.surface, "visual_viewport");
      assertEquals(mvp.acknowledged?.exact, true, JSON.stringify(mvp));
      assert(
        !mvp.guidance.some((g) => g.code === "missing_viewport_meta"),
        "this page has viewport metadata",
      );
      m = await metrics(server);
      assertEquals([m.inner_width, m.dpr, m.breakpoint], [390, 3, "narrow"]);
      assert(m.max_touch_points > 0, "touch points are emulated at once");
      if (!m.touch_events) {
        assert(
          mvp.guidance.some((g) => g.code === "touch_events_after_reload"),
          JSON.stringify(mvp.guidance),
        );
      }
      await server.call("reload_page");
      m = await metrics(server);
      assert(m.touch_events && m.max_touch_points > 0, `touch after reload: ${JSON.stringify(m)}`);
      assertEquals([m.inner_width, m.dpr], [390, 3], "the preset survives reload");
      assertEquals((await metrics(server, other)).max_touch_points, 0, "no touch leaks to the other page");

      // The missing-viewport-metadata case: the layout is wide, the visual viewport is the device.
      await server.call("navigate_page", { url: `${site.origin}/no_meta.html` });
      const noMeta = await server.call("set_viewport", { preset: "mobile" });
      const nvp = viewportOf(noMeta);
      assertEquals(nvp.acknowledged?.exact, true, JSON.stringify(nvp));
      assert(nvp.layout.width > 390, `layout is wider than the device: ${JSON.stringify(nvp.layout)}`);
      assert(nvp.observed.visual_viewport.scale < 1, "Chrome zoomed out to fit");
      const hint = nvp.guidance.find((g) => g.code === "missing_viewport_meta");
      assert(hint, JSON.stringify(nvp.guidance));
      assertMatch(hint.message, /meta name="viewport" content="width=device-width, initial-scale=1"/);
      assertMatch(textOf(noMeta), /guidance missing_viewport_meta/);
      assertEquals((await metrics(server)).breakpoint, "wide", "media queries see the wide layout");

      // Clear removes device metrics and touch emulation: the original comes back.
      await server.call("navigate_page", { url: `${site.origin}/responsive.html` });
      const cleared = await server.call("set_viewport", { clear: true });
      const cvp = viewportOf(cleared);
      assertEquals(cvp.intent, { kind: "clear" });
      assertEquals(cvp.applied, null);
      assertEquals(cvp.observed.inner_width, original.inner_width);
      assert(!cvp.guidance.some((g) => g.code === "original_not_restored"), JSON.stringify(cvp.guidance));
      m = await metrics(server);
      assertEquals(
        [m.inner_width, m.inner_height, m.dpr, m.breakpoint, m.max_touch_points],
        [original.inner_width, original.inner_height, original.dpr, "wide", 0],
      );
      await server.call("reload_page");
      m = await metrics(server);
      assertEquals(
        [m.inner_width, m.touch_events],
        [original.inner_width, false],
        "clear holds across reload",
      );

      // Invalid metrics fail with structured errors and change nothing.
      const invalid: Array<[Record<string, unknown>, string]> = [
        [{ width: 0, height: 600 }, "invalid_arguments"],
        [{ width: 100_000, height: 600 }, "invalid_arguments"],
        [{ width: 800, height: 600, device_scale_factor: 0 }, "invalid_arguments"],
        [{ preset: "phablet" }, "invalid_arguments"],
        [{ width: 4000, height: 3000, device_scale_factor: 4 }, "invalid_viewport"],
        [{ width: 800 }, "invalid_viewport"],
        [{ preset: "mobile", width: 400 }, "invalid_viewport"],
        [{}, "invalid_viewport"],
      ];
      for (const [args, code] of invalid) {
        const r = await server.call("set_viewport", args);
        assertEquals(r.isError, true, JSON.stringify(args));
        assertEquals(errorCode(r), code, `${JSON.stringify(args)}: ${textOf(r)}`);
        const error = structured(r).error as { retry: string; recovery?: string };
        assertEquals(error.retry, "never");
        assert(error.recovery, "says what to do next");
      }
      assertEquals(
        (await metrics(server)).inner_width,
        original.inner_width,
        "rejected calls changed nothing",
      );
    }, { browser: {} }),
});

Deno.test({
  name:
    "set_viewport: a same-target reattachment gets the override back as it initializes; a new target never does",
  ...e2e,
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-viewport-" });
    const found = discoverChrome({});
    const launched = await launchChrome({
      executable: found.path,
      userDataDir: dataDir,
      profileLabel: "temporary",
      headless: true,
    });
    const conn = await CdpConnection.connect(launched.browserWsUrl);
    const session = new BrowserSession({
      conn,
      ordinal: nextSessionOrdinal(),
      mode: "launched",
      profile: { kind: "temporary" },
      config: { every_nth_frame: 1, focus: "foreground", headless: true },
      process: launched.process,
    });
    const width = async (page: PageTarget) =>
      (await page.send("Runtime.evaluate", { expression: "innerWidth", returnByValue: true })).result.value;
    try {
      await session.start();
      const page = session.page();
      const original = await width(page);
      const { intent, metrics } = resolveViewport({ width: 500, height: 700 });
      await applyViewport(page, intent, metrics as ViewportMetrics);
      assertEquals(await width(page), 500);

      const adopted = new Promise<PageTarget>((resolve) => {
        const off = session.onPageAdded((p) => {
          off();
          resolve(p);
        });
      });
      await conn.send("Target.detachFromTarget", { sessionId: page.sessionId });
      for (let i = 0; i < 100 && !page.closed; i++) await new Promise((r) => setTimeout(r, 20));
      assert(page.closed && session.pages.size === 0, "the session dropped the detached page");
      // Chrome drops a detached session's emulation: a bystander connection sees the original size.
      // The drop reaches the renderer asynchronously (no event marks it; under load a first read can
      // still see 500), so the bystander reads until it lands, bounded. Waiting also means the 500 read
      // after reattachment can only come from the re-applied override.
      const bystander = await CdpConnection.connect(launched.browserWsUrl);
      try {
        const { sessionId } = await bystander.send("Target.attachToTarget", {
          targetId: page.targetId,
          flatten: true,
        });
        let seen: unknown;
        for (const deadline = Date.now() + 10_000; seen !== original && Date.now() < deadline;) {
          const r = await bystander.send(
            "Runtime.evaluate",
            {
              expression: "new Promise((r) => requestAnimationFrame(() => r(innerWidth)))",
              awaitPromise: true,
              returnByValue: true,
            },
            sessionId,
          );
          seen = r.result.value;
        }
        assertEquals(seen, original, "the detach cleared Chrome's override");
      } finally {
        await bystander.close();
      }
      await conn.send("Target.attachToTarget", { targetId: page.targetId, flatten: true });
      const again = await adopted;
      assertEquals(again.targetId, page.targetId, "the same target came back");
      assert(currentOverride(again), "the override was carried to the reattached target");
      assertEquals(await width(again), 500, "re-applied during initialization");

      const other = await session.createPage("about:blank");
      assertEquals(currentOverride(other), undefined);
      assertEquals(await width(other), original, "a new target never inherits the override");
    } finally {
      await session.stop();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});
