import { z } from "zod";
import { ToolError } from "../../errors.ts";
import {
  type Artifact,
  composite,
  differenceMap,
  motionHistory,
  regionFilmstrip,
  type RegionSpec,
  storyboard,
} from "../../temporal/artifacts.ts";
import { buildBundle, type BundleResult, ID_LIMITS, measure } from "../../temporal/bundle.ts";
import { headSlice } from "../../temporal/manifest.ts";
import { prepareRangeYielding } from "../../temporal/prepare.ts";
import type { ResolvedRange } from "../../temporal/range.ts";
import { signedMs } from "../../temporal/render/layout.ts";
import { DEFAULT_MAX_TILES, MAX_TILES, MIN_TILES } from "../../temporal/selection.ts";
import { encodeBase64 } from "../base64.ts";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output, type ToolOutput } from "../response.ts";
import { detail, inlineImages } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { artifactEnv, rangeFields, rangeOf, waitForTail } from "./temporal_args.ts";
import { captureQuality, rangeText, regionArg, resolveRegion } from "./temporal_region.ts";

/** A live tail this close is waited for, so a bundle right after an action shows its settle. */
const TAIL_WAIT_MS = 2_500;

// Advertised without their defaults and meaning, which CONVENTIONS tells once for the picture tools.
const maxTiles = advertiseAs(
  z.number().int().min(MIN_TILES).max(MAX_TILES).describe(`Default ${DEFAULT_MAX_TILES}`),
  { type: "integer", minimum: MIN_TILES, maximum: MAX_TILES },
);
const noiseFloor = advertiseAs(
  z.number().int().min(0).max(128).describe("Noise threshold per channel; default 12"),
  { type: "integer", minimum: 0, maximum: 128 },
);
const epochsOf = (help: string) =>
  advertiseAs(z.enum(["anchor", "all"]).describe(help), { enum: ["anchor", "all"] });

/** What every picture-making tool takes besides its range: tiles, noise floor and presentation. */
const pictureFields = {
  max_tiles: maxTiles.optional(),
  noise_floor: noiseFloor.optional(),
  detail: detail.optional(),
  inline_images: inlineImages.optional(),
};

/**
 * Reclaim can take a frame while an artifact is being made from it (analysis lets the event loop in);
 * the range is then resolved again, to what is retained now, and the artifact made once more.
 */
async function madeFromRetained(
  app: AppContext,
  args: Parameters<typeof rangeOf>[1],
  make: (range: ResolvedRange) => Promise<ToolOutput>,
): Promise<ToolOutput> {
  const range = await settledRange(app, args);
  try {
    return await make(range);
  } catch (err) {
    if (!(err instanceof ToolError) || err.code !== "frame_not_found" || args.range_handle) throw err;
    return await make(await rangeOf(app, args));
  }
}

async function settledRange(app: AppContext, args: Parameters<typeof rangeOf>[1]): Promise<ResolvedRange> {
  const range = await rangeOf(app, args);
  if (args.range_handle) return range;
  // Waits for the condition (a frame painted after the window, or the delivery allowance), not a fixed
  // sleep past the end; then the range is resolved again with what arrived.
  return await waitForTail(app, range, TAIL_WAIT_MS) ? await rangeOf(app, args) : range;
}

function artifactView(a: Artifact, level: "concise" | "expanded" | "full") {
  const m = a.manifest;
  const limit = ID_LIMITS[level];
  const source = headSlice(m.source_frame_ids, limit);
  const analyzed = headSlice(m.analyzed_frame_ids, limit);
  return {
    kind: a.kind,
    uri: a.uri,
    manifest_uri: a.manifest_uri,
    width: a.width,
    height: a.height,
    selected_frame_ids: m.selected_frame_ids,
    source_frame_count: m.source_frame_ids.length,
    analyzed_frame_count: m.analyzed_frame_ids.length,
    omitted_frame_count: m.omitted_frame_count,
    ...(m.sampling ? { sampling: m.sampling } : {}),
    ...(level === "full"
      ? {
        source_frame_ids: source.items,
        source_frame_ids_omitted: source.omitted,
        analyzed_frame_ids: analyzed.items,
        analyzed_frame_ids_omitted: analyzed.omitted,
      }
      : {}),
    ...(a.tiles.length > 0 ? { tiles: a.tiles } : {}),
    ...(m.region ? { region: m.region } : {}),
    output_hash: m.output_hash,
  };
}

