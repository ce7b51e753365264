import { assert, assertEquals } from "../assert.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import type { RgbaImage } from "../../src/vision/image.ts";
import { e2e, errorCode, refOf, type ServerHandle, sharedServerChecks, structured } from "./harness.ts";
import type { StaticServer } from "../../src/demo/static_server.ts";
import { openPanel, openPanelClick } from "./transition_flow.ts";
import { PASSING_MS } from "../../src/temporal/transients.ts";
import {
  heldExtremesBeforeReturn,
  type PanelFrame,
  panelOffset,
  type ReversalParams,
} from "./reversal_flow.ts";

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

async function frameImage(server: ServerHandle, frameId: number): Promise<RgbaImage> {
  const fetched = await server.call("fetch_source_frames", { frame_ids: [frameId] });
  const image = fetched.content.find((c) => c.type === "image");
  assert(image?.data, `frame ${frameId} is inlined`);
  return decodeJpeg(Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0)));
}

function pixel(img: RgbaImage, x: number, y: number): [number, number, number] {
  const i = (Math.round(y) * img.width + Math.round(x)) * 4;
  return [img.data[i], img.data[i + 1], img.data[i + 2]];
}

const isMagenta = ([r, g, b]: number[]) => r > 200 && g < 90 && b > 200;
const isPanelBlue = ([r, g, b]: number[]) => r < 70 && g < 110 && b > 150;

/** Session ms of the first frame of width × height received at or after fromMs; waits for it (bounded). */
async function firstFrameOfSize(server: ServerHandle, fromMs: number, width: number, height: number) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const listed = structured(
      await server.call("list_source_frames", {
        range: { start_ms: fromMs, end_ms: fromMs + 600_000 },
        max_frames: 200,
      }),
    );
    const frames = (listed.frames ?? []) as Array<{ width: number; height: number; session_time_ms: number }>;
    const hit = frames.find((f) => f.width === width && f.height === height);
    if (hit) return hit.session_time_ms;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no ${width}x${height} frame after ${fromMs} ms within 30 s`);
}

/**
 * fixtures/site/transition.html's panel path in reversal_flow's terms: forward 480 px, held 192 ms
 * (38–62 % of 800 ms), back 80 px over 152 ms to rest at 400 px.
 */
const PANEL_PATH: ReversalParams = { dist: 480, hold: 192, back: 80, away: 152, rest: 400 };

/** Every source frame of the interaction's range in paint order, with the panel's offset in each. */
async function panelSource(server: ServerHandle, interaction: string): Promise<PanelFrame[]> {
  const result = await server.call("list_source_frames", { interaction_id: interaction, max_frames: 200 });
  assert(!result.isError, `list_source_frames failed: ${result.content[0]?.text}`);
  const rows = structured(result).frames as Array<
    { frame_id: number; uri: string; chrome_timestamp: number | null; session_time_ms: number }
  >;
  const frames = await Promise.all(rows.map(async (row) => {
    const res = await server.client.readResource({ uri: row.uri });
    const blob = (res.contents[0] as { blob?: string }).blob ?? "";
    return {
      frame_id: row.frame_id,
      paint: row.chrome_timestamp ?? row.session_time_ms / 1e3,
      x: panelOffset(Uint8Array.from(atob(blob), (c) => c.charCodeAt(0))),
    };
  }));
  return frames.sort((a, b) => a.paint - b.paint);
}

const offsets = (frames: PanelFrame[]) => frames.map((f) => `#${f.frame_id}@${f.x}`).join(" ");

async function readJson(server: ServerHandle, uri: string): Promise<Record<string, unknown>> {
  const res = await server.client.readResource({ uri });
  const first = res.contents[0] as { text?: string; blob?: string };
  const text = first.text ??
    new TextDecoder().decode(Uint8Array.from(atob(first.blob ?? ""), (c) => c.charCodeAt(0)));
  return JSON.parse(text);
}

