import { z } from "zod";
import { knownSession } from "../../capture/frames.ts";
import { ToolError } from "../../errors.ts";
import type { AppContext } from "../context.ts";

export const sessionId = z.string().max(64);

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
