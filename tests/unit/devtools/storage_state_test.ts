import type { Protocol } from "devtools-protocol";
import { assert, assertEquals } from "../../assert.ts";
import {
  buildStorageState,
  parseStorageState,
  serializedOrigin,
  stateCookie,
} from "../../../src/devtools/storage_state.ts";
import { cookieRow, matchesFilter, shownValue } from "../../../src/devtools/cookies.ts";
import { ToolError } from "../../../src/errors.ts";

/** The field a refused document names, and that it is the storage-state error. */
function refusal(doc: unknown): string {
  try {
    parseStorageState(typeof doc === "string" ? doc : JSON.stringify(doc), "/tmp/state.json");
  } catch (err) {
    assert(err instanceof ToolError, `a ToolError, got ${err}`);
    assertEquals(err.code, "invalid_storage_state");
    assert(err.message.includes("/tmp/state.json"), "the message names the file");
    return String(err.details?.field);
  }
  throw new Error("accepted");
}

const cookie = {
  name: "sid",
  value: "v",
  domain: "127.0.0.1",
  path: "/",
  expires: -1,
  httpOnly: true,
  secure: false,
  sameSite: "Lax",
};

function chromeCookie(over: Partial<Protocol.Network.Cookie> = {}): Protocol.Network.Cookie {
  return {
    name: "sid",
    value: "secret",
    domain: "127.0.0.1",
    path: "/",
    expires: -1,
    size: 9,
    httpOnly: true,
    secure: false,
    session: true,
    priority: "Medium",
    sameParty: false,
    sourceScheme: "NonSecure",
    sourcePort: 8000,
    ...over,
  } as Protocol.Network.Cookie;
}

Deno.test("storage state: a Playwright file parses into CDP cookies and origins", () => {
  const parsed = parseStorageState(
    JSON.stringify({
      cookies: [
        cookie,
        { ...cookie, name: "pref", expires: 1_900_000_000, httpOnly: false, sameSite: "Strict" },
        { name: "byUrl", value: "u", url: "http://127.0.0.1:8000/app" },
      ],
      origins: [{ origin: "http://127.0.0.1:8000", localStorage: [{ name: "k", value: "v" }] }],
    }),
    "f",
  );
  assertEquals(parsed.cookies[0], {
    name: "sid",
    value: "v",
    domain: "127.0.0.1",
    path: "/",
    httpOnly: true,
    secure: false,
    sameSite: "Lax" as Protocol.Network.CookieSameSite,
  }, "-1 expires is a session cookie: no expires sent");
  assertEquals(parsed.cookies[1]?.expires, 1_900_000_000);
  assertEquals(parsed.cookies[2], { name: "byUrl", value: "u", url: "http://127.0.0.1:8000/app" });
  assertEquals(parsed.origins, [{
    origin: "http://127.0.0.1:8000",
    localStorage: [{ name: "k", value: "v" }],
  }]);
  assertEquals(parsed.not_loaded, []);
});

Deno.test("storage state: newer Playwright fields are tolerated and named when not loaded", () => {
  const parsed = parseStorageState(
    JSON.stringify({
      cookies: [{ ...cookie, partitionKey: "http://127.0.0.1", _crHasCrossSiteAncestor: false, extra: 1 }],
      origins: [
        { origin: "http://a.test", localStorage: [], indexedDB: [{ name: "db" }], opfs: [] },
      ],
      credentials: [{ id: "x" }],
      somethingNew: true,
    }),
    "f",
  );
  assertEquals(parsed.cookies[0]?.partitionKey, {
    topLevelSite: "http://127.0.0.1",
    hasCrossSiteAncestor: false,
  });
  assertEquals(parsed.not_loaded, ["origins[0].indexedDB", "credentials"]);
  // Both lists are optional in Playwright's schema.
  assertEquals(parseStorageState("{}", "f"), { cookies: [], origins: [], not_loaded: [] });
});

