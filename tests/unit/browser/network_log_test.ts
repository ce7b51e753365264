import type { Protocol } from "devtools-protocol";
import { assert, assertEquals } from "../../assert.ts";
import { NETWORK_LOG_LIMITS, NetworkLog } from "../../../src/browser/network_log.ts";
import type { PageTarget } from "../../../src/browser/targets.ts";
import { SourceMapResolver } from "../../../src/browser/source_maps.ts";
import { describeRequest, requestText } from "../../../src/devtools/network_detail.ts";

// The log reads only a page's id.
const page = (id: string) => ({ id }) as unknown as PageTarget;
const p1 = page("p1");
const p2 = page("p2");

function sent(
  requestId: string,
  url = "http://127.0.0.1/a",
  extra: Partial<Protocol.Network.RequestWillBeSentEvent> = {},
) {
  return {
    requestId,
    loaderId: "L",
    documentURL: "http://127.0.0.1/",
    request: {
      url,
      method: "GET",
      headers: { Accept: "*/*" },
      initialPriority: "High",
      referrerPolicy: "no-referrer",
    },
    timestamp: 10,
    wallTime: 1_700_000_000,
    initiator: { type: "other" },
    redirectHasExtraInfo: false,
    type: "Fetch",
    ...extra,
  } as Protocol.Network.RequestWillBeSentEvent;
}

function response(requestId: string, status = 200): Protocol.Network.ResponseReceivedEvent {
  return {
    requestId,
    loaderId: "L",
    timestamp: 10.1,
    type: "Fetch",
    hasExtraInfo: true,
    response: {
      url: "http://127.0.0.1/a",
      status,
      statusText: "OK",
      headers: { "Content-Type": "application/json" },
      mimeType: "application/json",
      charset: "",
      connectionReused: false,
      connectionId: 1,
      encodedDataLength: 120,
      securityState: "insecure",
      protocol: "http/1.1",
    },
  } as Protocol.Network.ResponseReceivedEvent;
}

Deno.test("network log: one request's life, ExtraInfo headers in either order", () => {
  const log = new NetworkLog();
  // Chrome may send the ExtraInfo before the request itself.
  log.sentExtra(p1, {
    requestId: "r1",
    headers: { Cookie: "sid=1", Accept: "*/*" },
  } as unknown as Protocol.Network.RequestWillBeSentExtraInfoEvent);
  log.willBeSent(p1, sent("r1"));
  log.response(p1, response("r1"));
  log.receivedExtra(p1, {
    requestId: "r1",
    headers: { "Set-Cookie": "a=1" },
    headersText: "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\n\r\n",
  } as unknown as Protocol.Network.ResponseReceivedExtraInfoEvent);
  log.data(p1, { requestId: "r1", timestamp: 10.15, dataLength: 50, encodedDataLength: 50 });
  log.data(p1, { requestId: "r1", timestamp: 10.16, dataLength: 25, encodedDataLength: 25 });
  log.finished(p1, { requestId: "r1", timestamp: 10.2, encodedDataLength: 200 });
  const hit = log.lookup("r1");
  assert(hit.found);
  const e = hit.found;
  assertEquals(e.state, "finished");
  assertEquals(e.sent_headers, { Cookie: "sid=1", Accept: "*/*" });
  assertEquals(e.received_headers, { "Set-Cookie": "a=1" });
  assertEquals(e.received_headers_text_bytes, "HTTP/1.1 200 OK\r\nSet-Cookie: a=1\r\n\r\n".length);
  assertEquals(e.data_bytes, 75);
  assertEquals(e.encoded_bytes, 200);
  assertEquals(e.response?.status, 200);
});

Deno.test("network log: request ExtraInfo after the response is kept; a redirect hop's goes to that hop", () => {
  const log = new NetworkLog();
  log.willBeSent(p1, sent("late"));
  log.response(p1, response("late"));
  log.sentExtra(p1, {
    requestId: "late",
    headers: { Cookie: "sid=2" },
  } as unknown as Protocol.Network.RequestWillBeSentExtraInfoEvent);
  assertEquals(log.lookup("late").found?.sent_headers, { Cookie: "sid=2" });

  log.willBeSent(p1, sent("hop", "http://127.0.0.1/old"));
  log.sentExtra(p1, {
    requestId: "hop",
    headers: { ":path": "/old" },
  } as unknown as Protocol.Network.RequestWillBeSentExtraInfoEvent);
  // The next hop's ExtraInfo comes before its requestWillBeSent.
  log.sentExtra(p1, {
    requestId: "hop",
    headers: { ":path": "/new" },
  } as unknown as Protocol.Network.RequestWillBeSentExtraInfoEvent);
  log.willBeSent(
    p1,
    sent("hop", "http://127.0.0.1/new", { redirectResponse: response("hop", 302).response, timestamp: 11 }),
  );
  assertEquals(log.lookup("hop").found?.sent_headers, { ":path": "/new" });
});

