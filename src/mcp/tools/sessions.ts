import { z } from "zod";
import { knownSession } from "../../capture/frames.ts";
import { ToolError } from "../../errors.ts";
import type { AppContext } from "../context.ts";

export const sessionId = z.string().max(64);

/**
 * The session a query is about: explicit, else the one an interaction_id belongs to (ids carry their
 * session's ordinal, so one names one session: two scenario runs compared are two sessions), else the
 * live one, else the latest recorded.
 */
export async function resolveSession(
  app: AppContext,
  requested?: string,
  hint: { interaction_id?: string } = {},
): Promise<string> {
  await app.recorder.flush();
  const db = app.recorder.reader();
  const owner = requested === undefined && hint.interaction_id !== undefined
    ? (db.prepare("SELECT session_id FROM interactions WHERE id = ? LIMIT 1").get(hint.interaction_id) as
      | { session_id: string }
      | undefined)?.session_id
    : undefined;
  const id = requested ?? owner ?? app.browsers.current?.id ??
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

/**
 * A page id a session-scoped query names must be a page that session had, open or since closed:
 * filtering by a page that never existed would answer with an empty success that looks like "nothing
 * happened there". The live session's pages count even before their first row reaches the index.
 */
export function assertSessionPage(app: AppContext, session: string, pageId: string, argument: string): void {
  const live = app.browsers.current;
  if (live && live.id === session && live.pages.has(pageId)) return;
  const row = app.recorder.reader().prepare(
    "SELECT 1 AS found FROM targets WHERE session_id = ? AND page_id = ?",
  )
    .get(session, pageId);
  if (row) return;
  const shown = JSON.stringify(pageId.slice(0, 16));
  throw new ToolError({
    code: "page_not_found",
    message: `Session ${session} never had a page ${shown} (${argument}).`,
    retry: "never",
    recovery: live && live.id === session
      ? "Call list_pages for the open page ids, or omit page_id for every page."
      : "Omit page_id for every page, or take a page id from this session's list_source_frames.",
    affected: { session_id: session, page_id: pageId.slice(0, 16), argument },
  });
}
