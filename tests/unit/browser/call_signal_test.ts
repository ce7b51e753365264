import { assert, assertEquals, assertRejects } from "../../assert.ts";
import { CdpConnection } from "../../../src/browser/cdp.ts";
import { currentCallSignal, outsideCall, runInCall } from "../../../src/browser/call_signal.ts";
import { ToolError } from "../../../src/errors.ts";

/** A loopback CDP stand-in that answers Browser.getVersion and never answers anything else. */
function silentBrowser(): { url: string; received: string[]; close: () => Promise<void> } {
  const received: string[] = [];
  const sockets: WebSocket[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    sockets.push(socket);
    socket.onmessage = (e) => {
      const message = JSON.parse(e.data as string);
      received.push(message.method);
      if (message.method === "Browser.getVersion") {
        socket.send(JSON.stringify({ id: message.id, result: { product: "Stand-in/1" } }));
      }
    };
    return response;
  });
  return {
    url: `ws://127.0.0.1:${server.addr.port}/devtools/browser/x`,
    received,
    close: async () => {
      for (const s of sockets) s.close();
      await server.shutdown();
    },
  };
}

Deno.test("cancelling a call rejects its pending CDP commands at once and refuses new ones", async () => {
  const browser = silentBrowser();
  const conn = await CdpConnection.connect(browser.url);
  try {
    const controller = new AbortController();
    const reason = new ToolError({
      code: "deadline_exceeded",
      message: "passed its deadline",
      retry: "safe",
    });
    const started = performance.now();
    const pending = runInCall(controller.signal, () => conn.send("Runtime.evaluate", { expression: "1" }));
    // Work scheduled later inside the call still belongs to it.
    const later = runInCall(controller.signal, async () => {
      await new Promise((r) => setTimeout(r, 20));
      assert(currentCallSignal() !== undefined);
      return await conn.send("Page.enable");
    });
    setTimeout(() => controller.abort(reason), 50);
    const error = await assertRejects(() => pending, ToolError);
    assertEquals(error, reason);
    assert(performance.now() - started < 5_000, "rejected on cancellation, not on the 30 s command timeout");
    await assertRejects(() => later, ToolError);
    // A command sent after the cancellation is refused without reaching the browser.
    const count = browser.received.length;
    await assertRejects(() => runInCall(controller.signal, () => conn.send("DOM.enable")), ToolError);
    assertEquals(browser.received.length, count);
    // Outside the call nothing is cancelled: the connection still works.
    const version = await runInCall(
      controller.signal,
      () => outsideCall(() => conn.send("Browser.getVersion")),
    );
    assertEquals(version.product, "Stand-in/1");
  } finally {
    await conn.close();
    await browser.close();
  }
});

Deno.test("a nested call (a batch step) is cancelled with its outer call; cancelling it spares the outer", () => {
  const outer = new AbortController();
  const inner = new AbortController();
  const seen = runInCall(outer.signal, () => runInCall(inner.signal, () => currentCallSignal()));
  assert(seen && !seen.aborted);
  outer.abort();
  assert(seen.aborted);
  const other = new AbortController();
  const step = new AbortController();
  const nested = runInCall(other.signal, () => runInCall(step.signal, () => currentCallSignal()));
  step.abort();
  assert(nested?.aborted && !other.signal.aborted);
  assertEquals(currentCallSignal(), undefined);
});
