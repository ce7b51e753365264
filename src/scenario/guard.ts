/**
 * The scenario's network boundary, installed in every page of the run before it runs (popups and
 * reattachments included, through BrowserSession.addPageSetup):
 *
 * - HTTP(S): every request pauses in the Fetch domain at the Request stage and is decided by
 *   decideRequest (guard_match.ts): a replay route is fulfilled, redirected or failed; an origin outside
 *   the set is failed as BlockedByClient; an unmatched request is failed when the replay says so (main-frame
 *   documents are spared unless unmatchedNavigations is "abort", so the app under test still loads); the
 *   rest continues. A redirect the server answers pauses again for its new URL, so a redirect off the set is
 *   refused like any request. data:, blob: and about: never pause here.
 * - WebSocket: Fetch never sees a handshake, and Network.setBlockedURLs does not stop one (measured on
 *   Chromium 156, with urlPatterns and with the old urls). Per-URL network conditions do
 *   (originConditions): allowed origins get none, every other http(s)/ws(s) URL is emulated offline, so
 *   the handshake is never sent. The attempt is reported from Network.webSocketCreated. For HTTP these
 *   rules sit below Fetch, which has already refused such a request. They are the guard's restrictions
 *   in the page's composed rule list (browser/network_rules.ts), so emulate's page-wide throttling or
 *   offline composes with them instead of replacing them.
 * - Child targets: the page session's Fetch covers same-process iframes (127.0.0.1 on another port is the
 *   same site) and dedicated workers' HTTP, but neither an out-of-process iframe's requests (another site,
 *   e.g. localhost beside 127.0.0.1) nor any worker's WebSocket. So the page attaches its iframes and
 *   workers paused (child_attach.ts: another page setup sending its own Target.setAutoAttach replaces
 *   this one), and each gets the same offline rules (and the service-worker block) before it runs.
 *   There the origin set holds, silently: a child session's events do not reach page listeners
 *   (BrowserSession routes page sessions only), so no GuardEvent and no replay there, and children of a
 *   child (a nested out-of-process iframe, a worker inside one) are not attached.
 * - Service workers (when blocked): register() rejects in every document (a main-world document-start
 *   script), the page's requests bypass any worker (Network.setBypassServiceWorker), and a worker script
 *   fetch (a `Service-Worker: script` request) that reaches the page's Fetch is failed.
 */
import type { CommandParams, EventParams } from "../browser/cdp.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { type NetworkRuleSource, pageNetworkRules, sendNetworkRules } from "../browser/network_rules.ts";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { NETWORK_ENABLE_PARAMS } from "../browser/events.ts";
import { attachChildren, type AttachedChild } from "./child_attach.ts";
import {
  base64Utf8,
  decideRequest,
  fulfillHeaders,
  type GuardPlan,
  httpOrigin,
  normalizeOrigins,
  originConditions,
  outsideGuard,
  RouteTable,
} from "./guard_match.ts";

export type { GuardPlan, ReplayResponse, ReplayRoute } from "./guard_match.ts";

const log = logger("scenario", "guard");

/** What the runner attributes to the current step. `url` is the raw request URL: the runner redacts it. */
export interface GuardEvent {
  kind: "request-refused" | "replay-fulfilled" | "replay-redirected" | "replay-aborted" | "unmatched-aborted";
  page_id: string;
  origin: string;
  url: string;
  method: string;
  resource_type: string;
  /** A main-frame document request (a navigation or one of its redirects). */
  navigation: boolean;
  route_id?: string;
  transport: "http" | "websocket";
}

/**
 * Replaces ServiceWorkerContainer.prototype.register in the main world of every document before the page
 * runs, frozen on the prototype. A fresh about:blank iframe's realm gets it too (measured), so borrowing
 * that realm's register() is refused as well; the network bypass holds whatever the page finds.
 */
const SERVICE_WORKER_BLOCK = `(() => {
  const C = globalThis.ServiceWorkerContainer;
  if (!C) return;
  const register = function register() {
    return Promise.reject(new DOMException(
      "Service workers are blocked in this scenario (environment.service_workers).", "SecurityError"));
  };
  try {
    Object.defineProperty(C.prototype, "register", { value: register, writable: false, configurable: false });
  } catch { /* already replaced in this realm */ }
})();`;

type Paused = EventParams<"Fetch.requestPaused">;

