import type { Protocol } from "devtools-protocol";
import { assert, assertEquals } from "../../assert.ts";
import type { BrowserSession } from "../../../src/browser/session.ts";
import type { PageTarget } from "../../../src/browser/targets.ts";
import { collectEvents, MAX_EVENTS } from "../../../src/scenario/step_events.ts";
import {
  consoleText,
  exceptionParts,
  headerNames,
  wsPayload,
} from "../../../src/scenario/step_events_parts.ts";

type Handler = (page: PageTarget, params: unknown) => void;

/** Just what the collector touches of a session: event subscription, page notifications, page setups. */
function fakeSession() {
  const handlers = new Map<string, Handler[]>();
  const added: Array<(p: PageTarget) => void> = [];
  const removed: Array<(p: PageTarget) => void> = [];
  const setups: string[] = [];
  const session = {
    selectedPageId: "p1",
    onPageEvent(event: string, h: Handler) {
      handlers.set(event, [...(handlers.get(event) ?? []), h]);
      return () => handlers.set(event, (handlers.get(event) ?? []).filter((x) => x !== h));
    },
    onPageAdded(l: (p: PageTarget) => void) {
      added.push(l);
      return () => {};
    },
    onPageRemoved(l: (p: PageTarget) => void) {
      removed.push(l);
      return () => {};
    },
    addPageSetup(key: string) {
      setups.push(key);
    },
  };
  const page = (id: string, opener?: string) =>
    ({ id, sessionId: `S${id}`, openerPageId: opener, url: `http://a.test/${id}` }) as unknown as PageTarget;
  return {
    session: session as unknown as BrowserSession,
    setups,
    page,
    emit: (event: string, p: PageTarget, params: unknown) =>
      (handlers.get(event) ?? []).forEach((h) => h(p, params)),
    add: (p: PageTarget) => added.forEach((l) => l(p)),
    remove: (p: PageTarget) => removed.forEach((l) => l(p)),
    count: (event: string) => handlers.get(event)?.length ?? 0,
  };
}

const redactor = { text: (s: string) => s.split("pw123").join("${secret:pw}"), isSecret: () => undefined };
const str = (value: string): Protocol.Runtime.RemoteObject => ({ type: "string", value });

Deno.test("events carry sequence, step and time; bounds cover each step, an empty step has end < start", () => {
  const f = fakeSession();
  let t = 0;
  const c = collectEvents(f.session, new Set(["console", "popups"] as const), redactor, (u) => u, () => ++t);
  const p1 = f.page("p1");
  f.emit("Runtime.consoleAPICalled", p1, {
    type: "log",
    args: [str("a"), str("pw123")],
    executionContextId: 1,
  });
  c.beginStep(1);
  c.beginStep(2);
  f.emit("Runtime.consoleAPICalled", p1, { type: "error", args: [str("b")], executionContextId: 1 });
  c.add({ time_ms: 5, kind: "request-refused", url: "http://x.test/" });
  const popup = f.page("p2", "p1");
  f.add(popup);
  f.emit("Runtime.consoleAPICalled", popup, {
    type: "log",
    args: [str("from popup")],
    executionContextId: 1,
  });
  f.emit("Runtime.consoleAPICalled", f.page("p9"), {
    type: "log",
    args: [str("other tab")],
    executionContextId: 1,
  });
  f.remove(popup);
  const s = c.snapshot();
  assertEquals(s.items.map((e) => [e.sequence, e.step_index, e.kind]), [
    [1, 0, "console"],
    [2, 2, "console"],
    [3, 2, "request-refused"],
    [4, 2, "popup-opened"],
    [5, 2, "console"],
    [6, 2, "popup-closed"],
  ]);
  assertEquals(s.items[0].text, "a ${secret:pw}");
  assertEquals(s.items[0].time_ms, 1);
  assertEquals(s.bounds(0), { start: 1, end: 1 });
  assertEquals(s.bounds(1), { start: 2, end: 1 });
  assertEquals(s.bounds(2), { start: 2, end: 6 });
  assertEquals(s.bounds(3), { start: 7, end: 6 });
  assertEquals(s.dropped, 0);
  c.stop();
  assertEquals(f.count("Runtime.consoleAPICalled"), 0);
});

