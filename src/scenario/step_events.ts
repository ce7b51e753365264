import type { Protocol } from "devtools-protocol";
import type { EventParams, Events } from "../browser/cdp.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { EventFamily, ScenarioEvent } from "./capture.ts";
import { boundUtf8, type Redactor } from "./step_capture_text.ts";
import { attachChildren } from "./child_attach.ts";
import { NETWORK_ENABLE_PARAMS } from "../browser/events.ts";
import { consoleText, exceptionParts, headerNames, wsPayload } from "./step_events_parts.ts";

export interface EventCollector {
  /** Events observed from now on belong to this step index. */
  beginStep(stepIndex: number): void;
  /** Appends an event the runner observed itself (guard refusals, replay decisions); its strings are kept as given. */
  add(e: Omit<ScenarioEvent, "sequence" | "step_index">): void;
  /** The events so far (sequence from 1, in observation order) and how many were dropped. */
  snapshot(): {
    items: ScenarioEvent[];
    dropped: number;
    bounds(stepIndex: number): { start: number; end: number };
  };
  stop(): void;
}

/** No cap by policy; this only keeps a runaway page from exhausting memory. Past it events are counted. */
export const MAX_EVENTS = 100_000;
/** Console text and WebSocket payload text are kept up to this many UTF-8 bytes each. */
export const TEXT_LIMIT_BYTES = 64 * 1024;
/** Requests, sockets, frames and workers remembered to name their later events. */
const PENDING_LIMIT = 10_000;

type Fields = Omit<ScenarioEvent, "sequence" | "step_index" | "time_ms">;

/** Map bounded by insertion order: the oldest entries are forgotten first. */
class Recent<V> extends Map<string, V> {
  override set(key: string, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > PENDING_LIMIT) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return this;
  }
}

/**
 * Our page setups ride in every page's initialization round, which fails as a whole when one command does:
 * a Chrome that refuses one of ours must not cost the page its initialization, only these events.
 */
const quiet = (sent: Promise<unknown>): Promise<unknown> => sent.catch(() => undefined);

const NETWORK_SETUP = "scenario-events-network";
const WORKER_SETUP = "scenario-events-workers";

/**
 * Collects the scenario's events, each attributed to the step during which it was observed. Only the
 * families asked for are subscribed. Scenario pages are the selected page when collection starts (or
 * `scope.pageIds`) and every page they open, transitively; other pages of an attached browser are not
 * the scenario's. Every string is redacted, every URL goes through `durableUrl`, header values and
 * per-run ids (request, frame, target) are never kept.
 */
