import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "./session.ts";
import type { PageTarget } from "./targets.ts";
import { sanitizeConsoleArgs, sanitizeStackFunction, sanitizeText, sanitizeUrl } from "./privacy.ts";
import { networkLogOf, trackNetworkDetail } from "./network_log.ts";
import {
  type CdpFrame,
  isLoopbackUrl,
  type MappedFrame,
  plainFrames,
  sessionResolver,
  storedFrameUrl,
  storedSource,
} from "./source_maps.ts";
import { pageDocument } from "./page_document.ts";
import { recordTroubles } from "./trouble_events.ts";

export type EventKind =
  | "console"
  | "exception"
  | "request"
  | "request_failed"
  | "navigation"
  | "lifecycle"
  | "target"
  | "dialog"
  | "emulation"
  | "route"
  | "layout_shift"
  | "long_task"
  /** The browser connection dropped, came back or could not be restored (page_id null). */
  | "connection"
  /** A page's renderer crashed (Target.targetCrashed). */
  | "crash"
  /** A page's main thread stopped answering (a tool deadline's probe got no reply). */
  | "unresponsive";

export interface EventRow {
  [key: string]: string | number | null;
  session_id: string;
  page_id: string | null;
  kind: EventKind;
  at_ns: number;
  interaction_id: string | null;
  level: string | null;
  text: string | null;
  data: string | null;
}

export type EventSink = (row: EventRow) => void;

/** The recording sink of each session whose events are being recorded (see recordBrowserEvents). */
const sessionSinks = new WeakMap<BrowserSession, EventSink>();

/** What a tool reports about its own effect on a page (an emulation change, a routed request, …). */
export interface SessionEventFields {
  level?: string | null;
  text: string;
  data?: Record<string, unknown>;
  /** Session-clock nanoseconds; defaults to now. */
  at_ns?: number;
  /** Defaults to the interaction in flight. */
  interaction_id?: string | null;
}

/**
 * Records one event on the session clock beside the ones Chrome reports, so the temporal tools, bundles
 * and storyboards see tool-made changes (throttling, routes, layout shifts) as evidence. A session whose
 * events are not being recorded drops it; returns whether it was recorded.
 */
export function emitSessionEvent(
  session: BrowserSession,
  page: PageTarget | undefined,
  kind: EventKind,
  fields: SessionEventFields,
): boolean {
  const sink = sessionSinks.get(session);
  if (!sink) return false;
  sink({
    session_id: session.id,
    page_id: page?.id ?? null,
    kind,
    at_ns: fields.at_ns ?? Math.round(session.now() * 1e6),
    interaction_id: fields.interaction_id === undefined
      ? session.activeInteractionId ?? null
      : fields.interaction_id,
    level: fields.level ?? null,
    text: fields.text,
    data: fields.data ? JSON.stringify(fields.data) : null,
  });
  return true;
}

const STACK_FRAMES = 5;
const REMOTE_OBJECT_TEXT = 200;
/** How long an error row waits for its stack's source maps before it is written unmapped. */
const FRAME_MAP_WAIT_MS = 2_000;
/** Console calls whose rows carry `frames` (source-mapped where a map is on loopback). */
const FRAMED_CONSOLE = new Set(["error", "assert", "warning", "trace"]);

/**
 * Network.enable's buffers, for every caller on a page session (a later enable resets them): Chrome
 * keeps recent response bodies in the renderer's memory, never on our disk, so get_network_request can
 * read one while the page lives.
 */
export const NETWORK_ENABLE_PARAMS = {
  maxTotalBufferSize: 16 * 1024 * 1024,
  maxResourceBufferSize: 2 * 1024 * 1024,
} as const;

function describeArg(arg: Protocol.Runtime.RemoteObject): string {
  if (arg.type === "string") return String(arg.value);
  if (arg.value !== undefined) {
    return JSON.stringify(arg.value)?.slice(0, REMOTE_OBJECT_TEXT) ?? String(arg.value);
  }
  return (arg.description ?? arg.type).slice(0, REMOTE_OBJECT_TEXT);
}

function stackFunctions(stack: Protocol.Runtime.StackTrace | undefined): string[] {
  return (stack?.callFrames ?? []).slice(0, STACK_FRAMES).map((f) =>
    sanitizeStackFunction(f.functionName || "(anonymous)")
  );
}

interface PendingRequest {
  page: PageTarget;
  startNs: number;
  method: string;
  url: string;
  origin: string;
  resourceType: string;
  interactionId: string | null;
  status?: number;
  mimeType?: string;
  responseNs?: number;
  /** Emits the row when the body is never read: Chrome then never reports the load finished. */
  unread?: ReturnType<typeof setTimeout>;
}

/** How long after its response a request may stay unfinished before its row is written anyway. */
const UNFINISHED_ROW_MS = 500;

