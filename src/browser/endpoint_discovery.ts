/**
 * The discovery request of attach_browser (`/json/version` of an http endpoint), with every redirect
 * target checked against loopback here rather than left to the runtime's network permission: a
 * build run with wider permissions, or a loopback service that redirects elsewhere, must not be able
 * to point the attach at another machine.
 */
import { ToolError } from "../errors.ts";
import { parseLoopbackEndpoint } from "./lifecycle.ts";

/** Enough for a local proxy or a port forward; a longer chain is refused rather than followed. */
export const DISCOVERY_REDIRECT_LIMIT = 3;
const DISCOVERY_TIMEOUT_MS = 5_000;

function unreachable(host: string): ToolError {
  return new ToolError({
    code: "endpoint_unreachable",
    message: `No CDP endpoint answered at ${host}.`,
    retry: "safe",
    recovery: "Check that Chrome runs with --remote-debugging-port on that port, then attach again.",
    affected: { argument: "endpoint" },
  });
}

/** A redirect (or the reported websocket) leaving loopback is refused, naming where it pointed. */
function checkedHop(location: string, base: URL, hop: number, chain: string[]): URL {
  let next: URL;
  try {
    next = new URL(location, base);
  } catch {
    throw new ToolError({
      code: "invalid_endpoint",
      message: `The endpoint redirected to ${JSON.stringify(location.slice(0, 120))}, which is not a URL.`,
      retry: "never",
      recovery: "Attach to Chrome's own endpoint (http://127.0.0.1:<port>) rather than a redirecting proxy.",
      affected: { argument: "endpoint" },
      details: { redirects: chain },
    });
  }
  try {
    parseLoopbackEndpoint(next.href);
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    throw new ToolError({
      code: err.code,
      message: `The endpoint's discovery request redirected (hop ${hop}) to ${
        next.host || next.protocol
      }: ${err.message}`,
      retry: "never",
      recovery:
        "Attach to Chrome's own endpoint on 127.0.0.1 directly; a redirect must stay on this machine's loopback interface.",
      affected: { argument: "endpoint" },
      details: { redirects: [...chain, next.host].slice(0, DISCOVERY_REDIRECT_LIMIT + 1) },
    });
  }
  if (next.protocol !== "http:" && next.protocol !== "https:") {
    throw new ToolError({
      code: "invalid_endpoint",
      message:
        `The endpoint redirected (hop ${hop}) to a ${next.protocol} URL; discovery is an http request.`,
      retry: "never",
      recovery: "Attach to the browser's ws:// URL directly, or to its http://127.0.0.1:<port> endpoint.",
      affected: { argument: "endpoint" },
    });
  }
  return next;
}

/** The browser websocket URL of a loopback endpoint: ws:// as given, http(s):// through /json/version. */
export async function browserWebSocketUrl(endpoint: URL): Promise<string> {
  if (endpoint.protocol === "ws:" || endpoint.protocol === "wss:") return endpoint.href;
  const signal = AbortSignal.timeout(DISCOVERY_TIMEOUT_MS);
  const chain: string[] = [endpoint.host];
  let url = new URL("/json/version", endpoint);
  for (let hop = 0;; hop++) {
    let res: Response;
    try {
      res = await fetch(url, { redirect: "manual", signal });
    } catch {
      throw unreachable(url.host);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel();
      const location = res.headers.get("location");
      if (!location) throw unreachable(url.host);
      if (hop >= DISCOVERY_REDIRECT_LIMIT) {
        throw new ToolError({
          code: "endpoint_redirect_limit",
          message:
            `The endpoint's discovery request redirected more than ${DISCOVERY_REDIRECT_LIMIT} times (limit ${DISCOVERY_REDIRECT_LIMIT}).`,
          retry: "never",
          recovery: "Attach to Chrome's own endpoint (http://127.0.0.1:<port>) directly.",
          affected: { argument: "endpoint" },
          details: { redirects: chain, limit: DISCOVERY_REDIRECT_LIMIT },
        });
      }
      url = checkedHop(location, url, hop + 1, chain);
      chain.push(url.host);
      continue;
    }
    let body: { webSocketDebuggerUrl?: unknown };
    try {
      body = await res.json();
    } catch {
      throw unreachable(url.host);
    }
    const ws = body?.webSocketDebuggerUrl;
    if (typeof ws !== "string" || !/^wss?:\/\//i.test(ws)) {
      throw new ToolError({
        code: "endpoint_unreachable",
        message: "The endpoint did not report a browser websocket URL.",
        retry: "never",
        recovery: "Attach to the browser's own endpoint (http://127.0.0.1:<port>), not a page's.",
        affected: { argument: "endpoint" },
      });
    }
    parseLoopbackEndpoint(ws);
    return ws;
  }
}
