import { z } from "zod";
import { queryEvents } from "../../capture/events_query.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";
import { assertSessionPage } from "./sessions.ts";
import { optionalRange, rangeFields } from "./temporal_args.ts";

const LIMIT = 200;
const KINDS = [
  "console",
  "exception",
  "request",
  "request_failed",
  "navigation",
  "lifecycle",
  "target",
  "dialog",
  "emulation",
  "route",
  "layout_shift",
  "long_task",
  "connection",
  "crash",
  "unresponsive",
] as const;

export const eventTools = [
  defineTool({
    name: "query_browser_events",
    capability: "browser-events",
    output: OUTPUT_SCHEMAS.query_browser_events,
    description:
      "Recorded browser events (see kinds) in time order; requests carry the request_id for get_network_request.",
    input: z.strictObject({
      ...rangeFields,
      kinds: z.array(z.enum(KINDS)).max(KINDS.length).optional(),
      levels: z.array(z.string().max(16)).max(8).optional(),
      page_id: pageId.optional(),
      offset: z.number().int().min(0).max(1e9).optional(),
      max_events: z.number().int().min(1).max(LIMIT).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      // Without a range, the whole session; with one, everything inside it, on any page unless page_id says.
      const { range, session } = await optionalRange(app, args);
      if (args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
      const startNs = range?.start_ns;
      const endNs = range?.end_ns;
      const offset = args.offset ?? 0;
      const result = queryEvents(app.recorder.reader(), {
        sessionId: session,
        kinds: args.kinds,
        levels: args.levels,
        pageId: args.page_id,
        startNs,
        endNs,
        offset,
        limit: args.max_events ?? 50,
      });
      const omitted = Math.max(0, result.total - offset - result.events.length);
      const next = omitted > 0 ? offset + result.events.length : undefined;
      const lines = [
        `${result.events.length} of ${result.total} events in session ${session}` +
        (next !== undefined ? ` (next_offset ${next}, ${omitted} more)` : "") +
        ` — ${Object.entries(result.by_kind).map(([k, n]) => `${k} ${n}`).join(", ") || "none"}`,
        ...result.events.map((e) =>
          `${e.session_time_ms.toFixed(1)}ms ${e.page_id ?? "-"} ${e.kind}${e.level ? `/${e.level}` : ""}${
            e.interaction_id ? ` [${e.interaction_id}]` : ""
          } ${e.text ?? ""}`
        ),
      ];
      return output(lines.join("\n"), {
        session_id: session,
        events: result.events,
        total_event_count: result.total,
        counts_by_kind: result.by_kind,
        omitted_event_count: omitted,
        ...(next !== undefined ? { next_offset: next } : {}),
        ...(range ? { range } : {}),
      });
    },
  }),
];
