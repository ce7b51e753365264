/**
 * The discovery request of attach_browser (`/json/version` of an http endpoint), with every redirect
 * target checked against loopback here rather than left to the runtime's network permission: a
 * build run with wider permissions, or a loopback service that redirects elsewhere, must not be able
 * to point the attach at another machine.
 *
 * It also keeps the spec's Electron boundary: a JavaScript runtime's inspector (Node, and so an
 * Electron app's main process started with --inspect) is refused before anything is sent to it.
 * Electron's renderer endpoint (--remote-debugging-port) answers like Chrome's and passes.
 */
import { ToolError } from "../errors.ts";
import { CdpConnection } from "./cdp.ts";
import { parseLoopbackEndpoint } from "./lifecycle.ts";

/** Enough for a local proxy or a port forward; a longer chain is refused rather than followed. */
export const DISCOVERY_REDIRECT_LIMIT = 3;
const DISCOVERY_TIMEOUT_MS = 5_000;
/** The side question a ws:// endpoint's host is asked first; a browser answers at once. */
const SIDE_QUESTION_TIMEOUT_MS = 2_000;
const PROBE_TIMEOUT_MS = 3_000;

/** What an endpoint's `/json/version` answer says it is. */
export type EndpointKind =
  | { kind: "browser"; ws: string; product?: string }
  /** A V8 inspector of a JavaScript runtime (node.js/…, Deno/…, Bun/…): no browser behind it. */
  | { kind: "runtime"; product: string }
  | { kind: "no_browser_ws"; product?: string };

/** Node's inspector says "node.js/v20.1.0" (Electron's main process too), Deno's "Deno/2.1.0". */
const RUNTIME_PRODUCT = /^(node\.js|deno|bun)\b/i;

/** Pure: the endpoint kind a `/json/version` body describes. */
export function classifyVersion(body: unknown): EndpointKind {
  const fields = typeof body === "object" && body !== null ? body as Record<string, unknown> : {};
  const product = typeof fields.Browser === "string" ? fields.Browser.slice(0, 80) : undefined;
  if (product && RUNTIME_PRODUCT.test(product)) return { kind: "runtime", product };
  const ws = fields.webSocketDebuggerUrl;
  if (typeof ws === "string" && /^wss?:\/\//i.test(ws)) return { kind: "browser", ws, product };
  return { kind: "no_browser_ws", product };
}

/** Pure: whether a `/json/list` body lists only runtime inspector targets (type "node"). */
export function listsOnlyRuntimeTargets(body: unknown): boolean {
  if (!Array.isArray(body) || body.length === 0) return false;
  return body.every((t) => typeof t === "object" && t !== null && (t as { type?: unknown }).type === "node");
}

/** Pure: a ws:// path Chrome serves (browser or page), as opposed to a runtime inspector's `/<uuid>`. */
export function isDevToolsPath(pathname: string): boolean {
  return /^\/devtools\/(browser|page)\//.test(pathname);
}

/**
 * Pure: the browser websocket to open for a given ws:// browser URL, once its host reported its own. A
 * port serves one browser, so when the two differ the given one belonged to a browser that restarted
 * (a reconnection retrying the URL the session was attached with) and the reported one is its successor.
 * A page URL, another host or port, or a reported URL off loopback keeps the given one.
 */
export function currentBrowserSocket(given: URL, reported: string): string {
  const browserPath = /^\/devtools\/browser\//;
  if (!browserPath.test(given.pathname)) return given.href;
  let next: URL;
  try {
    next = new URL(reported);
  } catch {
    return given.href;
  }
  if (next.protocol !== given.protocol || next.host !== given.host || !browserPath.test(next.pathname)) {
    return given.href;
  }
  return next.href;
}

/** The boundary error: krometrail drives renderers only and never talks to a Node process. */
export function runtimeInspectorRefused(host: string, product?: string): ToolError {
  const what = product ? `a JavaScript runtime's inspector (${product})` : "a JavaScript runtime's inspector";
  return new ToolError({
    code: "endpoint_is_node",
    message:
      `${host} is ${what}, not a browser: krometrail records and controls renderer windows only and never touches a Node.js process (nothing was sent to it).`,
    retry: "never",
    recovery:
      "For an Electron app, start it with --remote-debugging-port=<port> (or app.commandLine.appendSwitch('remote-debugging-port', '<port>') before the app is ready) and attach to http://127.0.0.1:<port>; the --inspect port is the main process, which stays out of reach.",
    affected: { argument: "endpoint" },
    ...(product ? { details: { product } } : {}),
  });
}

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
  if (endpoint.protocol === "ws:" || endpoint.protocol === "wss:") return await checkedWebSocket(endpoint);
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
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw unreachable(url.host);
    }
    const kind = classifyVersion(body);
    if (kind.kind === "runtime") throw runtimeInspectorRefused(url.host, kind.product);
    if (kind.kind === "no_browser_ws") {
      if (listsOnlyRuntimeTargets(await jsonAt(new URL("/json/list", url)))) {
        throw runtimeInspectorRefused(url.host, kind.product);
      }
      throw new ToolError({
        code: "endpoint_unreachable",
        message: "The endpoint did not report a browser websocket URL.",
        retry: "never",
        recovery: "Attach to the browser's own endpoint (http://127.0.0.1:<port>), not a page's.",
        affected: { argument: "endpoint" },
      });
    }
    parseLoopbackEndpoint(kind.ws);
    return kind.ws;
  }
}

