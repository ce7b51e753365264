/**
 * Request replay: exact routes matched on method, URL and structured query, answered with a response, a
 * redirect or an abort. Headers the browser owns are refused; cookies go through storage seeds.
 */
import { z } from "zod";
import { bodyValue, id, ruleIssue, urlSpec, value } from "./schema_values.ts";

/** Headers the browser's network stack owns; cookies are seeded through storage, never Set-Cookie. */
export const PROVIDER_OWNED_HEADERS = [
  "connection",
  "content-length",
  "host",
  "keep-alive",
  "location",
  "proxy-connection",
  "set-cookie",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
] as const;

const headerName = z.string().min(1).max(256).regex(
  /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/,
  "expected an HTTP header name token",
).transform((n) => n.toLowerCase());

const fulfilled = z.strictObject({
  kind: z.literal("response"),
  status: z.int().min(100).max(599),
  headers: z.array(z.strictObject({ name: headerName, value })).max(100).default([]),
  body: bodyValue.optional(),
  content_type: z.string().min(1).max(256).regex(/^[^\r\n\0]*$/, "no line breaks").optional(),
}).superRefine((r, ctx) => {
  const seen = new Set<string>(r.content_type !== undefined ? ["content-type"] : []);
  r.headers.forEach((h, i) => {
    const at = ["headers", i, "name"];
    if ((PROVIDER_OWNED_HEADERS as readonly string[]).includes(h.name)) {
      const why = h.name === "set-cookie"
        ? "seed cookies through storage.cookies instead"
        : "the browser sets it from the response itself";
      ruleIssue(ctx, "provider_owned_header", `header ${h.name} is provider-owned: ${why}`, at);
    } else if (seen.has(h.name)) {
      const also = h.name === "content-type" && r.content_type !== undefined
        ? " (content_type sets it too)"
        : "";
      ruleIssue(ctx, "duplicate_header", `header ${h.name} is given more than once${also}`, at);
    }
    seen.add(h.name);
    if (h.value.source === "literal" && /[\r\n\0]/.test(h.value.value)) {
      ruleIssue(ctx, "invalid_value", "a header value has no line breaks or NUL", ["headers", i, "value"]);
    }
  });
});

const routeResponse = z.discriminatedUnion("kind", [
  fulfilled,
  z.strictObject({
    kind: z.literal("redirect"),
    status: z.literal([301, 302, 303, 307, 308]),
    destination: urlSpec,
  }),
  z.strictObject({
    kind: z.literal("abort"),
    reason: z.enum([
      "failed",
      "aborted",
      "timed_out",
      "access_denied",
      "connection_refused",
      "connection_reset",
      "internet_disconnected",
      "name_not_resolved",
      "blocked_by_client",
    ]).default("failed"),
  }),
]);

const route = z.strictObject({
  route_id: id,
  method: z.enum(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
  request: urlSpec,
  response: routeResponse,
}).superRefine((r, ctx) => {
  if (new URL(r.request.url).hash !== "") {
    ruleIssue(ctx, "invalid_value", "a request URL carries no fragment: requests never send one", [
      "request",
    ]);
  }
});
export type ReplayRoute = z.output<typeof route>;

export const requestReplay = z.discriminatedUnion("mode", [
  z.strictObject({ mode: z.literal("disabled") }),
  z.strictObject({
    mode: z.literal("exact"),
    unmatched: z.enum(["abort", "passthrough-declared-origins"]),
    routes: z.array(route).min(1).max(500),
  }),
]);
