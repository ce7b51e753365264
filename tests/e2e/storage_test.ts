import { chromium } from "playwright-core";
import { join } from "node:path";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  e2e,
  errorCode,
  type ServerHandle,
  startDebugChrome,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";

interface CookieRow {
  name: string;
  value: string;
  domain: string;
  path: string;
  expires: number;
  http_only: boolean;
  secure: boolean;
  same_site: string | null;
}

interface StateFile {
  cookies: {
    name: string;
    value: string;
    domain: string;
    path: string;
    expires: number;
    httpOnly: boolean;
  }[];
  origins: { origin: string; localStorage: { name: string; value: string }[] }[];
}

const CHROMIUM = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";

async function ok(
  server: ServerHandle,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const r: ToolResult = await server.call(tool, args);
  if (r.isError) throw new Error(`${tool} failed: ${textOf(r).slice(0, 500)}`);
  return structured(r);
}

async function evaluate(server: ServerHandle, expression: string): Promise<unknown> {
  return (await ok(server, "evaluate_page", { expression })).value;
}

/** Characters of one response as a client sees them (text + structuredContent). */
function size(r: ToolResult): number {
  return textOf(r).length + JSON.stringify(r.structuredContent ?? {}).length;
}

Deno.test({
  name: "storage: cookies, web storage, Playwright storage state both ways, save_pdf (one server)",
  ...e2e,
  fn: (t) =>
    withServer(async (server, site) => {
      await t.step("cookie and web storage round trips are seen by the page", () =>
        roundTrips(server, site.origin));
      await t.step("a storage state saved here opens in Playwright, and Playwright's opens here", () =>
        playwrightRoundTrip(server, site.origin));
      await t.step("save_pdf returns a PDF evidence resource", () =>
        pdf(server, site.origin));
      await t.step("save_pdf knows an attached browser is headless", () =>
        attachedPdf(server, site.origin));
    }, { browser: {} }),
});

