import { z } from "zod";
import { cdpMessage } from "../../browser/cdp.ts";
import { ToolError } from "../../errors.ts";
import { BODY_FULL_CAP_CHARS, fullBody, type RawBody, summarizeBody } from "../../devtools/body_summary.ts";
import { describeRequest, requestText } from "../../devtools/network_detail.ts";
import { NETWORK_LOG_LIMITS, networkLogOf, type RequestDetail } from "../../browser/network_log.ts";
import { sessionResolver } from "../../browser/source_maps.ts";
import { pageDocument } from "../../browser/page_document.ts";
import type { BrowserSession } from "../../browser/session.ts";
import type { Tool } from "../define_tool.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { pageId } from "../schemas.ts";

const FIND_IDS = 'query_browser_events with kinds ["request", "request_failed"] lists request_id values';

function notFound(requestId: string, why: "aged_out" | "unknown" | "other_page", other?: string): ToolError {
  const id = JSON.stringify(requestId.slice(0, 64));
  const message = why === "aged_out"
    ? `Request ${id} aged out of the in-memory log, which keeps the last ${NETWORK_LOG_LIMITS.max_requests} requests of the session.`
    : why === "other_page"
    ? `Request ${id} belongs to page ${other}, not the page_id given.`
    : `No request ${id} in this browser session's log.`;
  return new ToolError({
    code: "request_not_found",
    message,
    retry: "never",
    recovery: why === "other_page"
      ? `Pass page_id ${other}, or omit page_id.`
      : `${FIND_IDS}; detail is kept in memory for the live session only (pages that closed included, until they age out), not for sessions that ended or requests made before this server started recording.`,
    details: { request_id: requestId.slice(0, 64), reason: why, ...(other ? { page_id: other } : {}) },
  });
}

function bodyUnavailable(e: RequestDetail, reason: string, why: string): ToolError {
  return new ToolError({
    code: "body_unavailable",
    message: `The body of request ${e.request_id} cannot be read: ${why}.`,
    retry: reason === "in_flight" ? "safe" : "never",
    recovery: reason === "in_flight"
      ? "Retry once the request has finished, or omit body for its metadata."
      : "Omit body for the request's metadata (status, timing, headers); bodies are read from the live page only and never stored.",
    affected: { page_id: e.page_id },
    details: { request_id: e.request_id, reason },
  });
}

async function readBody(session: BrowserSession, e: RequestDetail): Promise<RawBody> {
  const page = session.pages.get(e.page_id);
  if (!page || page.closed) {
    throw bodyUnavailable(
      e,
      "page_closed",
      `page ${e.page_id} is closed, and bodies live only in its renderer`,
    );
  }
  if (e.state === "pending") throw bodyUnavailable(e, "in_flight", "the response has not finished loading");
  if (e.state === "failed") throw bodyUnavailable(e, "failed", `the request failed (${e.failure?.error})`);
  try {
    return await page.send("Network.getResponseBody", { requestId: e.request_id });
  } catch (err) {
    throw bodyUnavailable(
      e,
      "not_buffered",
      `Chrome no longer holds it (${
        cdpMessage(err).slice(0, 160)
      }): redirects and bodies over 2 MiB are not kept, and a page that navigated away may have dropped it`,
    );
  }
}

/**
 * A page_id must name a page this session had: one that never existed is page_not_found, while a closed
 * one still answers from the log (its requests' detail outlives it until they age out).
 */
function knownPage(session: BrowserSession, pageId: string): void {
  try {
    session.page(pageId);
  } catch (err) {
    if (!(err instanceof ToolError && err.code === "page_closed")) throw err;
  }
}

/** get_network_request: one request's detail from the live session's in-memory log. */
export const networkTools: Tool[] = [
  defineTool({
    name: "get_network_request",
    capability: "devtools",
    output: OUTPUT_SCHEMAS.get_network_request,
    description:
      "One request in detail: method, URL, status, protocol, timing, sizes, cache, source-mapped initiator, headers (credentials redacted); body from the live page, never stored.",
    input: z.strictObject({
      request_id: z.string().min(1).max(128).describe("From query_browser_events"),
      page_id: pageId.optional().describe("Default: the page that made it"),
      query: z.boolean().optional().describe(
        "Show query values (sensitive keys stay redacted)",
      ),
      body: z.union([z.enum(["summary", "full", "none"]), z.boolean()]).optional().describe(
        `summary (or true: JSON shape, text head), full (≤ ${BODY_FULL_CAP_CHARS} chars), none (or false; default)`,
      ),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const session = app.browsers.require();
      if (args.page_id !== undefined) knownPage(session, args.page_id);
      const log = networkLogOf(session);
      const hit = log?.lookup(args.request_id, args.page_id) ?? { reason: "unknown" as const };
      if (!hit.found) throw notFound(args.request_id, hit.reason, hit.page_id);
      const e = hit.found;
      const page = session.pages.get(e.page_id);
      // Inline-script frames map through the page's own document while it still shows the same one.
      const document = page && !page.closed ? pageDocument(page, log) : undefined;
      const result = await describeRequest(e, args.query ?? false, sessionResolver(session), document);
      const body = args.body === true ? "summary" : args.body;
      if (body === "summary" || body === "full") {
        const raw = await readBody(session, e);
        const mime = e.response?.mime_type ?? "";
        result.body = body === "full" ? fullBody(raw, mime) : summarizeBody(raw, mime);
      }
      return output(requestText(result), result);
    },
  }),
];
