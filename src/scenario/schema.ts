/**
 * The scenario request (`capture_browser_scenario` and `krometrail capture-browser-scenario`): a strict
 * zod schema whose output is fully defaulted. Structural failures are zod's own issues; every failure
 * with a name of its own carries `params.rule`, and ruleOf names the built-in ones, so a caller gets the
 * rule and the exact path. Deadlines are provider-owned: no timeout or limits field exists anywhere.
 */
import { z } from "zod";
import { ARTIFACT_KINDS, EVENT_FAMILIES } from "./capture.ts";
import { ToolError } from "../errors.ts";
import { scenarioIssues } from "./schema_errors.ts";
import { action, withAliases } from "./schema_actions.ts";
import { requestReplay } from "./schema_replay.ts";
import {
  cdpEndpoint,
  composeUrl,
  id,
  LIMITS,
  origin,
  originOf,
  ruleIssue,
  secretReference,
  type UrlSpec,
  urlSpec,
  value,
} from "./schema_values.ts";

export { secretReference, type UrlSpec, type Value } from "./schema_values.ts";
export { ACTION_KINDS, type ActionKind, type ScenarioAction } from "./schema_actions.ts";
export { PROVIDER_OWNED_HEADERS, type ReplayRoute } from "./schema_replay.ts";

// --- browser and environment --------------------------------------------------------------------------

const browser = z.discriminatedUnion("mode", [
  z.strictObject({
    mode: z.literal("launch"),
    executable_path: z.string().min(1).max(LIMITS.path).regex(/^[^\0]*$/, "no NUL characters").optional(),
    headless: z.boolean().default(true),
  }),
  z.strictObject({
    mode: z.literal("connect"),
    cdp_endpoint: cdpEndpoint,
    target_id: z.string().regex(
      /^[\x21-\x7e]{1,128}$/,
      "expected a CDP target id (1-128 visible characters)",
    ),
  }),
]);

function validLocale(tag: string): boolean {
  try {
    return Intl.getCanonicalLocales(tag).length === 1;
  } catch {
    return false;
  }
}

function validTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const environment = z.strictObject({
  viewport: z.strictObject({
    width: z.int().min(1).max(10_000).default(1280),
    height: z.int().min(1).max(10_000).default(720),
    device_scale_factor: z.number().min(0.5).max(4).default(1),
  }).prefault({}),
  locale: z.string().max(64).refine(validLocale, "expected a BCP 47 language tag such as en-US").default(
    "en-US",
  ),
  timezone: z.string().max(64).refine(validTimezone, "expected an IANA time zone such as UTC or Europe/Paris")
    .default("UTC"),
  color_scheme: z.enum(["light", "dark", "no-preference"]).default("light"),
  reduced_motion: z.enum(["reduce", "no-preference"]).default("reduce"),
  service_workers: z.enum(["allow", "block"]).default("block"),
});

// --- storage ------------------------------------------------------------------------------------------

const cookieName = z.string().min(1).max(4_096).refine(
  (n) => [...n].every((ch) => ch.charCodeAt(0) > 0x20 && ch.charCodeAt(0) !== 0x7f && !";=,".includes(ch)),
  "expected a cookie name (no spaces, control characters, ';', '=' or ',')",
);

const cookie = z.strictObject({
  name: cookieName,
  value,
  url: urlSpec,
  http_only: z.boolean().default(false),
  secure: z.boolean().default(false),
  same_site: z.enum(["Strict", "Lax", "None"]).default("Lax"),
}).superRefine((c, ctx) => {
  // Chrome drops a SameSite=None cookie that is not Secure; refusing it here says why.
  if (c.same_site === "None" && !c.secure) {
    ruleIssue(ctx, "invalid_value", "same_site None requires secure: true", ["same_site"]);
  }
});

const webStorage = z.array(z.strictObject({
  origin,
  entries: z.array(z.strictObject({ name: z.string().max(LIMITS.string), value })).max(10_000),
})).max(200).default([]);

const storage = z.strictObject({
  cookies: z.array(z.preprocess((c) => withAliases(c, { destination: "url" }), cookie)).max(1_000).default(
    [],
  ),
  local_storage: webStorage,
  session_storage: webStorage,
});

// --- secrets and capture ------------------------------------------------------------------------------

const secret = z.strictObject({
  secret_id: id,
  environment_variable: z.string().min(1).max(256).regex(
    /^[^=\0]+$/,
    "expected an environment variable name (no '=' or NUL)",
  ),
});

function uniqueList<T extends string>(item: z.ZodType<T>) {
  return z.array(item).max(64).superRefine((list, ctx) => {
    list.forEach((v, i) => {
      if (list.indexOf(v) !== i) {
        ruleIssue(ctx, "duplicate_capture_entry", `${v} is listed more than once`, [i]);
      }
    });
  });
}

