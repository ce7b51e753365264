import { z } from "zod";
import { knownSession } from "../../capture/frames.ts";
import { ToolError } from "../../errors.ts";
import type { AppContext } from "../context.ts";

/** Context shown around an interaction when evidence is listed by interaction id. */
const INTERACTION_CONTEXT_NS = 250e6;

export const sessionId = z.string().max(64).describe("Default: current or latest session");

/** The session a query is about: explicit, else the live one, else the latest recorded. */
export async function resolveSession(app: AppContext, requested?: string): Promise<string> {
  await app.recorder.flush();
  const db = app.recorder.reader();
  const id = requested ?? app.browsers.current?.id ??
    (db.prepare("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1").get() as
      | { id: string }
      | undefined)?.id;
  if (!id || !knownSession(db, id)) {
    throw new ToolError({
      code: "session_not_found",
      message: requested
        ? `No recorded session ${JSON.stringify(requested.slice(0, 64))} in this server process.`
        : "Nothing has been recorded in this server process yet.",
      retry: "never",
      recovery:
        "Evidence belongs to the process that recorded it; after a restart older sessions are gone. Use browser_status for the current session id, or start_browser to record.",
      affected: requested ? { session_id: requested.slice(0, 64) } : undefined,
    });
  }
  return id;
}

export function interactionWindow(app: AppContext, session: string, interactionId: string): [number, number] {
  const row = app.recorder.reader().prepare(
    "SELECT started_ns, observed_ns, completed_ns FROM interactions WHERE session_id = ? AND id = ?",
  ).get(session, interactionId) as {
    started_ns: number;
    observed_ns: number | null;
    completed_ns: number | null;
  } | undefined;
  if (!row) {
    throw new ToolError({
      code: "interaction_not_found",
      message: `No interaction ${JSON.stringify(interactionId.slice(0, 64))} in session ${session}.`,
      retry: "never",
      recovery: "Use an interaction_id returned by an action of this session.",
      affected: { session_id: session, interaction_id: interactionId.slice(0, 64) },
    });
  }
  const end = row.observed_ns ?? row.completed_ns ?? row.started_ns;
  return [row.started_ns - INTERACTION_CONTEXT_NS, end + INTERACTION_CONTEXT_NS];
}