async function bundleOfClick(server: ServerHandle, site: StaticServer): Promise<void> {
  // Under load Chromium paints sparsely and may never paint the panel's 192 ms hold at +480 px, or
  // only in passing: then no selection can show it, and a bundle cannot honestly call it a state.
  // The storyboard is asked to show the extreme only in a run whose source frames show it held (as
  // long as the bundle needs to tell a stop from passing motion), then the return. Under heavy load
  // about half the runs qualify; one of eight must.
  let interaction = "";
  let source: PanelFrame[] = [];
  for (let attempt = 0; attempt < 8; attempt++) {
    interaction = await openPanel(server, site.origin);
    await new Promise((r) => setTimeout(r, 1_500));
    source = await panelSource(server, interaction);
    if (heldExtremesBeforeReturn(source, PANEL_PATH, PASSING_MS).length > 0) break;
  }
  const held = heldExtremesBeforeReturn(source, PANEL_PATH, PASSING_MS);
  assert(held.length > 0, `a run whose source frames show the panel held at +480 px: ${offsets(source)}`);

  const result = await server.call("temporal_debug_bundle", {
    interaction_id: interaction,
    detail: "full",
  });
  assert(!result.isError, `bundle failed: ${result.content[0]?.text}`);
  const bundle = structured(result);
  assert(
    result.content.some((c) => c.type === "image" && c.mimeType === "image/png"),
    "storyboard inlined",
  );
  const range = bundle.range as { anchor: { id: string }; complete: boolean };
  assertEquals(range.anchor.id, interaction);

  const selected = bundle.selected_frame_ids as number[];
  assert(selected.length >= 3 && selected.length <= 8, `${selected.length} storyboard frames`);
  const images = await Promise.all(selected.map((id) => frameImage(server, id)));
  // Tiles by the same measure (a tile outside the listing, the frame on screen at the start, reads null).
  const tiles = offsets(
    selected.map((id) => source.find((f) => f.frame_id === id) ?? { frame_id: id, paint: 0, x: null }),
  );
  assert(
    images.some((img) => isMagenta(pixel(img, 640, 60))),
    "a selected frame shows the wrong-colour flash",
  );
  // The panel's right edge passes x 665 only near +480 px, before it reverses to settle at +400 px.
  assert(
    images.some((img) => isPanelBlue(pixel(img, 665, 320))),
    `a selected frame shows the panel at its reversal point: tiles ${tiles}; held ${offsets(held)}; source ${
      offsets(source)
    }`,
  );
  const final = images[images.length - 1];
  assert(
    isPanelBlue(pixel(final, 590, 320)) && !isPanelBlue(pixel(final, 665, 320)),
    "the final frame is settled",
  );

  const [epoch] = bundle.bundles as Array<{
    measurements: { change_bounds: Rect | null };
    artifacts: Array<{ kind: string; manifest_uri: string; selected_frame_ids: number[] }>;
  }>;
  const b = epoch.measurements.change_bounds;
  assert(b, "change was measured");
  assert(
    b.x <= 45 && b.x + b.width >= 675,
    `change bounds span the panel's path horizontally: ${JSON.stringify(b)}`,
  );
  assert(
    b.y <= 265 && b.y + b.height >= 375,
    `change bounds span the panel vertically: ${JSON.stringify(b)}`,
  );
  assertEquals(epoch.artifacts.map((a) => a.kind).sort(), ["composite", "difference_map", "storyboard"]);

  for (const artifact of epoch.artifacts) {
    const m = await readJson(server, artifact.manifest_uri) as {
      source_frame_ids: number[];
      analyzed_frame_ids: number[];
      selected_frame_ids: number[];
      omitted_frame_count: number;
      sampling?: unknown;
      output_hash: string;
    };
    const source = new Set(m.source_frame_ids);
    const analyzed = new Set(m.analyzed_frame_ids);
    assert(m.analyzed_frame_ids.every((id) => source.has(id)), "analyzed ⊆ source");
    assert(m.selected_frame_ids.every((id) => analyzed.has(id)), "selected ⊆ analyzed");
    assertEquals(m.omitted_frame_count, source.size - analyzed.size, "omitted = source − analyzed");
    assertEquals(
      m.sampling !== undefined,
      analyzed.size < source.size,
      "sampling disclosed exactly when sampled",
    );
    assertEquals(m.selected_frame_ids, artifact.selected_frame_ids);
    assert(/^sha256:[0-9a-f]{64}$/.test(m.output_hash), "output hash recorded");
  }

  // The same request again comes from the cache, and the range handle reproduces the range.
  const again = structured(
    await server.call("temporal_debug_bundle", {
      range_handle: bundle.range_handle,
      inline_images: false,
    }),
  );
  assertEquals(again.selected_frame_ids, selected);

  // Regions: a ref's current geometry, a source frame's pixels, and a mask over the flashing strip.
  const snapNow = structured(await server.call("snapshot_page", {}));
  const byRef = structured(
    await server.call("generate_region_filmstrip", {
      interaction_id: interaction,
      region: { ref: refOf(snapNow, "button", "Open panel") },
      inline_images: false,
    }),
  );
  assertEquals((byRef.artifacts as Array<{ region: { source: string } }>)[0].region.source, "ref");
  const bySource = structured(
    await server.call("generate_region_filmstrip", {
      interaction_id: interaction,
      region: { frame_id: selected[0], x: 0, y: 250, width: 800, height: 150 },
      inline_images: false,
    }),
  );
  assertEquals((bySource.artifacts as Array<{ region: { space: string } }>)[0].region.space, "source");
  const byMask = structured(
    await server.call("generate_artifacts", {
      interaction_id: interaction,
      generators: ["region_filmstrip"],
      region: { mask: [{ x: 0, y: 0, width: 1280, height: 110 }] },
      inline_images: false,
    }),
  );
  const strip = (byMask.artifacts as Array<{ selected_frame_ids: number[] }>)[0];
  const stripImages = await Promise.all(strip.selected_frame_ids.map((id) => frameImage(server, id)));
  assert(
    stripImages.some((img) => isMagenta(pixel(img, 640, 60))),
    "the masked strip's filmstrip shows the flash",
  );

  // A window reaching into the live future is partial, says so, and is not evidence loss.
  const live = structured(
    await server.call("resolve_temporal_range", {
      range: { latest_interaction: true, after_ms: 60_000 },
    }),
  );
  const warnings = (live.range as { warnings: Array<{ code: string; edge?: string }> }).warnings;
  assert(warnings.some((w) => w.code === "requested_end_not_yet_elapsed"), "future tail reported");
  assert(
    warnings.some((w) => w.code === "partially_captured" && w.edge === "end"),
    "affected edge reported",
  );
  assertEquals(
    errorCode(
      await server.call("resolve_temporal_range", {
        range: { latest_interaction: true, after_ms: 60_000, require_complete: true },
      }),
    ),
    "range_incomplete",
  );
  assertEquals(
    errorCode(
      await server.call("resolve_temporal_range", { range: { start_ms: 9e8, end_ms: 9e8 + 10 } }),
    ),
    "range_not_captured",
  );
  assertEquals(
    errorCode(await server.call("temporal_debug_bundle", { range_handle: "rh-zzzzzz-1" })),
    "range_handle_invalid",
  );
}