Deno.test("storage state: every malformed field is refused with its path", () => {
  assertEquals(refusal("not json"), "(file)");
  assertEquals(refusal([]), "(root)");
  assertEquals(refusal({ cookies: {} }), "cookies");
  assertEquals(refusal({ cookies: [{ ...cookie, value: 1 }] }), "cookies[0].value");
  assertEquals(refusal({ cookies: [cookie, { ...cookie, sameSite: "lax" }] }), "cookies[1].sameSite");
  assertEquals(refusal({ cookies: [{ ...cookie, expires: -5 }] }), "cookies[0].expires");
  assertEquals(refusal({ cookies: [{ ...cookie, expires: "soon" }] }), "cookies[0].expires");
  assertEquals(refusal({ cookies: [{ ...cookie, httpOnly: "yes" }] }), "cookies[0].httpOnly");
  assertEquals(refusal({ cookies: [{ name: "a", value: "b", path: "/" }] }), "cookies[0].domain");
  assertEquals(
    refusal({ cookies: [{ name: "a", value: "b", domain: "x", path: "rel" }] }),
    "cookies[0].path",
  );
  assertEquals(
    refusal({ cookies: [{ name: "a", value: "b", url: "http://x/", domain: "x" }] }),
    "cookies[0].url",
  );
  assertEquals(refusal({ cookies: [{ name: "a", value: "b", url: "file:///etc" }] }), "cookies[0].url");
  assertEquals(refusal({ origins: [{ origin: "about:blank", localStorage: [] }] }), "origins[0].origin");
  assertEquals(refusal({ origins: [{ origin: "http://a.test" }] }), "origins[0].localStorage");
  assertEquals(
    refusal({ origins: [{ origin: "http://a.test", localStorage: [{ name: "k", value: null }] }] }),
    "origins[0].localStorage[0].value",
  );
});

Deno.test("storage state: Chrome's cookies are written as Playwright writes them", () => {
  assertEquals(stateCookie(chromeCookie()), {
    name: "sid",
    value: "secret",
    domain: "127.0.0.1",
    path: "/",
    expires: -1,
    httpOnly: true,
    secure: false,
    sameSite: "Lax",
  }, "no SameSite attribute: Lax, as Playwright reports it");
  const persistent = stateCookie(
    chromeCookie({ session: false, expires: 1_900_000_000.5, sameSite: "None" }),
  );
  assertEquals([persistent.expires, persistent.sameSite], [1_900_000_000.5, "None"]);
  const state = buildStorageState([chromeCookie()], [
    { origin: "http://a.test", localStorage: [] },
    { origin: "http://b.test", localStorage: [{ name: "k", value: "v" }] },
  ]);
  assertEquals(state.origins, [{ origin: "http://b.test", localStorage: [{ name: "k", value: "v" }] }]);
  // What we write, we read back unchanged.
  const round = parseStorageState(JSON.stringify(state), "f");
  assertEquals(round.cookies[0]?.domain, "127.0.0.1");
  assertEquals(round.origins, state.origins);
});

Deno.test("storage state: origins are http(s) only, serialized", () => {
  assertEquals(serializedOrigin("HTTP://Example.com:80/path?q"), "http://example.com");
  assertEquals(serializedOrigin("https://127.0.0.1:8443"), "https://127.0.0.1:8443");
  assertEquals(serializedOrigin("file:///tmp/x"), undefined);
  assertEquals(serializedOrigin("not a url"), undefined);
});

Deno.test("cookies: values masked unless asked; domain filters follow cookie domain matching", () => {
  assertEquals(shownValue("secret", false), "<6 chars>");
  assertEquals(shownValue("secret", true), "secret");
  assertEquals(cookieRow(chromeCookie(), false).value, "<6 chars>");
  assertEquals(
    cookieRow(chromeCookie({ session: false, expires: 1_900_000_000.4 }), true).expires,
    1_900_000_000,
  );
  const host = chromeCookie({ domain: "app.example.com" });
  const wide = chromeCookie({ domain: ".example.com" });
  assert(matchesFilter(host, { domain: "app.example.com" }));
  assert(!matchesFilter(host, { domain: "example.com" }), "a host-only cookie is only its host's");
  assert(matchesFilter(wide, { domain: "app.example.com" }), "a domain cookie covers its subdomains");
  assert(matchesFilter(wide, { domain: "example.com" }));
  assert(!matchesFilter(wide, { domain: "other.com" }));
  assert(!matchesFilter(host, { name: "other" }));
  assert(!matchesFilter(host, { path: "/app" }));
});

Deno.test("storage state: a file that is not JSON is refused without echoing its contents", () => {
  let error: unknown;
  try {
    parseStorageState("root:x:0:0:root:/root:/bin/bash\n", "/etc/passwd");
  } catch (err) {
    error = err;
  }
  assert(error instanceof ToolError, String(error));
  assertEquals(error.code, "invalid_storage_state");
  const said = JSON.stringify({ message: error.message, details: error.details, recovery: error.recovery });
  assert(said.includes("not JSON"), said);
  assert(!said.includes("root:x"), `the file's first bytes stay out of the error: ${said}`);
});
