import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type InputRequiredResult,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  ResourceTemplate,
  type ServerContext,
} from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import { z } from "zod";
import { asToolError, ToolError } from "../errors.ts";
import { EVIDENCE_SCHEME, evidenceNotFound } from "../store/instance.ts";
import { readDownload } from "../browser/downloads.ts";
import { frameBytes } from "../capture/frames.ts";
import { logger } from "../log.ts";
import type { AppContext } from "./context.ts";
import {
  buildCatalogue,
  type Catalogue,
  type Conditions,
  describeTool,
  type ToolDescriptor,
} from "./registry.ts";
import { CONVENTIONS } from "./schemas.ts";
import { markPhase, timedCall } from "../phase_timing.ts";
import { toCallToolResult } from "./response.ts";
import type { Tool, ToolCall } from "./define_tool.ts";
import { encodeBase64 } from "./base64.ts";
import { LineLimitedStdioTransport } from "./stdio_limits.ts";
import { warmTemporal } from "../temporal/warm.ts";

const log = logger("mcp");

/** Modern tools/list pages: at most 8 tools and 192 KiB of serialized result each. */
export const PAGE_TOOL_LIMIT = 8;
export const PAGE_BYTE_LIMIT = 192 * 1024;
const PRIVATE_60S = { ttlMs: 60_000, cacheScope: "private" as const };
const PRIVATE_0 = { ttlMs: 0, cacheScope: "private" as const };

const SERVER_INSTRUCTIONS =
  "krometrail drives Chrome over CDP and records what happened. Start with start_browser, then navigate_page, " +
  "snapshot_page for refs, and click/fill/press_keys by ref. Every action returns a live observation with an " +
  "interaction_id and a screenshot resource (krometrail://evidence/...). " + CONVENTIONS;

export interface PagedCatalogue {
  descriptors: ToolDescriptor[];
  /** Offsets where each modern page starts. */
  pageStarts: number[];
  key: string;
}

/** Packs the name-sorted catalogue greedily into pages under both limits. */
export function paginate(catalogue: Catalogue, nonce: string): PagedCatalogue {
  const descriptors = catalogue.tools.map((tool) => describeTool(tool));
  const pageStarts: number[] = [];
  let i = 0;
  const envelope = 200; // nextCursor, cache and _meta fields around the tools array
  while (i < descriptors.length) {
    pageStarts.push(i);
    let bytes = envelope;
    let n = 0;
    while (i < descriptors.length && n < PAGE_TOOL_LIMIT) {
      const size = new TextEncoder().encode(JSON.stringify(descriptors[i])).byteLength + 1;
      if (n > 0 && bytes + size > PAGE_BYTE_LIMIT) break;
      bytes += size;
      n++;
      i++;
    }
  }
  return { descriptors, pageStarts, key: `${nonce}|${catalogue.key}` };
}

function encodeCursor(key: string, page: number): string {
  return btoa(JSON.stringify({ k: key, p: page })).replace(/=+$/, "");
}

function decodeCursor(cursor: string, key: string, pages: number): number {
  try {
    const parsed = JSON.parse(atob(cursor));
    if (parsed && parsed.k === key && Number.isInteger(parsed.p) && parsed.p > 0 && parsed.p < pages) {
      return parsed.p;
    }
  } catch { /* fall through */ }
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    "Invalid cursor: it does not belong to this server process and configuration. Restart tools/list without a cursor.",
  );
}

function evidencePathOf(uri: string): string {
  if (!uri.startsWith(EVIDENCE_SCHEME)) return "";
  try {
    return decodeURIComponent(uri.slice(EVIDENCE_SCHEME.length));
  } catch {
    // A truncated or non-UTF-8 escape (e.g. %E0%A4%A) names no resource at all; say so, not "internal".
    throw new ToolError({
      code: "invalid_uri",
      message: `The resource URI ${uri.slice(0, 200)} has malformed percent-encoding.`,
      retry: "never",
      recovery:
        `Use the URI exactly as a tool returned it (${EVIDENCE_SCHEME}<kind>/<file>); every % must start a ` +
        "valid UTF-8 escape such as %2F.",
    });
  }
}

/** Frames come from the capture index and segments; everything else from the instance's files. */
async function readEvidence(app: AppContext, path: string): Promise<{ bytes: Uint8Array; mimeType: string }> {
  const frame = /^frames\/([0-9a-f-]{36})\/(\d+)\.jpg$/.exec(path);
  if (frame) {
    await app.recorder.flush();
    const bytes = frameBytes(app.recorder.reader(), frame[1], Number(frame[2]));
    if (!bytes) throw evidenceNotFound(path);
    return { bytes, mimeType: "image/jpeg" };
  }
  // Downloads are served from the live managed session only (spec: MCP protocol and discovery).
  const download = /^downloads\/([A-Za-z0-9_.-]{1,80})$/.exec(path);
  if (download) return await readDownload(app.browsers.current, download[1]);
  return await app.store.readEvidence(path);
}

/** Startup facts that decide conditional capabilities. */
export function conditionsOf(app: AppContext): Conditions {
  const video = app.temporal.video;
  return {
    "temporal-video": video.available
      ? { available: true }
      : { available: false, reason: `ffmpeg not qualified: ${video.reason}` },
  };
}

type Era = "legacy" | "modern";

/** What the client declared: per request on the 2026-07-28 envelope, at initialize on a 2025 connection. */
function clientCapabilitiesOf(mcp: McpServer, era: Era, ctx: ServerContext): ClientCapabilities | undefined {
  if (era === "modern") {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    return envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  }
  return mcp.server.getClientCapabilities();
}

