/**
 * Test helpers for the replay target: a counting static server for the fixture site, and a real rrweb
 * recording made by the project's RECORDER_BUNDLE in a real headless Chromium (never hand-written JSON).
 */
import { fileURLToPath } from "node:url";
import type { eventWithTime } from "@rrweb/types";
import { RECORDER_BUNDLE } from "../../src/pagestate/bundles_generated.ts";
import { withRawPage } from "./scratch_session.ts";

const SITE = fileURLToPath(new URL("../../fixtures/site/", import.meta.url));
/** A 1x1 PNG, served as /logo.png. */
const PIXEL = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

export interface CountingServer {
  origin: string;
  /** Every path requested so far, in order. */
  requests: string[];
  /** TCP connections accepted so far (a preconnect opens one without any request). */
  connections(): number;
  close(): Promise<void>;
}

/** Pipes each accepted connection to `port` on loopback, counting them. */
function countingFront(port: number): { port: number; count: () => number; close: () => void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let count = 0;
  const open = new Set<Deno.Conn>();
  (async () => {
    for await (const conn of listener) {
      count++;
      open.add(conn);
      Deno.connect({ hostname: "127.0.0.1", port }).then((inner) => {
        open.add(inner);
        const done = () => {
          for (const c of [conn, inner]) {
            open.delete(c);
            try {
              c.close();
            } catch { /* closed */ }
          }
        };
        conn.readable.pipeTo(inner.writable).catch(() => {}).finally(done);
        inner.readable.pipeTo(conn.writable).catch(() => {}).finally(done);
      }, () => conn.close());
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    count: () => count,
    close: () => {
      listener.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}

export function countingServer(): CountingServer {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    requests.push(path);
    if (path === "/logo.png") return new Response(PIXEL, { headers: { "content-type": "image/png" } });
    if (path === "/beacon") return new Response("ok");
    try {
      const body = await Deno.readFile(SITE + path.replace(/^\/+/, "").replace(/\.\./g, ""));
      return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  const front = countingFront(server.addr.port);
  return {
    origin: `http://127.0.0.1:${front.port}`,
    requests,
    connections: front.count,
    close: async () => {
      front.close();
      await server.shutdown();
    },
  };
}

export interface Recording {
  events: eventWithTime[];
  /** What the page itself stored (`window.__times`, Date.now() ms) and whether its script ran. */
  pageTimes: Record<string, number>;
  pageScriptRan: boolean;
}

/**
 * Opens url in a fresh headless Chromium with the given viewport, records it with rrweb from document
 * start for `durationMs`, and returns the events.
 */
export async function recordPage(
  url: string,
  durationMs: number,
  viewport: { width: number; height: number },
): Promise<Recording> {
  return await withRawPage("krometrail-profile-rec-", async (conn, sessionId) => {
    const events: eventWithTime[] = [];
    conn.on("Runtime.bindingCalled", (params, sid) => {
      if (sid === sessionId && params.name === "__krometrailTestEmit") {
        events.push(...JSON.parse(params.payload));
      }
    });
    await conn.send("Runtime.enable", {}, sessionId);
    await conn.send("Page.enable", {}, sessionId);
    await conn.send("Emulation.setDeviceMetricsOverride", {
      ...viewport,
      deviceScaleFactor: 1,
      mobile: false,
    }, sessionId);
    await conn.send("Runtime.addBinding", { name: "__krometrailTestEmit" }, sessionId);
    // rrweb makes about:blank iframes of its own (for untainted prototypes) and this script runs in every
    // new document, so only the top document records (else each iframe records and makes another).
    // Events leave in batches.
    const start = `;(() => {
      if (globalThis.__recording || location.protocol === "about:" || top !== globalThis) return;
      globalThis.__recording = true;
      let batch = [];
      let timer = 0;
      const flush = () => {
        timer = 0;
        const out = batch;
        batch = [];
        if (out.length > 0) globalThis.__krometrailTestEmit(JSON.stringify(out));
      };
      globalThis.__krometrailRrweb.record({
        emit: (e) => { batch.push(e); if (!timer) timer = setTimeout(flush, 50); },
        checkoutEveryNms: 5000, maskAllInputs: true, inlineStylesheet: true, recordAfter: "DOMContentLoaded",
      });
    })();`;
    await conn.send("Page.addScriptToEvaluateOnNewDocument", { source: RECORDER_BUNDLE + start }, sessionId);
    await conn.send("Page.navigate", { url }, sessionId);
    await new Promise((r) => setTimeout(r, durationMs));
    // The last batch leaves 50 ms after its first event.
    await conn.send("Runtime.evaluate", {
      expression: "new Promise((r) => setTimeout(r, 120))",
      awaitPromise: true,
    }, sessionId);
    const { result } = await conn.send("Runtime.evaluate", {
      expression: "({ times: window.__times, ran: window.__pageScriptRan === true })",
      returnByValue: true,
    }, sessionId);
    const value = result.value as { times: Record<string, number>; ran: boolean };
    return { events: [...events], pageTimes: value.times, pageScriptRan: value.ran };
  });
}

/**
 * A long recording made from a real one: its first checkpoint segment (Meta up to the next Meta) is
 * repeated with shifted timestamps until `totalMs`, so every repetition starts at a checkpoint like rrweb's
 * own `checkoutEveryNms` would, and the mutations between are the real ones.
 */
export function repeatRecording(events: eventWithTime[], totalMs: number): eventWithTime[] {
  const metas = events.map((e, i) => ({ e, i })).filter(({ e }) => e.type === 4);
  if (metas.length === 0) throw new Error("the recording has no checkpoint");
  // A page quiet for 5 s has one checkpoint: its whole recording is the segment, repeated every 5 s.
  const segment = events.slice(metas[0].i, metas[1]?.i ?? events.length);
  const span = metas[1]
    ? metas[1].e.timestamp - metas[0].e.timestamp
    : Math.max(5_000, segment[segment.length - 1].timestamp - metas[0].e.timestamp + 1);
  const out: eventWithTime[] = [];
  for (let shift = 0; shift < totalMs; shift += span) {
    for (const e of segment) out.push({ ...e, timestamp: e.timestamp + shift });
  }
  return out;
}