const CHILD_TIMEOUT_MS = 5_000;
const CHILD_TYPES = new Set(["iframe", "worker", "service_worker"]);
type SetupCommand =
  | "Network.enable"
  | "Network.emulateNetworkConditionsByRule"
  | "Fetch.enable"
  | "Network.setBypassServiceWorker"
  | "Page.addScriptToEvaluateOnNewDocument";
type ChildCommand =
  | "Page.enable"
  | "Network.enable"
  | "Network.emulateNetworkConditionsByRule"
  | "Network.setBypassServiceWorker"
  | "Page.addScriptToEvaluateOnNewDocument";

export interface GuardOptions {
  /**
   * The pages the guard holds (asked at each page's initialization and for each of its events); all by
   * default. In connect mode pass the scenario's page and what it opens, so other tabs of the external
   * browser are left alone.
   */
  pages?: (page: PageTarget) => boolean;
  /**
   * A setup command Chrome refused (an older browser in connect mode without per-URL network conditions,
   * say): the page still initializes, and this says which part of the guard it runs without. Logged as a
   * warning by default. An unanswered command is not a refusal: it fails the round, which is sent again.
   */
  onSetupError?: (page: PageTarget, method: string, message: string) => void;
}

/**
 * Installs the guard on every page of the session (in `options.pages`), now and later. Returns the
 * uninstall: the listeners go, and the open pages stop pausing requests and blocking WebSockets
 * (requests then continue).
 */