function bundleOutput(results: BundleResult[], range: ResolvedRange, handle: string, args: {
  detail?: "concise" | "expanded" | "full";
  inline_images?: boolean;
}): ToolOutput {
  const level = args.detail ?? "concise";
  const inline = args.inline_images ?? true;
  const primary = results[0];
  const views = results.map((r) => {
    const outcomes = [r.storyboard, r.composite, r.difference_map];
    const shown = level === "concise" ? [r.storyboard] : outcomes;
    return {
      epoch: {
        index: r.analysis.epoch.index,
        width: r.analysis.epoch.width,
        height: r.analysis.epoch.height,
      },
      measurements: r.measurements,
      artifacts: shown.map((a) => artifactView(a, level)),
      omitted_artifact_count: outcomes.length - shown.length,
      events: r.events,
      events_total: r.events_total,
      events_omitted: r.events_total - r.events.length,
      ...(r.emulation ? { emulation: r.emulation } : {}),
    };
  });
  const text = [
    primary.header,
    "",
    ...results.flatMap((r, i) => [
      `Storyboard ${r.storyboard.uri}${i === 0 && inline ? " (inlined)" : ""}: ${
        r.storyboard.tiles.map((t) => `#${t.frame_id} ${signedMs(t.offset_ms)} ${t.label ?? ""}`.trim()).join(
          "; ",
        )
      }`,
      `Composite (before/during/after) ${r.composite.uri}`,
      `Difference map ${r.difference_map.uri}`,
    ]),
    "Read these images with resources/read (frames: fetch_source_frames).",
    ...(primary.events.length > 0
      ? [
        "Events nearest the major visual changes:",
        ...primary.events.map((e) =>
          `- ${e.kind}${e.level ? `/${e.level}` : ""} ${
            signedMs((e.session_time_ns - range.anchor.at_ns) / 1e6)
          }: ${(e.text ?? "").slice(0, 160)}`
        ),
      ]
      : []),
    ...range.warnings.map((w) => `warning ${w.code}: ${w.message}`),
    `range_handle ${handle}`,
  ].join("\n");
  return output(text, {
    range,
    range_handle: handle,
    epochs: {
      total: primary.prepared.epochs.length,
      selected: results.map((r) => r.analysis.epoch.index),
    },
    outcomes: {
      available: results.length * 3,
      unavailable: 0,
      omitted: views.reduce((n, v) => n + v.omitted_artifact_count, 0),
    },
    primary: { uri: primary.storyboard.uri, manifest_uri: primary.storyboard.manifest_uri },
    selected_frame_ids: primary.storyboard.manifest.selected_frame_ids,
    bundles: views,
  }, inline ? [{ data: encodeBase64(primary.storyboard.png), mimeType: "image/png" }] : undefined);
}

function emptyRange(range: ResolvedRange): ToolError {
  return new ToolError({
    code: "range_not_captured",
    message: `No frames of page ${range.page_id} fall in ${range.start_ms}–${range.end_ms} ms or before it.`,
    retry: "never",
    recovery: "Choose a range after the page's first frame (list_source_frames shows the frames).",
    affected: { session_id: range.session_id, page_id: range.page_id },
  });
}

export const temporalTools = [
  defineTool({
    name: "resolve_temporal_range",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.resolve_temporal_range,
    description: "Resolve a range (any anchor) to exact bounds, a range_handle and capture quality.",
    input: z.strictObject({ ...rangeFields, detail: detail.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const range = await rangeOf(app, args, { instant: "allow" });
      const handle = app.temporal.handles.issue(range);
      const quality = captureQuality(app, range);
      return output(`${rangeText(range)}\n${quality.text}\nrange_handle ${handle}`, {
        range,
        range_handle: handle,
        capture_quality: quality.structured,
      });
    },
  }),
  defineTool({
    name: "temporal_debug_bundle",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.temporal_debug_bundle,
    description:
      "Start here to see what happened over time: measurements and transient states in words, the storyboard (inlined), URIs of the before/during/after composite and difference map, nearby events.",
    input: z.strictObject({
      ...rangeFields,
      epochs: epochsOf("Default anchor (its visual epoch)").optional(),
      ...pictureFields,
    }),
    annotations: { readOnlyHint: true },
    handler: (args, app) =>
      madeFromRetained(app, args, async (range) => {
        const handle = app.temporal.handles.issue(range);
        const key = JSON.stringify([
          "bundle",
          range.session_id,
          range.page_id,
          range.start_ns,
          range.end_ns,
          range.anchor.at_ns,
          args.epochs ?? "anchor",
          args.max_tiles ?? DEFAULT_MAX_TILES,
          args.noise_floor ?? null,
          args.detail ?? "concise",
        ]);
        // A range reaching into the live present is not cached: its tail is still being recorded.
        const cacheable = !range.warnings.some((w) => w.code === "requested_end_not_yet_elapsed");
        let results = cacheable ? app.temporal.cache.result<BundleResult[]>(key) : undefined;
        // Reclaim may have taken a cached bundle's images since: then it is built again.
        const stillThere = (r: BundleResult) =>
          [r.storyboard, r.composite, r.difference_map].every((a) => app.store.evidenceExists(a.uri));
        if (results && !results.every(stillThere)) results = undefined;
        if (!results) {
          results = await buildBundle(artifactEnv(app, range), range, {
            epochs: args.epochs ?? "anchor",
            max_tiles: args.max_tiles ?? DEFAULT_MAX_TILES,
            noise_floor: args.noise_floor,
            detail: args.detail ?? "concise",
          });
          if (results.length === 0) throw emptyRange(range);
          if (cacheable) app.temporal.cache.result(key, results);
        }
        return bundleOutput(results, range, handle, args);
      }),
  }),
  defineTool({
    name: "generate_artifacts",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.generate_artifacts,
    description:
      "Storyboard, difference_map, motion_history, composite or region_filmstrip (needs region) images of a range, with provenance manifests.",
    input: z.strictObject({
      ...rangeFields,
      generators: z.array(
        z.enum(["storyboard", "difference_map", "motion_history", "composite", "region_filmstrip"]),
      )
        .min(1).max(5).optional().describe("Default [storyboard]"),
      region: regionArg.optional(),
      epochs: epochsOf("Default all").optional(),
      ...pictureFields,
    }),
    annotations: { readOnlyHint: true },
    handler: (args, app) =>
      madeFromRetained(app, args, async (range) => {
        const generators: Generator[] = [...new Set(args.generators ?? ["storyboard" as const])];
        const wantsRegion = generators.includes("region_filmstrip");
        if (wantsRegion && !args.region) {
          throw new ToolError({
            code: "invalid_argument",
            message: "region_filmstrip needs a region.",
            retry: "never",
            recovery:
              "Add region: {x, y, width, height} (viewport CSS px), {frame_id, x, y, width, height}, {ref} or {mask}.",
            affected: { argument: "region" },
          });
        }
        // Checked whether or not a generator uses it: a frame id or ref that names nothing is an error either way.
        const region = args.region ? await resolveRegion(app, range, args.region) : undefined;
        if (region && !wantsRegion) {
          throw conflictingArguments(
            "region",
            "generators",
            `region is used only by region_filmstrip, and generators are ${generators.join(", ")}.`,
            'Add "region_filmstrip" to generators, or drop region.',
          );
        }
        return await artifactsOutput(app, range, generators, { ...args, region });
      }),
  }),
  defineTool({
    name: "generate_region_filmstrip",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.generate_region_filmstrip,
    description: "One region across time at readable scale, beside a locator image.",
    input: z.strictObject({
      ...rangeFields,
      region: regionArg,
      epochs: epochsOf("Default all").optional(),
      ...pictureFields,
    }),
    annotations: { readOnlyHint: true },
    handler: (args, app) =>
      madeFromRetained(app, args, async (range) => {
        const region = await resolveRegion(app, range, args.region);
        return await artifactsOutput(app, range, ["region_filmstrip"], { ...args, region });
      }),
  }),
];

type Generator = "storyboard" | "difference_map" | "motion_history" | "composite" | "region_filmstrip";

async function artifactsOutput(
  app: AppContext,
  range: ResolvedRange,
  generators: Generator[],
  args: {
    region?: RegionSpec;
    epochs?: "anchor" | "all";
    max_tiles?: number;
    noise_floor?: number;
    detail?: "concise" | "expanded" | "full";
    inline_images?: boolean;
  },
): Promise<ToolOutput> {
  const env = artifactEnv(app, range);
  const level = args.detail ?? "concise";
  const epochs = args.epochs ?? "all";
  const opts = { max_tiles: args.max_tiles ?? DEFAULT_MAX_TILES };
  const whole = generators.filter((g) => g !== "region_filmstrip");
  const made: Artifact[] = [];
  const measurements = [];
  if (whole.length > 0) {
    const p = await prepareRangeYielding(env.db, range, env.ops, env.cache, {
      epochs,
      noise_floor: args.noise_floor,
    });
    if (p.analyses.length === 0) throw emptyRange(range);
    for (const a of p.analyses) {
      measurements.push({ epoch: a.epoch.index, ...measure(a, range.anchor.at_ns) });
      for (const g of whole) {
        if (g === "storyboard") made.push(await storyboard(env, p, a, opts));
        if (g === "difference_map") made.push(await differenceMap(env, p, a));
        if (g === "motion_history") made.push(await motionHistory(env, p, a));
        if (g === "composite") made.push(await composite(env, p, a));
      }
    }
  }
  const region = args.region;
  if (generators.includes("region_filmstrip") && region) {
    const p = await prepareRangeYielding(env.db, range, env.ops, env.cache, {
      epochs,
      noise_floor: args.noise_floor,
      crop: region.rect,
      ...(region.mask ? { mask: region.mask } : {}),
    });
    if (p.analyses.length === 0) throw emptyRange(range);
    for (const a of p.analyses) made.push(await regionFilmstrip(env, p, a, region, opts));
  }
  const inline = args.inline_images ?? true;
  return output(
    [
      rangeText(range),
      ...made.map((a) =>
        `${a.kind} ${a.uri} (${a.width}x${a.height}; manifest ${a.manifest_uri}) selected ${
          a.manifest.selected_frame_ids.map((id) => `#${id}`).join(" ")
        }`
      ),
    ].join("\n"),
    {
      range,
      artifacts: made.map((a) => artifactView(a, level)),
      ...(measurements.length > 0 ? { measurements } : {}),
    },
    inline && made[0] ? [{ data: encodeBase64(made[0].png), mimeType: "image/png" }] : undefined,
  );
}
