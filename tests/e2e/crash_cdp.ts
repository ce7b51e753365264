import { assert } from "../assert.ts";
import { POLL_MS } from "./chromium_process.ts";

/** The renderer crash test's own CDP connection (its Chromium comes from chromium_process.ts). */

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
