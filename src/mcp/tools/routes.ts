import { z } from "zod";
import {
  checkRoute,
  REASON_NAMES,
  type Route,
  ROUTE_ACTIONS,
  ROUTE_LIMITS,
  utf8Bytes,
} from "../../devtools/route_match.ts";
import { existingRoutes, scenarioGuarded, sessionRoutes } from "../../devtools/routes.ts";
import type { BrowserSession } from "../../browser/session.ts";
import { ToolError } from "../../errors.ts";
import { defineTool, type Tool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";
import { advertiseAs } from "../schema_compact.ts";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const;
const headerName = z.string().min(1).max(256).regex(
  /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/,
  "an HTTP header name (token characters only)",
);
const headerValue = z.string().max(8192).regex(/^[^\r\n\0]*$/, "a header value without CR, LF or NUL");
const urlPattern = z.string().min(1).max(ROUTE_LIMITS.pattern_chars);

/** What a route looks like in results: its settings and match count, never the body itself. */
function routeView(r: Route): Record<string, unknown> {
  return {
    route_id: r.route_id,
    url: r.url,
    ...(r.method ? { method: r.method } : {}),
    action: r.action,
    ...(r.status !== undefined ? { status: r.status } : {}),
    ...(r.content_type !== undefined ? { content_type: r.content_type } : {}),
    ...(r.body !== undefined ? { body_bytes: utf8Bytes(r.body) } : {}),
    ...(r.headers?.length ? { header_names: r.headers.map((h) => h.name) } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.delay_ms !== undefined ? { delay_ms: r.delay_ms } : {}),
    ...(r.count !== undefined ? { count: r.count } : {}),
    ...(r.times !== undefined ? { times: r.times } : {}),
    page_id: r.page_id ?? null,
    matched: r.matched,
  };
}

function routeLine(r: Route): string {
  const what = r.action === "fulfill"
    ? `${r.status}${r.content_type ? ` ${r.content_type}` : ""}${r.body ? ` (${utf8Bytes(r.body)} B)` : ""}`
    : r.action === "abort"
    ? r.reason
    : r.action === "fail_after"
    ? `let ${r.count} through, then ${r.status ?? r.reason}`
    : "";
  const extras = [
    r.delay_ms !== undefined && r.action !== "delay"
      ? `after ${r.delay_ms}ms`
      : r.delay_ms
      ? `${r.delay_ms}ms`
      : "",
    r.times !== undefined ? `times ${r.times}` : "",
    r.page_id ? `page ${r.page_id}` : "every page",
  ].filter(Boolean);
  return `${r.route_id} ${r.action} ${r.method ?? "any method"} ${r.url}${what ? ` ${what}` : ""} (${
    extras.join(", ")
  }) — ${r.matched} matched`;
}

function inScenario(session: BrowserSession): ToolError {
  return new ToolError({
    code: "routes_unavailable_in_scenario",
    message:
      "This browser session runs a scenario, whose network guard owns request interception on its pages; a route would replace the guard's patterns.",
    retry: "after_recovery",
    recovery:
      "Declare mocked responses in the scenario's replay routes instead, or route requests in an interactive session after the scenario has finished.",
    affected: { session_id: session.id },
  });
}

function routeNotFound(session: BrowserSession, argument: string, value: string): ToolError {
  const ids = existingRoutes(session)?.table.list().map((r) => r.route_id) ?? [];
  return new ToolError({
    code: "route_not_found",
    message: `No route in this session has ${argument} ${JSON.stringify(value.slice(0, 200))}.`,
    retry: "never",
    recovery: "Call list_routes for the routes in force (a route with times is removed once used up).",
    affected: { session_id: session.id, argument },
    details: { route_ids: ids.slice(0, ROUTE_LIMITS.routes) },
  });
}

function withWarnings(text: string, structured: Record<string, unknown>, warnings: string[]) {
  if (warnings.length === 0) return output(text, structured);
  return output([text, ...warnings.map((w) => `warning ${w}`)].join("\n"), { ...structured, warnings });
}

/** route_requests, list_routes, unroute: request routing through the Fetch domain (devtools/routes.ts). */
export const routeTools: Tool[] = [
  defineTool({
    name: "route_requests",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.route_requests,
    description:
      "Mock, block or slow requests on every page of the session (later ones too) or only page_id. url: full URL, path on any origin (/api/items) or Playwright glob (* in a segment, ** across, {a,b}; the query counts: end with * to allow one). action: fulfill (status, headers, body or json), abort (reason), delay (delay_ms, then the real request) or fail_after (let count through, then fail). The newest matching route decides; each routed request is a route event.",
    input: z.strictObject({
      url: urlPattern,
      method: z.enum(METHODS).optional().describe("Default any"),
      action: z.enum(ROUTE_ACTIONS),
      status: z.number().int().min(200).max(599).optional().describe("fulfill (default 200) or fail_after"),
      headers: advertiseAs(
        z.union([
          z.record(headerName, headerValue),
          z.array(z.strictObject({ name: headerName, value: headerValue })).max(ROUTE_LIMITS.headers),
        ]).describe("{name: value} or [{name, value}]"),
        { type: ["object", "array"], description: "{name: value} or [{name, value}]" },
      ).optional(),
      body: z.string().max(ROUTE_LIMITS.body_bytes).optional().describe("Text"),
      json: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional().describe(
        "Body as JSON; sets content-type",
      ),
      content_type: z.string().max(256).regex(/^[^\r\n\0]*$/).optional(),
      reason: z.enum(REASON_NAMES).optional().describe("Default failed"),
      delay_ms: z.number().int().min(0).optional().describe("Also delays fulfill/abort"),
      count: z.number().int().min(0).max(ROUTE_LIMITS.count).optional().describe(
        "fail_after: requests let through first",
      ),
      times: z.number().int().min(1).max(ROUTE_LIMITS.times).optional().describe("Removed after N matches"),
      page_id: pageId.optional(),
    }),
    annotations: { openWorldHint: false },
    handler: async (args, app) => {
      const session = app.browsers.require();
      if (scenarioGuarded(session)) throw inScenario(session);
      if (args.page_id !== undefined) session.page(args.page_id);
      const spec = checkRoute(args);
      const routes = sessionRoutes(session);
      const { route, warnings } = await routes.add(spec);
      const active = routes.table.size;
      return withWarnings(
        `route ${routeLine(route)}\n${active} route(s) in force; the newest matching one decides`,
        { route: routeView(route), active_routes: active },
        warnings,
      );
    },
  }),
  defineTool({
    name: "list_routes",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.list_routes,
    description:
      "Routes in force in this session, newest (first to decide) first, with how many requests each matched.",
    input: z.strictObject({}),
    annotations: { readOnlyHint: true },
    handler: (_args, app) => {
      const session = app.browsers.require();
      const routes = (existingRoutes(session)?.table.list() ?? []).reverse();
      const lines = [
        routes.length === 0 ? "no routes" : `${routes.length} route(s), newest first:`,
        ...routes.map(routeLine),
      ];
      return Promise.resolve(
        output(lines.join("\n"), { routes: routes.map(routeView), total: routes.length }),
      );
    },
  }),
  defineTool({
    name: "unroute",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.unroute,
    description: "Remove routes: one by route_id, every route with exactly this url pattern, or all: true.",
    input: z.strictObject({
      route_id: z.string().max(16).optional(),
      url: urlPattern.optional(),
      all: z.literal(true).optional(),
    }),
    annotations: { destructiveHint: true, idempotentHint: true },
    handler: async (args, app) => {
      const given = (["route_id", "url", "all"] as const).filter((k) => args[k] !== undefined);
      if (given.length !== 1) {
        throw new ToolError({
          code: "invalid_arguments",
          message: given.length === 0
            ? "Invalid arguments for unroute: give route_id, url or all: true."
            : `Invalid arguments for unroute: give one of route_id, url, all (got ${given.join(", ")}).`,
          retry: "never",
          recovery: "Call list_routes for route ids, then unroute one by route_id, or all: true.",
          affected: { argument: given[1] ?? "route_id" },
        });
      }
      const session = app.browsers.require();
      const routes = existingRoutes(session);
      const which = args.route_id !== undefined
        ? (r: Route) => r.route_id === args.route_id
        : args.url !== undefined
        ? (r: Route) => r.url === args.url
        : () => true;
      const { removed, warnings } = routes ? await routes.remove(which) : { removed: [], warnings: [] };
      if (removed.length === 0 && args.all !== true) {
        throw args.route_id !== undefined
          ? routeNotFound(session, "route_id", args.route_id)
          : routeNotFound(session, "url", args.url ?? "");
      }
      const remaining = routes?.table.size ?? 0;
      return withWarnings(
        `removed ${removed.length === 0 ? "nothing" : removed.join(", ")}; ${remaining} route(s) left`,
        { removed, remaining },
        warnings,
      );
    },
  }),
];
