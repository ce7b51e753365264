/** The session's trouble rows (connection, crash, unresponsive) on its event timeline (events.ts). */
import type { BrowserSession } from "./session.ts";
import type { PageTarget } from "./targets.ts";
import type { EventKind, EventRow, EventSink } from "./events.ts";
import { sanitizeText } from "./privacy.ts";

export type RowOf = (page: PageTarget | undefined, kind: EventKind, fields: Partial<EventRow>) => EventRow;

/**
 * The session's own troubles on its clock: the connection dropping, coming back or not (session-wide,
 * page_id null), a renderer crash and a page that stopped answering.
 */
export function recordTroubles(session: BrowserSession, emit: EventSink, row: RowOf): Array<() => void> {
  let recording = true;
  const atNs = (ms: number) => Math.round(ms * 1e6);
  // onEnded has no unsubscribe: the flag stops this listener once recording stops.
  session.onEnded((reason) => {
    if (!recording) return;
    // A launched browser is not retried: the process is gone, and so is the session.
    if (reason === "browser_exited" || reason === "browser_disconnected") {
      emit(row(undefined, "connection", {
        level: "error",
        text: reason === "browser_exited"
          ? "the browser process exited; session ended"
          : "the browser connection dropped; session ended (not retried)",
        data: JSON.stringify({ end_reason: reason }),
      }));
      return;
    }
    if (reason !== "reconnect_window_exhausted") return;
    const c = session.connection;
    const r = c.state === "reconnecting" ? c : undefined;
    const tries = r
      ? ` (${r.attempts} attempt${r.attempts === 1 ? "" : "s"}` +
        `${r.last_error ? `; last error: ${sanitizeText(r.last_error, 160).text}` : ""})`
      : "";
    emit(row(undefined, "connection", {
      level: "error",
      text: `reconnect failed: the browser did not come back within ${
        r ? `${r.window_ms} ms` : "the reconnect window"
      }${tries}; session ended`,
      data: JSON.stringify({
        outage_ms: r ? Math.round(session.now() - r.since_ms) : null,
        attempts: r?.attempts ?? null,
        window_ms: r?.window_ms ?? null,
        last_error: r?.last_error ? sanitizeText(r.last_error, 160).text : null,
        end_reason: reason,
      }),
    }));
  });
  return [
    () => (recording = false),
    session.onConnectionLost((atMs) => {
      const c = session.connection;
      emit(row(undefined, "connection", {
        at_ns: atNs(atMs),
        level: "warning",
        text: `connection lost; reconnecting${
          c.state === "reconnecting" ? ` for up to ${c.window_ms} ms` : ""
        }`,
        data: JSON.stringify({ window_ms: c.state === "reconnecting" ? c.window_ms : null }),
      }));
    }),
    session.onReconnected((info) => {
      const outage = Math.round(info.resumed_at_ms - info.lost_at_ms);
      emit(row(undefined, "connection", {
        at_ns: atNs(info.resumed_at_ms),
        level: "info",
        text: `reconnected after ${outage} ms (${info.attempts} attempt${info.attempts === 1 ? "" : "s"})`,
        data: JSON.stringify({
          outage_ms: outage,
          attempts: info.attempts,
          readopted: info.readopted,
          closed: info.closed,
          added: info.added,
        }),
      }));
    }),
    session.onPageTrouble((page, trouble) => {
      if (trouble.kind === "crashed") {
        emit(row(page, "crash", {
          at_ns: atNs(trouble.at_ms),
          level: "error",
          text: `renderer crashed (${trouble.status})`,
          data: JSON.stringify({ status: trouble.status, error_code: trouble.error_code }),
        }));
        return;
      }
      emit(row(page, "unresponsive", {
        at_ns: atNs(trouble.at_ms),
        level: "warning",
        text: `page stopped responding during ${trouble.tool}`,
        data: JSON.stringify({ tool: trouble.tool }),
      }));
    }),
  ];
}
