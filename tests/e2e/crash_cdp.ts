import { assert } from "../assert.ts";

/** Real-process helpers of the renderer crash test: a debuggable Chromium and a CDP connection of the test's own. */

/** Bound on every condition poll: generous for a loaded 2-core box, never a fixed sleep. */
const POLL_MS = 20_000;

export async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + POLL_MS;
  for (let delay = 50;; delay = Math.min(delay * 2, 500)) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${POLL_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A headless Chromium on a loopback port, in a process group of its own (its renderers die with it). */
export async function startChromium(port: number, userDataDir: string): Promise<Deno.ChildProcess> {
  const executable = Deno.env.get("KROMETRAIL_CHROME") ?? Deno.env.get("CHROME_BIN") ?? "/usr/bin/chromium";
  const args = [
    `--remote-debugging-port=${port}`,
    "--remote-debugging-address=127.0.0.1",
    `--user-data-dir=${userDataDir}`,
    "--headless=new",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1000,700",
    ...(Deno.build.os === "linux" && Deno.uid() === 0 ? ["--no-sandbox"] : []),
    "about:blank",
  ];
  // setsid (not a group leader already, so it execs in place): the child's pid is the group's id.
  const child = new Deno.Command("setsid", { args: [executable, ...args], stdout: "null", stderr: "null" })
    .spawn();
  await until("the debug endpoint", async () => {
    const r = await fetch(`http://127.0.0.1:${port}/json/version`).catch(() => undefined);
    if (!r) return undefined;
    await r.body?.cancel();
    return r.ok ? true : undefined;
  });
  return child;
}

/** The test's own CDP connection: attach to the page target and crash its renderer with Page.crash. */
export async function crashTarget(port: number, urlPart: string): Promise<string> {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<
    { id: string; type: string; url: string }
  >;
  const target = targets.find((t) => t.type === "page" && t.url.includes(urlPart));
  assert(target, `a page target at ${urlPart}: ${JSON.stringify(targets.map((t) => t.url))}`);
  const version = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json() as {
    webSocketDebuggerUrl: string;
  };
  const ws = new WebSocket(version.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  try {
    let sessionId = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`Chrome did not report ${target.id} crashed to the test's own connection`)),
        POLL_MS,
      );
      ws.onmessage = (e) => {
        const m = JSON.parse(String(e.data));
        if (m.id === 1 && !m.result?.sessionId) {
          reject(new Error(`attachToTarget: ${JSON.stringify(m.error)}`));
        }
        if (m.id === 1 && m.result?.sessionId) {
          sessionId = m.result.sessionId;
          // The renderer dies before it could answer Page.crash; Chrome says so on this session.
          ws.send(JSON.stringify({ id: 2, method: "Inspector.enable", params: {}, sessionId }));
          ws.send(JSON.stringify({ id: 3, method: "Page.crash", params: {}, sessionId }));
        }
        if (m.method === "Inspector.targetCrashed" && m.sessionId === sessionId) {
          clearTimeout(timer);
          resolve();
        }
      };
      ws.send(
        JSON.stringify({
          id: 1,
          method: "Target.attachToTarget",
          params: { targetId: target.id, flatten: true },
        }),
      );
    });
  } finally {
    ws.close();
  }
  return target.id;
}
