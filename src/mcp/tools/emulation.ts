import { z } from "zod";
import { usablePage } from "../../control/interaction.ts";
import { applyEmulation } from "../../devtools/emulation.ts";
import { CPU_LIMITS, NETWORK_NAMES } from "../../devtools/emulation_presets.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";

const kbps = z.number().min(0).max(10_000_000);
const media = z.strictObject({
  type: z.enum(["print", "screen"]).nullable().optional().describe("CSS media type; null: none"),
  prefers_color_scheme: z.enum(["light", "dark"]).nullable().optional(),
  prefers_reduced_motion: z.enum(["reduce", "no-preference"]).nullable().optional(),
  forced_colors: z.enum(["active", "none"]).nullable().optional(),
});

/** emulate: per-page network, CPU, geolocation, media, timezone, locale and user agent, on the timeline. */
export const emulationTools: Tool[] = [
  defineTool({
    name: "emulate",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.emulate,
    description:
      "Emulate on one page: network, cpu_slowdown, geolocation, media features, timezone, locale, user_agent. " +
      "Merges with what is set (null removes a part, clear: true all), survives navigation; each change is a timeline event.",
    input: z.strictObject({
      page_id: pageId.optional(),
      network: advertiseAs(
        z.union([
          z.string().max(32).describe(`${NETWORK_NAMES.join(", ")} (slow_3g style accepted)`),
          z.strictObject({
            latency_ms: z.number().min(0).max(60_000).optional(),
            download_kbps: kbps.optional().describe("Omitted: not throttled"),
            upload_kbps: kbps.optional().describe("Omitted: not throttled"),
          }),
        ]).nullable().describe('null or "none" removes it'),
        {
          type: ["string", "object", "null"],
          description: `${
            NETWORK_NAMES.join(", ")
          } or {latency_ms, download_kbps, upload_kbps}; null removes it`,
        },
      ).optional(),
      cpu_slowdown: z.number().min(CPU_LIMITS.min).max(CPU_LIMITS.max).optional().describe(
        "1 removes it",
      ),
      geolocation: advertiseAs(
        z.strictObject({
          latitude: z.number().min(-90).max(90),
          longitude: z.number().min(-180).max(180),
          accuracy: z.number().min(0).max(1_000_000).optional().describe("Metres; default 100"),
        }).nullable().describe("null removes it; the permission is granted"),
        {
          type: ["object", "null"],
          description: "{latitude, longitude, accuracy? (m, default 100)}; the permission is granted",
        },
      ).optional(),
      media: advertiseAs(media.nullable().describe("Each field merges; null removes one (or all)"), {
        type: ["object", "null"],
        description: "{type: print|screen, prefers_color_scheme: light|dark, prefers_reduced_motion: " +
          "reduce|no-preference, forced_colors: active|none}; each merges, null removes it",
      }).optional(),
      timezone: z.string().min(1).max(64).nullable().optional().describe('IANA id, e.g. "Europe/Berlin"'),
      locale: z.string().min(1).max(35).nullable().optional().describe(
        'BCP 47, e.g. "de-DE"; also sets navigator.language, Accept-Language',
      ),
      user_agent: z.string().min(1).max(512).nullable().optional(),
      clear: z.boolean().optional().describe("Remove all emulation first"),
    }),
    handler: async (args, app) => {
      const session = app.browsers.require();
      const page = usablePage(session.page(args.page_id));
      const { page_id: _page, ...req } = args;
      const r = await applyEmulation(session, page, req);
      const text = r.change === r.summary || r.summary === "none"
        ? `emulate ${page.id}: ${r.change}`
        : `emulate ${page.id}: ${r.change}\nactive: ${r.summary}`;
      return output(text, {
        page_id: page.id,
        emulation: r.state,
        changed: r.changed,
        summary: r.summary,
        ...(r.recorded ? {} : { warnings: ["emulation_unrecorded: the session's events are not recorded"] }),
      });
    },
  }),
];