async function roundTrips(server: ServerHandle, origin: string): Promise<void> {
  const site = { origin };
  {
    {
      const page = `${site.origin}/storage/index.html`;
      await ok(server, "navigate_page", { url: page });

      // Cookies: set → the page sees it → list/get (masked, then shown) → delete → clear.
      const set = await server.call("cookies", {
        action: "set",
        name: "sid",
        value: "abc123",
        path: "/storage",
      });
      const setCookie = structured(set).cookie as CookieRow;
      assertEquals([setCookie.name, setCookie.value, setCookie.domain, setCookie.path], [
        "sid",
        "<6 chars>",
        "127.0.0.1",
        "/storage",
      ]);
      assert(!textOf(set).includes("abc123"), "the value is not printed");
      assertEquals(
        structured(set).warnings,
        undefined,
        "the page's own document.cookie agreed before the answer",
      );
      await ok(server, "cookies", {
        action: "set",
        name: "root",
        value: "r00t",
        path: "/",
        same_site: "Strict",
      });
      await ok(server, "cookies", {
        action: "set",
        name: "tok",
        value: "hidden-token",
        http_only: true,
        path: "/",
      });
      assertEquals(
        String(await evaluate(server, "document.cookie")).split("; ").sort(),
        ["root=r00t", "sid=abc123"],
        "the page sees its cookies, the HttpOnly one stays hidden from it",
      );
      const listed = await server.call("cookies", { action: "list" });
      const rows = structured(listed).cookies as CookieRow[];
      assertEquals(rows.map((c) => c.name).sort(), ["root", "sid", "tok"]);
      assert(rows.every((c) => /^<\d+ chars>$/.test(c.value)), "values masked by default");
      assert(!/abc123|r00t|hidden-token/.test(JSON.stringify(listed)), "no value anywhere in the response");
      const bounded = await ok(server, "cookies", { action: "list", max_cookies: 1 });
      assertEquals([(bounded.cookies as unknown[]).length, bounded.total_count, bounded.omitted_count], [
        1,
        3,
        2,
      ]);
      const tok = rows.find((c) => c.name === "tok");
      assertEquals([tok?.http_only, tok?.expires], [true, -1]);
      assertEquals(rows.find((c) => c.name === "root")?.same_site, "Strict");
      const got = await ok(server, "cookies", { action: "get", name: "tok", show_values: true });
      assertEquals([got.found, (got.cookie as CookieRow).value], [true, "hidden-token"]);
      const sent = await ok(server, "cookies", { action: "list", url: `${site.origin}/other.html` });
      assertEquals(
        (sent.cookies as CookieRow[]).map((c) => c.name).sort(),
        ["root", "tok"],
        "path-scoped sid not sent",
      );

      const deleted = await ok(server, "cookies", { action: "delete", name: "sid" });
      assertEquals([deleted.removed_count, deleted.remaining_count], [1, 0]);
      assertEquals(await evaluate(server, "document.cookie"), "root=r00t");
      const gone = await ok(server, "cookies", { action: "get", name: "sid" });
      assertEquals([gone.found, (gone.cookies as unknown[]).length], [false, 0]);
      const cleared = await ok(server, "cookies", { action: "clear" });
      assertEquals([cleared.removed_count, cleared.remaining_count], [2, 0]);
      assertEquals(await evaluate(server, "document.cookie"), "");
      assertEquals(
        errorCode(await server.call("cookies", { action: "set", name: "x", value: "1", same_site: "None" })),
        "cookie_rejected",
        "SameSite=None without Secure is refused, not silently dropped",
      );

      // Web storage: set → the page sees it → list/get → delete → clear; session storage is its own area.
      const ws = await server.call("web_storage", { action: "set", key: "theme", value: "dark-mode" });
      assertEquals(structured(ws).origin, site.origin);
      assert(!textOf(ws).includes("dark-mode"));
      assertEquals(
        structured(ws).warnings,
        undefined,
        "the page's own localStorage agreed before the answer",
      );
      assertEquals(await evaluate(server, "localStorage.getItem('theme')"), "dark-mode");
      await evaluate(server, "localStorage.setItem('fromPage', 'p-value'), 1");
      const wl = await ok(server, "web_storage", { action: "list" });
      assertEquals(
        (wl.entries as { key: string; value: string }[]).map((e) => `${e.key}=${e.value}`).sort(),
        ["fromPage=<7 chars>", "theme=<9 chars>"],
      );
      const wg = await ok(server, "web_storage", { action: "get", key: "fromPage", show_values: true });
      assertEquals([wg.found, wg.value], [true, "p-value"]);
      assertEquals((await ok(server, "web_storage", { action: "delete", key: "theme" })).removed, true);
      assertEquals(await evaluate(server, "localStorage.getItem('theme')"), null);
      assertEquals((await ok(server, "web_storage", { action: "get", key: "theme" })).found, false);
      await ok(server, "web_storage", { action: "set", storage: "session", key: "tab", value: "one" });
      assertEquals(await evaluate(server, "[sessionStorage.getItem('tab'), localStorage.getItem('tab')]"), [
        "one",
        null,
      ]);
      await ok(server, "web_storage", { action: "set", key: "big", value: "x".repeat(30_000) });
      const big = await server.call("web_storage", { action: "get", key: "big", show_values: true });
      const bigOut = structured(big);
      assertEquals(
        [bigOut.length, bigOut.truncated],
        [30_000, true],
        "a large value shows its head, says so",
      );
      assert(size(big) < 45_000, `bounded: ${size(big)}`);
      const wc = await ok(server, "web_storage", { action: "clear" });
      assertEquals([wc.removed_count, wc.remaining_count], [2, 0]);
      assertEquals(await evaluate(server, "[localStorage.length, sessionStorage.length]"), [0, 1]);
      const elsewhere = await server.call("web_storage", { action: "list", origin: "http://localhost:9" });
      assertEquals(errorCode(elsewhere), "origin_not_open");
      assertMatch(textOf(elsewhere), /navigate_page/);

      console.error(
        `sizes: cookies list ${size(listed)}, cookies set ${size(set)}, web_storage set ${size(ws)}`,
      );
    }
  }
}

