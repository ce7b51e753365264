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