/** One tools/call: the tool runs with its request's context; an input_required round replaces its output. */
async function callTool(
  mcp: McpServer,
  era: Era,
  tool: Tool,
  app: AppContext,
  args: Record<string, unknown>,
  ctx: ServerContext,
): Promise<ReturnType<typeof toCallToolResult> | InputRequiredResult> {
  let input: InputRequiredResult | undefined;
  const call: ToolCall = {
    era,
    ctx,
    signal: ctx.mcpReq.signal,
    clientCapabilities: clientCapabilitiesOf(mcp, era, ctx),
    ...(era === "legacy"
      ? {
        completeElicitation: (id: string) =>
          mcp.server.createElicitationCompletionNotifier(id, { relatedRequestId: ctx.mcpReq.id })(),
      }
      : {}),
    requireInput(result, placeholder) {
      input = result;
      return placeholder;
    },
  };
  try {
    return await timedCall(tool.name, async () => {
      const out = await tool.run(args, app, call);
      if (input && !out.isError) return input;
      const t = performance.now();
      const result = toCallToolResult(out);
      markPhase("to_call_tool_result", t);
      return result;
    });
  } finally {
    warmUpOnce();
  }
}

let warmUpStarted = false;

/**
 * The first artifact request's cold start is paid in the background (temporal/warm.ts: small turns that
 * let tool calls in; it writes and prints nothing), from the end of the first tool call on: started at
 * connect, it held the first call back (measured up to 0.3-0.5 s on a loaded 2-core machine), and the
 * first call is typically start_browser, whose wait for Chrome leaves this thread idle.
 */
function warmUpOnce(): void {
  if (warmUpStarted) return;
  warmUpStarted = true;
  setTimeout(() => {
    warmTemporal().catch((err) => log.debug("warm-up failed: {message}", { message: String(err) }));
  }, 0);
}

function buildServer(app: AppContext, paged: PagedCatalogue, era: Era): McpServer {
  const catalogue = buildCatalogue(conditionsOf(app));
  const mcp = new McpServer(
    { name: "krometrail", version: app.version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions: SERVER_INSTRUCTIONS,
      cacheHints: {
        "tools/list": PRIVATE_60S,
        "resources/templates/list": PRIVATE_60S,
        "server/discover": PRIVATE_0,
        "resources/list": PRIVATE_0,
        "resources/read": PRIVATE_0,
      },
    },
  );
  // Arguments are validated by our own strict schemas so failures become structured ToolErrors.
  const passthrough = z.looseObject({});
  for (const tool of catalogue.tools) {
    mcp.registerTool(
      tool.name,
      { description: tool.description, inputSchema: passthrough, annotations: tool.annotations },
      (args: Record<string, unknown>, ctx: ServerContext) => callTool(mcp, era, tool, app, args, ctx),
    );
  }
  mcp.server.setRequestHandler("tools/list", (request) => {
    const cursor = request.params?.cursor;
    if (era === "legacy") {
      if (cursor !== undefined) {
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          "Invalid cursor: this protocol version lists the whole catalogue in one response; omit the cursor.",
        );
      }
      return { tools: paged.descriptors };
    }
    const pages = paged.pageStarts.length;
    const page = cursor === undefined ? 0 : decodeCursor(cursor, paged.key, pages);
    const start = paged.pageStarts[page] ?? 0;
    const end = paged.pageStarts[page + 1] ?? paged.descriptors.length;
    return {
      tools: paged.descriptors.slice(start, end),
      ...(page + 1 < pages ? { nextCursor: encodeCursor(paged.key, page + 1) } : {}),
    };
  });
  mcp.registerResource(
    "evidence",
    new ResourceTemplate(`${EVIDENCE_SCHEME}{+path}`, { list: undefined }),
    {
      title: "Evidence",
      description: "Screenshots, frames and artifacts returned by tools; valid for this server process.",
    },
    async (uri: URL) => {
      try {
        const { bytes, mimeType } = await readEvidence(app, evidencePathOf(uri.href));
        return { contents: [{ uri: uri.href, mimeType, blob: encodeBase64(bytes) }] };
      } catch (err) {
        const e = asToolError(err);
        throw new ProtocolError(-32002 as ProtocolErrorCode, `${e.message} ${e.recovery ?? ""}`.trim(), {
          ...e.toJSON(),
          uri: uri.href.slice(0, 300),
        });
      }
    },
  );
  mcp.server.onerror = (err: Error) => {
    const message = err.message.slice(0, 300);
    // A client's late reply to a request we already gave up on (ask_human's gate cut an elicitation short).
    if (err.message.startsWith(LATE_REPLY)) log.info("late reply ignored: {message}", { message });
    else log.warn("protocol error: {message}", { message });
  };
  return mcp;
}

/** The SDK's words for a response whose request it no longer tracks (timed out or cancelled). */
const LATE_REPLY = "Received a response for an unknown message ID";

/** Serves MCP on stdio until the client closes stdin; resolves when the connection ends. */
export function serveMcp(app: AppContext): Promise<void> {
  const paged = paginate(buildCatalogue(conditionsOf(app)), crypto.randomUUID().slice(0, 8));
  return new Promise((resolve) => {
    let closed = false;
    const done = () => {
      if (!closed) {
        closed = true;
        resolve();
      }
    };
    serveStdio(({ era }: { era: Era }) => {
      const server = buildServer(app, paged, era);
      server.server.onclose = done;
      return server;
    }, {
      transport: new LineLimitedStdioTransport(),
      onerror: (err: Error) => log.warn("transport error: {message}", { message: err.message.slice(0, 300) }),
    });
  });
}
