/**
 * Which tool calls run, and what stops them (spec: "MCP protocol and discovery"). Cancellation is
 * cooperative: the call's controller is aborted, its pending CDP commands fail, its sleeps and polls
 * end and long temporal work throws at its next safe point (browser/call_signal.ts). Nothing is rolled
 * back: interaction records and evidence made before that point stay. Shutdown stops admission and
 * cancels every running call; its drain (shutdown_drain.ts) then waits for their work to settle.
 */
import { ToolError } from "../errors.ts";
import { browserReconnecting } from "../browser/session_errors.ts";
import type { ConnectionState } from "../browser/reconnect.ts";

/** Why a call stopped early: the client's notifications/cancelled, or this process shutting down. */
export type CancelCause = "client" | "shutdown";

/** A new call refused because the process is shutting down. */
export function shuttingDown(tool: string): ToolError {
  return new ToolError({
    code: "shutting_down",
    message: `${tool} was not run: this krometrail process is shutting down and admits no new calls.`,
    retry: "never",
    recovery: "Start a new krometrail process (reconnect your MCP client) and call it there.",
    details: { tool },
  });
}

export interface CancelSubject {
  tool: string;
  /** When the call began (performance.now()). */
  startedAt: number;
  /** The tool changes nothing (its readOnlyHint), so nothing of it can have acted. */
  readOnly: boolean;
  /**
   * false: cancelled before it started; "continues": work that is never cancelled (a launch or attach
   * owns a connection that outlives the call) goes on and may still complete.
   */
  ran: boolean | "continues";
  session_id?: string;
  page_id?: string;
}

/**
 * A call that stopped before it finished. `began`: an interaction the call opened, which may have
 * dispatched input to the page: repeating the call could act twice, so replay is never called safe.
 */
export function callCancelled(s: CancelSubject, cause: CancelCause, began?: string): ToolError {
  const elapsed = Math.round(performance.now() - s.startedAt);
  const who = cause === "client"
    ? "cancelled by the client"
    : "cancelled because the server is shutting down";
  const what = s.ran === false
    ? "before it started; nothing was run"
    : s.ran === "continues"
    ? `after ${elapsed} ms; its work is not interrupted and may still complete`
    : `after ${elapsed} ms; its work stopped at the next safe point and nothing was rolled back`;
  const acted = began
    ? `; interaction ${began} had begun and may have acted (its record is kept)`
    : s.readOnly || s.ran === false
    ? ""
    : "; it may have changed the page or browser before it stopped";
  const harmless = s.ran === false || (s.readOnly && !began);
  return new ToolError({
    code: cause === "client" ? "call_cancelled" : "shutting_down",
    message: `${s.tool} was ${who} ${what}${acted}.`,
    retry: cause === "shutdown" ? "never" : harmless ? "safe" : "after_recovery",
    recovery: cause === "shutdown"
      ? `Start a new krometrail process (reconnect your MCP client) and call it there${
        began ? `, after checking the page: interaction ${began} may have acted` : ""
      }.`
      : s.ran === "continues"
      ? "Check browser_status before repeating it: the work may still complete."
      : began
      ? `Check the page (snapshot_page) before repeating anything: interaction ${began} may have acted.`
      : harmless
      ? "Call it again if you still need the answer; records and evidence made before the cancellation are kept."
      : "Check the page or browser_status before repeating it: the call may have acted before it stopped.",
    affected: {
      ...(s.session_id ? { session_id: s.session_id } : {}),
      ...(s.page_id ? { page_id: s.page_id } : {}),
      ...(began ? { interaction_id: began } : {}),
    },
    details: { tool: s.tool, cause, elapsed_ms: elapsed },
  });
}

export interface InterruptedCall {
  tool: string;
  /** The tool changes nothing (its readOnlyHint). */
  readOnly: boolean;
  /** An interaction the call began, which may have dispatched input before the socket died. */
  began?: string;
  session_id: string;
  page_id?: string;
  /** The session's connection when the call failed: still reconnecting, or already resumed. */
  connection: ConnectionState;
  /** The connection was already down when the call began and has not come back: nothing it sent arrived. */
  unreached?: boolean;
}

/**
 * A call whose browser commands were cut off because an attached session's connection dropped under it.
 * Follows callCancelled's rule: only a read-only call that began no interaction acted on nothing and is
 * safe to repeat once the session runs; anything else may have acted before the socket died (a click's
 * input already dispatched), so replaying it is never called safe.
 */
