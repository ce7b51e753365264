/**
 * The evidence viewer's HTTP server: 127.0.0.1 only, a port of its own (0 = any, or
 * KROMETRAIL_VIEWER_PORT), started on first use by the ViewerSlot and closed with the process. Every
 * request passes security.ts's gate first; the page's assets are string constants (page/), the data
 * comes from api.ts.
 */
import { logger } from "../log.ts";
import type { AppContext } from "../mcp/context.ts";
import { errorResponse, handleApi } from "./api.ts";
import { PAGE_ASSETS } from "./page/assets.ts";
import { gate, newToken, securityHeaders } from "./security.ts";
import type { RunningViewer } from "./slot.ts";

const CLOSE_WAIT_MS = 2_000;
const SSE_KEEPALIVE_MS = 15_000;

function withHeaders(res: Response, head: boolean): Response {
  const headers = new Headers(res.headers);
  for (const [k, v] of Object.entries(securityHeaders())) headers.set(k, v);
  return new Response(head ? null : res.body, { status: res.status, headers });
}

function viewerPort(): number {
  const raw = Deno.env.get("KROMETRAIL_VIEWER_PORT");
  if (!raw) return 0;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(
      `KROMETRAIL_VIEWER_PORT must be a port number (0-65535), not ${JSON.stringify(raw.slice(0, 20))}`,
    );
  }
  return port;
}

/** Pushes "changed" whenever a question is asked, answered or dismissed; the page then re-reads the list. */
function questionStream(app: AppContext, streams: Set<() => void>): Response {
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const enc = new TextEncoder();
      const send = (line: string) => {
        try {
          controller.enqueue(enc.encode(line));
        } catch { /* closed */ }
      };
      send("retry: 2000\n\ndata: hello\n\n");
      const off = app.humans.subscribe(() => send("data: changed\n\n"));
      const keepalive = setInterval(() => send(": keepalive\n\n"), SSE_KEEPALIVE_MS);
      stop = () => {
        off();
        clearInterval(keepalive);
        streams.delete(stop);
        try {
          controller.close();
        } catch { /* already closed */ }
      };
      streams.add(stop);
    },
    cancel() {
      stop();
    },
  });
  return new Response(body, { headers: { "content-type": "text/event-stream" } });
}

// deno-lint-ignore require-await -- async so a failed listen (port taken) rejects instead of throwing
export async function startViewer(app: AppContext): Promise<RunningViewer> {
  const token = newToken();
  const streams = new Set<() => void>();
  let port = 0;
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: viewerPort(),
    onListen: () => {},
  }, async (req) => {
    const url = new URL(req.url);
    const verdict = gate(
      {
        method: req.method,
        path: url.pathname,
        host: req.headers.get("host"),
        origin: req.headers.get("origin"),
        contentType: req.headers.get("content-type"),
      },
      token,
      port,
    );
    const head = req.method === "HEAD";
    if (!verdict.ok) {
      const { status, code, message } = verdict.refusal;
      return withHeaders(errorResponse(status, code, message), head);
    }
    const rest = verdict.rest;
    if (rest === "" && (req.method === "GET" || head)) {
      // The page's relative URLs resolve against the path: without the slash they would lose the token.
      const to = `/${token}/${url.search}`;
      return withHeaders(new Response(null, { status: 308, headers: { location: to } }), head);
    }
    if (rest.startsWith("/api/")) {
      const path = rest.slice("/api/".length);
      if (path === "questions/stream" && req.method === "GET") {
        return withHeaders(questionStream(app, streams), false);
      }
      return withHeaders(await handleApi(app, token, req, path, url), head);
    }
    const key = rest === "/" ? "/index.html" : rest;
    const asset = Object.hasOwn(PAGE_ASSETS, key) ? PAGE_ASSETS[key] : undefined;
    if (asset && req.method !== "POST") {
      return withHeaders(new Response(asset.body, { headers: { "content-type": asset.type } }), head);
    }
    return withHeaders(errorResponse(404, "not_found", "No such viewer resource."), head);
  });
  port = server.addr.port;
  const origin = `http://127.0.0.1:${port}`;
  const url = `${origin}/${token}/`;
  logger("viewer").info("evidence viewer on {origin}", { origin });
  const viewer: RunningViewer = {
    origin,
    token,
    url,
    link(to) {
      const q = new URLSearchParams();
      if (to.session_id !== undefined) q.set("session", to.session_id);
      if (to.page_id !== undefined) q.set("page", to.page_id);
      if (to.at_ms !== undefined) q.set("at", String(to.at_ms));
      if (to.ticket !== undefined) q.set("ticket", to.ticket);
      const s = q.toString();
      return s ? `${url}?${s}` : url;
    },
    async close() {
      for (const stop of [...streams]) stop();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        server.shutdown(),
        new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS))),
      ]);
      clearTimeout(timer);
    },
  };
  return viewer;
}
