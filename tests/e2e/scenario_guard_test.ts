/**
 * The scenario page setup in real Chromium: the origin guard (HTTP, redirects, iframes, WebSockets),
 * exact request replay, service-worker blocking, the environment and storage seeds. Two servers on two
 * ports are two origins; "localhost" beside "127.0.0.1" is another site, so an out-of-process iframe.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import type { PageTarget } from "../../src/browser/targets.ts";
import { currentOverride } from "../../src/browser/viewport.ts";
import { ToolError } from "../../src/errors.ts";
import { installEnvironment } from "../../src/scenario/environment.ts";
import { type GuardEvent, installGuard } from "../../src/scenario/guard.ts";
import { seedStorage, STORAGE_SEED_BINDING, type StorageSeedPlan } from "../../src/scenario/storage_seed.ts";
import { serveGuardSite, until, withScenarioBrowser } from "./scenario_guard_util.ts";
import { evaluate } from "./scenario_guard_util.ts";

type Probe = {
  outcome: string;
  status?: number;
  type?: string;
  body?: string;
  message?: string;
  name?: string;
  data?: unknown;
};

Deno.test("guard: origin set, exact replay, redirects and iframes", async () => {
  const a = serveGuardSite();
  const b = serveGuardSite();
  const events: GuardEvent[] = [];
  try {
    await withScenarioBrowser((session) => {
      installGuard(session, {
        allowedOrigins: [a.origin + "/"],
        blockServiceWorkers: true,
        replay: {
          mode: "exact",
          unmatched: "passthrough-declared-origins",
          routes: [
            {
              route_id: "items",
              method: "GET",
              url: `${a.origin}/api/items?page=1&sort=name`,
              response: {
                kind: "response",
                status: 200,
                headers: [{ name: "x-replayed", value: "yes" }],
                body: '{"items":[1,2]}',
              },
            },
            {
              route_id: "old",
              method: "GET",
              url: `${a.origin}/api/old`,
              response: { kind: "redirect", status: 302, location: `${a.origin}/api/items?sort=name&page=1` },
            },
            {
              route_id: "escape",
              method: "GET",
              url: `${a.origin}/api/escape`,
              response: { kind: "redirect", status: 307, location: `${b.origin}/api/plain` },
            },
            {
              route_id: "dead",
              method: "POST",
              url: `${a.origin}/api/dead`,
              response: { kind: "abort", reason: "connection_refused" },
            },
          ],
        },
      }, (e) => events.push(e));
    }, async (session, page) => {
      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);
      const probe = (expr: string) => evaluate(page, expr) as Promise<Probe>;

      // A route matches on method, origin+path and the query as a multiset (order ignored).
      const items = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/items?sort=name&page=1`)})`);
      assertEquals(items.outcome, "response");
      assertEquals(items.status, 200);
      assertEquals(items.type, "application/json");
      assertEquals(items.body, '{"items":[1,2]}');
      assert(!a.hits.some((h) => h.startsWith("/api/items")), "a replayed request never reaches the server");
      // Another method or an extra query pair is not the route: it passes through to the allowed origin.
      const extra = await probe(
        `probeFetch(${JSON.stringify(`${a.origin}/api/items?sort=name&page=1&x=1`)})`,
      );
      assertEquals(extra.status, 404);

      // A replayed redirect is followed, and its target pauses again (and is replayed).
      const old = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/old`)})`);
      assertEquals(old.body, '{"items":[1,2]}');
      // A replayed redirect off the set is refused at its target.
      const escape = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/escape`)})`);
      assertEquals(escape.outcome, "error");
      assertEquals(b.hits.length, 0);

      const dead = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/dead`)}, { method: "POST" })`);
      assertEquals(dead.outcome, "error");

      // A request to another origin is refused; the unmatched allowed one passes through.
      assertEquals((await probe(`probeFetch(${JSON.stringify(`${b.origin}/api/plain`)})`)).outcome, "error");
      const plain = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/plain`)})`);
      assertEquals(plain.status, 200);

      // A server redirect off the set is refused when Chrome pauses the redirected request.
      const redirected = await session.navigate(
        page,
        `${a.origin}/redirect?to=${encodeURIComponent(`${b.origin}/index.html`)}`,
        "load",
        10_000,
      ).then(() => "navigated", (e: Error) => e.message);
      assert(redirected.includes("ERR_BLOCKED_BY_CLIENT"), redirected);
      // So is a navigation straight to it.
      await assertRejects(() => session.navigate(page, `${b.origin}/index.html`, "load", 10_000));
      assertEquals(b.hits.length, 0, `origin B was never reached: ${b.hits.join(", ")}`);

      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);
      // A same-site iframe of another origin (same process) is refused at its document request.
      const frame = await probe(`probeFrame(${JSON.stringify(`${b.origin}/frame.html`)})`);
      assert(frame.outcome !== "posted", JSON.stringify(frame));
      assertEquals(b.hits.length, 0);
      // A same-origin iframe's own requests pause at the page session too.
      const inner = await probe(
        `probeFrame(${
          JSON.stringify(`${a.origin}/frame.html?fetch=${encodeURIComponent(`${b.origin}/api/plain`)}`)
        })`,
      );
      assertEquals(inner.outcome, "posted");
      assertEquals((inner.data as { fetch: string }).fetch, "error");
      assertEquals(b.hits.length, 0);

      await until(() => events.filter((e) => e.kind === "request-refused").length >= 6);
      const byKind = (kind: GuardEvent["kind"]) => events.filter((e) => e.kind === kind);
      assertEquals(byKind("replay-fulfilled").map((e) => e.route_id), ["items", "items"]);
      assertEquals(byKind("replay-redirected").map((e) => e.route_id), ["old", "escape"]);
      assertEquals(byKind("replay-aborted").map((e) => [e.route_id, e.method]), [["dead", "POST"]]);
      const refused = byKind("request-refused");
      assert(refused.every((e) => e.origin === b.origin && e.transport === "http" && e.page_id === page.id));
      // Two main-frame documents (the server redirect's target and the direct navigation) are navigations.
      assertEquals(refused.filter((e) => e.navigation).length, 2, JSON.stringify(refused));
      assert(refused.some((e) => e.resource_type === "Document" && !e.navigation), "the iframe document");
      assertEquals(byKind("unmatched-aborted").length, 0);
    });
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("guard: WebSockets, unmatched abort, service workers, popups and out-of-process iframes", async () => {
  const a = serveGuardSite();
  const b = serveGuardSite();
  const c = serveGuardSite();
  // "localhost" is another site than 127.0.0.1: its frames run out of process.
  const cOrigin = `http://localhost:${c.port}`;
  const events: GuardEvent[] = [];
  try {
    let uninstall = () => {};
    await withScenarioBrowser((session) => {
      uninstall = installGuard(session, {
        allowedOrigins: [a.origin, cOrigin],
        blockServiceWorkers: true,
        replay: {
          mode: "exact",
          unmatched: "abort",
          routes: [{
            route_id: "data",
            method: "GET",
            url: `${a.origin}/api/data`,
            response: {
              kind: "response",
              status: 201,
              headers: [],
              body: "plain words",
              content_type: "text/x-words",
            },
          }],
        },
      }, (e) => events.push(e));
    }, async (session, page) => {
      // The start document is unmatched but a main-frame navigation to an allowed origin: it loads.
      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);
      const probe = (expr: string) => evaluate(page, expr) as Promise<Probe>;

      const data = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/data`)})`);
      assertEquals([data.status, data.type, data.body], [201, "text/x-words", "plain words"]);
      const unmatched = await probe(`probeFetch(${JSON.stringify(`${a.origin}/api/plain`)})`);
      assertEquals(unmatched.outcome, "error");
      assert(!a.hits.includes("/api/plain"), "an unmatched request never reaches the server");

      // WebSockets: the allowed origin's handshake opens, another origin's is refused before it is sent.
      const open = await probe(`probeWs(${JSON.stringify(`ws://127.0.0.1:${a.port}/ws`)})`);
      assertEquals([open.outcome, open.message], ["open", `hello:${a.port}`]);
      const refusedWs = await probe(`probeWs(${JSON.stringify(`ws://127.0.0.1:${b.port}/ws`)})`);
      assert(refusedWs.outcome !== "open", JSON.stringify(refusedWs));
      assertEquals(b.hits.length, 0, `origin B was never reached: ${b.hits.join(", ")}`);

      // Service workers: register() rejects.
      const sw = await probe("probeServiceWorker()");
      assertEquals([sw.outcome, sw.name], ["rejected", "SecurityError"]);
      // A fresh iframe's realm is no way around it: the script ran there too.
      const viaFrame = await evaluate(
        page,
        `(async () => {
          const f = document.createElement("iframe");
          document.body.append(f);
          const register = f.contentWindow.ServiceWorkerContainer.prototype.register;
          return register.call(navigator.serviceWorker, "/sw.js").then(() => "registered", (e) => e.name);
        })()`,
      );
      assertEquals(viaFrame, "SecurityError");
      assert(!a.hits.includes("/sw.js"), "the worker script was never fetched");

      // In abort mode an unmatched iframe document is aborted (only main-frame documents are spared).
      const abortedFrame = await probe(`probeFrame(${JSON.stringify(`${cOrigin}/frame.html`)})`);
      assert(abortedFrame.outcome !== "posted", JSON.stringify(abortedFrame));

      await until(() => events.some((e) => e.transport === "websocket"));
      const ws = events.filter((e) => e.transport === "websocket");
      assertEquals(ws.map((e) => [e.kind, e.origin]), [["request-refused", b.origin]]);
      const un = events.filter((e) => e.kind === "unmatched-aborted");
      assert(un.some((e) => e.url === `${a.origin}/api/plain` && !e.navigation), JSON.stringify(un));
      assert(un.some((e) => e.resource_type === "Document" && e.origin === cOrigin && !e.navigation));
      assert(!un.some((e) => e.navigation), "main-frame documents are not aborted as unmatched");

      // Uninstalled, the page's requests go out again; a guard installed on a running page applies at once.
      uninstall();
      await probe(`probeFetch(${JSON.stringify(`${b.origin}/api/plain`)}, { mode: "no-cors" })`);
      assert(b.hits.includes("/api/plain"), "the uninstalled guard no longer refuses");
      b.hits.length = 0;
      events.length = 0;
      installGuard(session, {
        allowedOrigins: [a.origin, cOrigin],
        blockServiceWorkers: true,
        replay: { mode: "disabled" },
      }, (e) => events.push(e));
      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);

      // An out-of-process iframe of an allowed origin loads, and its own request to another origin never
      // leaves (the page's Fetch does not see it: the child's offline rules stop it).
      const oopif = await probe(
        `probeFrame(${
          JSON.stringify(`${cOrigin}/frame.html?sw&fetch=${encodeURIComponent(`${b.origin}/api/plain`)}`)
        })`,
      );
      assertEquals(oopif.outcome, "posted", JSON.stringify(oopif));
      assertEquals((oopif.data as { fetch: string }).fetch, "error");
      // Service workers are blocked in the out-of-process frame too (its own document script).
      assertEquals((oopif.data as { sw: string }).sw, "SecurityError");
      assert(!c.hits.includes("/sw.js"), "the frame's worker script was never fetched");
      assert(c.hits.some((h) => h.startsWith("/frame.html")), "the allowed out-of-process frame loaded");
      // So does a worker's WebSocket to another origin (Fetch never sees it), while its fetch is refused.
      const workerWs = await evaluate(page, `probeWorker(${JSON.stringify(`ws://127.0.0.1:${b.port}/ws`)})`);
      assertEquals(workerWs, "ws-error");
      const workerFetch = await evaluate(
        page,
        `probeWorker(${JSON.stringify(`${b.origin}/api/plain?worker`)})`,
      );
      assertEquals(workerFetch, "fetch-error");
      assertEquals(b.hits.length, 0, `origin B was never reached: ${b.hits.join(", ")}`);
      // The offline rules are per URL: the page still says it is online.
      assertEquals(await evaluate(page, "navigator.onLine"), true);

      // A popup to another origin is refused in the popup's own first navigation (the guard is in its
      // initialization round).
      const popupAdded = new Promise<string>((resolve) => session.onPageAdded((p) => resolve(p.id)));
      await page.send("Runtime.evaluate", {
        expression: `void window.open(${JSON.stringify(`${b.origin}/index.html`)})`,
        userGesture: true,
      });
      const popupId = await Promise.race([
        popupAdded,
        new Promise<string>((r) => setTimeout(() => r(""), 5_000)),
      ]);
      assert(popupId !== "", "the popup was adopted");
      await until(() => events.some((e) => e.page_id === popupId && e.kind === "request-refused"));
      const popup = events.filter((e) => e.page_id === popupId);
      assert(popup.some((e) => e.kind === "request-refused" && e.navigation && e.origin === b.origin));
      assert(events.some((e) => e.url.endsWith("/api/plain?worker") && e.kind === "request-refused"));
      assertEquals(b.hits.length, 0);
    });
  } finally {
    await a.close();
    await b.close();
    await c.close();
  }
});

Deno.test("environment: viewport, device scale, locale, timezone and media features in every page", async () => {
  const a = serveGuardSite();
  try {
    await withScenarioBrowser((session) => {
      installEnvironment(session, {
        viewport: { width: 800, height: 600, device_scale_factor: 2 },
        locale: "de-DE",
        timezone: "Asia/Tokyo",
        color_scheme: "dark",
        reduced_motion: "reduce",
      });
    }, async (session, page) => {
      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);
      const read = (p: PageTarget) =>
        evaluate(
          p,
          `({ dark: matchMedia("(prefers-color-scheme: dark)").matches,
              reduce: matchMedia("(prefers-reduced-motion: reduce)").matches,
              tz: Intl.DateTimeFormat().resolvedOptions().timeZone,
              locale: Intl.DateTimeFormat().resolvedOptions().locale,
              language: navigator.language,
              number: (1234.5).toLocaleString(),
              width: innerWidth, height: innerHeight, dpr: devicePixelRatio })`,
        );
      const expected = {
        dark: true,
        reduce: true,
        tz: "Asia/Tokyo",
        locale: "de-DE",
        language: "de-DE",
        number: "1.234,5",
        width: 800,
        height: 600,
        dpr: 2,
      };
      assertEquals(await read(page), expected);
      // The viewport is the session's own override, in the slot set_viewport and its report read.
      assertEquals(currentOverride(page)?.metrics.width, 800);
      // A popup gets the same settings before it runs.
      const popupAdded = new Promise<PageTarget>((resolve) => session.onPageAdded(resolve));
      await page.send("Runtime.evaluate", {
        expression: `void window.open(${JSON.stringify(`${a.origin}/index.html`)})`,
        userGesture: true,
      });
      const popup = await Promise.race([
        popupAdded,
        new Promise<undefined>((r) => setTimeout(() => r(undefined), 5_000)),
      ]);
      assert(popup, "the popup was adopted");
      await until(() => popup.url.startsWith(a.origin));
      await popup.waitForLoad(popup.loaderId, 5_000);
      assertEquals(await read(popup), expected);
    });
  } finally {
    await a.close();
  }
});

Deno.test("storage seeds: cookies, localStorage and sessionStorage exist before the start page's first script", async () => {
  const a = serveGuardSite();
  const b = serveGuardSite();
  try {
    await withScenarioBrowser(() => {}, async (session, page) => {
      const plan: StorageSeedPlan = {
        cookies: [{
          name: "sid",
          value: "c-1",
          url: `${a.origin}/`,
          http_only: false,
          secure: false,
          same_site: "Lax",
        }, {
          name: "hidden",
          value: "h-1",
          url: `${a.origin}/`,
          http_only: true,
          secure: false,
          same_site: "Strict",
        }],
        local_storage: [{
          origin: a.origin,
          entries: [{ name: "theme", value: "dark" }, { name: "token", value: "s3cr3t" }],
        }],
        session_storage: [{ origin: a.origin, entries: [{ name: "cart", value: '{"n":2}' }] }],
      };
      // Defense in depth: a seed outside the origin set is refused, naming the origin and the set.
      const refused = await assertRejects(
        () =>
          seedStorage(session, page, { ...plan, session_storage: [{ origin: b.origin, entries: [] }] }, [
            a.origin,
          ]),
      );
      assert(refused instanceof ToolError);
      assertEquals(refused.code, "origin_not_allowed");
      assert(refused.message.includes(b.origin) && refused.message.includes(a.origin), refused.message);
      const cookieOff = await assertRejects(
        () =>
          seedStorage(session, page, { ...plan, cookies: [{ ...plan.cookies[0], url: `${b.origin}/` }] }, [
            a.origin,
          ]),
      );
      assertEquals((cookieOff as ToolError).code, "origin_not_allowed");

      await seedStorage(session, page, plan, [a.origin]);
      assertEquals(page.url, "about:blank");
      await session.navigate(page, `${a.origin}/seed.html`, "load", 10_000);
      assertEquals(await evaluate(page, "window.__seen"), {
        local: "dark",
        local_secret: "s3cr3t",
        session: '{"n":2}',
        cookie: "sid=c-1",
      });
      const { cookies } = await page.send("Network.getCookies", { urls: [`${a.origin}/`] });
      assertEquals(cookies.find((c) => c.name === "hidden")?.httpOnly, true);

      // Seeds are written once: what the page changes survives its next document.
      await evaluate(page, `localStorage.setItem("theme", "light"); sessionStorage.removeItem("cart")`);
      await session.navigate(page, `${a.origin}/seed.html`, "load", 10_000);
      assertEquals(await evaluate(page, "[window.__seen.local, window.__seen.session]"), ["light", null]);
      // The seed world is not the page's: nothing of it is reachable from page scripts.
      assertEquals(await evaluate(page, `typeof globalThis.${STORAGE_SEED_BINDING}`), "undefined");

      // A cookie the browser will not keep fails the seed instead of vanishing.
      const bad = await assertRejects(() =>
        seedStorage(session, page, {
          cookies: [{
            name: "x",
            value: "1",
            url: `${a.origin}/`,
            http_only: false,
            secure: false,
            same_site: "None",
          }],
          local_storage: [],
          session_storage: [],
        }, [a.origin])
      );
      assertEquals((bad as ToolError).code, "storage_seed_failed");
    });
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("scope: pages the filter leaves out keep their network and settings (connect mode's other tabs)", async () => {
  const a = serveGuardSite();
  const b = serveGuardSite();
  const events: GuardEvent[] = [];
  try {
    const scenarioPage = (p: PageTarget) => p.ordinal === 1;
    await withScenarioBrowser((session) => {
      installGuard(
        session,
        { allowedOrigins: [a.origin], blockServiceWorkers: true, replay: { mode: "disabled" } },
        (e) => events.push(e),
        { pages: scenarioPage },
      );
      installEnvironment(session, {
        viewport: { width: 640, height: 480, device_scale_factor: 1 },
        locale: "de-DE",
        timezone: "Asia/Tokyo",
        color_scheme: "dark",
        reduced_motion: "reduce",
      }, scenarioPage);
    }, async (session, page) => {
      const other = await session.createPage("about:blank", true);
      await session.navigate(other, `${b.origin}/index.html`, "load", 10_000);
      assert(b.hits.includes("/index.html"), "the other tab reached origin B");
      assert(await evaluate(other, "innerWidth") !== 640, "the other tab keeps its own viewport");
      assertEquals(
        await evaluate(other, "Intl.DateTimeFormat().resolvedOptions().timeZone") === "Asia/Tokyo",
        false,
      );
      await assertRejects(() => session.navigate(page, `${b.origin}/index.html`, "load", 10_000));
      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);
      assertEquals(await evaluate(page, "innerWidth"), 640);
      assert(events.every((e) => e.page_id === page.id), JSON.stringify(events));
    });
  } finally {
    await a.close();
    await b.close();
  }
});
