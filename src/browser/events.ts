import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "./session.ts";
import type { PageTarget } from "./targets.ts";
import { sanitizeStackFunction, sanitizeText, sanitizeUrl } from "./privacy.ts";

export type EventKind =
  | "console"
  | "exception"
  | "request"
  | "request_failed"
  | "navigation"
  | "lifecycle"
  | "target"
  | "dialog";

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

const STACK_FRAMES = 5;
const REMOTE_OBJECT_TEXT = 200;

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
}

/**
 * Records lightweight browser evidence on the session clock, attributed to its page and to the
 * interaction in flight. Headers, cookies, auth values and bodies are never read into a row;
 * page-authored text goes through the best-effort sanitizer and is bounded.
 */
export function recordBrowserEvents(session: BrowserSession, emit: EventSink): () => void {
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
  /** One row per request, at its start time and attributed to the interaction that started it. */
  const finishRequest = (
    requestId: string,
    kind: "request" | "request_failed",
    outcome: (r: PendingRequest) => { level: string; text: string; data: Record<string, unknown> },
  ) => {
    const r = requests.get(requestId);
    if (!r) return;
    requests.delete(requestId);
    const o = outcome(r);
    emit({
      ...row(r.page, kind, {
        level: o.level,
        text: o.text,
        data: JSON.stringify({
          method: r.method,
          url: r.url,
          origin: r.origin,
          resource_type: r.resourceType,
          ...o.data,
          duration_ms: Math.round((nowNs() - r.startNs) / 1e6),
        }),
      }),
      at_ns: r.startNs,
      interaction_id: r.interactionId,
    });
  };
  const offs = [
    session.onPageEvent("Runtime.consoleAPICalled", (page, p) => {
      const text = sanitizeText(p.args.map(describeArg).join(" "));
      emit(row(page, "console", {
        level: p.type,
        text: text.text,
        data: JSON.stringify({
          redactions: text.redactions,
          truncated: text.truncated,
          stack: stackFunctions(p.stackTrace),
        }),
      }));
    }),
    session.onPageEvent("Runtime.exceptionThrown", (page, p) => {
      const d = p.exceptionDetails;
      const message = sanitizeText(d.exception?.description?.split("\n")[0] ?? d.text);
      emit(row(page, "exception", {
        level: "error",
        text: message.text,
        data: JSON.stringify({
          line: d.lineNumber,
          column: d.columnNumber,
          source: d.url ? sanitizeUrl(d.url).redacted : null,
          stack: stackFunctions(d.stackTrace),
        }),
      }));
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
        interactionId: session.activeInteractionId ?? null,
      });
    }),
    session.onPageEvent("Network.responseReceived", (_page, p) => {
      const r = requests.get(p.requestId);
      if (!r) return;
      r.status = p.response.status;
      r.mimeType = p.response.mimeType;
    }),
    session.onPageEvent("Network.loadingFinished", (_page, p) => {
      finishRequest(p.requestId, "request", (r) => ({
        level: r.status !== undefined && r.status >= 400 ? "error" : "info",
        text: `${r.method} ${r.url} ${r.status ?? "?"}`,
        data: { status: r.status ?? null, mime_type: r.mimeType ?? null, encoded_bytes: p.encodedDataLength },
      }));
    }),
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
    session.onPageAdded((page) => {
      page.send("Network.enable", { maxTotalBufferSize: 0, maxResourceBufferSize: 0 }).catch(() => {});
      emit(row(page, "target", {
        text: "page opened",
        data: JSON.stringify({
          opener_page_id: page.openerPageId ?? null,
          url: sanitizeUrl(page.url).redacted,
        }),
      }));
    }),
    session.onPageRemoved((page) => emit(row(page, "target", { text: "page closed" }))),
  ];
  // Pages that existed before recording began are targets of this session too.
  for (const page of session.pages.values()) {
    page.send("Network.enable", { maxTotalBufferSize: 0, maxResourceBufferSize: 0 }).catch(() => {});
    emit(row(page, "target", {
      text: "page attached",
      data: JSON.stringify({
        opener_page_id: page.openerPageId ?? null,
        url: sanitizeUrl(page.url).redacted,
      }),
    }));
  }
  return () => offs.forEach((off) => off());
}
