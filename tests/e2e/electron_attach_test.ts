/**
 * Electron renderer endpoints (issue 18). The npm `electron` package cannot install here (its postinstall
 * downloads the binary from github.com), so no real Electron runs in this suite. The two halves of an
 * Electron app are stood in for by the processes whose endpoints Electron's mirror:
 * - the main process: a real Node started with --inspect (Electron's main process inspector is Node's);
 * - a renderer window: a Chromium started with --remote-debugging-port and --app (one app window, no tab
 *   strip, like a BrowserWindow), whose page starts a dedicated worker and a service worker.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, structured, textOf, withServer } from "./harness.ts";
import { startChromium, startChromiumOnFixedPort, until } from "./chromium_process.ts";

/** Probes that fetch an endpoint still starting count a failure as "not yet". */
function settle<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs?: number): Promise<T> {
  return until(what, () => probe().catch(() => undefined), timeoutMs);
}

interface ListedTarget {
  id: string;
  type: string;
  url: string;
  webSocketDebuggerUrl?: string;
}

async function targetsAt(port: number): Promise<ListedTarget[]> {
  const res = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2_000) });
  return await res.json() as ListedTarget[];
}

/** A Node process with its inspector on a loopback port; its stderr is kept (Node logs each debugger). */
async function startNodeInspector(): Promise<
  { child: Deno.ChildProcess; port: number; stderr: () => string; stop: () => Promise<void> }
> {
  // Port 0: Node picks one and says which on stderr (no free-port race).
  const child = new Deno.Command("node", {
    args: ["--inspect=127.0.0.1:0", "-e", "setInterval(() => {}, 1000)"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let text = "";
  const reading = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (chunk) => void (text += chunk) }),
  ).catch(() => {});
  const port = await until("the Node inspector's port", () => {
    const m = /Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(text);
    return Promise.resolve(m ? Number(m[1]) : undefined);
  });
  await settle("the Node inspector", async () => (await targetsAt(port)).length > 0 || undefined);
  return {
    child,
    port,
    stderr: () => text,
    stop: async () => {
      child.kill("SIGKILL");
      await child.status;
      await reading;
    },
  };
}

/**
 * A Chromium shaped like an Electron app: its own process group, one app window (or, without a URL, no
 * window at all, like an app that has not opened one yet). `port`: "fixed" picks a port the app can be
 * restarted on; a number takes that one (the app restarting on its fixed port); otherwise Chromium picks.
 */
