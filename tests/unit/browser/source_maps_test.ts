import { SourceMapGenerator } from "source-map-js";
import { assert, assertEquals } from "../../assert.ts";
import {
  decodeDataMap,
  findSourceMappingUrl,
  inlineScriptAt,
  isLoopbackUrl,
  originalOf,
  parseSourceMap,
  SOURCE_MAP_LIMITS,
  SourceMapResolver,
  storedFrameUrl,
  storedSource,
} from "../../../src/browser/source_maps.ts";
import { pageDocument } from "../../../src/browser/page_document.ts";
import type { PageTarget } from "../../../src/browser/targets.ts";

/** A map of one generated line: column 10 came from src/app.ts 3:2, column 20 from 7:4 (name `load`). */
function mapJson(): string {
  const g = new SourceMapGenerator({ file: "app.js" });
  g.addMapping({
    generated: { line: 1, column: 10 },
    original: { line: 3, column: 2 },
    source: "src/app.ts",
  });
  g.addMapping({
    generated: { line: 1, column: 20 },
    original: { line: 7, column: 4 },
    source: "src/app.ts",
    name: "load",
  });
  return g.toString();
}

Deno.test("source maps: the mapping comment, inline data: maps and parsing", () => {
  assertEquals(findSourceMappingUrl("a();\n//# sourceMappingURL=app.js.map\n"), "app.js.map");
  assertEquals(findSourceMappingUrl("a();\n//@ sourceMappingURL=old.map"), "old.map");
  assertEquals(findSourceMappingUrl("//# sourceMappingURL=one.map\n//# sourceMappingURL=two.map"), "two.map");
  assertEquals(findSourceMappingUrl("a();"), null);
  const b64 = `data:application/json;charset=utf-8;base64,${new TextEncoder().encode(mapJson()).toBase64()}`;
  assertEquals(decodeDataMap(b64), mapJson());
  assertEquals(decodeDataMap(`data:application/json,${encodeURIComponent(mapJson())}`), mapJson());
  assertEquals(decodeDataMap("data:image/png;base64,AAAA"), null);
  assertEquals(parseSourceMap("{}"), null);
  assertEquals(parseSourceMap("not json"), null);
});

Deno.test("source maps: generated (0-based, CDP) to original (1-based) lookup", () => {
  const map = parseSourceMap(mapJson());
  assert(map);
  assertEquals(originalOf(map, 0, 12), { source: "src/app.ts", line: 3, column: 3 });
  assertEquals(originalOf(map, 0, 20), { source: "src/app.ts", line: 7, column: 5, name: "load" });
  assertEquals(originalOf(map, 0, 2), null, "before the first mapping");
  assertEquals(originalOf(map, 5, 0), null, "a line with no mappings");
});

Deno.test("source maps: only loopback is fetched, maps are cached, failures map nothing", async () => {
  const fetched: string[] = [];
  const files: Record<string, { body: string; type?: string; header?: string }> = {
    "http://127.0.0.1:9/app.js": { body: "x();\n//# sourceMappingURL=maps/app.js.map" },
    "http://127.0.0.1:9/maps/app.js.map": { body: mapJson() },
    "http://localhost:9/hdr.js": { body: "x();", header: "/maps/app.js.map" },
    "http://localhost:9/maps/app.js.map": { body: mapJson() },
    "http://127.0.0.1:9/page.html": { body: "//# sourceMappingURL=maps/app.js.map", type: "text/html" },
    "http://127.0.0.1:9/remote.js": { body: "x();\n//# sourceMappingURL=https://cdn.example/app.js.map" },
  };
  const fake = (url: string) => {
    fetched.push(url);
    const f = files[url];
    if (!f) return Promise.resolve(new Response("nope", { status: 404 }));
    const headers: Record<string, string> = { "content-type": f.type ?? "text/javascript" };
    if (f.header) headers.sourcemap = f.header;
    return Promise.resolve(new Response(f.body, { headers }));
  };
  let now = 0;
  const r = new SourceMapResolver(fake, () => now);
  assertEquals(await r.original("http://127.0.0.1:9/app.js", 0, 21), {
    source: "src/app.ts",
    line: 7,
    column: 5,
    name: "load",
  });
  await r.original("http://127.0.0.1:9/app.js", 0, 10);
  assertEquals(fetched, ["http://127.0.0.1:9/app.js", "http://127.0.0.1:9/maps/app.js.map"], "cached");
  assertEquals((await r.original("http://localhost:9/hdr.js", 0, 10))?.line, 3, "the SourceMap header");
  assertEquals(await r.original("https://cdn.example/app.js", 0, 10), null);
  assertEquals(await r.original("http://127.0.0.1:9/page.html", 0, 10), null, "documents have no one map");
  assertEquals(await r.original("http://127.0.0.1:9/remote.js", 0, 10), null);
  assertEquals(await r.original("http://127.0.0.1:9/missing.js", 0, 10), null);
  assert(!fetched.some((u) => u.includes("example")), `nothing off loopback: ${fetched}`);
  // After the cache's time to live, a rebuilt script is read again.
  now = 61_000;
  await r.original("http://127.0.0.1:9/app.js", 0, 10);
  assertEquals(fetched.filter((u) => u === "http://127.0.0.1:9/app.js").length, 2);
  // A fetch that throws maps nothing rather than failing the caller.
  const broken = new SourceMapResolver(() => Promise.reject(new Error("refused")));
  assertEquals(await broken.original("http://127.0.0.1:9/app.js", 0, 10), null);
});