Deno.test("network log: failures, redirects and page scoping", () => {
  const log = new NetworkLog();
  log.willBeSent(p1, sent("r2", "http://127.0.0.1/old"));
  log.willBeSent(
    p1,
    sent("r2", "http://127.0.0.1/new", { redirectResponse: response("r2", 302).response, timestamp: 11 }),
  );
  log.failed(p1, {
    requestId: "r2",
    timestamp: 11.5,
    type: "Fetch",
    errorText: "net::ERR_FAILED",
    canceled: false,
  });
  const hit = log.lookup("r2");
  assert(hit.found);
  assertEquals(hit.found.url, "http://127.0.0.1/new");
  assertEquals(hit.found.redirects, [{ url: "http://127.0.0.1/old", status: 302 }]);
  assertEquals(hit.found.issued, 10, "the chain's start");
  assertEquals(hit.found.failure, { error: "net::ERR_FAILED", canceled: false });
  assertEquals(log.lookup("r2", "p2"), { reason: "other_page", page_id: "p1" });
  // The same id on two pages: page_id picks one, no page_id the latest.
  log.willBeSent(p2, sent("r2", "http://127.0.0.1/p2", { timestamp: 20 }));
  assertEquals(log.lookup("r2", "p1").found?.url, "http://127.0.0.1/new");
  assertEquals(log.lookup("r2").found?.page_id, "p2");
  assertEquals(log.lookup("never"), { reason: "unknown" });
});

Deno.test("network log: bounded, least recently used out first, aged-out ids say so", () => {
  const log = new NetworkLog();
  const n = NETWORK_LOG_LIMITS.max_requests;
  for (let i = 0; i < n; i++) log.willBeSent(p1, sent(`q${i}`));
  // Reading q0 makes it recent, so q1 is the first out.
  assert(log.lookup("q0").found);
  log.willBeSent(p1, sent("q-new"));
  assertEquals(log.size, n);
  assert(log.lookup("q0").found, "recently read stays");
  assertEquals(log.lookup("q1"), { reason: "aged_out" });
  assert(log.lookup("q-new").found);
});

Deno.test("network log: data: URLs and deep initiator stacks are kept small", () => {
  const log = new NetworkLog();
  const frame = (i: number) => ({
    functionName: `f${i}`,
    scriptId: "1",
    url: "http://127.0.0.1/a.js",
    lineNumber: i,
    columnNumber: 0,
  });
  let stack: Protocol.Runtime.StackTrace = { callFrames: [frame(0), frame(1)] };
  for (let i = 2; i < 40; i += 2) stack = { callFrames: [frame(i), frame(i + 1)], parent: stack };
  log.willBeSent(
    p1,
    sent("d1", `data:image/png;base64,${"A".repeat(1_000_000)}`, { initiator: { type: "script", stack } }),
  );
  const e = log.lookup("d1").found;
  assert(e);
  assertEquals(e.url, `data:image/png,<${"data:image/png;base64,".length + 1_000_000} chars>`);
  assertEquals(e.initiator.stack?.callFrames.length, 8);
  assertEquals(e.initiator.stack?.parent, undefined);
  assertEquals(e.initiator.stack?.callFrames[0].functionName, "f38");
});

Deno.test("network log → detail: a fragment is kept for the route but masked, :path and Referer follow query", async () => {
  const log = new NetworkLog();
  log.willBeSent(
    p1,
    sent("doc1", "http://127.0.0.1/cb?code=c0de99", {
      type: "Document",
      request: {
        url: "http://127.0.0.1/cb?code=c0de99",
        urlFragment: "#access_token=tok-frag-55&state=st8",
        method: "GET",
        headers: {},
        initialPriority: "VeryHigh",
        referrerPolicy: "strict-origin-when-cross-origin",
      },
    }),
  );
  log.sentExtra(p1, {
    requestId: "doc1",
    headers: { ":path": "/cb?code=c0de99", Referer: "http://127.0.0.1/login?user=bob77" },
  } as unknown as Protocol.Network.RequestWillBeSentExtraInfoEvent);
  const e = log.lookup("doc1").found;
  assert(e);
  // The log keeps what the page has (in memory only); what is shown masks it.
  assertEquals(e.url, "http://127.0.0.1/cb?code=c0de99#access_token=tok-frag-55&state=st8");
  const resolver = new SourceMapResolver(() => Promise.reject(new Error("no fetch")));
  const d = await describeRequest(e, false, resolver);
  assertEquals(d.url, "http://127.0.0.1/cb?code=<6 chars>#access_token=<redacted: 11 chars>&state=<3 chars>");
  const shown = Object.fromEntries(d.request_headers.map((h) => [h.name, h.value]));
  assertEquals(shown[":path"], "/cb?code=<6 chars>");
  assertEquals(shown.Referer, "http://127.0.0.1/login?user=<5 chars>");
  const all = JSON.stringify(d) + requestText(d);
  for (const secret of ["c0de99", "tok-frag-55", "st8", "bob77"]) assert(!all.includes(secret), secret);
  const asked = await describeRequest(e, true, resolver);
  assertEquals(asked.url, "http://127.0.0.1/cb?code=c0de99#access_token=<redacted: 11 chars>&state=st8");
  assertEquals(asked.request_headers.find((h) => h.name === ":path")?.value, "/cb?code=c0de99");
});
