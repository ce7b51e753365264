import { assert, assertEquals, assertMatch } from "../../assert.ts";
import {
  allowedHosts,
  constantTimeEqual,
  gate,
  type GateInput,
  newToken,
  securityHeaders,
} from "../../../src/viewer/security.ts";

const PORT = 41_234;
const TOKEN = newToken();

function req(over: Partial<GateInput> = {}): GateInput {
  return {
    method: "GET",
    path: `/${TOKEN}/api/sessions`,
    host: `127.0.0.1:${PORT}`,
    origin: null,
    contentType: null,
    ...over,
  };
}

function code(over: Partial<GateInput>): string | undefined {
  const r = gate(req(over), TOKEN, PORT);
  if (r.ok) return undefined;
  assertEquals(r.refusal.status, 403);
  return r.refusal.code;
}

Deno.test("tokens are 32 random bytes as base64url, different each time", () => {
  const a = newToken();
  const b = newToken();
  assertMatch(a, /^[A-Za-z0-9_-]{43}$/);
  assert(a !== b, "two tokens collided");
  assertEquals(atob(a.replace(/-/g, "+").replace(/_/g, "/") + "=").length, 32);
});

Deno.test("constant-time comparison is still a comparison", () => {
  assert(constantTimeEqual("abc", "abc"));
  assert(!constantTimeEqual("abc", "abd"));
  assert(!constantTimeEqual("abc", "abcd"));
  assert(!constantTimeEqual("", "a"));
});

Deno.test("the right token, host and no origin pass; the path after the token is returned", () => {
  const r = gate(req(), TOKEN, PORT);
  assert(r.ok);
  assertEquals(r.rest, "/api/sessions");
  const entry = gate(req({ path: `/${TOKEN}/` }), TOKEN, PORT);
  assert(entry.ok);
  assertEquals(entry.rest, "/");
  const bare = gate(req({ path: `/${TOKEN}` }), TOKEN, PORT);
  assert(bare.ok);
  assertEquals(bare.rest, "", "the token without its slash is told apart (the server redirects it)");
  for (const host of allowedHosts(PORT)) assert(gate(req({ host }), TOKEN, PORT).ok, host);
  assert(gate(req({ host: `LOCALHOST:${PORT}` }), TOKEN, PORT).ok, "host names are case-insensitive");
});

Deno.test("a missing or wrong token is viewer_token_required", () => {
  assertEquals(code({ path: "/" }), "viewer_token_required");
  assertEquals(code({ path: "/api/sessions" }), "viewer_token_required");
  assertEquals(code({ path: `/${TOKEN.slice(0, -1)}x/api/sessions` }), "viewer_token_required");
  assertEquals(code({ path: `/${TOKEN}x/` }), "viewer_token_required");
  assertEquals(code({ path: `/x/${TOKEN}/` }), "viewer_token_required");
});

Deno.test("a foreign or missing Host is refused before the token is looked at (DNS rebinding)", () => {
  assertEquals(code({ host: `evil.example:${PORT}` }), "viewer_host_refused");
  assertEquals(code({ host: "127.0.0.1" }), "viewer_host_refused");
  assertEquals(code({ host: `127.0.0.1:${PORT + 1}` }), "viewer_host_refused");
  assertEquals(code({ host: null }), "viewer_host_refused");
  assertEquals(code({ host: `evil.example:${PORT}`, path: "/nope" }), "viewer_host_refused");
});

Deno.test("an Origin other than the viewer's own is refused, for GET and POST", () => {
  assertEquals(code({ origin: "http://evil.example" }), "viewer_origin_refused");
  assertEquals(code({ origin: `http://127.0.0.1:${PORT + 1}` }), "viewer_origin_refused");
  assertEquals(code({ origin: "null" }), "viewer_origin_refused");
  assertEquals(
    code({ method: "POST", origin: "https://evil.example", contentType: "application/json" }),
    "viewer_origin_refused",
  );
  assert(gate(req({ origin: `http://localhost:${PORT}` }), TOKEN, PORT).ok);
});

Deno.test("a POST needs the viewer's Origin and a JSON body type", () => {
  const own = `http://127.0.0.1:${PORT}`;
  assertEquals(code({ method: "POST", contentType: "application/json" }), "viewer_origin_required");
  assertEquals(code({ method: "POST", origin: own, contentType: "text/plain" }), "viewer_json_required");
  assertEquals(
    code({ method: "POST", origin: own, contentType: "application/x-www-form-urlencoded" }),
    "viewer_json_required",
  );
  assertEquals(code({ method: "POST", origin: own }), "viewer_json_required");
  assert(
    gate(req({ method: "POST", origin: own, contentType: "application/json; charset=utf-8" }), TOKEN, PORT)
      .ok,
  );
});

Deno.test("other methods are refused", () => {
  const r = gate(req({ method: "PUT" }), TOKEN, PORT);
  assert(!r.ok);
  assertEquals(r.refusal.code, "viewer_method_refused");
  assert(!gate(req({ method: "OPTIONS", origin: "http://evil.example" }), TOKEN, PORT).ok);
});

Deno.test("HEAD is refused under api/ (it would run the GET handler) and served for the page", () => {
  for (const path of [`/${TOKEN}/api/sessions`, `/${TOKEN}/api/sessions/s1/artifacts`]) {
    const r = gate(req({ method: "HEAD", path }), TOKEN, PORT);
    assert(!r.ok, path);
    assertEquals([r.refusal.status, r.refusal.code], [405, "viewer_method_refused"]);
  }
  assert(gate(req({ method: "HEAD", path: `/${TOKEN}/` }), TOKEN, PORT).ok);
  assertEquals(code({ method: "HEAD", path: "/nope/api/sessions" }), "viewer_token_required");
});

Deno.test("every response header set is strict and has no CORS", () => {
  const h = securityHeaders();
  assertEquals(h["cache-control"], "no-store");
  assertEquals(h["x-content-type-options"], "nosniff");
  assertEquals(h["referrer-policy"], "no-referrer");
  assertMatch(h["content-security-policy"], /default-src 'self'/);
  assertMatch(h["content-security-policy"], /frame-ancestors 'none'/);
  assert(!Object.keys(h).some((k) => k.startsWith("access-control-")), "a CORS header");
});