Deno.test("source maps: frames keep CDP's stack and add the original, in stored form", async () => {
  const r = new SourceMapResolver((url) =>
    Promise.resolve(
      url.endsWith(".map") ? new Response(mapJson()) : new Response("x();\n//# sourceMappingURL=app.js.map", {
        headers: { "content-type": "text/javascript" },
      }),
    )
  );
  const frames = await r.frames(
    [
      { functionName: "a", url: "http://127.0.0.1:9/js/app.js", lineNumber: 0, columnNumber: 20 },
      { functionName: "", url: "https://cdn.example/lib.js", lineNumber: 4, columnNumber: 1 },
    ],
    5,
    storedFrameUrl,
    { source: storedSource },
  );
  assertEquals(frames[0], {
    function: "a",
    url: storedFrameUrl("http://127.0.0.1:9/js/app.js"),
    line: 1,
    column: 21,
    original: { source: "src/app.ts", line: 7, column: 5, name: "load" },
  });
  assert(!frames[0].url.includes("app.js"), "stored frame URLs keep the path hashing");
  assertEquals(frames[1].function, "(anonymous)");
  assertEquals(frames[1].original, undefined);
});

Deno.test("source maps: stored source names drop schemes, hosts and home directories", () => {
  assertEquals(storedSource("webpack:///src/app.ts"), "src/app.ts");
  assertEquals(storedSource("http://127.0.0.1:5173/src/app.ts"), "src/app.ts");
  assertEquals(storedSource("./src/app.ts"), "src/app.ts");
  assertEquals(storedSource("/home/alice/work/project/src/app.ts"), "project/src/app.ts");
  assertEquals(storedSource("C:\\Users\\bob\\p\\src\\a.ts"), "p/src/a.ts");
  assert(isLoopbackUrl("http://[::1]:3000/a.js") && isLoopbackUrl("http://localhost/a.js"));
  assert(!isLoopbackUrl("http://127.0.0.2/a.js") && !isLoopbackUrl("file:///a.js"));
});

Deno.test("source maps: inline scripts are found by document position and mapped from their block", async () => {
  const dataMap = `data:application/json;base64,${new TextEncoder().encode(mapJson()).toBase64()}`;
  const html = [
    "<!doctype html>",
    '<script src="x.js"></script>',
    "<script>var first = 1;</script>",
    `<p>hi</p><script type="module">a();`,
    `${" ".repeat(20)}b();`,
    `//# sourceMappingURL=${dataMap}`,
    "</script>",
  ].join("\n");
  assertEquals(inlineScriptAt(html, 2, 10)?.text, "var first = 1;");
  const block = inlineScriptAt(html, 4, 20);
  assertEquals([block?.line0, block?.column0], [3, 31]);
  assertEquals(inlineScriptAt(html, 0, 0), null);
  assertEquals(inlineScriptAt(html, 1, 21), null, "an external script's tag is no inline block");
  const r = new SourceMapResolver(() => Promise.reject(new Error("no fetch for data: maps")));
  // The block's first line counts columns from the block's start: document 3:52 is block 0:21.
  assertEquals(await r.originalInline("http://127.0.0.1:9/", html, 3, 31 + 21), {
    source: "src/app.ts",
    line: 7,
    column: 5,
    name: "load",
  });
  assertEquals(await r.originalInline("https://example.test/", html, 3, 53), null, "loopback documents only");
  assertEquals(await r.originalInline("http://127.0.0.1:9/", html, 2, 10), null, "a block without a map");
});