export function collectEvents(
  session: BrowserSession,
  families: ReadonlySet<EventFamily>,
  redactor: Redactor,
  durableUrl: (raw: string) => string,
  now: () => number,
  scope: { pageIds?: readonly string[] } = {},
): EventCollector {
  const items: ScenarioEvent[] = [];
  let dropped = 0;
  let step = 0;
  const scenarioPages = new Set(scope.pageIds ?? (session.selectedPageId ? [session.selectedPageId] : []));
  const inScope = (page: PageTarget): boolean => {
    if (scenarioPages.has(page.id)) return true;
    if (page.openerPageId && scenarioPages.has(page.openerPageId)) {
      scenarioPages.add(page.id);
      return true;
    }
    return false;
  };
  const url = (raw: string | undefined): string | null => {
    if (!raw) return null;
    try {
      return durableUrl(raw);
    } catch {
      return redactor.text(raw);
    }
  };
  const text = (s: string) => redactor.text(s);
  const push = (fields: Fields): ScenarioEvent | undefined => {
    if (items.length >= MAX_EVENTS) {
      dropped++;
      return undefined;
    }
    const e = { sequence: items.length + 1, step_index: step, time_ms: now(), ...fields } as ScenarioEvent;
    items.push(e);
    return e;
  };
  const offs: Array<() => void> = [];
  // Our own isolated worlds (the DOM recorder's, the probe's, the scenario's) are not the page speaking.
  const isolated = new Set<string>();
  const contextKey = (page: PageTarget, id: number | undefined) => `${page.sessionId}:${id ?? 0}`;
  offs.push(session.onPageEvent("Runtime.executionContextCreated", (page, p) => {
    const aux = p.context.auxData as { type?: string } | undefined;
    if (aux?.type === "isolated") isolated.add(contextKey(page, p.context.id));
  }));
  offs.push(session.onPageEvent("Runtime.executionContextDestroyed", (page, p) => {
    isolated.delete(contextKey(page, p.executionContextId));
  }));
  offs.push(session.onPageEvent("Runtime.executionContextsCleared", (page) => {
    for (const key of isolated) if (key.startsWith(`${page.sessionId}:`)) isolated.delete(key);
  }));
  const on: On = (event, handler) => {
    offs.push(session.onPageEvent(event, (page, params) => {
      if (inScope(page)) handler(page, params);
    }));
  };

  if (families.has("console")) {
    on("Runtime.consoleAPICalled", (page, p) => {
      if (isolated.has(contextKey(page, p.executionContextId))) return;
      const bounded = boundUtf8(text(consoleText(p.args)), TEXT_LIMIT_BYTES);
      push({
        kind: "console",
        level: p.type,
        text: bounded.text,
        truncated: bounded.truncated,
        url: url(p.stackTrace?.callFrames[0]?.url),
      });
    });
  }
  if (families.has("page-errors")) {
    on("Runtime.exceptionThrown", (page, p) => {
      if (isolated.has(contextKey(page, p.exceptionDetails.executionContextId))) return;
      const { message, stack } = exceptionParts(p.exceptionDetails, (u) => url(u) ?? "");
      push({ kind: "page-error", message: text(message), stack: stack === null ? null : text(stack) });
    });
  }
  if (families.has("network") || families.has("websockets")) {
    session.addPageSetup(NETWORK_SETUP, {
      // The same buffer settings as the session's own event recording, so neither undoes the other.
      apply: (page, timeoutMs) => [
        quiet(page.send("Network.enable", NETWORK_ENABLE_PARAMS, timeoutMs)),
      ],
    });
  }
  if (families.has("network")) wireNetwork(on, push, url, text);
  if (families.has("websockets")) wireWebSockets(on, push, url, text);
  if (families.has("frames")) {
    const frames = new Recent<{ url: string | null; name: string | null; main: boolean }>();
    on("Page.frameAttached", (_page, p) => {
      frames.set(p.frameId, { url: null, name: null, main: false });
      push({ kind: "frame-attached", url: null, name: null, main_frame: false });
    });
    on("Page.frameNavigated", (_page, p) => {
      const f = {
        url: url(p.frame.url + (p.frame.urlFragment ?? "")),
        name: p.frame.name ? text(p.frame.name) : null,
      };
      frames.set(p.frame.id, { ...f, main: !p.frame.parentId });
      push({ kind: "frame-navigated", ...f, main_frame: !p.frame.parentId });
    });
    on("Page.frameDetached", (_page, p) => {
      // A frame swapped into another process detaches here and lives on: not a detachment of the page's.
      if (p.reason === "swap") return;
      const f = frames.get(p.frameId);
      frames.delete(p.frameId);
      push({
        kind: "frame-detached",
        url: f?.url ?? null,
        name: f?.name ?? null,
        main_frame: f?.main ?? false,
      });
    });
  }
  if (families.has("workers")) wireWorkers(session, on, push, url);
  if (families.has("popups")) {
    // A popup is adopted before its first document commits: its URL is filled in when that happens.
    const unnamed = new Map<string, ScenarioEvent>();
    offs.push(session.onPageAdded((page) => {
      if (!page.openerPageId || !scenarioPages.has(page.openerPageId)) return;
      scenarioPages.add(page.id);
      const opened = push({
        kind: "popup-opened",
        url: url(page.url === "about:blank" ? "" : page.url),
        name: null,
      });
      if (opened && opened.url === null) unnamed.set(page.id, opened);
    }));
    on("Page.frameNavigated", (page, p) => {
      const opened = unnamed.get(page.id);
      if (!opened || p.frame.parentId) return;
      unnamed.delete(page.id);
      opened.url = url(p.frame.url + (p.frame.urlFragment ?? ""));
    });
    offs.push(session.onPageRemoved((page) => {
      if (!page.openerPageId || !scenarioPages.has(page.id)) return;
      push({ kind: "popup-closed", url: url(page.url), name: null });
    }));
  }
  if (families.has("downloads")) {
    const downloads = new Recent<{ url: string | null; suggested_filename: string }>();
    on("Page.downloadWillBegin", (_page, p) => {
      downloads.set(p.guid, { url: url(p.url), suggested_filename: text(p.suggestedFilename) });
    });
    on("Page.downloadProgress", (_page, p) => {
      if (p.state === "inProgress") return;
      const d = downloads.get(p.guid);
      downloads.delete(p.guid);
      if (p.state === "canceled" && d) push({ kind: "download-cancelled", ...d });
    });
  }

  return {
    beginStep(stepIndex) {
      step = stepIndex;
    },
    add(e) {
      if (items.length >= MAX_EVENTS) {
        dropped++;
        return;
      }
      items.push({ ...e, sequence: items.length + 1, step_index: step } as ScenarioEvent);
    },
    snapshot() {
      const copy = items.map((e) => ({ ...e }));
      return {
        items: copy,
        dropped,
        bounds(stepIndex) {
          const mine = copy.filter((e) => e.step_index === stepIndex);
          if (mine.length > 0) return { start: mine[0].sequence, end: mine[mine.length - 1].sequence };
          const next = copy.find((e) => e.step_index > stepIndex);
          const start = next ? next.sequence : copy.length + 1;
          return { start, end: start - 1 };
        },
      };
    },
    stop() {
      for (const off of offs.splice(0)) off();
    },
  };
}

type On = <E extends keyof Events>(
  event: E,
  handler: (page: PageTarget, params: EventParams<E>) => void,
) => void;
type Push = (fields: Fields) => ScenarioEvent | undefined;
type Url = (raw: string | undefined) => string | null;

