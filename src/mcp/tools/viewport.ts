import { z } from "zod";
import {
  applyViewport,
  clearViewport,
  currentOverride,
  observeViewport,
  type ViewportOverride,
} from "../../browser/viewport.ts";
import {
  PRESET_NAMES,
  presetSummary,
  resolveViewport,
  sameMetrics,
  VIEWPORT_LIMITS,
} from "../../browser/viewport_presets.ts";
import { assessViewport, describeViewport } from "../../browser/viewport_report.ts";
import { cdpMessage } from "../../browser/cdp.ts";
import { interact, usablePage } from "../../control/interaction.ts";
import { nextRepaint, wallMs } from "../../control/post_action_image.ts";
import type { Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { defineTool } from "../define_tool.ts";
import { observationOutput } from "../response.ts";
import { detail, inlineImages, pageId } from "../schemas.ts";
import { actionEnv } from "./action_env.ts";

const L = VIEWPORT_LIMITS;
/**
 * Chrome repaints at the new size a few hundred ms after an override; the post-action image must
 * not be a frame from before it, so dispatch waits (bounded) for the first frame recorded after.
 */
const REPAINT_WAIT_MS = 1_000;
const side = z.number().int().min(L.min_side).max(L.max_side);

/** set_viewport: target-scoped device metrics and touch emulation, observed from the page itself. */
export const viewportTools: Tool[] = [
  defineTool({
    name: "set_viewport",
    capability: "control",
    output: OUTPUT_SCHEMAS.set_viewport,
    description:
      `Emulate a viewport on one page (survives navigation, user agent unchanged): a preset, width/height (+ device_scale_factor, mobile, touch) or clear: true. Presets: ${presetSummary()}. Reports applied and observed viewport.`,
    input: z.strictObject({
      preset: z.enum(PRESET_NAMES).optional(),
      width: side.optional(),
      height: side.optional(),
      device_scale_factor: z.number().min(L.min_scale).max(L.max_scale).optional().describe("Default 1"),
      mobile: z.boolean().optional().describe("Mobile layout (viewport meta, page scale)"),
      touch: z.boolean().optional().describe("Default: as mobile"),
      max_touch_points: z.number().int().min(1).max(L.max_touch_points).optional().describe("Default 5"),
      clear: z.boolean().optional(),
      page_id: pageId.optional(),
      detail: detail.optional(),
      inline_images: inlineImages.optional(),
    }),
    handler: async (args, app) => {
      const { intent, metrics } = resolveViewport(args);
      // A viewport change makes any earlier picture stale: one bounded image inline by default.
      const env = actionEnv(app, args, true);
      const page = usablePage(env.session.page(args.page_id));
      let previous: ViewportOverride | undefined;
      const params = { intent, ...(metrics ? { metrics } : {}) };
      const before = currentOverride(page)?.metrics;
      // Nothing repaints when the metrics stay as they are; then there is no new frame to wait for.
      const changes = metrics ? !sameMetrics(before, metrics) : before !== undefined;
      const obs = await interact(env, page, "set_viewport", params, async () => {
        const since = wallMs();
        if (metrics) await applyViewport(page, intent, metrics);
        else previous = await clearViewport(page);
        if (changes) await nextRepaint(env.frames, page.id, since, REPAINT_WAIT_MS);
      });
      let observed;
      let failure: string | undefined;
      if (!page.closed && !page.dialog) {
        observed = await observeViewport(page).catch((err) => {
          failure = cdpMessage(err);
          return undefined;
        });
      } else failure = page.closed ? "page closed" : "a dialog blocks the page";
      const assessment = observed ? assessViewport(intent, metrics, observed, previous) : undefined;
      const report = describeViewport(intent, metrics, observed, assessment, previous);
      obs.structured.viewport = report.structured;
      if (failure) {
        const warnings = (obs.structured.warnings as string[] | undefined) ?? [];
        warnings.push(`viewport_unobserved: ${failure}`);
        obs.structured.warnings = warnings;
      }
      const [head, ...rest] = obs.text.split("\n");
      obs.text = [head, ...report.lines, ...rest].join("\n");
      return observationOutput(obs);
    },
  }),
];
