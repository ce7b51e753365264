/**
 * Artifact timing over real recorded 1080p frames: a headless Chromium at 1920×1080 plays the
 * animation fixture while krometrail (attached over CDP) records it; then, through the MCP client,
 * storyboard + difference map over 2 s of those frames uncached, and the same range's debug bundle
 * uncached and cached. Timings include the MCP round trip an agent pays.
 */
import {
  fixtures,
  type ServerHandle,
  startDebugChrome,
  startServer,
  structured,
} from "../../tests/e2e/harness.ts";

export interface ArtifactTimings {
  frames: number;
  width: number;
  height: number;
  range_ms: number;
  /** The first artifact request of a fresh server process (JIT and WASM memory still cold). */
  cold_first_request_ms: number;
  storyboard_and_diff_ms: number;
  bundle_uncached_ms: number;
  bundle_cached_ms: number;
}

async function timed(server: ServerHandle, name: string, args: Record<string, unknown>) {
  const t0 = performance.now();
  const result = await server.call(name, args);
  const ms = performance.now() - t0;
  if (result.isError) throw new Error(`${name} failed: ${result.content[0]?.text?.slice(0, 300)}`);
  return { ms, out: structured(result) };
}

export async function measureArtifacts(recordSeconds = 3): Promise<ArtifactTimings> {
  const site = fixtures();
  const profile = await Deno.makeTempDir({ prefix: "krometrail-bench-vision-" });
  const chrome = await startDebugChrome(profile, { width: 1920, height: 1080 });
  const server = await startServer();
  try {
    await timed(server, "attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` });
    await timed(server, "navigate_page", { url: `${site.origin}/animation.html` });
    await new Promise((r) => setTimeout(r, recordSeconds * 1000));
    const listing = (await timed(server, "list_source_frames", { max_frames: 1 })).out;
    const total = listing.total_frame_count as number;
    const last = (await timed(server, "list_source_frames", { offset: total - 1, max_frames: 1 })).out;
    const lastFrame = (last.frames as Array<{ session_time_ms: number; width: number; height: number }>)[0];
    const range = { start_ms: lastFrame.session_time_ms - 2000, end_ms: lastFrame.session_time_ms };
    await timed(server, "stop_browser", {});

    // Each noise floor is a separate analysis: nothing below reuses another request's cache.
    const cold = await timed(server, "generate_artifacts", {
      range,
      generators: ["storyboard", "difference_map"],
      noise_floor: 11,
      inline_images: false,
    });
    const artifacts = await timed(server, "generate_artifacts", {
      range,
      generators: ["storyboard", "difference_map"],
      inline_images: false,
    });
    const frames = (artifacts.out.measurements as Array<{ frame_count: number }>)[0].frame_count;
    // Different noise floor: a fresh analysis, so the bundle's first run is uncached as well.
    const first = await timed(server, "temporal_debug_bundle", {
      range,
      noise_floor: 13,
      inline_images: false,
    });
    const cached = await timed(server, "temporal_debug_bundle", {
      range,
      noise_floor: 13,
      inline_images: false,
    });
    return {
      frames,
      width: lastFrame.width,
      height: lastFrame.height,
      range_ms: 2000,
      cold_first_request_ms: cold.ms,
      storyboard_and_diff_ms: artifacts.ms,
      bundle_uncached_ms: first.ms,
      bundle_cached_ms: cached.ms,
    };
  } finally {
    await server.close();
    chrome.child.kill("SIGTERM");
    await chrome.child.status;
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    await site.close();
  }
}

if (import.meta.main) console.log(await measureArtifacts());
