import { assertEquals, assertThrows } from "../../assert.ts";
import { parseLoopbackEndpoint } from "../../../src/browser/lifecycle.ts";
import { discoverChrome } from "../../../src/browser/discovery.ts";

Deno.test("loopback endpoints are accepted in every common spelling", () => {
  for (
    const ok of [
      "http://127.0.0.1:9222",
      "127.0.0.1:9222",
      "localhost:9222",
      "ws://127.0.0.1:9222/devtools/browser/x",
      "http://[::1]:9222",
      "127.3.4.5:1",
    ]
  ) {
    assertEquals(parseLoopbackEndpoint(ok).port.length > 0, true, ok);
  }
});

Deno.test("non-loopback endpoints are refused with a reason", () => {
  for (
    const bad of [
      "http://192.168.1.4:9222",
      "10.0.0.1:9222",
      "http://example.com:9222",
      "http://0.0.0.0:9222",
    ]
  ) {
    assertThrows(() => parseLoopbackEndpoint(bad), "loopback");
  }
  assertThrows(() => parseLoopbackEndpoint("ftp://127.0.0.1:1"), "scheme");
});

Deno.test("discovery: an explicit browser that is missing is an error, not a silent fallback", () => {
  const err = assertThrows(() => discoverChrome({ explicit: "/nonexistent/chrome", env: () => undefined }));
  assertEquals((err as unknown as { code: string }).code, "browser_not_found");
  assertEquals(JSON.stringify(err).includes("/nonexistent"), false, "diagnostics carry no paths");
});

Deno.test("discovery order: argument, KROMETRAIL_CHROME, CHROME_BIN, PATH defaults", () => {
  const exe = Deno.execPath();
  const env = (vars: Record<string, string>) => (k: string) => vars[k];
  assertEquals(discoverChrome({ explicit: exe, env: env({}) }).source, "argument");
  assertEquals(
    discoverChrome({ env: env({ KROMETRAIL_CHROME: exe, CHROME_BIN: "/nope" }) }).source,
    "KROMETRAIL_CHROME",
  );
  assertEquals(discoverChrome({ env: env({ CHROME_BIN: exe }) }).source, "CHROME_BIN");
  assertThrows(() => discoverChrome({ env: env({ PATH: "/nonexistent-dir" }) }), "No Chrome");
});
