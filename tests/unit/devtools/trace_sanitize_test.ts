import type * as Trace from "@paulirish/trace_engine";
import { assert, assertEquals } from "../../assert.ts";
import { sanitizeUrl } from "../../../src/browser/privacy.ts";
import { sanitizeTrace } from "../../../src/devtools/trace_sanitize.ts";
import { parseTrace, summarizeTrace } from "../../../src/devtools/trace_summary.ts";
import { loadTraceFixture } from "./trace_fixture.ts";

const PAGE = "https://shop.test:8443/checkout/pay?card=4111111111111111&session=s3cr3t#step2";

function events(): Array<Record<string, unknown>> {
  return [
    {
      name: "ResourceSendRequest",
      ph: "I",
      ts: 10,
      args: {
        data: {
          requestId: "1.7",
          url: PAGE,
          requestMethod: "POST",
          headers: [{ name: "Cookie", value: "sid=abc" }],
          initiator: { type: "script", url: "https://shop.test:8443/app.js?v=3" },
        },
      },
    },
    {
      name: "ResourceReceiveResponse",
      ph: "I",
      ts: 20,
      args: {
        data: {
          requestId: "1.7",
          statusCode: 200,
          headers: [{ name: "set-cookie", value: "sid=def" }],
          requestHeaders: { Authorization: "Bearer t0k3n" },
          responseHeaders: { "content-type": "text/html" },
          timing: { receiveHeadersEnd: 12.5, receiveHeadersStart: 11 },
        },
      },
    },
    {
      name: "TracingStartedInBrowser",
      ph: "I",
      ts: 1,
      args: {
        data: {
          frames: [{ frame: "F1", url: PAGE, name: "" }, { frame: "F2", url: "about:blank", name: "ad" }],
          documentURL: "https://shop.test:8443/checkout/pay?card=1",
          requestURL: "data:text/plain,secret",
          stackTrace: [{ functionName: "pay", url: "blob:https://shop.test:8443/5e1f", lineNumber: 3 }],
          process_lock: "{ https://shop.test:8443/checkout/pay?session=s3cr3t }",
          fileName: "relative/not-a-url.js",
          sourceURL: "",
          nodeName: "H1 id='hero'",
        },
      },
    },
  ];
}

Deno.test("sanitizeTrace: URL fields hashed like stored event rows, header arrays/objects dropped, shape kept", () => {
  const input = { traceEvents: events(), metadata: { "trace-url": PAGE, source: "DevTools" } };
  const before = JSON.stringify(input);
  const r = sanitizeTrace(input);
  assertEquals(JSON.stringify(input), before, "the input is not changed");
  const out = r.trace as {
    traceEvents: Array<{ args: { data: Record<string, unknown> } }>;
    metadata: unknown;
  };
  const [send, recv, started] = out.traceEvents.map((e) => e.args.data);
  const page = sanitizeUrl(PAGE).redacted;
  assert(page.startsWith("https://shop.test:8443/~") && page.endsWith("?card=&session="), page);

  assertEquals(send, {
    requestId: "1.7",
    url: page,
    requestMethod: "POST",
    initiator: { type: "script", url: sanitizeUrl("https://shop.test:8443/app.js?v=3").redacted },
  });
  // Numbers named for headers (timing) stay: only header arrays/objects go.
  assertEquals(recv, {
    requestId: "1.7",
    statusCode: 200,
    timing: { receiveHeadersEnd: 12.5, receiveHeadersStart: 11 },
  });
  assertEquals(started.frames, [{ frame: "F1", url: page, name: "" }, {
    frame: "F2",
    url: "about:blank",
    name: "ad",
  }]);
  assertEquals(started.documentURL, "https://shop.test:8443/~" + sanitizeUrl(PAGE).path_hash + "?card=");
  assertEquals(started.requestURL, "data:<redacted>");
  assertEquals(started.stackTrace, [{ functionName: "pay", url: "blob:<redacted>", lineNumber: 3 }]);
  assertEquals(
    started.process_lock,
    `{ ${sanitizeUrl("https://shop.test:8443/checkout/pay?session=x").redacted} }`,
  );
  assertEquals(started.fileName, "<invalid-url>", "a URL field fails closed on what is not a URL");
  assertEquals(started.sourceURL, "");
  assertEquals(started.nodeName, "H1 id='hero'");
  assertEquals(out.metadata, { "trace-url": page, source: "DevTools" });
  assertEquals(r.headers, 4);

  const text = JSON.stringify(out);
  for (
    const leak of ["s3cr3t", "4111", "checkout", "step2", "sid=", "Bearer", "content-type", "secret", "5e1f"]
  ) {
    assert(!text.includes(leak), `${leak} is gone: ${text}`);
  }
  // The same URL always becomes the same string, so what the engine joins by URL still joins.
  assertEquals(r.urls, 9);
});

Deno.test("sanitizeTrace: a bare event array, and values that are not objects, pass through", () => {
  assertEquals(sanitizeTrace([{ name: "x", args: { url: "http://a.test/p?q=1" } }]).trace, [
    { name: "x", args: { url: sanitizeUrl("http://a.test/p?q=1").redacted } },
  ]);
  assertEquals(sanitizeTrace(null).trace, null);
  assertEquals(sanitizeTrace(7).trace, 7);
  const untouched = { traceEvents: [{ name: "Layout", ts: 1, args: {} }] };
  assert(sanitizeTrace(untouched).trace === untouched, "nothing to replace: the same tree back");
});

Deno.test("sanitizeTrace: a real reload trace still parses in the trace engine to the same summary", async () => {
  const raw = await loadTraceFixture("shift_reload");
  const r = sanitizeTrace({ traceEvents: raw });
  const clean = (r.trace as { traceEvents: Trace.Types.Events.Event[] }).traceEvents;
  assertEquals(clean.length, raw.length, "every event kept");
  assert(r.urls > 20 && r.headers >= 1, `URLs ${r.urls}, headers ${r.headers}`);
  const text = JSON.stringify(clean);
  assert(!text.includes("/performance/shift.html"), "no path left");
  assert(!/"headers":\[/.test(text), "no header array left");

  const a = summarizeTrace(await parseTrace(structuredClone(raw)));
  const b = summarizeTrace(await parseTrace(clean));
  assertEquals(b.lcp?.node_id, a.lcp?.node_id);
  assertEquals(b.lcp?.ms, a.lcp?.ms);
  assertEquals(b.cls, a.cls);
  assertEquals(b.layout_shifts, a.layout_shifts);
  assertEquals(b.long_tasks, a.long_tasks);
  assertEquals(b.navigation_ts_us, a.navigation_ts_us);
  assert(b.url.startsWith("http://127.0.0.1:") && b.url.includes("/~"), `main frame URL hashed: ${b.url}`);
});