async function startAppWindow(
  appUrl: string | undefined,
  port?: number | "fixed",
): Promise<{ pid: number; port: number; stop: () => Promise<void> }> {
  const opts = {
    url: appUrl,
    window: appUrl ? "app" as const : "none" as const,
    windowSize: { width: 800, height: 600 },
  };
  const chrome = port === "fixed"
    ? await startChromiumOnFixedPort(opts)
    : await startChromium({ ...opts, port });
  const stop = () => chrome.kill();
  try {
    await settle("the app window's page, worker and service worker", async () => {
      const types = new Set((await targetsAt(chrome.port)).map((t) => t.type));
      if (!appUrl) return types.size === 0 || undefined;
      return types.has("page") && types.has("worker") && types.has("service_worker") || undefined;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { pid: chrome.pid, port: chrome.port, stop };
}

/**
 * Electron's browser endpoint answers Target.createTarget with "Not supported" (only the app opens
 * windows). This loopback proxy in front of a Chromium answers it the same way and passes the rest.
 */
function electronLikeProxy(chromePort: number): { origin: string; close: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const upstream = await (await fetch(`http://127.0.0.1:${chromePort}/json/version`)).json();
    if (req.headers.get("upgrade") !== "websocket") {
      const ws = new URL(String(upstream.webSocketDebuggerUrl));
      return Response.json({ ...upstream, webSocketDebuggerUrl: `ws://${url.host}${ws.pathname}` });
    }
    const { socket, response } = Deno.upgradeWebSocket(req);
    const browser = new WebSocket(String(upstream.webSocketDebuggerUrl));
    const queued: string[] = [];
    browser.onopen = () => queued.splice(0).forEach((m) => browser.send(m));
    browser.onmessage = (e) => socket.readyState === WebSocket.OPEN && socket.send(e.data);
    browser.onclose = () => socket.close();
    socket.onclose = () => browser.close();
    socket.onmessage = (e) => {
      const text = String(e.data);
      const msg = JSON.parse(text) as { id: number; method: string };
      if (msg.method === "Target.createTarget") {
        socket.send(JSON.stringify({ id: msg.id, error: { code: -32000, message: "Not supported" } }));
      } else if (browser.readyState === WebSocket.OPEN) browser.send(text);
      else queued.push(text);
    };
    return response;
  });
  return { origin: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

Deno.test({
  name:
    "Electron: a Node inspector endpoint is refused untouched; an app window's renderer page is recorded and driven, its workers left alone",
  ...e2e,
  fn: (t) =>
    withServer(async (server, site) => {
      await t.step({
        name: "the main process boundary: attach to a Node inspector is refused before anything is sent",
        ...e2e,
        fn: async () => {
          const node = await startNodeInspector();
          try {
            const [target] = await targetsAt(node.port);
            assertEquals(target.type, "node");
            for (
              const endpoint of [
                `http://127.0.0.1:${node.port}`,
                `127.0.0.1:${node.port}`,
                String(target.webSocketDebuggerUrl),
              ]
            ) {
              const refused = await server.call("attach_browser", { endpoint });
              assertEquals(refused.isError, true, endpoint);
              assertEquals(errorCode(refused), "endpoint_is_node", `${endpoint}: ${textOf(refused)}`);
              const error = structured(refused).error as { retry: string; recovery: string };
              assertEquals(error.retry, "never");
              assertMatch(error.recovery, /--remote-debugging-port/);
              assertMatch(textOf(refused), /node\.js\/v\d+/);
            }
            assertEquals(structured(await server.call("browser_status")).running, false);
            // The Node process is unaffected: still running, still listed, and no debugger ever attached
            // (Node logs "Debugger attached." for every inspector session that connects).
            const exited = await Promise.race([node.child.status, new Promise((r) => setTimeout(r, 100))]);
            assertEquals(exited, undefined, "the Node process is still running");
            assertEquals((await targetsAt(node.port)).map((t) => t.id), [target.id]);
            assertMatch(node.stderr(), /Debugger listening on ws:\/\//);
            assert(!/Debugger attached/.test(node.stderr()), `no debugger attached: ${node.stderr()}`);
          } finally {
            await node.stop();
          }
        },
      });

      await t.step({
        name:
          "an app window: only its page is adopted, recorded and clicked; workers stay targets, not pages",
        ...e2e,
        fn: async () => {
          const app = await startAppWindow(`${site.origin}/electron/app.html`);
          try {
            const attached = await server.call("attach_browser", {
              endpoint: `http://127.0.0.1:${app.port}`,
            });
            assertEquals(structured(attached).mode, "attached", textOf(attached));

            const listed = structured(await server.call("list_pages"));
            const pages = listed.pages as Array<{ page_id: string; url: string }>;
            assertEquals(
              pages.map((p) => p.url),
              [`${site.origin}/electron/app.html`],
              JSON.stringify(pages),
            );
            const pageId = pages[0].page_id;
            assertEquals(listed.selected_page_id, pageId);

            // Capture records the renderer window.
            await settle("a recorded frame of the app window", async () => {
              const frames = structured(
                await server.call("list_source_frames", { page_id: pageId, max_frames: 1 }),
              );
              return (frames.total_frame_count as number) > 0 || undefined;
            });

            const clicked = await server.call("click", { selector: "#go" });
            assert(!clicked.isError, textOf(clicked));
            const interaction = String(structured(clicked).interaction_id);
            const panel = await server.call("evaluate_page", {
              expression: "document.getElementById('panel').textContent",
            });
            assertEquals(structured(panel).value, "Applied", textOf(panel));
            const during = structured(
              await server.call("list_source_frames", { interaction_id: interaction, max_frames: 5 }),
            );
            assert(
              (during.total_frame_count as number) > 0,
              `frames around the click: ${JSON.stringify(during)}`,
            );

            // A worker started after the attach runs at once: nothing paused it waiting for a debugger.
            assert(!(await server.call("click", { selector: "#spawn" })).isError);
            await settle("the later worker's reply", async () => {
              const reply = await server.call("evaluate_page", { expression: "window.laterWorker ?? null" });
              return structured(reply).value === "running" || undefined;
            }, 10_000);
            const status = await server.call("evaluate_page", {
              expression: "document.getElementById('workers').textContent",
            });
            assertEquals(structured(status).value, "worker running, service worker active");

            // The workers are the app's own targets, never pages of the session.
            const types = (await targetsAt(app.port)).map((t) => t.type).sort();
            assert(types.includes("worker") && types.includes("service_worker"), types.join());
            const after = structured(await server.call("list_pages")).pages as Array<{ url: string }>;
            assertEquals(after.length, 1, JSON.stringify(after));

            const stopped = await server.call("stop_browser");
            assertEquals(structured(stopped).closed_browser, false);
            // Detaching leaves the app window running.
            assert((await targetsAt(app.port)).some((t) => t.type === "page"));
          } finally {
            await app.stop();
          }
        },
      });

      await t.step({
        name: "the app restarts on its port: a session attached by ws:// URL reconnects, same page id",
        ...e2e,
        fn: async () => {
          const appUrl = `${site.origin}/electron/app.html`;
          const first = await startAppWindow(appUrl, "fixed");
          let second: Awaited<ReturnType<typeof startAppWindow>> | undefined;
          try {
            const version = await (await fetch(`http://127.0.0.1:${first.port}/json/version`)).json();
            const attached = await server.call("attach_browser", { endpoint: version.webSocketDebuggerUrl });
            assertEquals(structured(attached).mode, "attached", textOf(attached));
            const [before] = structured(await server.call("list_pages")).pages as Array<{ page_id: string }>;

            await first.stop();
            await settle("reconnecting", async () => {
              return structured(await server.call("browser_status")).state === "reconnecting" || undefined;
            });
            // The restarted browser has a new websocket id: the session finds it through the port.
            second = await startAppWindow(appUrl, first.port);
            await settle("the session running again", async () => {
              return structured(await server.call("browser_status")).state === "running" || undefined;
            });
            const after = structured(await server.call("list_pages")).pages as Array<{ page_id: string }>;
            assertEquals(after.map((p) => p.page_id), [before.page_id], JSON.stringify(after));
            await settle("the restarted window's document", async () => {
              const r = await server.call("evaluate_page", { expression: "document.readyState" });
              return structured(r).value === "complete" || undefined;
            });
            assert(!(await server.call("click", { selector: "#go" })).isError);
            assertEquals(structured(await server.call("stop_browser")).closed_browser, false);
          } finally {
            await first.stop();
            await second?.stop();
          }
        },
      });

      await t.step({
        name:
          "an app with no window yet: attached without a page, create_page refused, its first window selected",
        ...e2e,
        fn: async () => {
          const app = await startAppWindow(undefined);
          const proxy = electronLikeProxy(app.port);
          try {
            const attached = await server.call("attach_browser", { endpoint: proxy.origin });
            assertEquals(structured(attached).running, true, textOf(attached));
            const none = await server.call("list_pages");
            assertEquals(structured(none).pages, [], textOf(none));
            const created = await server.call("create_page", { url: `${site.origin}/electron/app.html` });
            assertEquals(errorCode(created), "page_creation_unsupported", textOf(created));
            assertMatch(textOf(created), /window\.open/);

            // The app opens its window (here through Chrome's own HTTP endpoint, as the app itself would).
            const opened = await fetch(
              `http://127.0.0.1:${app.port}/json/new?${
                encodeURIComponent(`${site.origin}/electron/app.html`)
              }`,
              { method: "PUT" },
            );
            assertEquals(opened.status, 200);
            await opened.body?.cancel();
            const listed = await settle("the app's first window adopted and selected", async () => {
              const l = structured(await server.call("list_pages"));
              return (l.pages as unknown[]).length === 1 && l.selected_page_id ? l : undefined;
            });
            const [page] = listed.pages as Array<{ page_id: string }>;
            assertEquals(listed.selected_page_id, page.page_id);
            await settle("the window's document", async () => {
              // The new window starts on about:blank; wait for the app's own document.
              const r = await server.call("evaluate_page", {
                expression: "location.pathname + ' ' + document.readyState",
              });
              return structured(r).value === "/electron/app.html complete" || undefined;
            });
            assert(!(await server.call("click", { selector: "#go" })).isError);
            const panel = await server.call("evaluate_page", {
              expression: "document.getElementById('panel').textContent",
            });
            assertEquals(structured(panel).value, "Applied", textOf(panel));
            assertEquals(structured(await server.call("stop_browser")).closed_browser, false);
          } finally {
            await proxy.close();
            await app.stop();
          }
        },
      });
    }),
});
