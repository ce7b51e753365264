import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, fixtures, startDebugChrome, startServer, structured, textOf } from "./harness.ts";
import { redirectingServer } from "./redirect_server.ts";

Deno.test({
  name: "attach to a Chromium the test started, drive it, and detach without closing it",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const profile = await Deno.makeTempDir({ prefix: "krometrail-attach-" });
    const chrome = await startDebugChrome(profile);
    const server = await startServer();
    try {
      const attached = structured(
        await server.call("attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` }),
      );
      assertEquals(attached.mode, "attached");
      const nav = structured(await server.call("navigate_page", { url: `${site.origin}/index.html` }));
      assertEquals(nav.status, "ok");
      const stopped = await server.call("stop_browser");
      assertEquals(structured(stopped).closed_browser, false);
      assertMatch(textOf(stopped), /Detached/);
      // The browser is still there and still serves its endpoint.
      const version = await (await fetch(`http://127.0.0.1:${chrome.port}/json/version`)).json();
      assert(String(version.Browser).length > 0);
      const pages = await (await fetch(`http://127.0.0.1:${chrome.port}/json/list`)).json() as Array<
        { url: string }
      >;
      assert(pages.some((p) => p.url.endsWith("/index.html")), "page we navigated is still open");

      // A second start while attached would clash; attaching again after detach works.
      const again = structured(await server.call("attach_browser", { endpoint: `127.0.0.1:${chrome.port}` }));
      assertEquals(again.running, true);
      assertEquals(errorCode(await server.call("start_browser", {})), "browser_already_running");
      await server.call("stop_browser");

      // A loopback redirect in front of the browser is followed (each hop checked) to the real endpoint.
      const redirector = redirectingServer(() => `http://127.0.0.1:${chrome.port}/json/version`);
      try {
        const viaRedirect = await server.call("attach_browser", { endpoint: redirector.origin });
        assertEquals(structured(viaRedirect).running, true, textOf(viaRedirect));
        assertEquals(redirector.hits(), 1);
        await server.call("stop_browser");
      } finally {
        await redirector.close();
      }
    } finally {
      await server.close();
      chrome.child.kill("SIGTERM");
      await chrome.child.status;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      await site.close();
    }
  },
});

Deno.test({
  name: "non-loopback CDP endpoints are refused before any connection",
  ...e2e,
  fn: async () => {
    const server = await startServer();
    try {
      for (
        const endpoint of [
          "http://192.0.2.10:9222",
          "ws://example.com:9222/devtools/browser/x",
          "10.1.2.3:9222",
        ]
      ) {
        const result = await server.call("attach_browser", { endpoint });
        assertEquals(result.isError, true);
        assertEquals(errorCode(result), "endpoint_not_loopback", endpoint);
      }
      assertEquals(
        errorCode(await server.call("attach_browser", { endpoint: "ftp://127.0.0.1:1" })),
        "invalid_endpoint",
      );
      const nobody = await server.call("attach_browser", { endpoint: "http://127.0.0.1:9" });
      assertEquals(errorCode(nobody), "endpoint_unreachable");
    } finally {
      await server.close();
    }
  },
});

Deno.test({
  name: "every redirect of the discovery request is checked against loopback before it is followed",
  ...e2e,
  fn: async () => {
    const server = await startServer();
    let location = "";
    const redirector = redirectingServer(() => location);
    try {
      const cases: Array<[string, string, RegExp]> = [
        [
          "http://192.0.2.10:9222/json/version",
          "endpoint_not_loopback",
          /redirected \(hop 1\) to 192\.0\.2\.10:9222/,
        ],
        ["http://example.com/json/version", "endpoint_not_loopback", /example\.com/],
        ["//10.1.2.3:9222/json/version", "endpoint_not_loopback", /10\.1\.2\.3/],
        // A loop on loopback is cut at the limit, which the error names.
        [`${redirector.origin}/json/version`, "endpoint_redirect_limit", /more than 3 times \(limit 3\)/],
      ];
      for (const [target, code, message] of cases) {
        location = target;
        const result = await server.call("attach_browser", { endpoint: redirector.origin });
        assertEquals(errorCode(result), code, `${target}: ${textOf(result)}`);
        assertMatch(textOf(result), message, target);
      }
      // Four requests in the loop (the first and three redirects followed), none after the limit.
      assertEquals(redirector.hits(), 3 + 4);
      // A loopback service reporting a browser websocket elsewhere is refused too.
      location = "";
      redirector.json({ webSocketDebuggerUrl: "ws://192.0.2.10:9222/devtools/browser/x" });
      assertEquals(
        errorCode(await server.call("attach_browser", { endpoint: redirector.origin })),
        "endpoint_not_loopback",
      );
      assertEquals(structured(await server.call("browser_status")).running, false);
    } finally {
      await redirector.close();
      await server.close();
    }
  },
});

Deno.test({
  name: "a managed profile held by another Chrome gets a profile_in_use error naming it",
  ...e2e,
  fn: async () => {
    const server = await startServer();
    const profileDir = `${server.dataDir}/profiles/shared`;
    await Deno.mkdir(profileDir, { recursive: true });
    const other = await startDebugChrome(profileDir);
    try {
      const result = await server.call("start_browser", { profile: "shared" });
      assertEquals(errorCode(result), "profile_in_use");
      assertMatch(textOf(result), /"shared"/);
      assertMatch(textOf(result), /temporary/);
      const profiles = structured(await server.call("list_managed_profiles")).profiles as Array<
        { name: string; in_use: boolean }
      >;
      assertEquals(profiles.find((p) => p.name === "shared")?.in_use, true, JSON.stringify(profiles));
      // Another profile still works meanwhile.
      const second = await server.call("start_browser", { profile: "second" });
      assertEquals(structured(second).running, true, textOf(second));
    } finally {
      await server.close();
      other.child.kill("SIGTERM");
      await other.child.status;
    }
  },
});