export function connectionInterrupted(c: InterruptedCall): ToolError {
  const harmless = (c.readOnly || c.unreached === true) && !c.began;
  const state = c.connection;
  if (harmless && state.state === "reconnecting") {
    const base = browserReconnecting(c.session_id, state);
    return new ToolError({
      code: base.code,
      message: base.message,
      retry: base.retry,
      recovery: base.recovery,
      affected: affectedOf(c),
      details: { ...base.details, tool: c.tool },
    });
  }
  const when = state.state === "reconnecting"
    ? `; reconnecting to the same endpoint (${state.attempts} ${
      state.attempts === 1 ? "try" : "tries"
    } so far, window ${state.window_ms} ms)`
    : "; the session has reconnected since";
  const acted = c.began
    ? `; interaction ${c.began} had begun and may have acted (its record is kept)`
    : harmless
    ? ""
    : "; it may have changed the page before the connection dropped";
  const running = state.state === "reconnecting" ? "once browser_status shows the session running" : "now";
  return new ToolError({
    code: "browser_reconnecting",
    message: `The browser connection dropped during ${c.tool}${when}${acted}.`,
    retry: harmless ? "safe" : "after_recovery",
    recovery: harmless
      ? "Call it again once browser_status shows the session running: the call changed nothing."
      : c.began
      ? `Check the page (snapshot_page) ${running}; interaction ${c.began} may have acted, so repeat it only if it did not.`
      : `Check the page (snapshot_page) ${running} before repeating it: the call may have acted before the connection dropped.`,
    affected: affectedOf(c),
    details: {
      tool: c.tool,
      connection: state.state,
      ...(state.state === "reconnecting"
        ? {
          since: state.since.toISOString(),
          attempts: state.attempts,
          window_ms: state.window_ms,
          ...(state.last_error ? { last_error: state.last_error } : {}),
        }
        : {}),
    },
  });
}

function affectedOf(c: InterruptedCall): NonNullable<ToolError["affected"]> {
  return {
    session_id: c.session_id,
    ...(c.page_id ? { page_id: c.page_id } : {}),
    ...(c.began ? { interaction_id: c.began } : {}),
  };
}

/** What can stop a call besides its deadline, and what a stopped call can have done. */
export interface CallControl {
  /** The client's cancellation of this request (notifications/cancelled). */
  cancel?: AbortSignal;
  /** The tool changes nothing (its readOnlyHint): a cancelled call of it acted on nothing. */
  readOnly?: boolean;
}

/** Resolves with the cause once the client cancels the call or shutdown begins; `off` stops listening. */
export function stopWatch(
  cancel: AbortSignal | undefined,
  shutdown: AbortSignal | undefined,
): { stopped: Promise<CancelCause>; off: () => void } {
  const offs: Array<() => void> = [];
  const stopped = new Promise<CancelCause>((resolve) => {
    for (const [signal, cause] of [[shutdown, "shutdown"], [cancel, "client"]] as const) {
      if (!signal) continue;
      if (signal.aborted) return resolve(cause);
      const onAbort = () => resolve(cause);
      signal.addEventListener("abort", onAbort, { once: true });
      offs.push(() => signal.removeEventListener("abort", onAbort));
    }
  });
  return { stopped, off: () => offs.forEach((off) => off()) };
}

/** The process's admission of tool calls and the work they still have in flight. */
export class CallAdmission {
  readonly #shutdown = new AbortController();
  readonly #work = new Set<Promise<void>>();

  /** True once shutdown began: new calls are refused with shutting_down. */
  get closing(): boolean {
    return this.#shutdown.signal.aborted;
  }

  /** Aborted when shutdown begins; every running call listens to it. */
  get signal(): AbortSignal {
    return this.#shutdown.signal;
  }

  /** Calls whose work has not settled yet (a cancelled call's work settles after its answer). */
  get inFlight(): number {
    return this.#work.size;
  }

  /** Follows one call's work until it settles, whatever its answer was. */
  track(work: Promise<unknown>): void {
    const settled: Promise<void> = work.then(() => {}, () => {}).finally(() => this.#work.delete(settled));
    this.#work.add(settled);
  }

  /** Stops admission and cancels every running call (idempotent). */
  close(): void {
    if (!this.closing) this.#shutdown.abort(new ToolError(shuttingDownReason));
  }

  /** Resolves once every tracked call's work settled, including work tracked while waiting. */
  async settled(): Promise<void> {
    while (this.#work.size > 0) await Promise.all([...this.#work]);
  }
}

/** The abort reason pending commands of a call fail with when shutdown cancels it. */
const shuttingDownReason = {
  code: "shutting_down",
  message: "The krometrail process is shutting down; this call's pending browser commands were cancelled.",
  retry: "never" as const,
  recovery: "Start a new krometrail process (reconnect your MCP client) and call it there.",
};
