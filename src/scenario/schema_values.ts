/**
 * The value shapes a scenario request is built from: ids, literal-or-secret values, HTTP(S) URL specs,
 * exact origins, element targets and the loopback CDP endpoint. Each failure that has a name of its own
 * carries `params.rule` (see ruleOf in schema.ts).
 */
import { z } from "zod";

/** Bounds that keep 1 MB inputs out; no real scenario comes near them. */
export const LIMITS = {
  string: 8_192,
  url: 8_192,
  /** A replay response body: JSON fixtures are often longer than a form value. */
  body: 262_144,
  path: 4_096,
  queryEntries: 200,
  selector: 2_000,
  locatorText: 1_000,
} as const;

export const ID_PATTERN = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

export const id = z.string().regex(ID_PATTERN, {
  message: "expected an id: a letter, then up to 63 letters, digits, '.', '_' or '-'",
});

type RefineCtx = z.core.$RefinementCtx;

/** Adds a named-rule issue; schema_errors.ts flattens the unions it lands in. */
export function ruleIssue(
  ctx: RefineCtx,
  rule: string,
  message: string,
  path: PropertyKey[] = [],
): void {
  ctx.addIssue({ code: "custom", message, params: { rule }, path });
}

// --- values -------------------------------------------------------------------------------------------

const literalValue = (max: number) =>
  z.strictObject({ source: z.literal("literal"), value: z.string().max(max) });
const secretValue = z.strictObject({ source: z.literal("secret"), secret_id: id });

/** A literal string (shorthand) or `{source: "literal", value}` or `{source: "secret", secret_id}`. */
function valueOf(max: number) {
  return z.union([
    z.string().max(max).transform((value) => ({ source: "literal" as const, value })),
    z.discriminatedUnion("source", [literalValue(max), secretValue]),
  ]);
}

export const value = valueOf(LIMITS.string);
export const bodyValue = valueOf(LIMITS.body);
export type Value = z.output<typeof value>;

// --- URLs ---------------------------------------------------------------------------------------------

