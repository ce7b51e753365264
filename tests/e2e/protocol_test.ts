import { assert, assertEquals, assertRejects } from "../assert.ts";
import { e2e, startServer } from "./harness.ts";

async function listRaw(client: Awaited<ReturnType<typeof startServer>>["client"], cursor?: string) {
  return await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }) as {
    tools: Array<{ name: string; inputSchema: Record<string, unknown> }>;
    nextCursor?: string;
    ttlMs?: number;
    cacheScope?: string;
  };
}

Deno.test({
  name: "modern discovery, then tools/list paged to the end",
  ...e2e,
  fn: async () => {
    const server = await startServer({ protocol: "2026-07-28" });
    try {
      assertEquals(server.client.getProtocolEra(), "modern");
      assertEquals(server.client.getNegotiatedProtocolVersion(), "2026-07-28");
      const discovered = server.client.getDiscoverResult() as { ttlMs?: number } | undefined;
      assert(discovered, "server/discover result is available");
      assertEquals(discovered.ttlMs ?? 0, 0, "discovery is not cached");
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await listRaw(server.client, cursor);
        pages++;
        assert(page.tools.length <= 8, `page has ${page.tools.length} tools`);
        assert(new TextEncoder().encode(JSON.stringify(page)).byteLength <= 192 * 1024);
        assertEquals(page.ttlMs, 60_000);
        assertEquals(page.cacheScope, "private");
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor);
      assert(pages >= 3, `catalogue spans ${pages} pages`);
      assertEquals(names, [...names].sort(), "name-sorted");
      assertEquals(new Set(names).size, names.length, "no duplicates");
      for (
        const required of ["start_browser", "click", "fill", "press_keys", "snapshot_page", "take_screenshot"]
      ) {
        assert(names.includes(required), `${required} listed`);
      }
      const all = await server.client.listTools();
      assertEquals(all.tools.map((t) => t.name), names, "SDK listing walks the same pages");

      await assertRejects(() => listRaw(server.client, "bm90LWEtY3Vyc29y"), Error, "Invalid cursor");

      const resources = await server.client.request({ method: "resources/list", params: {} }) as {
        resources: unknown[];
        ttlMs?: number;
      };
      assertEquals(resources.resources, []);
      assertEquals(resources.ttlMs, 0);
      const templates = await server.client.request({ method: "resources/templates/list", params: {} }) as {
        resourceTemplates: Array<{ uriTemplate: string }>;
        ttlMs?: number;
      };
      assertEquals(templates.resourceTemplates.map((t) => t.uriTemplate), ["krometrail://evidence/{+path}"]);
      assertEquals(templates.ttlMs, 60_000);
      await assertRejects(
        () => server.client.readResource({ uri: "krometrail://evidence/screenshots/nope.png" }),
        Error,
        "only in the process",
      );
      await assertRejects(
        () => server.client.readResource({ uri: "krometrail://evidence/../../etc/passwd" }),
        Error,
        "No evidence resource",
      );
    } finally {
      await server.close();
    }
  },
});

for (const version of ["2025-11-25", "2025-06-18"] as const) {
  Deno.test({
    name: `legacy ${version} initialize gets the complete catalogue in one response`,
    ...e2e,
    fn: async () => {
      const modern = await startServer({ protocol: "2026-07-28" });
      const modernNames = (await modern.client.listTools()).tools.map((t) => t.name);
      let firstCursor: string | undefined;
      try {
        firstCursor = (await listRaw(modern.client)).nextCursor;
      } finally {
        await modern.close();
      }
      const server = await startServer({ protocol: version });
      try {
        assertEquals(server.client.getProtocolEra(), "legacy");
        assertEquals(server.client.getNegotiatedProtocolVersion(), version);
        const page = await listRaw(server.client);
        assertEquals(page.nextCursor, undefined);
        assertEquals(page.ttlMs, undefined, "no modern cache fields on legacy results");
        assertEquals(page.tools.map((t) => t.name), modernNames);
        for (const tool of page.tools) assertEquals(tool.inputSchema.additionalProperties, false, tool.name);
        await assertRejects(() => listRaw(server.client, "anything"), Error, "Invalid cursor");
        assert(firstCursor);
        await assertRejects(() => listRaw(server.client, firstCursor), Error, "Invalid cursor");
        const status = await server.call("browser_status");
        assertEquals(status.isError, undefined);
      } finally {
        await server.close();
      }
    },
  });
}
