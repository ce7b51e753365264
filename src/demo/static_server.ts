import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".txt": "text/plain; charset=utf-8",
};

export const FIXTURE_SITE = fileURLToPath(new URL("../../fixtures/site/", import.meta.url));

export interface StaticServer {
  origin: string;
  close(): Promise<void>;
}

/** Serves a folder on 127.0.0.1 (a random port) for the demo and the tests. */
export function serveStatic(root: string = FIXTURE_SITE): StaticServer {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    // Test routes: /__status/<code> answers with that HTTP status; /__slow/<ms>/<path> delays a file.
    const status = url.pathname.match(/^\/__status\/([1-5]\d\d)$/);
    if (status) {
      const code = Number(status[1]);
      return new Response(`<!doctype html><title>Error ${code}</title><h1>Error ${code}</h1>`, {
        status: code,
        headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
      });
    }
    const slow = url.pathname.match(/^\/__slow\/(\d{1,5})(\/.*)$/);
    if (slow) await new Promise((r) => setTimeout(r, Number(slow[1])));
    const rel = normalize(decodeURIComponent(slow ? slow[2] : url.pathname)).replace(/^(\.\.(\/|$))+/, "");
    const path = join(root, rel.endsWith("/") ? rel + "index.html" : rel);
    if (!path.startsWith(root)) return new Response("forbidden", { status: 403 });
    try {
      const body = await Deno.readFile(path);
      return new Response(body, {
        headers: {
          "content-type": TYPES[extname(path)] ?? "application/octet-stream",
          "cache-control": "no-store",
        },
      });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return { origin: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}
