/**
 * Request routing through the Fetch domain, session-wide: every page (and every page opened later, through
 * a page setup that runs before the page does) pauses only the URLs some route of it could match, at the
 * Request stage; route_match.ts decides, this carries it out and records a `route` event. A page no route
 * applies to has Fetch off, so routing costs nothing when unused. Fetch on a page session covers its
 * same-process frames and dedicated workers, not out-of-process iframes or service workers.
 */
import type { EventParams } from "../browser/cdp.ts";
import { cdpMessage } from "../browser/cdp.ts";
import { emitSessionEvent } from "../browser/events.ts";
import { sanitizeUrl } from "../browser/privacy.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget, TargetOverride } from "../browser/targets.ts";
import { logger } from "../log.ts";
import {
  type Decision,
  ERROR_REASONS,
  preflightHeaders,
  preflightMethod,
  responseHeaders,
  type Route,
  type RouteSpec,
  RouteTable,
} from "./route_match.ts";

const log = logger("devtools", "routes");

/** The page setup key (BrowserSession.addPageSetup is idempotent by key). */
const SETUP_KEY = "routes";

type Paused = EventParams<"Fetch.requestPaused">;

function base64Utf8(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** The event text of one routed request, e.g. "route r2 fulfilled GET http://…/~1a2b 200". */
export function routeEventText(d: Decision, method: string, url: string): string {
  const v = d.verdict;
  const tail = v.kind === "fulfill"
    ? String(v.status)
    : v.kind === "fail"
    ? v.reason
    : d.outcome === "passed"
    ? `(${d.route.matched} of ${d.route.count ?? 0} let through)`
    : "";
  const wait = d.delay_ms > 0
    ? (d.outcome === "delayed" ? ` ${d.delay_ms}ms` : ` after ${d.delay_ms}ms`)
    : "";
  const gone = d.exhausted ? `; times ${d.route.times} reached, route removed` : "";
  return `route ${d.route.route_id} ${d.outcome} ${method} ${url}${tail ? ` ${tail}` : ""}${wait}${gone}`;
}

export class SessionRoutes {
  readonly table = new RouteTable();
  readonly #session: BrowserSession;
  /** The patterns each page's Fetch was last given ("" for off). */
  #sent = new Map<string, string>();
  #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(session: BrowserSession) {
    this.#session = session;
    session.onPageEvent("Fetch.requestPaused", (page, p) => this.#paused(page, p));
    session.onPageRemoved((page) => {
      this.#sent.delete(page.id);
      this.table.remove((r) => r.page_id === page.id);
    });
    session.onEnded(() => {
      for (const t of this.#timers) clearTimeout(t);
      this.#timers.clear();
      this.table.remove(() => true);
    });
    const setup: TargetOverride = {
      apply: (page, timeoutMs) => {
        const patterns = this.table.patterns(page.id);
        this.#sent.set(page.id, patterns.join("\n"));
        if (patterns.length === 0) return [];
        return [page.send("Fetch.enable", { patterns: fetchPatterns(patterns) }, timeoutMs)];
      },
    };
    session.addPageSetup(SETUP_KEY, setup);
  }

  /** Adds a route and puts it in force on every page it applies to before returning; warnings name pages it could not reach. */
  async add(spec: RouteSpec): Promise<{ route: Route; warnings: string[] }> {
    const route = this.table.add(spec);
    return { route, warnings: await this.sync() };
  }

  /** Removes routes and turns Fetch off where none applies any more. */
  async remove(which: (r: Route) => boolean): Promise<{ removed: string[]; warnings: string[] }> {
    const removed = this.table.remove(which);
    return { removed, warnings: removed.length > 0 ? await this.sync() : [] };
  }

  /** Brings every open page's Fetch patterns in line with the table. */
  async sync(): Promise<string[]> {
    const pages = [...this.#session.pages.values()].filter((p) => !p.closed);
    const results = await Promise.all(pages.map((p) => this.#syncPage(p)));
    return results.filter((w): w is string => w !== undefined);
  }

  async #syncPage(page: PageTarget): Promise<string | undefined> {
    const patterns = this.table.patterns(page.id);
    const key = patterns.join("\n");
    if ((this.#sent.get(page.id) ?? "") === key) return undefined;
    this.#sent.set(page.id, key);
    try {
      // Fetch.enable replaces the page's patterns; disabling releases anything still paused.
      if (patterns.length === 0) await page.send("Fetch.disable");
      else await page.send("Fetch.enable", { patterns: fetchPatterns(patterns) });
      return undefined;
    } catch (err) {
      if (page.closed) return undefined;
      this.#sent.delete(page.id);
      return `route_not_in_force on ${page.id}: ${cdpMessage(err)}`;
    }
  }

  #paused(page: PageTarget, p: Paused): void {
    // A page whose Fetch we did not enable is someone else's to answer; a response stage is not ours either.
    if (
      !this.#sent.get(page.id) || p.responseStatusCode !== undefined || p.responseErrorReason !== undefined
    ) {
      return;
    }
    const { requestId, request } = p;
    const reply = (sent: Promise<unknown>) =>
      sent.catch((err) => log.debug("route reply failed: {err}", { err: cdpMessage(err) }));
    // A preflight for a request a route handles is not counted or recorded (the request it asks about is):
    // one for a mock gets the permissive answer (there may be no server), one for a delay goes to the server.
    const asked = preflightMethod(request.method, request.headers);
    const handling = asked ? this.table.peek(page.id, asked, request.url) : undefined;
    if (handling) {
      reply(
        handling.action === "delay"
          ? page.send("Fetch.continueRequest", { requestId })
          : page.send("Fetch.fulfillRequest", {
            requestId,
            responseCode: 204,
            responseHeaders: preflightHeaders(request.headers),
          }),
      );
      return;
    }
    const d = this.table.decide(page.id, request.method, request.url);
    if (!d) {
      reply(page.send("Fetch.continueRequest", { requestId }));
      return;
    }
    if (d.exhausted) this.sync().catch(() => {});
    this.#record(page, p, d);
    const act = () => {
      const v = d.verdict;
      if (v.kind === "fulfill") {
        reply(page.send("Fetch.fulfillRequest", {
          requestId,
          responseCode: v.status,
          responseHeaders: responseHeaders(d.route, request.headers),
          body: base64Utf8(v.body),
        }));
      } else if (v.kind === "fail") {
        reply(page.send("Fetch.failRequest", { requestId, errorReason: ERROR_REASONS[v.reason] }));
      } else reply(page.send("Fetch.continueRequest", { requestId }));
    };
    if (d.delay_ms <= 0) {
      act();
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      act();
    }, d.delay_ms);
    this.#timers.add(timer);
  }

  #record(page: PageTarget, p: Paused, d: Decision): void {
    const url = sanitizeUrl(p.request.url).redacted;
    const method = p.request.method;
    const v = d.verdict;
    emitSessionEvent(this.#session, page, "route", {
      level: d.outcome === "aborted" || d.outcome === "failed" ? "warning" : "info",
      text: routeEventText(d, method, url),
      // Fetch events carry no timestamp: the request was issued just now, within whatever interaction is open.
      interaction_id: this.#session.interactions.at(Date.now()) ?? null,
      data: {
        route_id: d.route.route_id,
        action: d.route.action,
        outcome: d.outcome,
        method,
        url,
        resource_type: p.resourceType,
        ...(p.networkId ? { request_id: p.networkId } : {}),
        match: d.route.matched,
        ...(v.kind === "fulfill" ? { status: v.status } : {}),
        ...(v.kind === "fail" ? { reason: v.reason } : {}),
        ...(d.delay_ms > 0 ? { delay_ms: d.delay_ms } : {}),
      },
    });
  }
}

function fetchPatterns(patterns: string[]) {
  return patterns.map((urlPattern) => ({ urlPattern, requestStage: "Request" as const }));
}

/**
 * The page-setup key prefix of the scenario guard (src/scenario/guard.ts installGuard): its pages pause every
 * request in the guard's own Fetch patterns, which a Fetch.enable from here would replace.
 */
const SCENARIO_GUARD_KEY = "scenario_guard:";

/** Whether a scenario run's guard holds this session's pages. */
export function scenarioGuarded(session: BrowserSession): boolean {
  for (const page of session.pages.values()) {
    for (const key of page.overrides.keys()) if (key.startsWith(SCENARIO_GUARD_KEY)) return true;
  }
  return false;
}

const sessions = new WeakMap<BrowserSession, SessionRoutes>();

/** The session's routing, set up on first use. */
export function sessionRoutes(session: BrowserSession): SessionRoutes {
  let routes = sessions.get(session);
  if (!routes) {
    routes = new SessionRoutes(session);
    sessions.set(session, routes);
  }
  return routes;
}

/** The session's routes if it ever routed. */
export function existingRoutes(session: BrowserSession): SessionRoutes | undefined {
  return sessions.get(session);
}
