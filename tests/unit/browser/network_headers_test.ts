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

Deno.test("URL-valued headers are masked like the URL: :path, Referer, Location, Content-Location, Link", () => {
  const headers = {
    ":path": "/v1/users?id=42&token=s3cr3t",
    ":authority": "api.test",
    Referer: "http://127.0.0.1:8000/app?q=private#access_token=abc123&state=xyz",
    Location: "/login?next=%2Fhome&session_id=zz9",
    "Content-Location": "https://user:pw@cdn.test/a.json?v=123",
    Link: "</app.js?v=9>; rel=preload, <https://cdn.test/b.css?sig=777>; rel=preload",
    Refresh: "5; url=/done?code=4242",
    Accept: "*/*",
  };
  const shown = (showQuery: boolean) =>
    Object.fromEntries(redactHeaders(headers, showQuery).headers.map((h) => [h.name, h.value]));
  assertEquals(shown(false), {
    ":path": "/v1/users?id=<2 chars>&token=<redacted: 6 chars>",
    ":authority": "api.test",
    Referer: "http://127.0.0.1:8000/app?q=<7 chars>#access_token=<redacted: 6 chars>&state=<3 chars>",
    Location: "/login?next=<7 chars>&session_id=<redacted: 3 chars>",
    "Content-Location": "https://cdn.test/a.json?v=<3 chars>",
    Link: "</app.js?v=<1 chars>>; rel=preload, <https://cdn.test/b.css?sig=<3 chars>>; rel=preload",
    Refresh: "5; url=/done?code=<4 chars>",
    Accept: "*/*",
  });
  const asked = shown(true);
  assertEquals(asked[":path"], "/v1/users?id=42&token=<redacted: 6 chars>");
  assertEquals(
    asked.Referer,
    "http://127.0.0.1:8000/app?q=private#access_token=<redacted: 6 chars>&state=xyz",
  );
  assertEquals(asked.Location, "/login?next=%2Fhome&session_id=<redacted: 3 chars>");
  const all = JSON.stringify(shown(false));
  for (const secret of ["s3cr3t", "private", "abc123", "zz9", "4242", "777", "pw@"]) {
    assert(!all.includes(secret), `${secret} hidden without query: true`);
  }
  // The default is hidden: a caller that forgets the flag does not leak.
  assertEquals(redactHeaders({ ":path": "/a?b=1" }).headers[0].value, "/a?b=<1 chars>");
});

Deno.test("live URL: a fragment holding parameters is masked like the query; a plain anchor is kept", () => {
  const oauth = "http://127.0.0.1:1/cb#access_token=tok123&token_type=bearer&state=abc";
  assertEquals(
    liveUrl(oauth, false),
    "http://127.0.0.1:1/cb#access_token=<redacted: 6 chars>&token_type=<6 chars>&state=<3 chars>",
  );
  assertEquals(
    liveUrl(oauth, true),
    "http://127.0.0.1:1/cb#access_token=<redacted: 6 chars>&token_type=bearer&state=abc",
  );
  assertEquals(
    liveUrl("http://127.0.0.1:1/#/users/7?tab=billing&id_token=x.y.z", false),
    "http://127.0.0.1:1/#/users/7?tab=<7 chars>&id_token=<redacted: 5 chars>",
  );
  assertEquals(liveUrl("http://127.0.0.1:1/doc#section-2", false), "http://127.0.0.1:1/doc#section-2");
  assertEquals(liveUrl("http://127.0.0.1:1/doc?", false), "http://127.0.0.1:1/doc?");
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