const capture = z.strictObject({
  after_each_step: uniqueList(z.enum(ARTIFACT_KINDS)).default([]),
  at_end: uniqueList(z.enum(ARTIFACT_KINDS)).default(["url"]),
  events: uniqueList(z.enum(EVENT_FAMILIES)).default([]),
});

// --- the request --------------------------------------------------------------------------------------

/** One line per field: what tools/list shows in place of the full schema (README "Scenarios" has it all). */
const FIELD_HELP = {
  browser:
    '{mode: "launch", executable_path?, headless? (true)} | {mode: "connect", cdp_endpoint: "http://127.0.0.1:PORT", target_id}',
  start_url: 'URL | {url, query: [{name, value}]}; a value is a string or {source: "secret", secret_id}',
  allowed_origins: "exact origins; default: start_url's",
  environment:
    "{viewport: {width, height, device_scale_factor}, locale, timezone, color_scheme, reduced_motion, service_workers: allow|block}",
  actions:
    "[{step_id, action, locator | selector, ...}]: goto {url, wait_until}, click {button, click_count}, fill {value}, press {keys}, select_option {value}, check, uncheck, hover, wait_for {state}, scroll {dx, dy}, upload {files}",
  storage:
    "{cookies: [{name, value, url, http_only, secure, same_site}], local_storage | session_storage: [{origin, entries: [{name, value}]}]}",
  request_replay:
    '{mode: "exact", unmatched: "abort" | "passthrough-declared-origins", routes: [{route_id, method, request, response: {kind: "response", status, headers, body, content_type} | {kind: "redirect", status, destination} | {kind: "abort", reason}}]}',
  secrets: "[{secret_id, environment_variable}]: values come from the server's environment",
  capture:
    "{after_each_step: kinds, at_end: kinds (default [url]), events: families}; kinds: screenshot dom accessibility url history storage; families: console page-errors network websockets frames workers popups downloads",
} as const;

const scenarioShape = z.strictObject({
  browser: browser.describe(FIELD_HELP.browser),
  start_url: urlSpec.describe(FIELD_HELP.start_url),
  allowed_origins: z.array(origin).max(200).default([]).describe(FIELD_HELP.allowed_origins),
  environment: environment.prefault({}).describe(FIELD_HELP.environment),
  actions: z.array(action).min(1).max(1_000).describe(FIELD_HELP.actions),
  storage: storage.prefault({}).describe(FIELD_HELP.storage),
  request_replay: requestReplay.prefault({ mode: "disabled" }).describe(FIELD_HELP.request_replay),
  secrets: z.array(secret).max(64).default([]).describe(FIELD_HELP.secrets),
  capture: capture.prefault({}).describe(FIELD_HELP.capture),
});

type Shape = z.output<typeof scenarioShape>;

/** The origin set every navigation, storage write, request and redirect must stay inside. */
export function effectiveOrigins(s: Pick<Shape, "allowed_origins" | "start_url">): string[] {
  return s.allowed_origins.length > 0 ? [...new Set(s.allowed_origins)] : [originOf(s.start_url.url)];
}

/** Every place a URL or origin is declared, with its path. */
function declaredOrigins(s: Shape): { path: PropertyKey[]; origin: string }[] {
  const out = [{ path: ["start_url"] as PropertyKey[], origin: originOf(s.start_url.url) }];
  s.actions.forEach((a, i) => {
    if (a.action === "goto") out.push({ path: ["actions", i, "url"], origin: originOf(a.url.url) });
  });
  s.storage.cookies.forEach((c, i) =>
    out.push({ path: ["storage", "cookies", i, "url"], origin: originOf(c.url.url) })
  );
  for (const area of ["local_storage", "session_storage"] as const) {
    s.storage[area].forEach((e, i) => out.push({ path: ["storage", area, i, "origin"], origin: e.origin }));
  }
  if (s.request_replay.mode === "exact") {
    s.request_replay.routes.forEach((r, i) => {
      out.push({ path: ["request_replay", "routes", i, "request"], origin: originOf(r.request.url) });
      if (r.response.kind === "redirect") {
        out.push({
          path: ["request_replay", "routes", i, "response", "destination"],
          origin: originOf(r.response.destination.url),
        });
      }
    });
  }
  return out;
}

/** Every secret reference in the request (values, query entries, storage, replay), with its path. */
function secretUses(node: unknown, path: PropertyKey[], out: { path: PropertyKey[]; id: string }[]): void {
  if (Array.isArray(node)) {
    node.forEach((v, i) => secretUses(v, [...path, i], out));
  } else if (node && typeof node === "object") {
    const rec = node as Record<string, unknown>;
    if (rec.source === "secret" && typeof rec.secret_id === "string") {
      out.push({ path, id: rec.secret_id });
      return;
    }
    for (const [k, v] of Object.entries(rec)) secretUses(v, [...path, k], out);
  }
}

/** The secret ids a request references (sorted, unique): the capture's `scenario.secret_references`. */
export function secretReferences(s: Scenario): string[] {
  return [...new Set(secretUsesOf(s).map((u) => u.id))].sort();
}

