import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, structured, textOf, withServer } from "./harness.ts";
import type { ServerHandle } from "./harness.ts";

interface Event {
  kind: string;
  level: string | null;
  text: string | null;
  interaction_id: string | null;
  page_id: string | null;
  data: Record<string, unknown> | null;
}

interface Probe {
  status?: number;
  body?: string;
  rejected?: string;
  ms: number;
}

const DELAY_MS = 800;

async function probe(server: ServerHandle, url: string, pageId?: string): Promise<Probe> {
  const r = await server.call("evaluate_page", {
    expression: `probe(${JSON.stringify(url)})`,
    ...(pageId ? { page_id: pageId } : {}),
  });
  assert(!r.isError, textOf(r));
  return structured(r).value as Probe;
}

async function route(server: ServerHandle, args: Record<string, unknown>): Promise<string> {
  const r = await server.call("route_requests", args);
  assert(!r.isError, textOf(r));
  return String((structured(r).route as { route_id: string }).route_id);
}

async function events(server: ServerHandle, kinds: string[]): Promise<Event[]> {
  return structured(await server.call("query_browser_events", { kinds, max_events: 200 })).events as Event[];
}

Deno.test({
  name:
    "routes: fulfill JSON, abort, delay and fail_after, each a route event tied to its interaction; counted, removed",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/routes/index.html` });
      const items = await route(server, {
        url: "**/routes/api/items",
        action: "fulfill",
        json: { items: [1, 2] },
      });
      const gone = await route(server, {
        url: "/routes/api/gone",
        action: "abort",
        reason: "connection_refused",
      });
      const slow = await route(server, {
        url: `${site.origin}/routes/data.json`,
        action: "delay",
        delay_ms: DELAY_MS,
      });
      const flaky = await route(server, { url: "**/routes/data.json?n=*", action: "fail_after", count: 2 });
      const sizes = [JSON.stringify((await server.call("list_routes")).structuredContent).length];

      // A click that fetches: the page sees the JSON, and the route event is the click's.
      const clicked = structured(await server.call("click", { selector: "#load" }));
      const interaction = String(clicked.interaction_id);
      let shown = "";
      for (let i = 0; i < 100 && !shown.startsWith("200"); i++) {
        shown = String(
          structured(await server.call("evaluate_page", { expression: "out.textContent" })).value,
        );
        if (!shown.startsWith("200")) await new Promise((r) => setTimeout(r, 100));
      }
      assertEquals(shown, '200 application/json {"items":[1,2]}');

      const aborted = await probe(server, "/routes/api/gone");
      assert(aborted.rejected !== undefined, `the aborted fetch rejects: ${JSON.stringify(aborted)}`);
      const delayed = await probe(server, "/routes/data.json");
      assertEquals(
        JSON.parse(delayed.body ?? "null"),
        { real: true },
        "a delayed request reaches the server",
      );
      assert(delayed.ms >= DELAY_MS, `delayed by ≥ ${DELAY_MS} ms in the page: ${delayed.ms}`);
      const fast = await probe(server, "/routes/data.json?other");
      assertEquals(fast.status, 200, "a URL no route matches is not held");
      const tries = [];
      for (const n of [1, 2, 3, 4]) tries.push(await probe(server, `/routes/data.json?n=${n}`));
      assertEquals(tries.map((t) => t.status ?? "rejected"), [200, 200, "rejected", "rejected"]);

      // A cross-origin mock answers its CORS preflight too (not counted: the request it asks about is).
      const cors = await route(server, {
        url: "http://localhost:1/api/cors",
        method: "PUT",
        action: "fulfill",
        json: { ok: true },
      });
      const crossed = structured(
        await server.call("evaluate_page", {
          expression:
            `fetch("http://localhost:1/api/cors", { method: "PUT", headers: { "x-token": "1" }, body: "{}" })
              .then((r) => r.text(), (e) => "rejected " + e.message)`,
        }),
      ).value;
      assertEquals(crossed, '{"ok":true}');

      // Routes outlive navigation and reach pages opened later.
      await server.call("reload_page", {});
      assertEquals((await probe(server, "/routes/api/items")).body, '{"items":[1,2]}');
      const opened = structured(
        await server.call("create_page", { url: `${site.origin}/routes/index.html` }),
      );
      const later = String(opened.page_id);
      assertEquals((await probe(server, "/routes/api/items", later)).body, '{"items":[1,2]}');

      // A page-scoped route holds on its page only.
      const only = await route(server, {
        url: "**/routes/api/only",
        action: "fulfill",
        body: "later",
        page_id: later,
      });
      assertEquals((await probe(server, "/routes/api/only", later)).body, "later");
      assertEquals((await probe(server, "/routes/api/only", "p1")).status, 404);
      const noPage = await server.call("route_requests", { url: "**", action: "abort", page_id: "p99" });
      assertEquals(errorCode(noPage), "page_not_found");

      const listed = structured(await server.call("list_routes"));
      const counts = Object.fromEntries(
        (listed.routes as Array<{ route_id: string; matched: number }>).map((r) => [r.route_id, r.matched]),
      );
      assertEquals(counts, { [items]: 3, [gone]: 1, [slow]: 1, [flaky]: 4, [cors]: 1, [only]: 1 });
      sizes.push(JSON.stringify(listed).length + textOf(await server.call("list_routes")).length);

      const removed = structured(await server.call("unroute", { route_id: gone }));
      assertEquals(removed.removed, [gone]);
      assertEquals(
        (await probe(server, "/routes/api/gone", later)).status,
        404,
        "unrouted: the server answers",
      );
      assertEquals(errorCode(await server.call("unroute", { route_id: gone })), "route_not_found");

      const routed = await events(server, ["route"]);
      const of = (id: string) => routed.filter((e) => e.data?.route_id === id);
      const clickEvent = of(items)[0];
      assertEquals(
        clickEvent?.interaction_id,
        interaction,
        `the click's fetch: ${JSON.stringify(clickEvent)}`,
      );
      assert(
        /^route r\d+ fulfilled GET http:\/\/127\.0\.0\.1:\d+\/~\w+ 200$/.test(clickEvent.text ?? ""),
        clickEvent.text ?? "",
      );
      assertEquals(clickEvent.data?.status, 200);
      assertEquals(of(items).map((e) => e.page_id), ["p1", "p1", later]);
      assertEquals(of(gone).map((e) => [e.data?.outcome, e.data?.reason]), [[
        "aborted",
        "connection_refused",
      ]]);
      assertEquals(of(slow).map((e) => [e.data?.outcome, e.data?.delay_ms]), [["delayed", DELAY_MS]]);
      assertEquals(of(flaky).map((e) => e.data?.outcome), ["passed", "passed", "failed", "failed"]);
      assert(!JSON.stringify(routed).includes("/routes/api"), "route event URLs go through the sanitizer");

      const failed = (await events(server, ["request_failed"])).filter((e) =>
        e.data?.request_id === of(gone)[0]?.data?.request_id
      );
      assertEquals(failed.length, 1, "the aborted request is a request_failed event");
      assert(String(failed[0].data?.error).includes("CONNECTION_REFUSED"), JSON.stringify(failed[0]));

      // Refusals carry their limits; all: true clears, and then the page stops intercepting.
      const tooSlow = await server.call("route_requests", { url: "**", action: "delay", delay_ms: 60_001 });
      assertEquals(errorCode(tooSlow), "resource_limit_exceeded");
      assertEquals(errorCode(await server.call("unroute", {})), "invalid_arguments");
      const cleared = structured(await server.call("unroute", { all: true }));
      assertEquals((cleared.removed as string[]).length, 5);
      assertEquals((await probe(server, "/routes/api/items")).status, 404);

      // Routes belong to the session: stop_browser drops them.
      await route(server, { url: "**", action: "abort" });
      await server.call("stop_browser", {});
      assert(!(await server.call("start_browser", { temporary: true })).isError);
      assertEquals(structured(await server.call("list_routes")).total, 0);
      console.error(`routes response sizes (structured+text chars): ${sizes.join(", ")}`);
    }, { browser: {} }),
});