/** One JSON answer from a loopback URL, or undefined (no answer, a redirect, not JSON): never followed. */
async function jsonAt(url: URL, timeoutMs = SIDE_QUESTION_TIMEOUT_MS): Promise<unknown> {
  try {
    const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(timeoutMs) });
    if (res.status !== 200) {
      await res.body?.cancel();
      return undefined;
    }
    return await res.json();
  } catch {
    return undefined;
  }
}

/**
 * A ws:// endpoint is used once its host's own `/json/version` has said it is no runtime inspector (as
 * given, or that host's current browser socket: currentBrowserSocket); nothing is sent over it for that. A host without that answer (Chrome's
 * chrome://inspect mode serves the websocket only) is trusted on a DevTools path; any other path is
 * asked the one harmless question, Browser.getVersion, which a runtime inspector does not know.
 */
async function checkedWebSocket(endpoint: URL): Promise<string> {
  const http = new URL(endpoint.href);
  http.protocol = endpoint.protocol === "wss:" ? "https:" : "http:";
  const version = await jsonAt(new URL("/json/version", http));
  const kind = version === undefined ? undefined : classifyVersion(version);
  if (kind?.kind === "runtime") throw runtimeInspectorRefused(endpoint.host, kind.product);
  if (kind?.kind === "browser") return currentBrowserSocket(endpoint, kind.ws);
  if (isDevToolsPath(endpoint.pathname)) return endpoint.href;
  if (kind && listsOnlyRuntimeTargets(await jsonAt(new URL("/json/list", http)))) {
    throw runtimeInspectorRefused(endpoint.host, kind.product);
  }
  await probeBrowser(endpoint);
  return endpoint.href;
}

/** Browser.getVersion over a websocket whose kind is unknown; an endpoint that is not a browser is refused. */
async function probeBrowser(endpoint: URL): Promise<void> {
  let conn: CdpConnection;
  try {
    conn = await CdpConnection.connect(endpoint.href);
  } catch {
    // Nothing to ask: the attach itself reports the refused connection.
    return;
  }
  try {
    await conn.send("Browser.getVersion", undefined, undefined, PROBE_TIMEOUT_MS);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    // "'Browser.getVersion' wasn't found" is how a V8 inspector answers a method it lacks.
    if (/wasn't found/i.test(why)) throw runtimeInspectorRefused(endpoint.host);
    throw new ToolError({
      code: "invalid_endpoint",
      message: `${endpoint.host} did not answer Browser.getVersion (${
        why.slice(0, 120)
      }): it is not a browser's CDP endpoint.`,
      retry: "never",
      recovery: "Attach to the browser's own endpoint (http://127.0.0.1:<port> of --remote-debugging-port).",
      affected: { argument: "endpoint" },
    });
  } finally {
    await conn.close().catch(() => {});
  }
}
