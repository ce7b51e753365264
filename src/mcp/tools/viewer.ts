/**
 * open_viewer: the URL of this process's local evidence viewer (started on first use), for the agent
 * to hand to its person. A session, page and instant make it a deep link.
 */
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { PEOPLE_OUTPUT_SCHEMAS } from "../output_schemas_people.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";
import { assertSessionPage, resolveSession, sessionId } from "./sessions.ts";

/** The viewer could not listen (KROMETRAIL_VIEWER_PORT taken or invalid): say how to get one. */
export function viewerUnavailable(err: unknown): ToolError {
  return new ToolError({
    code: "viewer_unavailable",
    message: `The evidence viewer could not start: ${err instanceof Error ? err.message : String(err)}`.slice(
      0,
      300,
    ),
    retry: "after_recovery",
    recovery:
      "Unset KROMETRAIL_VIEWER_PORT (any free port is used) or set it to a free port, then restart the server.",
  });
}

/** The latest session instant a deep link can name (the same bound as the viewer's own API). */
const AT_MS_MAX = 1e9;

function atMsOutside(iss: { input: unknown }): string {
  return `at_ms is ${String(iss.input).slice(0, 40)}; it must be session ms from 0 to 1e9 (${AT_MS_MAX})`;
}

export const viewerTools: Tool[] = [
  defineTool({
    name: "open_viewer",
    capability: "viewer",
    output: PEOPLE_OUTPUT_SCHEMAS.open_viewer,
    description:
      "URL of the local evidence viewer (127.0.0.1) for a person: sessions, a scrubbable timeline of frames and events, storyboards; deep-links to session_id, page_id, at_ms.",
    input: z.strictObject({
      session_id: sessionId.optional(),
      page_id: pageId.optional(),
      at_ms: z.number().min(0, { error: atMsOutside }).max(AT_MS_MAX, { error: atMsOutside }).optional(),
    }),
    annotations: { readOnlyHint: true, openWorldHint: false },
    handler: async (args, app) => {
      // Only a named or implied target is checked: with nothing recorded the viewer still opens.
      const wantsSession = args.session_id !== undefined || args.page_id !== undefined ||
        args.at_ms !== undefined;
      const session = wantsSession ? await resolveSession(app, args.session_id) : undefined;
      if (session && args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
      const viewer = await app.viewer.ensure().catch((err) => {
        throw viewerUnavailable(err);
      });
      const url = viewer.link({
        ...(session ? { session_id: session } : {}),
        ...(args.page_id !== undefined ? { page_id: args.page_id } : {}),
        ...(args.at_ms !== undefined ? { at_ms: args.at_ms } : {}),
      });
      return output(
        `Evidence viewer (open on this machine; the URL is its key): ${url}`,
        { url },
      );
    },
  }),
];
