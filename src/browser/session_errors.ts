/** The structured errors a browser session raises, each with what to do next. */
import { ToolError } from "../errors.ts";

export function sessionEnded(sessionId: string, reason: string | undefined): ToolError {
  return new ToolError({
    code: "session_ended",
    message: `The browser session ended (${reason ?? "unknown"}).`,
    retry: "after_recovery",
    recovery: "Call start_browser (or attach_browser) to begin a new session.",
    affected: { session_id: sessionId },
  });
}

export function noPage(sessionId: string): ToolError {
  return new ToolError({
    code: "no_page",
    message: "The browser has no open page.",
    retry: "after_recovery",
    recovery: "Call create_page, or start_browser for a new session.",
    affected: { session_id: sessionId },
  });
}

export function pageNotFound(pageId: string): ToolError {
  return new ToolError({
    code: "page_not_found",
    message: `No page has id ${JSON.stringify(pageId.slice(0, 40))}.`,
    retry: "never",
    recovery: "Call list_pages for the current page ids.",
    affected: { page_id: pageId.slice(0, 40) },
  });
}

export function pageAttachFailed(): ToolError {
  return new ToolError({
    code: "page_attach_failed",
    message: "The new page did not become controllable in time.",
    retry: "safe",
    recovery: "Call list_pages; if the page is missing, create_page again.",
  });
}

/** The endpoint cannot open pages itself (an Electron app: only the app opens windows). */
export function pageCreationUnsupported(): ToolError {
  return new ToolError({
    code: "page_creation_unsupported",
    message: "This browser endpoint cannot open new pages (an Electron app opens its windows itself).",
    retry: "never",
    recovery:
      "Open a window from the app (its UI, or window.open through evaluate_page on an open page); it appears in list_pages. Navigate an open page with navigate_page instead.",
  });
}

export function targetHidden(pageId: string): ToolError {
  return new ToolError({
    code: "target_hidden",
    message: `Page ${pageId} is in the background and the session preserves focus; nothing was dispatched.`,
    retry: "after_recovery",
    recovery: "Call activate_page for that page first, or act on the visible page.",
    affected: { page_id: pageId },
  });
}

export function navigationFailed(pageId: string, errorText: string): ToolError {
  return new ToolError({
    code: "navigation_failed",
    message: `Navigation failed: ${errorText}.`,
    retry: "safe",
    recovery: "Check that the URL is reachable from this machine, then navigate again.",
    affected: { page_id: pageId },
    details: { error_text: errorText },
  });
}

/** A call that needs the browser while an attached session retries its endpoint (retry once it resumes). */
export function browserReconnecting(
  sessionId: string,
  state: { since: Date; attempts: number; window_ms: number; last_error?: string },
): ToolError {
  const waited = Date.now() - state.since.getTime();
  return new ToolError({
    code: "browser_reconnecting",
    message: `The browser connection dropped ${
      Math.round(waited / 100) / 10
    } s ago; reconnecting to the same endpoint (${state.attempts} ${
      state.attempts === 1 ? "try" : "tries"
    } so far, window ${state.window_ms} ms).`,
    retry: "safe",
    recovery:
      "Wait and retry: browser_status shows when the session runs again. If the browser does not come back within the window, the session ends with everything recorded kept; then attach_browser again.",
    affected: { session_id: sessionId },
    details: {
      since: state.since.toISOString(),
      attempts: state.attempts,
      window_ms: state.window_ms,
      ...(state.last_error ? { last_error: state.last_error } : {}),
    },
  });
}

/** A page-scoped call on a page whose renderer crashed: only reload, navigation or close can help. */
export function pageCrashed(pageId: string, crash: { at_ms: number; status: string }): ToolError {
  return new ToolError({
    code: "page_crashed",
    message: `Page ${pageId}'s renderer crashed (${crash.status}) at ${
      Math.round(crash.at_ms)
    } ms on the session clock; it shows nothing and runs nothing until reloaded.`,
    retry: "after_recovery",
    recovery:
      `reload_page ${pageId} (or navigate_page it elsewhere) to give it a new renderer, or close_page ${pageId}; what was recorded before the crash stays queryable.`,
    affected: { page_id: pageId },
    details: { crashed_at_ms: crash.at_ms, status: crash.status },
  });
}
