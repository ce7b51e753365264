import { assert, assertEquals } from "../../assert.ts";
import {
  isSensitiveHeader,
  liveUrl,
  redactHeaders,
  timingPhases,
} from "../../../src/browser/network_headers.ts";

Deno.test("header redaction: credential values become placeholders with their length", () => {
  const r = redactHeaders({
    Authorization: "Bearer abc.def.ghi",
    Cookie: "sid=1; theme=dark",
    "Set-Cookie": "a=1; HttpOnly\nb=22; Secure",
    "X-Api-Key": "k-123",
    "X-CSRF-Token": "t0k",
    "Proxy-Authorization": "Basic Zm9vOmJhcg==",
    "Content-Type": "application/json",
    Accept: "*/*",
  });
  const value = (name: string) => r.headers.filter((h) => h.name === name).map((h) => h.value);
  assertEquals(value("Authorization"), ["<redacted: 18 chars>"]);
  assertEquals(value("Cookie"), ["<redacted: 17 chars>"]);
  assertEquals(value("Set-Cookie"), ["<redacted: 13 chars>", "<redacted: 12 chars>"], "one entry per cookie");
  assertEquals(value("X-Api-Key"), ["<redacted: 5 chars>"]);
  assertEquals(value("X-CSRF-Token"), ["<redacted: 3 chars>"]);
  assertEquals(value("Proxy-Authorization"), ["<redacted: 18 chars>"]);
  assertEquals(value("Content-Type"), ["application/json"]);
  assertEquals(value("Accept"), ["*/*"]);
  assertEquals(
    r.redacted.sort(),
    ["authorization", "cookie", "proxy-authorization", "set-cookie", "x-api-key", "x-csrf-token"],
  );
  assert(!JSON.stringify(r).includes("abc.def"), "no credential survives");
  for (const benign of ["content-length", "cache-control", "user-agent", "accept-encoding", "etag"]) {
    assertEquals(isSensitiveHeader(benign), false, benign);
  }
});

Deno.test("header redaction: bounded count and value length", () => {
  const many = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`x-h${i}`, "v"]));
  const r = redactHeaders(many);
  assertEquals(r.headers.length, 100);
  assertEquals(r.omitted, 20);
  const long = redactHeaders({ "x-long": "z".repeat(5000) });
  assertEquals(long.headers[0].value.length, 2049);
  assertEquals(redactHeaders(undefined).headers, []);
});

Deno.test("live URL: real path, query values hidden unless asked, sensitive ones always", () => {
  const raw = "https://user:pw@api.test:8443/v1/users/7?id=42&token=s3cr3t&flag#frag";
  assertEquals(
    liveUrl(raw, false),
    "https://api.test:8443/v1/users/7?id=<2 chars>&token=<redacted: 6 chars>&flag#frag",
  );
  assertEquals(
    liveUrl(raw, true),
    "https://api.test:8443/v1/users/7?id=42&token=<redacted: 6 chars>&flag#frag",
  );
  assertEquals(liveUrl("http://127.0.0.1:1/a.json", false), "http://127.0.0.1:1/a.json");
  assertEquals(liveUrl("data:image/png;base64,AAAA", false), "data:image/png,<26 chars>");
  assertEquals(liveUrl("not a url", false), "<invalid-url>");
});

const timing = {
  requestTime: 100,
  proxyStart: -1,
  proxyEnd: -1,
  dnsStart: 1,
  dnsEnd: 3,
  connectStart: 3,
  connectEnd: 10,
  sslStart: 5,
  sslEnd: 10,
  workerStart: -1,
  sendStart: 10.5,
  sendEnd: 11,
  receiveHeadersEnd: 50,
};

Deno.test("timing phases from Chrome's ResourceTiming", () => {
  const t = timingPhases(99.998, timing, 100.08);
  assertEquals(t, {
    queued_ms: 2,
    blocked_ms: 1,
    dns_ms: 2,
    connect_ms: 7,
    ssl_ms: 5,
    send_ms: 0.5,
    wait_ms: 39,
    receive_ms: 30,
    total_ms: 82,
  });
  // A reused connection: no dns or connect; in flight: no receive or total.
  const reused = timingPhases(100, {
    ...timing,
    dnsStart: -1,
    dnsEnd: -1,
    connectStart: -1,
    connectEnd: -1,
    sslStart: -1,
    sslEnd: -1,
  }, undefined);
  assertEquals([reused.dns_ms, reused.connect_ms, reused.ssl_ms, reused.receive_ms, reused.total_ms], [
    null,
    null,
    null,
    null,
    null,
  ]);
  assertEquals(reused.blocked_ms, 10.5);
  // A cache hit has no timing at all but a total.
  assertEquals(timingPhases(100, undefined, 100.005).total_ms, 5);
});