function secretUsesOf(s: Shape): { path: PropertyKey[]; id: string }[] {
  const uses: { path: PropertyKey[]; id: string }[] = [];
  const { secrets: _declarations, ...referencing } = s;
  secretUses(referencing, [], uses);
  return uses;
}

function joined(path: readonly PropertyKey[]): string {
  return path.map(String).join(".");
}

function checkDuplicates<T>(
  ctx: z.core.$RefinementCtx,
  items: readonly T[],
  keyOf: (item: T) => string,
  pathOf: (i: number) => PropertyKey[],
  rule: string,
  describe: (key: string, firstPath: string) => string,
): void {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    const key = keyOf(item);
    const seen = first.get(key);
    if (seen === undefined) first.set(key, i);
    else ruleIssue(ctx, rule, describe(key, joined(pathOf(seen))), pathOf(i));
  });
}

function matcherUrl(spec: UrlSpec): string {
  return composeUrl(
    spec,
    (v) => v.source === "secret" ? { verbatim: secretReference(v.secret_id) } : v.value,
  );
}

function crossFieldRules(s: Shape, ctx: z.core.$RefinementCtx): void {
  const allowed = effectiveOrigins(s);
  const setName = s.allowed_origins.length > 0 ? "allowed_origins" : "the effective origin set";
  const why = s.allowed_origins.length > 0
    ? ""
    : " (allowed_origins is empty, so only start_url's origin is allowed)";
  for (const d of declaredOrigins(s)) {
    if (!allowed.includes(d.origin)) {
      ruleIssue(
        ctx,
        "origin_not_allowed",
        `origin ${d.origin} is not in ${setName} [${allowed.join(", ")}]${why}; add it to allowed_origins`,
        d.path,
      );
    }
  }

  const declared = new Set(s.secrets.map((d) => d.secret_id));
  for (const use of secretUsesOf(s)) {
    if (!declared.has(use.id)) {
      ruleIssue(
        ctx,
        "undeclared_secret",
        `secret ${use.id} referenced at ${joined(use.path)} is not declared in secrets`,
        [...use.path, "secret_id"],
      );
    }
  }

  checkDuplicates(
    ctx,
    s.actions,
    (a) => a.step_id,
    (i) => ["actions", i, "step_id"],
    "duplicate_step_id",
    (k, at) => `step_id ${k} is already used at ${at}`,
  );
  const declaredAt = (k: string, at: string) => `secret_id ${k} is already declared at ${at}`;
  checkDuplicates(
    ctx,
    s.secrets,
    (d) => d.secret_id,
    (i) => ["secrets", i, "secret_id"],
    "duplicate_secret_id",
    declaredAt,
  );
  checkDuplicates(
    ctx,
    s.secrets,
    (d) => d.environment_variable,
    (i) => ["secrets", i, "environment_variable"],
    "duplicate_secret_variable",
    (k, at) => `environment variable ${k} is already bound at ${at}`,
  );
  if (s.request_replay.mode === "exact") {
    const routes = s.request_replay.routes;
    const at = (i: number) => ["request_replay", "routes", i];
    checkDuplicates(
      ctx,
      routes,
      (r) => r.route_id,
      (i) => [...at(i), "route_id"],
      "duplicate_route_id",
      (k, p) => `route_id ${k} is already used at ${p}`,
    );
    checkDuplicates(
      ctx,
      routes,
      (r) => `${r.method} ${matcherUrl(r.request)}`,
      (i) => [...at(i), "request"],
      "duplicate_route_matcher",
      (k, p) => `${k.slice(0, 300)} is already matched by ${p}`,
    );
  }
}

export const scenarioSchema = scenarioShape.superRefine(crossFieldRules);
export type Scenario = z.output<typeof scenarioSchema>;

export { flattenIssues, ruleOf, type ScenarioIssue, scenarioIssues } from "./schema_errors.ts";

const ISSUE_LIMIT = 20;

/** Parses a request or throws `invalid_scenario` naming every problem (up to 20) by path and rule. */
export function validateScenario(input: unknown): Scenario {
  const parsed = scenarioSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const all = scenarioIssues(parsed.error.issues);
  const issues = all.slice(0, ISSUE_LIMIT);
  const first = issues[0] ?? { path: "(scenario)", rule: "invalid_value", problem: "unreadable" };
  const others = all.length - 1;
  const listed = all.length > issues.length ? ` (details.issues lists the first ${issues.length})` : "";
  const more = others > 0 ? ` and the ${others} other issue${others === 1 ? "" : "s"}${listed}` : "";
  throw new ToolError({
    code: "invalid_scenario",
    message: `${first.path}: ${first.problem}`,
    retry: "never",
    recovery: `Fix the scenario at ${first.path}${more}; nothing was run.`,
    affected: { argument: first.path },
    details: { issues, omitted_issues: all.length - issues.length },
  });
}