Deno.test("only the requested families subscribe; network and workers install their page setups", () => {
  const f = fakeSession();
  const c = collectEvents(f.session, new Set(["page-errors"] as const), redactor, (u) => u, () => 0);
  assertEquals(f.count("Runtime.consoleAPICalled"), 0);
  assertEquals(f.count("Network.requestWillBeSent"), 0);
  assertEquals(f.count("Runtime.exceptionThrown"), 1);
  assertEquals(f.setups, []);
  c.stop();
  const g = fakeSession();
  collectEvents(g.session, new Set(["network", "workers"] as const), redactor, (u) => u, () => 0).stop();
  // Workers come through the page's one shared child auto-attachment (child_attach.ts, also the guard's).
  assertEquals(g.setups, ["scenario-events-network", "scenario_child_attach", "scenario-events-workers"]);
});

Deno.test("network events keep header names only, a redirect answers before its next hop, failures name why", () => {
  const f = fakeSession();
  const c = collectEvents(
    f.session,
    new Set(["network"] as const),
    redactor,
    (u) => u.replace("pw123", "${secret:pw}"),
    () => 0,
  );
  const p = f.page("p1");
  const request = (url: string, redirectResponse?: unknown) => ({
    requestId: "r1",
    type: "Document",
    request: { method: "GET", url, headers: { Cookie: "pw123", "User-Agent": "x" } },
    redirectResponse,
  });
  f.emit("Network.requestWillBeSent", p, request("http://a.test/?k=pw123"));
  f.emit(
    "Network.requestWillBeSent",
    p,
    request("http://a.test/next", {
      url: "http://a.test/?k=pw123",
      status: 302,
      headers: { Location: "/next" },
    }),
  );
  f.emit("Network.loadingFailed", p, {
    requestId: "r1",
    type: "Document",
    errorText: "net::ERR_ABORTED",
    canceled: true,
  });
  const items = c.snapshot().items;
  assertEquals(items.map((e) => [e.kind, e.url, e.status]), [
    ["request", "http://a.test/?k=${secret:pw}", null],
    ["response", "http://a.test/?k=${secret:pw}", 302],
    ["request", "http://a.test/next", null],
    ["request-failed", "http://a.test/next", null],
  ]);
  assertEquals(items[0].header_names, ["cookie", "user-agent"]);
  assertEquals(items[3].failure, "net::ERR_ABORTED");
  assert(!JSON.stringify(items).includes("pw123"), "no header value or secret kept");
  assert(!JSON.stringify(items).includes("r1"), "no request id kept");
});

Deno.test("past the memory bound events are counted as dropped, not kept", () => {
  const f = fakeSession();
  const c = collectEvents(f.session, new Set(), redactor, (u) => u, () => 0);
  for (let i = 0; i < MAX_EVENTS + 3; i++) c.add({ time_ms: 0, kind: "console", text: "x" });
  const s = c.snapshot();
  assertEquals(s.items.length, MAX_EVENTS);
  assertEquals(s.dropped, 3);
  assertEquals(s.items[MAX_EVENTS - 1].sequence, MAX_EVENTS);
});

Deno.test("event parts: console text, exception stack, header names, websocket payloads", () => {
  assertEquals(
    consoleText([
      str("n"),
      { type: "number", value: 3 },
      { type: "undefined" },
      { type: "object", subtype: "null", value: null },
      { type: "bigint", unserializableValue: "5n" },
      {
        type: "object",
        description: "Object",
        preview: {
          type: "object",
          overflow: false,
          properties: [{ name: "a", type: "number", value: "1" }, { name: "b", type: "string", value: "x" }],
        },
      },
      { type: "function", description: "function f() {}" },
    ]),
    'n 3 undefined null 5n {a: 1, b: "x"} function f() {}',
  );
  const parts = exceptionParts({
    exceptionId: 1,
    text: "Uncaught",
    lineNumber: 0,
    columnNumber: 0,
    exception: { type: "object", description: "Error: boom\n    at f (http://a.test/x.js:1:2)" },
    stackTrace: {
      callFrames: [{
        functionName: "f",
        scriptId: "9",
        url: "http://a.test/x.js",
        lineNumber: 0,
        columnNumber: 1,
      }],
    },
  }, (u) => u.toUpperCase());
  assertEquals(parts, { message: "Error: boom", stack: "at f (HTTP://A.TEST/X.JS:1:2)" });
  assertEquals(headerNames({ B: "1", a: "2", b: "3" }), ["a", "b"]);
  const bound = (s: string) => ({ text: s.slice(0, 4), truncated: s.length > 4 });
  assertEquals(wsPayload({ opcode: 1, mask: false, payloadData: "héllo" }, bound), {
    payload_type: "text",
    payload_bytes: 6,
    payload_text: "héll",
    truncated: true,
  });
  assertEquals(wsPayload({ opcode: 2, mask: false, payloadData: "AQID" }, bound), {
    payload_type: "binary",
    payload_bytes: 3,
    payload_text: null,
    truncated: false,
  });
});