async function stablePage(server: ServerHandle, site: StaticServer): Promise<void> {
  await server.call("navigate_page", { url: `${site.origin}/stable.html` });
  // The window starts once the page has loaded and painted its text: only steady motion is left.
  await server.call("wait", {
    condition: "document.readyState === 'complete' && document.fonts.status === 'loaded'",
  });
  await new Promise((r) => setTimeout(r, 1_500));
  const status = structured(await server.call("list_source_frames", { max_frames: 1 }));
  const total = status.total_frame_count as number;
  const last = structured(await server.call("list_source_frames", { offset: total - 1, max_frames: 1 }));
  const start = (last.frames as Array<{ session_time_ms: number }>)[0].session_time_ms;
  await new Promise((r) => setTimeout(r, 2_000));

  const result = await server.call("generate_artifacts", {
    range: { start_ms: start, end_ms: start + 1_800 },
    generators: ["difference_map", "motion_history"],
    inline_images: false,
  });
  assert(!result.isError, `generate_artifacts failed: ${result.content[0]?.text}`);
  const out = structured(result);
  const [m] = out.measurements as Array<
    { change_regions: Array<{ bounds: Rect }>; change_regions_omitted: number }
  >;
  assert(m.change_regions.length >= 1, "the spinner's change is seen");
  assertEquals(m.change_regions_omitted, 0);
  // Change is measured on decoded JPEG frames (16 px blocks whose chroma is interpolated across block
  // edges) and clustered on 16 px cells, so a region may reach up to two cells past a moving thing.
  const allowed: Rect[] = [
    { x: 8, y: 8, width: 372, height: 100 }, // the focused field and its caret
    { x: 568, y: 268, width: 116, height: 116 }, // the spinner with its border
  ];
  for (const r of m.change_regions) {
    const inside = allowed.some((a) =>
      r.bounds.x >= a.x && r.bounds.y >= a.y && r.bounds.x + r.bounds.width <= a.x + a.width &&
      r.bounds.y + r.bounds.height <= a.y + a.height
    );
    assert(inside, `change region ${JSON.stringify(r.bounds)} lies inside the caret or spinner area`);
  }
  const kinds = (out.artifacts as Array<{ kind: string }>).map((a) => a.kind);
  assertEquals(kinds, ["difference_map", "motion_history"]);
}

