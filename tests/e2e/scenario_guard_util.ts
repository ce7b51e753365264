/** Real Chromium for the scenario page-setup tests: a session prepared before start, and a tiny site server. */
import { fileURLToPath } from "node:url";
import type { BrowserSession } from "../../src/browser/session.ts";
import type { PageTarget } from "../../src/browser/targets.ts";
import { withScratchSession } from "./scratch_session.ts";

const ROOT = fileURLToPath(new URL("../../fixtures/site/scenario_guard/", import.meta.url));

export interface GuardSite {
  origin: string;
  port: number;
  /** Requests the server answered, by path (and query). */
  hits: string[];
  close(): Promise<void>;
}

/**
 * Serves fixtures/site/scenario_guard on 127.0.0.1 plus: /ws (a WebSocket that says "hello:<port>"),
 * /redirect?to=URL (302), /api/plain (JSON). The static server cannot upgrade WebSockets, hence this one.
 */
export function serveGuardSite(): GuardSite {
  const hits: string[] = [];
  let port = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    hits.push(url.pathname + url.search);
    if (url.pathname === "/ws") {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onopen = () => socket.send(`hello:${port}`);
      return response;
    }
    if (url.pathname === "/redirect") {
      return new Response(null, { status: 302, headers: { location: url.searchParams.get("to") ?? "/" } });
    }
    if (url.pathname === "/api/plain") return Response.json({ server: port });
    const name = url.pathname === "/" ? "index.html" : url.pathname.slice(1);
    if (!/^[a-z_]+\.(html|js)$/.test(name)) return new Response("not found", { status: 404 });
    try {
      const body = await Deno.readFile(ROOT + name);
      const type = name.endsWith(".js") ? "text/javascript" : "text/html; charset=utf-8";
      return new Response(body, { headers: { "content-type": type, "cache-control": "no-store" } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  port = server.addr.port;
  return { origin: `http://127.0.0.1:${port}`, port, hits, close: () => server.shutdown() };
}

export async function evaluate(page: PageTarget, expression: string): Promise<unknown> {
  const r = await page.send(
    "Runtime.evaluate",
    { expression, returnByValue: true, awaitPromise: true },
    15_000,
  );
  if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
  return r.result.value;
}

/** Waits until `done` holds (bounded); returns whether it did. */
export async function until(done: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  for (const end = Date.now() + timeoutMs; Date.now() < end;) {
    if (done()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return done();
}

/**
 * Launches headless Chromium, lets `prepare` install its page setups before the session adopts a page
 * (as the scenario runner does), starts the session and runs `body` on its first page.
 */
export async function withScenarioBrowser(
  prepare: (session: BrowserSession) => void,
  body: (session: BrowserSession, page: PageTarget) => Promise<void>,
): Promise<void> {
  await withScratchSession(
    { prepare, prefix: "krometrail-scenario-guard-" },
    (session) => body(session, session.page()),
  );
}
