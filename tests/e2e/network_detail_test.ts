import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

interface Event {
  kind: string;
  page_id: string | null;
  level: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

interface Frame {
  function: string;
  url: string;
  line: number;
  column: number;
  original?: { source: string; line: number; column: number; name?: string };
}

const AUTH = "Bearer netdetail-auth-4f7e9c2a1b";
const COOKIE = "netdetail_session=cookie-val-93ab51";
const BODY_MARK = "quokka-zebra-7731";

/** Polls query_browser_events until `pick` finds a row (events are written as Chrome reports them). */
async function eventWhere(
  server: ServerHandle,
  kinds: string[],
  pick: (e: Event) => boolean,
  timeoutMs = 10_000,
): Promise<Event> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = structured(await server.call("query_browser_events", { kinds, max_events: 200 }))
      .events as Event[];
    const hit = events.find(pick);
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error(`no ${kinds} event matched: ${JSON.stringify(events)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every file under `dir` whose bytes contain `needle`. */
async function filesContaining(dir: string, needle: string): Promise<string[]> {
  const target = new TextEncoder().encode(needle);
  const hits: string[] = [];
  const walk = async (d: string) => {
    for await (const entry of Deno.readDir(d)) {
      const path = join(d, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.isFile) {
        const bytes = await Deno.readFile(path).catch(() => new Uint8Array());
        outer: for (let i = 0; i + target.length <= bytes.length; i++) {
          for (let j = 0; j < target.length; j++) if (bytes[i + j] !== target[j]) continue outer;
          hits.push(path);
          break;
        }
      }
    }
  };
  await walk(dir);
  return hits;
}

const header = (list: unknown, name: string) =>
  (list as Array<{ name: string; value: string }>).find((h) => h.name.toLowerCase() === name)?.value;

Deno.test({
  name:
    "get_network_request: status, timings, redacted Authorization/Cookie, summarized JSON body (full only when asked, never on disk); source-mapped console errors; unknown ids",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      // The page's query reaches the fetch's Referer; its fragment (an OAuth-style token) stays in the URL.
      await server.call("navigate_page", {
        url: `${site.origin}/network/index.html?ref_q=refsecret77#access_token=fragtok55`,
      });
      await server.call("click", { selector: "#load" });
      const row = await eventWhere(
        server,
        ["request"],
        (e) => e.data?.resource_type === "Fetch" && e.data?.status === 200,
      );
      const requestId = String(row.data?.request_id);
      // The stored row keeps the path hashing; the live detail shows the real path.
      assert(!String(row.text).includes("api.json"), `stored row hashes the path: ${row.text}`);

      const plain = await server.call("get_network_request", { request_id: requestId });
      const d = structured(plain);
      assertEquals(d.method, "GET");
      assertEquals(d.status, 200);
      assertEquals(d.state, "finished");
      const url = String(d.url);
      assert(url.startsWith(`${site.origin}/network/api.json?user=<5 chars>&token=<redacted: `), url);
      assert(String(d.protocol).startsWith("http/1"), `protocol: ${d.protocol}`);
      assertEquals(d.resource_type, "Fetch");
      assertEquals(d.mime_type, "application/json");
      const timing = d.timing as Record<string, number | null>;
      assert(typeof timing.total_ms === "number" && timing.total_ms >= 0, JSON.stringify(timing));
      assert(typeof timing.wait_ms === "number" && timing.wait_ms >= 0, JSON.stringify(timing));
      const sizes = d.sizes as Record<string, number | null>;
      assertEquals(
        sizes.decoded_body_bytes,
        new TextEncoder().encode(
          await Deno.readTextFile(new URL("../../fixtures/site/network/api.json", import.meta.url)),
        ).length,
      );
      assert((sizes.transfer_bytes ?? 0) > (sizes.decoded_body_bytes ?? 0), JSON.stringify(sizes));
      assertEquals(header(d.request_headers, "authorization"), `<redacted: ${AUTH.length} chars>`);
      assertEquals(header(d.request_headers, "cookie"), `<redacted: ${COOKIE.length} chars>`);
      assertEquals(header(d.response_headers, "content-type"), "application/json");
      assert((d.redacted_headers as string[]).includes("authorization"), JSON.stringify(d.redacted_headers));
      assertEquals(d.body, undefined, "no body unless asked");
      const whole = textOf(plain) + JSON.stringify(d);
      assertEquals(
        header(d.request_headers, "referer"),
        `${site.origin}/network/index.html?ref_q=<11 chars>`,
      );
      for (
        const secret of ["netdetail-auth", "cookie-val-93ab51", "s3cretq", "alice", "refsecret77", BODY_MARK]
      ) {
        assertEquals(whole.includes(secret), false, `${secret} not shown: ${whole}`);
      }
      // The fetch's initiator stack, mapped back to the original source.
      const initiator = d.initiator as { type: string; stack: Frame[] };
      assertEquals(initiator.type, "script");
      const fetchFrame = initiator.stack.find((f) =>
        f.original?.name === "loadItems" || f.original?.line === 8
      );
      assert(fetchFrame?.original?.source === "src/app.ts", JSON.stringify(initiator));

      const withQuery = structured(
        await server.call("get_network_request", { request_id: requestId, query: true }),
      );
      assert(String(withQuery.url).includes("user=alice&token=<redacted: 7 chars>"), String(withQuery.url));
      assert(
        header(withQuery.request_headers, "referer")?.endsWith("?ref_q=refsecret77"),
        "shown when asked",
      );

      // The document's fragment token is masked like a query value, sensitive key or not asked.
      const docRow = await eventWhere(server, ["request"], (e) => e.data?.resource_type === "Document");
      const doc = await server.call("get_network_request", { request_id: String(docRow.data?.request_id) });
      assert(
        String(structured(doc).url).endsWith("#access_token=<redacted: 9 chars>"),
        String(structured(doc).url),
      );
      assert(!(textOf(doc) + JSON.stringify(structured(doc))).includes("fragtok55"), textOf(doc));

      const summary = await server.call("get_network_request", { request_id: requestId, body: "summary" });
      const sBody = structured(summary).body as Record<string, unknown>;
      assertEquals(sBody.kind, "json");
      assert(
        String(sBody.summary).includes(
          "object with keys items (array, 2 items), total (number), meta (object, 2 keys)",
        ),
        String(sBody.summary),
      );
      assert(!(textOf(summary) + JSON.stringify(sBody)).includes(BODY_MARK), "a summary shows no values");
      const asTrue = structured(
        await server.call("get_network_request", { request_id: requestId, body: true }),
      );
      assertEquals(asTrue.body, sBody, "body: true is the summary");

      const full = structured(
        await server.call("get_network_request", { request_id: requestId, body: "full" }),
      );
      const fBody = full.body as Record<string, unknown>;
      assert(String(fBody.content).includes(BODY_MARK), JSON.stringify(fBody));
      assertEquals(fBody.truncated, false);
      assertEquals(fBody.cap_chars, 65_536);

      // Unknown ids are a structured error that says where ids come from.
      const missing = await server.call("get_network_request", { request_id: "no-such-request" });
      assertEquals(errorCode(missing), "request_not_found");
      assert(textOf(missing).includes("query_browser_events"), textOf(missing));

      // A console error and an exception from the source-mapped script carry original positions.
      await server.call("click", { selector: "#boom" });
      const consoleRow = await eventWhere(server, ["console"], (e) => e.level === "error");
      const cFrames = consoleRow.data?.frames as Frame[];
      assertEquals(cFrames[0].original?.source, "src/app.ts", JSON.stringify(consoleRow));
      assertEquals(cFrames[0].original?.line, 3);
      assert(Array.isArray(consoleRow.data?.stack), "the function-name stack stays");
      assert(
        !cFrames[0].url.includes("app.js"),
        `stored frame URLs keep the path hashing: ${cFrames[0].url}`,
      );
      const thrown = await eventWhere(
        server,
        ["exception"],
        (e) => String(e.text).includes("netdetail boom"),
      );
      const tFrames = thrown.data?.frames as Frame[];
      assertEquals(tFrames[0].original?.line, 4, JSON.stringify(thrown));
      assertEquals(tFrames[1]?.original?.name, "reportFailure", JSON.stringify(tFrames));

      // An inline script's own map (data: URL in its block) maps frames that name the document.
      await server.call("navigate_page", { url: `${site.origin}/network/inline.html` });
      await server.call("click", { selector: "#inline" });
      const inline = await eventWhere(server, ["console"], (e) => e.text === "inline failure");
      const iFrames = inline.data?.frames as Frame[];
      assertEquals(
        iFrames[0].original,
        { source: "src/inline.ts", line: 12, column: 13 },
        JSON.stringify(inline),
      );

      // A closed page's requests keep their detail, but their bodies went with the renderer.
      await server.call("create_page", { url: `${site.origin}/network/index.html` });
      await server.call("click", { selector: "#load", page_id: "p2" });
      const p2Row = await eventWhere(
        server,
        ["request"],
        (e) => e.page_id === "p2" && e.data?.resource_type === "Fetch" && e.data?.status === 200,
      );
      const p2Id = String(p2Row.data?.request_id);
      assertEquals(
        errorCode(await server.call("get_network_request", { request_id: p2Id, page_id: "p1" })),
        "request_not_found",
      );
      await server.call("close_page", { page_id: "p2" });
      const gone = await server.call("get_network_request", { request_id: p2Id, body: "summary" });
      assertEquals(errorCode(gone), "body_unavailable", textOf(gone));
      assert(textOf(gone).includes("closed"), textOf(gone));
      const kept = structured(await server.call("get_network_request", { request_id: p2Id }));
      assertEquals([kept.page_id, kept.status], ["p2", 200]);
      // Naming the closed page still answers; a page the session never had is page_not_found.
      const byClosed = structured(
        await server.call("get_network_request", { request_id: p2Id, page_id: "p2" }),
      );
      assertEquals(byClosed.status, 200);
      const never = await server.call("get_network_request", { request_id: p2Id, page_id: "p999" });
      assertEquals(errorCode(never), "page_not_found", textOf(never));

      // Bodies and credentials never reach the data dir (index, segments, evidence).
      await server.call("query_browser_events", { max_events: 1 });
      for (const secret of [BODY_MARK, "netdetail-auth-4f7e9c2a1b", "cookie-val-93ab51"]) {
        assertEquals(await filesContaining(server.dataDir, secret), [], `${secret} under the data dir`);
      }
    }, { browser: {} }),
});