async function viewportEpochs(server: ServerHandle, site: StaticServer): Promise<void> {
  const click = await openPanelClick(server, site.origin);
  const interaction = String(click.interaction_id);
  await new Promise((r) => setTimeout(r, 900)); // the 800 ms panel animation ends before the resize
  const resized = await server.call("set_viewport", { width: 800, height: 500, inline_images: false });
  assert(!resized.isError, `set_viewport failed: ${resized.content[0]?.text}`);
  // The range must reach the first frame of the new size. Under load the click's observation and
  // set_viewport can take seconds, so a fixed window after the click may end before the resize:
  // the end is taken from that frame, found by waiting for it.
  const resizedAt = (structured(resized).timing_ms as { start: number }).start;
  const first800 = await firstFrameOfSize(server, resizedAt, 800, 500);
  const dispatchedAt = (click.timing_ms as { dispatch: number }).dispatch;
  const range = { interaction_id: interaction, after_ms: first800 - dispatchedAt + 300 };
  await new Promise((r) => setTimeout(r, 600)); // the range end is in the past (session time is real time)

  const bundle = structured(await server.call("temporal_debug_bundle", { range, inline_images: false }));
  assertEquals((bundle.range as { anchor: { at_ms: number } }).anchor.at_ms, dispatchedAt);
  const epochs = bundle.epochs as { total: number; selected: number[] };
  assertEquals(epochs.total, 2, "the override starts a second visual epoch");
  assertEquals(epochs.selected, [0], "the bundle works in the anchor's epoch");

  const all = structured(
    await server.call("generate_artifacts", { range, generators: ["storyboard"], inline_images: false }),
  );
  const boards = all.artifacts as Array<{ manifest_uri: string; selected_frame_ids: number[] }>;
  assertEquals(boards.length, 2, "one storyboard per epoch, never stretched together");
  const sizes = new Set<string>();
  for (const b of boards) {
    const m = await readJson(server, b.manifest_uri) as {
      epoch: { width: number; height: number; count: number };
    };
    assertEquals(m.epoch.count, 2);
    sizes.add(`${m.epoch.width}x${m.epoch.height}`);
  }
  assert(sizes.has("800x500"), `the second epoch has the new size: ${[...sizes].join(", ")}`);
}

const BROWSER = { headless: true };

/**
 * The checks share one server process (its start is most of what each would otherwise cost under load),
 * each with a browser of its own, and each works in ranges of its own actions.
 */
Deno.test({
  name: "temporal",
  ...e2e,
  fn: (t) =>
    sharedServerChecks(t, [
      [
        "temporal bundle: a click's 120 ms flash and the panel's reversal are among the storyboard frames, the difference map covers the path",
        bundleOfClick,
      ],
      [
        "temporal stable page: caret and spinner are the only change regions; nothing is invented elsewhere",
        stablePage,
      ],
      [
        "temporal epochs: a viewport change splits the range; the bundle keeps the anchor's epoch, artifacts cover all",
        viewportEpochs,
      ],
    ], BROWSER),
});
