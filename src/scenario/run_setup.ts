/**
 * What a scenario sets up before its first step: the browser (launch with an owned temporary profile, or
 * connect to one loopback target), and the plans its page setups follow (guard, scope).
 */
import { parseLoopbackEndpoint } from "../browser/lifecycle.ts";
import { browserWebSocketUrl } from "../browser/endpoint_discovery.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import type { ScenarioHost } from "./run.ts";
import type { Scenario } from "./schema.ts";
import { type ResolvedSecret, resolveUrl, resolveValue } from "./secrets.ts";
import type { StorageSeedPlan } from "./storage_seed.ts";

export async function openBrowser(
  host: ScenarioHost,
  scenario: Scenario,
  prepare: (s: BrowserSession) => void,
): Promise<{ session: BrowserSession; page: PageTarget }> {
  const b = scenario.browser;
  if (b.mode === "launch") {
    const session = await host.browsers.start({
      temporary: true,
      headless: b.headless,
      executable: b.executable_path,
      every_nth_frame: 1,
      focus: "foreground",
      record_dom: true,
      prepare,
    });
    host.attachCapture(session);
    const page = session.selectedPageId ? session.pages.get(session.selectedPageId) : undefined;
    if (!page) {
      throw new ToolError({
        code: "page_not_found",
        message: "The launched browser has no page.",
        retry: "safe",
      });
    }
    return { session, page };
  }
  const endpoint = await browserWebSocketUrl(parseLoopbackEndpoint(b.cdp_endpoint));
  const session = await host.browsers.attach({ endpoint, every_nth_frame: 1, record_dom: true, prepare });
  host.attachCapture(session);
  const page = [...session.pages.values()].find((p) => p.targetId === b.target_id && !p.closed);
  if (!page) {
    const ids = [...session.pages.values()].filter((p) => !p.closed).map((p) => p.targetId);
    await host.browsers.stop().catch(() => {});
    throw new ToolError({
      code: "target_not_found",
      message: `The browser at ${b.cdp_endpoint} has no page target ${b.target_id}; it has ${
        ids.length === 0 ? "none" : ids.slice(0, 10).join(", ")
      }.`,
      retry: "after_recovery",
      recovery:
        "Read the target ids from <endpoint>/json/list and pass one of type page as browser.target_id.",
      affected: { argument: "browser.target_id" },
    });
  }
  session.selectedPageId = page.id;
  return { session, page };
}

/**
 * Which pages the guard and environment hold: every page of a launched browser (it is the scenario's);
 * in connect mode only the chosen target and the pages it opens, so the person's other tabs are untouched.
 */
export function scenarioScope(scenario: Scenario): ((p: PageTarget) => boolean) | undefined {
  if (scenario.browser.mode !== "connect") return undefined;
  const targetId = scenario.browser.target_id;
  const ours = new Set<string>();
  return (p) => {
    if (p.targetId === targetId || (p.openerPageId !== undefined && ours.has(p.openerPageId))) {
      ours.add(p.id);
      return true;
    }
    return false;
  };
}

export function guardPlan(scenario: Scenario, secrets: ResolvedSecret[], origins: string[]) {
  const r = scenario.request_replay;
  return {
    allowedOrigins: origins,
    blockServiceWorkers: scenario.environment.service_workers === "block",
    replay: r.mode === "disabled" ? { mode: "disabled" as const } : {
      mode: "exact" as const,
      unmatched: r.unmatched,
      routes: r.routes.map((route) => ({
        route_id: route.route_id,
        method: route.method,
        url: resolveUrl(route.request, secrets),
        response: route.response.kind === "response"
          ? {
            kind: "response" as const,
            status: route.response.status,
            headers: route.response.headers.map((h) => ({
              name: h.name,
              value: resolveValue(h.value, secrets),
            })),
            ...(route.response.body !== undefined
              ? { body: resolveValue(route.response.body, secrets) }
              : {}),
            ...(route.response.content_type !== undefined
              ? { content_type: route.response.content_type }
              : {}),
          }
          : route.response.kind === "redirect"
          ? {
            kind: "redirect" as const,
            status: route.response.status,
            location: resolveUrl(route.response.destination, secrets),
          }
          : { kind: "abort" as const, reason: route.response.reason },
      })),
    },
  };
}

/** The storage seeds with their values resolved (secrets included: seeds never become durable). */
export function seedPlan(scenario: Scenario, secrets: ResolvedSecret[]): StorageSeedPlan {
  const entries = (
    o: { origin: string; entries: { name: string; value: Parameters<typeof resolveValue>[0] }[] },
  ) => ({
    origin: o.origin,
    entries: o.entries.map((e) => ({ name: e.name, value: resolveValue(e.value, secrets) })),
  });
  return {
    cookies: scenario.storage.cookies.map((c) => ({
      name: c.name,
      value: resolveValue(c.value, secrets),
      url: resolveUrl(c.url, secrets),
      http_only: c.http_only,
      secure: c.secure,
      same_site: c.same_site,
    })),
    local_storage: scenario.storage.local_storage.map(entries),
    session_storage: scenario.storage.session_storage.map(entries),
  };
}