Deno.test("source maps: redirects are not followed, a 3xx is no map", async () => {
  // A real loopback server: the map URL redirects to a valid map, which must never be read.
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const path = new URL(req.url).pathname;
    hits.push(path);
    if (path === "/app.js") return new Response("x();\n//# sourceMappingURL=app.js.map");
    if (path === "/app.js.map") return Response.redirect(new URL("/real.map", req.url), 302);
    if (path === "/moved.js") return Response.redirect(new URL("/app.js", req.url), 307);
    return new Response(mapJson());
  });
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const r = new SourceMapResolver();
    assertEquals(await r.original(`${base}/app.js`, 0, 21), null, "a redirected map maps nothing");
    assertEquals(await r.original(`${base}/moved.js`, 0, 21), null, "a redirected script maps nothing");
    assertEquals(hits, ["/app.js", "/app.js.map", "/moved.js"], "the redirect targets are never fetched");
  } finally {
    await server.shutdown();
  }
  // The injected fetcher is asked for manual redirects too.
  const modes: string[] = [];
  const r = new SourceMapResolver((_url, init) => {
    modes.push(init.redirect);
    return Promise.resolve(new Response(null, { status: 301, headers: { location: "https://x.test/" } }));
  });
  assertEquals(await r.original("http://127.0.0.1:9/a.js", 0, 0), null);
  assertEquals(modes, ["manual"]);
});

Deno.test("source maps: the cache is bounded by bytes of map text, least recently used out", async () => {
  // Six ~7 MB maps (each under the 8 MiB per-map cap) overflow the 32 MiB budget.
  const pad = "p".repeat(7 * 1024 * 1024);
  const big = mapJson().replace(/^\{/, `{"x_pad":"${pad}",`);
  const fetched: string[] = [];
  const r = new SourceMapResolver((url) => {
    fetched.push(url);
    return Promise.resolve(
      url.endsWith(".map")
        ? new Response(big)
        : new Response(`x();\n//# sourceMappingURL=${url.slice(-5)}.map`),
    );
  });
  const script = (i: number) => `http://127.0.0.1:9/s${i}.js`;
  for (let i = 0; i < 6; i++) {
    assertEquals((await r.original(script(i), 0, 21))?.line, 7, `map ${i} resolves`);
    // s0 stays the most recently used.
    await r.original(script(0), 0, 21);
  }
  assert(r.cachedBytes <= SOURCE_MAP_LIMITS.cached_map_bytes, `${r.cachedBytes} within the budget`);
  assert(r.cachedBytes >= 4 * big.length, `${r.cachedBytes}: full maps stay until the budget`);
  const before = fetched.length;
  await r.original(script(0), 0, 21);
  assertEquals(fetched.length, before, "the most recently used map stayed");
  await r.original(script(1), 0, 21);
  assertEquals(fetched.length, before + 2, "the least recently used map was evicted and is read again");
});

Deno.test("page document: one renderer read serves a burst of rows, a new document reads again", async () => {
  let reads = 0;
  const page = {
    id: "p1",
    url: "http://127.0.0.1:9/inline.html",
    mainFrameId: "F",
    loaderId: "L1",
    send: (method: string) => {
      reads++;
      assertEquals(method, "Page.getResourceContent");
      return Promise.resolve({ content: `<script>doc ${page.loaderId}</script>`, base64Encoded: false });
    },
  };
  const asPage = page as unknown as PageTarget;
  const docs = await Promise.all(
    Array.from({ length: 20 }, () => pageDocument(asPage, undefined, 40).text()),
  );
  assertEquals(new Set(docs), new Set(["<script>doc L1</script>"]));
  assertEquals(reads, 1, "twenty error rows, one read");
  page.loaderId = "L2";
  assertEquals(
    await pageDocument(asPage, undefined, 40).text(),
    "<script>doc L2</script>",
    "a reload is read anew",
  );
  assertEquals(reads, 2);
  await new Promise((r) => setTimeout(r, 80));
  await pageDocument(asPage, undefined, 40).text();
  assertEquals(reads, 3, "read again once the kept text is stale");
  const remote = { ...page, url: "https://example.test/" } as unknown as PageTarget;
  assertEquals(await pageDocument(remote).text(), null, "loopback documents only");
  assertEquals(reads, 3);
});
