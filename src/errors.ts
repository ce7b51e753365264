/**
 * The one structured error every boundary failure becomes (spec: "Errors and Degraded Operation").
 * `retry` says whether repeating the same request can succeed, and after what.
 */
export type RetrySafety = "safe" | "never" | "after_recovery";

export interface AffectedEntity {
  session_id?: string;
  page_id?: string;
  ref?: string;
  interaction_id?: string;
  profile?: string;
  argument?: string;
}

export interface ToolErrorInit {
  code: string;
  message: string;
  retry: RetrySafety;
  recovery?: string;
  affected?: AffectedEntity;
  details?: Record<string, unknown>;
}

export class ToolError extends Error {
  readonly code: string;
  readonly retry: RetrySafety;
  readonly recovery?: string;
  readonly affected?: AffectedEntity;
  readonly details?: Record<string, unknown>;

  constructor(init: ToolErrorInit) {
    super(init.message);
    this.name = "ToolError";
    this.code = init.code;
    this.retry = init.retry;
    this.recovery = init.recovery;
    this.affected = init.affected;
    this.details = init.details;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      retry: this.retry,
      ...(this.recovery ? { recovery: this.recovery } : {}),
      ...(this.affected ? { affected: this.affected } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** A deterministic limit failure: names the subject, the actual value and the limit. */
export function limitExceeded(subject: string, actual: number, limit: number, recovery?: string): ToolError {
  return new ToolError({
    code: "resource_limit_exceeded",
    message: `${subject} is ${actual}, over the limit of ${limit}.`,
    retry: "never",
    recovery: recovery ?? `Reduce ${subject} to at most ${limit}.`,
    details: { subject, actual, limit },
  });
}

export function noBrowser(): ToolError {
  return new ToolError({
    code: "no_browser_session",
    message: "No browser session is active.",
    retry: "after_recovery",
    recovery: "Call start_browser (or attach_browser) first.",
  });
}

/**
 * Chrome answers this while a page has no active renderer to run the command: a navigation or
 * reload is still pending (for instance one queued behind a stuck main thread). Not internal.
 */
const NOT_ATTACHED = "Not attached to an active page";

/** Turns anything thrown into a ToolError without leaking stack traces or paths. */
export function asToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (message.includes(NOT_ATTACHED)) {
    return new ToolError({
      code: "page_not_active",
      message: `The page has no active document to run this on (${
        message.slice(0, 200)
      }): a navigation or reload of it is still pending, as when its main thread is stuck.`,
      retry: "after_recovery",
      recovery:
        "Wait for the pending navigation (list_pages shows the page's URL), or close_page it and create_page a new one.",
    });
  }
  return new ToolError({
    code: "internal_error",
    message: `Unexpected failure: ${message.slice(0, 500)}`,
    retry: "safe",
    recovery: "Check browser_status; if the browser is gone, call start_browser again.",
  });
}
