import { assert, assertEquals, assertRejects } from "../../assert.ts";
import {
  browserWebSocketUrl,
  classifyVersion,
  currentBrowserSocket,
  isDevToolsPath,
  listsOnlyRuntimeTargets,
} from "../../../src/browser/endpoint_discovery.ts";
import { ToolError } from "../../../src/errors.ts";

// Shapes as the real endpoints answer them (Node 20's inspector, Deno's, Chromium 156, an Electron 28 app).
const NODE_VERSION = { "Browser": "node.js/v20.20.2", "Protocol-Version": "1.1" };
const DENO_VERSION = { "Browser": "Deno/2.9.6", "Protocol-Version": "1.3", "V8-Version": "15.0.245.2-rusty" };
const CHROME_VERSION = {
  "Browser": "Chrome/156.0.8078.114",
  "Protocol-Version": "1.3",
  "webSocketDebuggerUrl": "ws://127.0.0.1:9222/devtools/browser/2b8db7ac",
};
const ELECTRON_VERSION = {
  "Browser": "Chrome/120.0.6099.56",
  "Protocol-Version": "1.3",
  "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) my-app/1.0.0 " +
    "Chrome/120.0.6099.56 Electron/28.0.0 Safari/537.36",
  "webSocketDebuggerUrl": "ws://127.0.0.1:9222/devtools/browser/0c5b6f1e",
};
const NODE_LIST = [{ id: "51d62e24", type: "node", title: "node[18504]", url: "file://" }];

Deno.test("a runtime inspector's /json/version is told from a browser's, Electron's renderer endpoint included", () => {
  assertEquals(classifyVersion(NODE_VERSION), { kind: "runtime", product: "node.js/v20.20.2" });
  assertEquals(classifyVersion(DENO_VERSION), { kind: "runtime", product: "Deno/2.9.6" });
  assertEquals(classifyVersion(CHROME_VERSION), {
    kind: "browser",
    ws: CHROME_VERSION.webSocketDebuggerUrl,
    product: "Chrome/156.0.8078.114",
  });
  const electron = classifyVersion(ELECTRON_VERSION);
  assertEquals(electron.kind, "browser");
  // A runtime name wins even beside a websocket field: the boundary never rests on a missing field.
  assertEquals(
    classifyVersion({ ...NODE_VERSION, webSocketDebuggerUrl: "ws://127.0.0.1:9229/x" }).kind,
    "runtime",
  );
  for (const odd of [null, "text", 3, [], {}, { Browser: 7 }, { webSocketDebuggerUrl: "http://x" }]) {
    assertEquals(classifyVersion(odd).kind, "no_browser_ws", JSON.stringify(odd));
  }
});

Deno.test("a /json/list of only node targets marks a runtime; a browser's list does not", () => {
  assertEquals(listsOnlyRuntimeTargets(NODE_LIST), true);
  assertEquals(listsOnlyRuntimeTargets([{ type: "page" }, { type: "service_worker" }]), false);
  assertEquals(listsOnlyRuntimeTargets([{ type: "node" }, { type: "page" }]), false);
  assertEquals(listsOnlyRuntimeTargets([]), false);
  assertEquals(listsOnlyRuntimeTargets({ type: "node" }), false);
});

Deno.test("Chrome's websocket paths are DevTools paths; a runtime inspector's /<uuid> is not", () => {
  assert(isDevToolsPath("/devtools/browser/2b8db7ac-5bb7"));
  assert(isDevToolsPath("/devtools/page/794C9DD7"));
  assert(!isDevToolsPath("/51d62e24-fb5d-4d6a-b514-111ad98dbeae"));
  assert(!isDevToolsPath("/devtools/"));
});

Deno.test("a ws:// browser URL follows its port's current browser (a restart), and nothing else", () => {
  const given = new URL("ws://127.0.0.1:9222/devtools/browser/old-id");
  assertEquals(
    currentBrowserSocket(given, "ws://127.0.0.1:9222/devtools/browser/new-id"),
    "ws://127.0.0.1:9222/devtools/browser/new-id",
  );
  assertEquals(currentBrowserSocket(given, given.href), given.href);
  for (
    const other of [
      "ws://127.0.0.1:9333/devtools/browser/new-id", // another port
      "ws://localhost:9222/devtools/browser/new-id", // another host spelling
      "ws://192.0.2.10:9222/devtools/browser/new-id",
      "ws://127.0.0.1:9222/devtools/page/ABC",
      "not a url",
    ]
  ) {
    assertEquals(currentBrowserSocket(given, other), given.href, other);
  }
  // A page socket the caller chose stays theirs.
  const page = new URL("ws://127.0.0.1:9222/devtools/page/ABC");
  assertEquals(currentBrowserSocket(page, "ws://127.0.0.1:9222/devtools/browser/x"), page.href);
});

