import { assert, assertEquals, assertMatch } from "../assert.ts";
import { type ServerHandle, structured, textOf, type ToolResult } from "./harness.ts";
import { pollUntil, type TestChromium } from "./chromium_process.ts";

/** The reconnect e2e's own helpers (reconnect_test.ts): a relay, status and frame probes. */

/**
 * Long enough for a cold Chromium restart on the old profile on a loaded 2-core box (beside a busy
 * benchmark), short enough that the no-restart case, which waits it out, keeps the file's total reasonable.
 */
export const WINDOW_MS = 25_000;

export interface Frame {
  frame_id: number;
  page_id: string;
  ordinal: number;
  session_time_ns: number;
}
export interface Gap {
  page_id: string;
  kind: string;
  start_ns: number;
  end_ns: number | null;
}
export interface Event {
  session_time_ms: number;
  kind: string;
  level: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

/** A test Chromium (chromium_process.ts); the file kills each one at the end whatever happens. */
export type Chrome = TestChromium;

/** Characters of a response's text and structured content (kept lean; printed with the timings). */
export function size(result: ToolResult): number {
  return textOf(result).length + JSON.stringify(result.structuredContent ?? {}).length;
}

/**
 * A loopback TCP relay in front of a browser's port: `cut()` drops every connection through it (the
 * socket fails, the browser stays) and refuses new ones until `restore()`.
 */
export function relay(targetPort: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  let refusing = false;
  const accepting = (async () => {
    for await (const inbound of listener) {
      if (refusing) {
        inbound.close();
        continue;
      }
      const outbound = await Deno.connect({ hostname: "127.0.0.1", port: targetPort }).catch(() => undefined);
      if (!outbound) {
        inbound.close();
        continue;
      }
      open.add(inbound).add(outbound);
      inbound.readable.pipeTo(outbound.writable).catch(() => {});
      outbound.readable.pipeTo(inbound.writable).catch(() => {});
    }
  })().catch(() => {});
  const drop = () => {
    for (const conn of open) {
      try {
        conn.close();
      } catch { /* already closed by its pipe */ }
    }
    open.clear();
  };
  return {
    port: (listener.addr as Deno.NetAddr).port,
    cut() {
      refusing = true;
      drop();
    },
    restore() {
      refusing = false;
    },
    async close() {
      listener.close();
      drop();
      await accepting;
    },
  };
}

export async function status(server: ServerHandle): Promise<Record<string, unknown>> {
  return structured(await server.call("browser_status", { detail: "expanded" }));
}

export async function frameCount(server: ServerHandle, args: Record<string, unknown>): Promise<number> {
  return structured(await server.call("list_source_frames", { ...args, max_frames: 1 }))
    .total_frame_count as number;
}

/** The page's newest stored frame. */
export async function newestFrame(
  server: ServerHandle,
  args: Record<string, unknown>,
): Promise<Frame | undefined> {
  const total = await frameCount(server, args);
  const last = structured(
    await server.call("list_source_frames", { ...args, offset: Math.max(0, total - 1), max_frames: 1 }),
  );
  return (last.frames as Frame[])[0];
}

/** The id of the page showing `url` (the start URL's tab). */
export async function pageShowing(server: ServerHandle, url: string): Promise<string> {
  const st = await pollUntil(
    () => status(server),
    (s) => (s.pages as Array<{ url: string }>).some((p) => p.url === url),
    10_000,
  );
  const page = (st.pages as Array<{ page_id: string; url: string }>).find((p) => p.url === url);
  const id = page?.page_id;
  assert(id, `a page shows ${url}: ${JSON.stringify(st.pages)}`);
  return id;
}

/** Attaches, finds the fixture's page and waits until it has recorded a few frames. */
export async function attachAndRecord(server: ServerHandle, chrome: Pick<Chrome, "port">, url: string) {
  const attached = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` });
  assertEquals(attached.isError, undefined, textOf(attached));
  const sessionId = String(structured(attached).session_id);
  const pageId = await pageShowing(server, url);
  const frames = await pollUntil(() => frameCount(server, { page_id: pageId }), (n) => n >= 20, 30_000);
  assert(frames >= 20, `the animated page recorded frames before the kill (${frames})`);
  return { sessionId, pageId };
}

/** Polls browser_status until the session reconnects after a kill; checks what it says meanwhile. */
export async function expectReconnecting(server: ServerHandle): Promise<Record<string, unknown>> {
  const st = await pollUntil(() => status(server), (s) => s.state !== "running", 15_000);
  assertEquals(st.state, "reconnecting", `after the kill: ${JSON.stringify(st).slice(0, 600)}`);
  assertEquals(st.running, true, "a reconnecting session has not ended");
  const r = st.reconnecting as { since: string; since_ms: number; attempts: number; window_ms: number };
  assert(r, "status names the outage");
  assert(!Number.isNaN(Date.parse(r.since)), `since is a time: ${r.since}`);
  assert(Date.now() - Date.parse(r.since) < WINDOW_MS, "since is the loss just now");
  assertEquals(r.window_ms, WINDOW_MS);
  assertEquals(typeof r.since_ms, "number");
  // The first retry comes within a second; the count of tries is reported as it grows.
  const tried = await pollUntil(
    () => status(server),
    (s) => ((s.reconnecting as { attempts?: number } | undefined)?.attempts ?? 0) >= 1,
    10_000,
  );
  const attempts = (tried.reconnecting as { attempts: number } | undefined)?.attempts ?? 0;
  assert(attempts >= 1, `tries are counted: ${JSON.stringify(tried.reconnecting)}`);
  const concise = await server.call("browser_status");
  assertMatch(textOf(concise), /reconnecting since .*tries/);
  return { ...r, attempts_seen: attempts, status_chars: size(concise) } as unknown as Record<string, unknown>;
}