/** The raw authority (between "//" and the path), before the URL parser drops an empty userinfo. */
function rawAuthority(raw: string): string {
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:[/\\]*([^/\\?#]*)/.exec(raw.trim());
  return m?.[1] ?? "";
}

function hasUserinfo(raw: string, url: URL): boolean {
  return url.username !== "" || url.password !== "" || rawAuthority(raw).includes("@");
}

function parseUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** An absolute http(s) URL, normalized to its href. Never echoes the URL: it may hold credentials. */
export const httpUrl = z.string().min(1).max(LIMITS.url).transform((raw, ctx) => {
  const url = parseUrl(raw);
  if (!url) {
    ruleIssue(ctx, "invalid_value", "expected an absolute http:// or https:// URL");
    return z.NEVER;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    ruleIssue(ctx, "invalid_value", `only http and https URLs are allowed, not ${url.protocol.slice(0, 20)}`);
    return z.NEVER;
  }
  if (hasUserinfo(raw, url)) {
    ruleIssue(
      ctx,
      "url_userinfo",
      "the URL carries raw userinfo credentials (user:pass@ or user@), which are rejected; " +
        "declare a secret and pass it as a structured query entry instead",
    );
    return z.NEVER;
  }
  return url.href;
});

const queryEntry = z.strictObject({ name: z.string().min(1).max(LIMITS.string), value });

/** A URL string, or `{url, query}` whose ordered entries may reference secrets. */
export const urlSpec = z.union([
  httpUrl.transform((url) => ({ url, query: [] as z.output<typeof queryEntry>[] })),
  z.strictObject({
    url: httpUrl,
    query: z.array(queryEntry).max(LIMITS.queryEntries).default([]),
  }),
]);
export type UrlSpec = z.output<typeof urlSpec>;

/** What a rendered query value is: text to encode, or text written verbatim (a `${secret:ID}` reference). */
export type RenderedValue = string | { verbatim: string };

/**
 * The URL a spec stands for: its own query kept as written, then each entry appended with URLSearchParams
 * encoding. `render` gives each entry's value (resolved, or verbatim as a reference in durable output).
 */
export function composeUrl(spec: UrlSpec, render: (v: Value) => RenderedValue): string {
  const url = new URL(spec.url);
  if (spec.query.length === 0) return url.href;
  const parts = spec.query.map((q) => {
    const name = new URLSearchParams([[q.name, ""]]).toString().slice(0, -1);
    const rendered = render(q.value);
    const encoded = typeof rendered === "string"
      ? new URLSearchParams([["", rendered]]).toString().slice(1)
      : rendered.verbatim;
    return `${name}=${encoded}`;
  });
  const own = url.search.length > 1 ? url.search.slice(1) + "&" : "";
  url.search = own + parts.join("&");
  return url.href;
}

/** The form a secret takes in durable output. */
export function secretReference(secretId: string): string {
  return `\${secret:${secretId}}`;
}

/** An exact origin, `scheme://host[:port]`, exactly as `new URL(x).origin` writes it. */
export const origin = z.string().min(1).max(LIMITS.url).transform((raw, ctx) => {
  const url = parseUrl(raw);
  const expected = "expected an exact origin scheme://host[:port] (lower-case host, no default port, " +
    "no path, trailing slash, query or fragment)";
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    ruleIssue(ctx, "invalid_value", `${expected}, with scheme http or https`);
    return z.NEVER;
  }
  if (hasUserinfo(raw, url)) {
    ruleIssue(ctx, "url_userinfo", "an origin carries no userinfo credentials (user:pass@)");
    return z.NEVER;
  }
  if (raw !== url.origin) {
    ruleIssue(ctx, "invalid_value", `${expected}: write ${JSON.stringify(url.origin.slice(0, 300))}`);
    return z.NEVER;
  }
  return url.origin;
});

export function originOf(url: string): string {
  return new URL(url).origin;
}

// --- targets ------------------------------------------------------------------------------------------

/** Our semantic locator (src/mcp/schemas.ts `locator`) without scope and frame. */
export const locator = z.strictObject({
  role: z.string().min(1).max(64).optional(),
  name: z.string().max(LIMITS.locatorText).optional(),
  label: z.string().max(LIMITS.locatorText).optional(),
  text: z.string().max(LIMITS.locatorText).optional(),
  test_id: z.string().min(1).max(256).optional(),
  exact: z.boolean().optional(),
}).superRefine((loc, ctx) => {
  if (
    loc.role === undefined && loc.label === undefined && loc.text === undefined && loc.test_id === undefined
  ) {
    ruleIssue(ctx, "target_required", "a locator needs role (with an optional name), label, text or test_id");
  }
});
export type ScenarioLocator = z.output<typeof locator>;

export const selector = z.string().min(1).max(LIMITS.selector);

export const targetFields = { locator: locator.optional(), selector: selector.optional() };

/** Exactly one of locator or selector (or at most one when the target is optional). */
export function checkTarget(
  t: { locator?: unknown; selector?: unknown },
  ctx: RefineCtx,
  required: boolean,
): void {
  if (t.locator !== undefined && t.selector !== undefined) {
    ruleIssue(ctx, "target_conflict", "give either locator or selector, not both");
  } else if (required && t.locator === undefined && t.selector === undefined) {
    ruleIssue(ctx, "target_required", "this action needs a target: give locator or selector");
  }
}

// --- browser endpoint ---------------------------------------------------------------------------------

function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** A CDP endpoint on this machine with an explicit port: http://host:port or ws://host:port/devtools/... */
export const cdpEndpoint = z.string().min(1).max(LIMITS.url).transform((raw, ctx) => {
  const url = parseUrl(raw);
  if (!url || (url.protocol !== "http:" && url.protocol !== "ws:")) {
    ruleIssue(
      ctx,
      "invalid_value",
      "expected an http:// or ws:// CDP endpoint such as http://127.0.0.1:9222",
    );
    return z.NEVER;
  }
  if (hasUserinfo(raw, url)) {
    ruleIssue(ctx, "url_userinfo", "the CDP endpoint carries userinfo credentials (user:pass@)");
    return z.NEVER;
  }
  if (!isLoopbackHost(url.hostname)) {
    ruleIssue(
      ctx,
      "endpoint_not_loopback",
      `CDP endpoint host ${JSON.stringify(url.hostname.slice(0, 300))} is not loopback; ` +
        "use 127.0.0.1 (any 127.x.x.x), localhost or [::1]",
    );
    return z.NEVER;
  }
  // The parser drops a default port (":80"), so the explicit port is read from the raw authority.
  const port = /:(\d+)$/.exec(rawAuthority(raw))?.[1];
  if (port === undefined || Number(port) < 1 || Number(port) > 65_535) {
    ruleIssue(
      ctx,
      "endpoint_port_required",
      "the CDP endpoint needs an explicit port 1-65535, e.g. http://127.0.0.1:9222",
    );
    return z.NEVER;
  }
  return url.href;
});