/** A fake loopback endpoint: the routes answer JSON; the websocket records what it was sent. */
function fakeEndpoint(routes: Record<string, unknown>, socketReply?: (method: string) => unknown) {
  const received: string[] = [];
  let upgrades = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (req.headers.get("upgrade") === "websocket") {
      upgrades++;
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onmessage = (e) => {
        const msg = JSON.parse(String(e.data)) as { id: number; method: string };
        received.push(msg.method);
        socket.send(JSON.stringify({ id: msg.id, ...(socketReply?.(msg.method) as object) }));
      };
      return response;
    }
    if (path in routes) return Response.json(routes[path]);
    return new Response("not found", { status: 404 });
  });
  return {
    host: `127.0.0.1:${server.addr.port}`,
    routes,
    received,
    upgrades: () => upgrades,
    close: () => server.shutdown(),
  };
}

async function refusal(endpoint: string): Promise<ToolError> {
  const err = await assertRejects(() => browserWebSocketUrl(new URL(endpoint)), ToolError);
  assert(err instanceof ToolError);
  return err;
}

Deno.test("an http endpoint that is a Node inspector is refused as endpoint_is_node, its websocket never opened", async () => {
  const node = fakeEndpoint({ "/json/version": NODE_VERSION, "/json/list": NODE_LIST });
  try {
    const err = await refusal(`http://${node.host}`);
    assertEquals(err.code, "endpoint_is_node");
    assertEquals(err.retry, "never");
    assert(/--remote-debugging-port/.test(err.recovery ?? ""), err.recovery);
    assert(/node\.js\/v20/.test(err.message), err.message);
    assertEquals(node.upgrades(), 0);
  } finally {
    await node.close();
  }
});

Deno.test("an unnamed runtime without a browser websocket is known by its node targets", async () => {
  const runtime = fakeEndpoint({ "/json/version": { "Protocol-Version": "1.1" }, "/json/list": NODE_LIST });
  const pageless = fakeEndpoint({ "/json/version": { "Browser": "Chrome/1" }, "/json/list": [] });
  try {
    assertEquals((await refusal(`http://${runtime.host}`)).code, "endpoint_is_node");
    // Not a runtime, just no browser websocket: the earlier answer stands.
    assertEquals((await refusal(`http://${pageless.host}`)).code, "endpoint_unreachable");
  } finally {
    await runtime.close();
    await pageless.close();
  }
});

Deno.test("a ws:// URL of a Node inspector is refused from its host's /json/version without a connection", async () => {
  const node = fakeEndpoint({ "/json/version": NODE_VERSION, "/json/list": NODE_LIST });
  try {
    const err = await refusal(`ws://${node.host}/51d62e24-fb5d-4d6a-b514-111ad98dbeae`);
    assertEquals(err.code, "endpoint_is_node");
    assertEquals(node.upgrades(), 0);
    assertEquals(node.received, []);
  } finally {
    await node.close();
  }
});

Deno.test("a ws:// browser URL passes as given; a websocket-only host on a DevTools path is not probed", async () => {
  const chrome = fakeEndpoint({ "/json/version": CHROME_VERSION });
  const wsOnly = fakeEndpoint({});
  try {
    const given = `ws://${chrome.host}/devtools/browser/given`;
    assertEquals(await browserWebSocketUrl(new URL(given)), given);
    // The host reports another browser socket on the same port: the browser restarted; its successor is used.
    chrome.routes["/json/version"] = {
      ...CHROME_VERSION,
      webSocketDebuggerUrl: `ws://${chrome.host}/devtools/browser/restarted`,
    };
    assertEquals(
      await browserWebSocketUrl(new URL(given)),
      `ws://${chrome.host}/devtools/browser/restarted`,
    );
    const quiet = `ws://${wsOnly.host}/devtools/browser/abc`;
    assertEquals(await browserWebSocketUrl(new URL(quiet)), quiet);
    assertEquals(chrome.upgrades() + wsOnly.upgrades(), 0);
  } finally {
    await chrome.close();
    await wsOnly.close();
  }
});

Deno.test("an unknown websocket without discovery is asked Browser.getVersion only, and refused when it lacks it", async () => {
  const inspector = fakeEndpoint({}, (method) => ({
    error: { code: -32601, message: `'${method}' wasn't found` },
  }));
  const other = fakeEndpoint({}, () => ({ error: { code: -32000, message: "Not allowed" } }));
  const browser = fakeEndpoint({}, () => ({ result: { product: "Chrome/156", protocolVersion: "1.3" } }));
  try {
    assertEquals((await refusal(`ws://${inspector.host}/abc`)).code, "endpoint_is_node");
    assertEquals(inspector.received, ["Browser.getVersion"]);
    assertEquals((await refusal(`ws://${other.host}/abc`)).code, "invalid_endpoint");
    const url = `ws://${browser.host}/proxy`;
    assertEquals(await browserWebSocketUrl(new URL(url)), url);
    assertEquals(browser.received, ["Browser.getVersion"]);
  } finally {
    await inspector.close();
    await other.close();
    await browser.close();
  }
});