export function installGuard(
  session: BrowserSession,
  plan: GuardPlan,
  onEvent: (e: GuardEvent) => void,
  options: GuardOptions = {},
): () => void {
  const inScope = options.pages ?? (() => true);
  const onSetupError = options.onSetupError ??
    ((page, method, message) =>
      log.warning("guard setup {method} refused on {page}: {message}", { method, page: page.id, message }));
  const allowed = normalizeOrigins(plan.allowedOrigins);
  const decisionPlan = {
    allowed,
    routes: plan.replay.mode === "exact" ? new RouteTable(plan.replay.routes) : null,
    unmatchedAbort: plan.replay.mode === "exact" && plan.replay.unmatched === "abort",
    abortNavigations: plan.replay.mode === "exact" && plan.replay.unmatchedNavigations === "abort",
  };
  const conditions = originConditions(allowed);
  let active = true;
  // A key of its own: addPageSetup is idempotent by key, and a later guard in the same session is another.
  const key = `scenario_guard:${crypto.randomUUID()}`;

  const setup: NetworkRuleSource = {
    networkRestrictions: (page) => active && inScope(page) ? conditions : [],
    apply(page: PageTarget, timeoutMs?: number): Array<Promise<unknown>> {
      if (!active || !inScope(page)) return [];
      const send = <M extends SetupCommand>(method: M, params: CommandParams<M>) =>
        tolerated(page.send(method, params, timeoutMs), (message) => onSetupError(page, method, message));
      const sent = [
        send("Network.enable", NETWORK_ENABLE_PARAMS),
        send("Network.emulateNetworkConditionsByRule", { matchedNetworkConditions: pageNetworkRules(page) }),
        send("Fetch.enable", { patterns: [{ urlPattern: "*", requestStage: "Request" }] }),
      ];
      if (plan.blockServiceWorkers) {
        sent.push(
          send("Network.setBypassServiceWorker", { bypass: true }),
          send("Page.addScriptToEvaluateOnNewDocument", {
            source: SERVICE_WORKER_BLOCK,
            runImmediately: true,
          }),
        );
      }
      return sent;
    },
  };

  const emit = (e: GuardEvent) => {
    try {
      onEvent(e);
    } catch (err) {
      log.warning("guard event listener failed: {err}", { err: String(err) });
    }
  };

  const onPaused = (page: PageTarget, p: Paused) => {
    // A page outside the scope never had Fetch enabled by us: whoever did answers its requests.
    if (!inScope(page)) return;
    const { requestId, request } = p;
    const reply = (promise: Promise<unknown>) =>
      promise.catch((err) => log.debug("guard reply failed: {err}", { err: String(err) }));
    if (!active || outsideGuard(request.url)) {
      reply(page.send("Fetch.continueRequest", { requestId }));
      return;
    }
    const base = {
      page_id: page.id,
      origin: httpOrigin(request.url) ?? request.url,
      url: request.url,
      method: request.method,
      resource_type: p.resourceType,
      navigation: p.resourceType === "Document" &&
        (p.frameId === page.mainFrameId || p.frameId === page.targetId),
      transport: "http" as const,
    };
    if (plan.blockServiceWorkers && headerValue(request.headers, "service-worker") === "script") {
      reply(page.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }));
      emit({ ...base, kind: "request-refused" });
      return;
    }
    const d = decideRequest(decisionPlan, request.method, request.url, base.navigation);
    switch (d.action) {
      case "fulfill":
        reply(page.send("Fetch.fulfillRequest", {
          requestId,
          responseCode: d.response.status,
          responseHeaders: fulfillHeaders(d.response),
          body: base64Utf8(d.response.body ?? ""),
        }));
        emit({ ...base, kind: "replay-fulfilled", route_id: d.route.route_id });
        return;
      case "redirect":
        // Chrome follows a fulfilled redirect and pauses the new URL here again.
        reply(page.send("Fetch.fulfillRequest", {
          requestId,
          responseCode: d.response.status,
          responseHeaders: [{ name: "location", value: d.response.location }],
        }));
        emit({ ...base, kind: "replay-redirected", route_id: d.route.route_id });
        return;
      case "replay-abort":
        reply(page.send("Fetch.failRequest", { requestId, errorReason: d.errorReason }));
        emit({ ...base, kind: "replay-aborted", route_id: d.route.route_id });
        return;
      case "refuse":
        reply(page.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }));
        emit({ ...base, origin: d.origin, kind: "request-refused" });
        return;
      case "unmatched-abort":
        reply(page.send("Fetch.failRequest", { requestId, errorReason: "BlockedByClient" }));
        emit({ ...base, origin: d.origin, kind: "unmatched-aborted" });
        return;
      case "continue":
        reply(page.send("Fetch.continueRequest", { requestId }));
    }
  };

  // A child's rules go out before child_attach.ts releases it, so its first request already meets them.
  const initChild = ({ page, sessionId, targetInfo }: AttachedChild) => {
    if (!active || !inScope(page) || !CHILD_TYPES.has(targetInfo.type)) return;
    const send = <M extends ChildCommand>(method: M, params: CommandParams<M>) =>
      session.sendToSession(sessionId, method, params, CHILD_TIMEOUT_MS).catch(() => undefined);
    send("Network.enable", NETWORK_ENABLE_PARAMS);
    send("Network.emulateNetworkConditionsByRule", { matchedNetworkConditions: conditions });
    if (plan.blockServiceWorkers && targetInfo.type === "iframe") {
      send("Network.setBypassServiceWorker", { bypass: true });
      send("Page.enable", undefined);
      send("Page.addScriptToEvaluateOnNewDocument", { source: SERVICE_WORKER_BLOCK, runImmediately: true });
    }
  };
  const offChildren = attachChildren(session, initChild);

  const off = [
    session.onPageEvent("Fetch.requestPaused", onPaused),
    // The handshake itself never leaves (offline by rule); this reports the attempt.
    session.onPageEvent("Network.webSocketCreated", (page, { url }) => {
      if (!active || !inScope(page)) return;
      const origin = httpOrigin(url);
      if (origin && allowed.has(origin)) return;
      emit({
        kind: "request-refused",
        page_id: page.id,
        origin: origin ?? url,
        url,
        method: "GET",
        resource_type: "WebSocket",
        navigation: false,
        transport: "websocket",
      });
    }),
  ];
  session.addPageSetup(key, setup);

  return () => {
    if (!active) return;
    active = false;
    for (const o of off) o();
    offChildren();
    for (const page of session.pages.values()) {
      page.overrides.delete(key);
      if (page.closed) continue;
      // Disabling Fetch releases whatever is still paused; no request is left hanging without a listener.
      page.send("Fetch.disable").catch(() => {});
      // What other owners (emulate) set stays: only the guard's restrictions leave the list.
      sendNetworkRules(page).catch(() => {});
      // Children already attached keep their rules until they go (their sessions are not tracked here).
      if (plan.blockServiceWorkers) {
        page.send("Network.setBypassServiceWorker", { bypass: false }).catch(() => {});
      }
    }
  };
}

/**
 * A setup command whose refusal by Chrome is reported instead of failing the page's initialization round;
 * a timeout (a command dropped during a new tab's first renderer swap) still fails it, so it is sent again.
 */
export function tolerated(sent: Promise<unknown>, refused: (message: string) => void): Promise<unknown> {
  return sent.catch((err) => {
    if (err instanceof ToolError && err.code === "cdp_timeout") throw err;
    if (err instanceof ToolError && err.code === "page_closed") return undefined;
    refused(err instanceof Error ? err.message : String(err));
    return undefined;
  });
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}
