import { z } from "zod";
import { queryEvents } from "../../capture/events_query.ts";
import { defineTool } from "../define_tool.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";
import { interactionWindow, resolveSession, sessionId } from "./sessions.ts";

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
] as const;

export const eventTools = [
  defineTool({
    name: "query_browser_events",
    capability: "browser-events",
    description:
      "Console, exceptions, requests (metadata only), failures, navigation, lifecycle, targets and dialogs, in time order.",
    input: z.strictObject({
      session_id: sessionId.optional(),
      kinds: z.array(z.enum(KINDS)).max(KINDS.length).optional(),
      levels: z.array(z.string().max(16)).max(8).optional(),
      page_id: pageId.optional(),
      interaction_id: z.string().max(64).optional(),
      range: z.strictObject({
        start_ms: z.number().min(0).max(1e9).optional(),
        end_ms: z.number().min(0).max(1e9).optional(),
      })
        .optional(),
      offset: z.number().int().min(0).max(1e9).optional(),
      max_events: z.number().int().min(1).max(LIMIT).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const session = await resolveSession(app, args.session_id);
      let startNs = args.range?.start_ms === undefined ? undefined : args.range.start_ms * 1e6;
      let endNs = args.range?.end_ms === undefined ? undefined : args.range.end_ms * 1e6;
      // By interaction: events attributed to it, plus everything inside its window.
      if (args.interaction_id) [startNs, endNs] = interactionWindow(app, session, args.interaction_id);
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
      });
    },
  }),
];
