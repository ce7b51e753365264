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
    const rel = normalize(decodeURIComponent(url.pathname)).replace(/^(\.\.(\/|$))+/, "");
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