function wireNetwork(on: On, push: Push, url: Url, text: (s: string) => string): void {
  const names = (h: Protocol.Network.Headers | undefined) => headerNames(h).map(text);
  const requests = new Recent<{ method: string; url: string | null; resource_type: string }>();
  const response = (
    r: { method: string; url: string | null; resource_type: string },
    res: Protocol.Network.Response,
  ) =>
    push({
      kind: "response",
      method: r.method,
      url: url(res.url) ?? r.url,
      resource_type: r.resource_type,
      status: res.status,
      failure: null,
      header_names: names(res.headers),
    });
  on("Network.requestWillBeSent", (_page, p) => {
    const before = requests.get(p.requestId);
    // A redirect reuses the request id: the hop that redirected answered first.
    if (before && p.redirectResponse) response(before, p.redirectResponse);
    const r = { method: p.request.method, url: url(p.request.url), resource_type: p.type ?? "Other" };
    requests.set(p.requestId, r);
    push({
      kind: "request",
      ...r,
      status: null,
      failure: null,
      header_names: names(p.request.headers),
    });
  });
  on("Network.responseReceived", (_page, p) => {
    const r = requests.get(p.requestId) ??
      { method: "GET", url: url(p.response.url), resource_type: p.type };
    response({ ...r, resource_type: p.type ?? r.resource_type }, p.response);
  });
  on("Network.loadingFinished", (_page, p) => {
    requests.delete(p.requestId);
  });
  on("Network.loadingFailed", (_page, p) => {
    const r = requests.get(p.requestId);
    requests.delete(p.requestId);
    if (!r) return;
    push({
      kind: "request-failed",
      ...r,
      resource_type: p.type ?? r.resource_type,
      status: null,
      failure: text(p.errorText || "failed"),
      canceled: p.canceled ?? false,
      blocked_reason: p.blockedReason ?? null,
      header_names: [],
    });
  });
}

function wireWebSockets(on: On, push: Push, url: Url, text: (s: string) => string): void {
  const sockets = new Recent<string | null>();
  on("Network.webSocketCreated", (_page, p) => {
    sockets.set(p.requestId, url(p.url));
  });
  on("Network.webSocketHandshakeResponseReceived", (_page, p) => {
    if (!sockets.has(p.requestId)) return;
    push({ kind: "websocket-opened", url: sockets.get(p.requestId) ?? null, status: p.response.status });
  });
  on("Network.webSocketClosed", (_page, p) => {
    if (!sockets.has(p.requestId)) return;
    const u = sockets.get(p.requestId) ?? null;
    sockets.delete(p.requestId);
    push({ kind: "websocket-closed", url: u });
  });
  const frame = (kind: "websocket-frame-sent" | "websocket-frame-received") =>
  (
    _page: PageTarget,
    p: { requestId: string; response: Protocol.Network.WebSocketFrame },
  ) => {
    const payload = wsPayload(p.response, (s) => boundUtf8(text(s), TEXT_LIMIT_BYTES));
    push({ kind, url: sockets.get(p.requestId) ?? null, ...payload });
  };
  on("Network.webSocketFrameSent", frame("websocket-frame-sent"));
  on("Network.webSocketFrameReceived", frame("websocket-frame-received"));
}

/**
 * Dedicated and service workers reach a page session through its own auto-attach (the session attaches
 * pages only, and ignores attachments under a page); shared workers are not attached to any page, so they
 * are seen through target discovery on the page session (browser-wide: each is counted once).
 */
function wireWorkers(session: BrowserSession, on: On, push: Push, url: Url): void {
  // One auto-attachment per page, shared with the guard: a second Target.setAutoAttach would replace the
  // guard's filter, and out-of-process iframes would run outside the origin set (child_attach.ts).
  attachChildren(session);
  session.addPageSetup(WORKER_SETUP, {
    apply: (page, timeoutMs) => [
      quiet(page.send(
        "Target.setDiscoverTargets",
        { discover: true, filter: [{ type: "shared_worker" }] },
        timeoutMs,
      )),
    ],
  });
  const workers = new Recent<{ url: string | null; worker_type: string }>();
  const created = (info: Protocol.Target.TargetInfo) => {
    if (workers.has(info.targetId)) return;
    const w = { url: url(info.url), worker_type: info.type };
    workers.set(info.targetId, w);
    push({ kind: "worker-created", ...w, name: null });
  };
  const closed = (targetId: string) => {
    const w = workers.get(targetId);
    if (!w) return;
    workers.delete(targetId);
    push({ kind: "worker-closed", ...w, name: null });
  };
  on("Target.attachedToTarget", (_page, p) => {
    if (p.targetInfo.type === "worker" || p.targetInfo.type === "service_worker") created(p.targetInfo);
  });
  on("Target.detachedFromTarget", (_page, p) => {
    if (p.targetId) closed(p.targetId);
  });
  on("Target.targetCreated", (_page, p) => {
    if (p.targetInfo.type === "shared_worker") created(p.targetInfo);
  });
  on("Target.targetDestroyed", (_page, p) => closed(p.targetId));
}