async function playwrightRoundTrip(server: ServerHandle, origin: string): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-state-" });
  try {
    const page = `${origin}/storage/index.html`;
    await ok(server, "navigate_page", { url: page });
    await ok(server, "cookies", { action: "set", name: "session_id", value: "s-secret-1", http_only: true });
    const expires = Math.floor(Date.now() / 1000) + 86_400;
    await ok(server, "cookies", { action: "set", name: "pref", value: "blue", expires, same_site: "Lax" });
    await ok(server, "web_storage", { action: "set", key: "auth_token", value: "tok-secret-2" });

    const mine = join(dir, "mine.json");
    const saved = await server.call("save_storage_state", { path: mine });
    const savedOut = structured(saved);
    assertEquals([savedOut.path, savedOut.cookie_count, savedOut.origin_count], [mine, 2, 1]);
    assert(!/s-secret-1|tok-secret-2|blue/.test(JSON.stringify(saved)), "the response never prints values");
    assertEquals(((await Deno.stat(mine)).mode ?? 0) & 0o777, 0o600, "the file holds secrets: owner only");
    const file = JSON.parse(await Deno.readTextFile(mine)) as StateFile;
    const sid = file.cookies.find((c) => c.name === "session_id");
    assertEquals([sid?.domain, sid?.path, sid?.httpOnly, sid?.expires], ["127.0.0.1", "/", true, -1]);
    assertEquals(file.origins, [{ origin, localStorage: [{ name: "auth_token", value: "tok-secret-2" }] }]);
    assertEquals(errorCode(await server.call("save_storage_state", { path: dir })), "path_is_directory");

    // Playwright opens it: the page sees the cookies and the localStorage before its own scripts run.
    const theirs = join(dir, "theirs.json");
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const context = await browser.newContext({ storageState: mine });
      const pwPage = await context.newPage();
      await pwPage.goto(page);
      const seen = await pwPage.evaluate(() =>
        (globalThis as unknown as { __atLoad: { cookie: string; local: Record<string, string> } }).__atLoad
      );
      assertEquals(seen.cookie, "pref=blue");
      assertEquals(seen.local, { auth_token: "tok-secret-2" });
      const pwCookies = await context.cookies();
      const pwSid = pwCookies.find((c) => c.name === "session_id");
      assertEquals([pwSid?.value, pwSid?.domain, pwSid?.httpOnly, pwSid?.expires], [
        "s-secret-1",
        "127.0.0.1",
        true,
        -1,
      ]);
      assertEquals(pwCookies.find((c) => c.name === "pref")?.expires, expires);
      // Playwright's own changes, saved in its format.
      await pwPage.evaluate(
        "document.cookie = 'pw_cookie=from-pw; path=/'; localStorage.setItem('pw_key', 'pw-value')",
      );
      await context.storageState({ path: theirs });
    } finally {
      await browser.close();
    }
    const pwFile = JSON.parse(await Deno.readTextFile(theirs)) as StateFile;
    const pwHostOnly = pwFile.cookies.find((c) => c.name === "pw_cookie");
    assertEquals([pwHostOnly?.domain, pwHostOnly?.path], ["127.0.0.1", "/"], "Playwright's host-only cookie");

    // Back here: from a clean slate, on another document, then the origin's first document sees it all.
    await ok(server, "cookies", { action: "clear" });
    await ok(server, "web_storage", { action: "clear" });
    await ok(server, "navigate_page", { url: "about:blank" });
    const loaded = await server.call("load_storage_state", { path: theirs });
    const loadedOut = structured(loaded);
    assertEquals([loadedOut.cookie_count, loadedOut.origin_count], [3, 1]);
    assertEquals((loadedOut.origins as { status: string }[])[0]?.status, "on_first_visit");
    assert(
      !/s-secret-1|tok-secret-2|pw-value|from-pw/.test(JSON.stringify(loaded)),
      "no values in the response",
    );
    // Saved again before any visit: the armed entries are part of the state.
    const relay = JSON.parse(
      await Deno.readTextFile(String(
        (await ok(server, "save_storage_state", {
          path: join(dir, "relay.json"),
        })).path,
      )),
    ) as StateFile;
    assertEquals(relay.origins, pwFile.origins, "loaded, not yet visited origins are saved too");
    await ok(server, "navigate_page", { url: page });
    const atLoad = await evaluate(server, "window.__atLoad") as {
      cookie: string;
      local: Record<string, string>;
    };
    assertEquals(atLoad.cookie.split("; ").sort(), ["pref=blue", "pw_cookie=from-pw"]);
    assertEquals(atLoad.local, { auth_token: "tok-secret-2", pw_key: "pw-value" });
    const here = (await ok(server, "cookies", { action: "list", show_values: true })).cookies as CookieRow[];
    const hereSid = here.find((c) => c.name === "session_id");
    assertEquals([hereSid?.value, hereSid?.domain, hereSid?.http_only, hereSid?.expires], [
      "s-secret-1",
      "127.0.0.1",
      true,
      -1,
    ]);
    assertEquals(here.find((c) => c.name === "pw_cookie")?.domain, "127.0.0.1", "host-only stays host-only");
    assertEquals(here.find((c) => c.name === "pref")?.expires, expires);

    // With the origin open, the entries land at once.
    await ok(server, "web_storage", { action: "clear" });
    const again = structured(await server.call("load_storage_state", { path: theirs }));
    assertEquals((again.origins as { status: string }[])[0]?.status, "written");
    assertEquals(await evaluate(server, "localStorage.getItem('pw_key')"), "pw-value");

    const bad = join(dir, "bad.json");
    await Deno.writeTextFile(
      bad,
      JSON.stringify({ cookies: [{ name: "a", value: 1, domain: "x", path: "/" }] }),
    );
    const refused = await server.call("load_storage_state", { path: bad });
    assertEquals(errorCode(refused), "invalid_storage_state");
    const details = (refused.structuredContent?.error as { details?: { field?: string } }).details;
    assertEquals(details?.field, "cookies[0].value");
    console.error(`sizes: save_storage_state ${size(saved)}, load_storage_state ${size(loaded)}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function pdf(server: ServerHandle, origin: string): Promise<void> {
  await ok(server, "navigate_page", { url: `${origin}/storage/print.html` });
  const printed = await server.call("save_pdf", { paper: "a4", print_background: true });
  const out = structured(printed);
  assertEquals([out.mime_type, out.headless, out.page_count], ["application/pdf", true, 3]);
  assert((out.bytes as number) > 1_000);
  const resource = await server.client.readResource({ uri: String(out.uri) });
  const blob = resource.contents[0] as { blob?: string; mimeType?: string };
  assertEquals(blob.mimeType, "application/pdf");
  assert(atob(blob.blob ?? "").startsWith("%PDF"), "the resource is a PDF");
  const one = structured(await server.call("save_pdf", { page_ranges: "2", landscape: true }));
  assertEquals(one.page_count, 1);
  assertEquals(errorCode(await server.call("save_pdf", { page_ranges: "9" })), "invalid_page_ranges");
  console.error(`sizes: save_pdf ${size(printed)}`);
}

/** An attached session records headless: false; the browser's own user agent says otherwise. */
async function attachedPdf(server: ServerHandle, origin: string): Promise<void> {
  await ok(server, "stop_browser", {});
  const profile = await Deno.makeTempDir({ prefix: "krometrail-pdf-attach-" });
  const chrome = await startDebugChrome(profile);
  try {
    await ok(server, "attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` });
    await ok(server, "navigate_page", { url: `${origin}/storage/print.html` });
    const out = await ok(server, "save_pdf", {});
    assertEquals([out.headless, out.page_count], [true, 3]);
    await ok(server, "stop_browser", {});
  } finally {
    chrome.child.kill("SIGTERM");
    await chrome.child.status;
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}