/**
 * Records lightweight browser evidence on the session clock, attributed to its page and to the
 * interaction in flight when it happened: events Chrome timestamps (console, exceptions, request
 * starts) by that timestamp, so an event from before an action's dispatch that arrives late is not
 * the action's, and a fetch begun during a navigation stays the navigation's. Headers, cookies,
 * auth values and bodies are never read into a row (get_network_request reads them from the
 * in-memory log trackNetworkDetail keeps, and from the live page); page-authored text goes through the
 * best-effort sanitizer and is bounded. Error rows carry `frames`, source-mapped from loopback maps.
 */
export function recordBrowserEvents(session: BrowserSession, emit: EventSink): () => void {
  sessionSinks.set(session, emit);
  const stopDetail = trackNetworkDetail(session);
  const nowNs = () => Math.round(session.now() * 1e6);
  const row = (page: PageTarget | undefined, kind: EventKind, fields: Partial<EventRow>): EventRow => ({
    session_id: session.id,
    page_id: page?.id ?? null,
    kind,
    at_ns: nowNs(),
    interaction_id: session.activeInteractionId ?? null,
    level: null,
    text: null,
    data: null,
    ...fields,
  });
  const requests = new Map<string, PendingRequest>();
  /** Each page's target id, to tell a re-adopted page on its old target from one in a restarted browser. */
  const targetOf = new Map<string, string>();
  const resolver = sessionResolver(session);
  /** Rows waiting on a source map, each emitting itself unmapped when called. */
  const pendingRows = new Set<() => void>();
  /**
   * Emits an error row with its `frames`: at once when no frame is a loopback script, else once the
   * maps resolve (bounded by FRAME_MAP_WAIT_MS), keeping the row's own at_ns and attribution. Frames of
   * inline scripts name the document; their blocks' maps are read from the renderer's copy of it.
   */
  const emitFramed = (page: PageTarget, cdp: CdpFrame[], build: (frames: MappedFrame[]) => EventRow) => {
    const plain = plainFrames(cdp, STACK_FRAMES, storedFrameUrl);
    if (!cdp.some((f) => isLoopbackUrl(f.url))) return emit(build(plain));
    let done = false;
    const finish = (frames: MappedFrame[]) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      pendingRows.delete(unmapped);
      emit(build(frames));
    };
    const unmapped = () => finish(plain);
    const timer = setTimeout(unmapped, FRAME_MAP_WAIT_MS);
    pendingRows.add(unmapped);
    resolver.frames(cdp, STACK_FRAMES, storedFrameUrl, {
      source: storedSource,
      document: pageDocument(page, networkLogOf(session)),
    })
      .then(finish, unmapped);
  };
  /** One row per request, at its start time and attributed to the interaction that started it. */
  const finishRequest = (
    requestId: string,
    kind: "request" | "request_failed",
    outcome: (r: PendingRequest) => { level: string; text: string; data: Record<string, unknown> },
  ) => {
    const r = requests.get(requestId);
    if (!r) return;
    requests.delete(requestId);
    clearTimeout(r.unread);
    const o = outcome(r);
    emit({
      ...row(r.page, kind, {
        level: o.level,
        text: o.text,
        data: JSON.stringify({
          // Chrome's id, the key get_network_request takes while the page lives.
          request_id: requestId,
          method: r.method,
          url: r.url,
          origin: r.origin,
          resource_type: r.resourceType,
          duration_ms: Math.round((nowNs() - r.startNs) / 1e6),
          ...o.data,
        }),
      }),
      at_ns: r.startNs,
      interaction_id: r.interactionId,
    });
  };
  /** A response's row; `bytes` null when the body was never read (or is still streaming). */
  const finished = (requestId: string, bytes: number | null) =>
    finishRequest(requestId, "request", (r) => ({
      level: r.status !== undefined && r.status >= 400 ? "error" : "info",
      text: `${r.method} ${r.url} ${r.status ?? "?"}`,
      data: {
        status: r.status ?? null,
        mime_type: r.mimeType ?? null,
        encoded_bytes: bytes,
        // Unread: the time to the response, not to when the row was written.
        ...(bytes === null
          ? { finished: false, duration_ms: Math.round(((r.responseNs ?? nowNs()) - r.startNs) / 1e6) }
          : {}),
      },
    }));
  const offs = [
    session.onPageEvent("Runtime.consoleAPICalled", (page, p) => {
      const text = sanitizeConsoleArgs(p.args.map(describeArg));
      const base = row(page, "console", {
        interaction_id: session.interactions.at(p.timestamp) ?? null,
        level: p.type,
        text: text.text,
      });
      const data = {
        redactions: text.redactions,
        truncated: text.truncated,
        stack: stackFunctions(p.stackTrace),
      };
      if (!FRAMED_CONSOLE.has(p.type)) return emit({ ...base, data: JSON.stringify(data) });
      emitFramed(
        page,
        p.stackTrace?.callFrames ?? [],
        (frames) => ({ ...base, data: JSON.stringify({ ...data, frames }) }),
      );
    }),
    session.onPageEvent("Runtime.exceptionThrown", (page, p) => {
      const d = p.exceptionDetails;
      const message = sanitizeText(d.exception?.description?.split("\n")[0] ?? d.text);
      const base = row(page, "exception", {
        interaction_id: session.interactions.at(p.timestamp) ?? null,
        level: "error",
        text: message.text,
      });
      const data = {
        line: d.lineNumber,
        column: d.columnNumber,
        source: d.url ? sanitizeUrl(d.url).redacted : null,
        stack: stackFunctions(d.stackTrace),
      };
      // A syntax error has no stack: its one frame is where it was thrown.
      const cdp: CdpFrame[] = d.stackTrace?.callFrames ??
        (d.url
          ? [{ functionName: "", url: d.url, lineNumber: d.lineNumber, columnNumber: d.columnNumber }]
          : []);
      emitFramed(page, cdp, (frames) => ({ ...base, data: JSON.stringify({ ...data, frames }) }));
    }),
    session.onPageEvent("Network.requestWillBeSent", (page, p) => {
      const url = sanitizeUrl(p.request.url);
      requests.set(p.requestId, {
        page,
        startNs: nowNs(),
        method: p.request.method,
        url: url.redacted,
        origin: url.origin,
        resourceType: p.type ?? "Other",
        interactionId: session.interactions.at(p.wallTime * 1000) ?? null,
      });
    }),
    session.onPageEvent("Network.responseReceived", (_page, p) => {
      const r = requests.get(p.requestId);
      if (!r) return;
      r.status = p.response.status;
      r.mimeType = p.response.mimeType;
      r.responseNs = nowNs();
      clearTimeout(r.unread);
      r.unread = setTimeout(() => finished(p.requestId, null), UNFINISHED_ROW_MS);
    }),
    session.onPageEvent("Network.loadingFinished", (_page, p) => finished(p.requestId, p.encodedDataLength)),
    session.onPageEvent("Network.loadingFailed", (_page, p) => {
      finishRequest(p.requestId, "request_failed", (r) => ({
        level: p.canceled ? "warning" : "error",
        text: `${r.method} ${r.url} failed: ${p.errorText}`,
        data: { error: p.errorText, canceled: p.canceled ?? false, blocked_reason: p.blockedReason ?? null },
      }));
    }),
    session.onPageEvent("Page.frameNavigated", (page, p) => {
      if (p.frame.parentId) return;
      emit(row(page, "navigation", {
        text: sanitizeUrl(p.frame.url).redacted,
        data: JSON.stringify({ same_document: false, loader: p.frame.loaderId }),
      }));
    }),
    session.onPageEvent("Page.navigatedWithinDocument", (page, p) => {
      if (p.frameId !== page.mainFrameId) return;
      emit(
        row(page, "navigation", {
          text: sanitizeUrl(p.url).redacted,
          data: JSON.stringify({ same_document: true }),
        }),
      );
    }),
    session.onPageEvent("Page.lifecycleEvent", (page, p) => {
      if (p.frameId !== page.mainFrameId || (p.name !== "DOMContentLoaded" && p.name !== "load")) return;
      emit(row(page, "lifecycle", { text: p.name }));
    }),
    session.onPageEvent("Page.javascriptDialogOpening", (page, p) => {
      emit(row(page, "dialog", { level: "info", text: `${p.type}: ${sanitizeText(p.message, 500).text}` }));
    }),
    session.onPageEvent("Page.javascriptDialogClosed", (page, p) => {
      emit(row(page, "dialog", { text: p.result ? "accepted" : "dismissed" }));
    }),
    session.onPageAdded((page, origin) => {
      page.send("Network.enable", NETWORK_ENABLE_PARAMS).catch(() => {});
      // A page re-adopted after a reconnection is the same page again, on the same target or (the
      // browser restarted) a new one at the same URL.
      const earlier = targetOf.get(page.id);
      targetOf.set(page.id, page.targetId);
      emit(row(page, "target", {
        text: origin === "readopted" ? "page reattached" : "page opened",
        data: JSON.stringify({
          opener_page_id: page.openerPageId ?? null,
          url: sanitizeUrl(page.url).redacted,
          ...(origin === "readopted" ? { same_target: earlier === page.targetId } : {}),
        }),
      }));
    }),
    session.onPageRemoved((page) => emit(row(page, "target", { text: "page closed" }))),
    ...recordTroubles(session, emit, row),
  ];
  // Pages that existed before recording began are targets of this session too.
  for (const page of session.pages.values()) {
    targetOf.set(page.id, page.targetId);
    page.send("Network.enable", NETWORK_ENABLE_PARAMS).catch(() => {});
    emit(row(page, "target", {
      text: "page attached",
      data: JSON.stringify({
        opener_page_id: page.openerPageId ?? null,
        url: sanitizeUrl(page.url).redacted,
      }),
    }));
  }
  return () => {
    if (sessionSinks.get(session) === emit) sessionSinks.delete(session);
    offs.forEach((off) => off());
    stopDetail();
    for (const unmapped of [...pendingRows]) unmapped();
    for (const r of requests.values()) clearTimeout(r.unread);
  };
}
