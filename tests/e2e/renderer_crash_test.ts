import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

/** Bound on every condition poll: generous for a loaded 2-core box, never a fixed sleep. */
const POLL_MS = 20_000;

interface Gap {
  page_id: string | null;
  kind: string;
  start_ns: number;
  end_ns: number | null;
}

interface BrowserEvent {
  session_time_ms: number;
  page_id: string | null;
  kind: string;
  level: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + POLL_MS;
  for (let delay = 50;; delay = Math.min(delay * 2, 500)) {
    const value = await probe();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out after ${POLL_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A headless Chromium on a loopback port, in a process group of its own (its renderers die with it). */
async function startChromium(port: number, userDataDir: string): Promise<Deno.ChildProcess> {
  const executable = Deno.env.get("KROMETRAIL_CHROME") ?? Deno.env.get("CHROME_BIN") ?? "/usr/bin/chromium";
  const args = [
    `--remote-debugging-port=${port}`,
    "--remote-debugging-address=127.0.0.1",
    `--user-data-dir=${userDataDir}`,
    "--headless=new",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--window-size=1000,700",
    ...(Deno.build.os === "linux" && Deno.uid() === 0 ? ["--no-sandbox"] : []),
    "about:blank",
  ];
  // setsid (not a group leader already, so it execs in place): the child's pid is the group's id.
  const child = new Deno.Command("setsid", { args: [executable, ...args], stdout: "null", stderr: "null" })
    .spawn();
  await until("the debug endpoint", async () => {
    const r = await fetch(`http://127.0.0.1:${port}/json/version`).catch(() => undefined);
    if (!r) return undefined;
    await r.body?.cancel();
    return r.ok ? true : undefined;
  });
  return child;
}

/** The test's own CDP connection: attach to the page target and crash its renderer with Page.crash. */
async function crashTarget(port: number, urlPart: string): Promise<string> {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as Array<
    { id: string; type: string; url: string }
  >;
  const target = targets.find((t) => t.type === "page" && t.url.includes(urlPart));
  assert(target, `a page target at ${urlPart}: ${JSON.stringify(targets.map((t) => t.url))}`);
  const version = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json() as {
    webSocketDebuggerUrl: string;
  };
  const ws = new WebSocket(version.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  try {
    const sessionId = await new Promise<string>((resolve, reject) => {
      ws.onmessage = (e) => {
        const m = JSON.parse(String(e.data));
        if (m.id !== 1) return;
        if (m.result?.sessionId) resolve(m.result.sessionId);
        else reject(new Error(`attachToTarget: ${JSON.stringify(m.error)}`));
      };
      ws.send(
        JSON.stringify({
          id: 1,
          method: "Target.attachToTarget",
          params: { targetId: target.id, flatten: true },
        }),
      );
    });
    // The renderer dies before it could answer, so there is no reply to wait for.
    ws.send(JSON.stringify({ id: 2, method: "Page.crash", params: {}, sessionId }));
  } finally {
    ws.close();
  }
  return target.id;
}

async function frames(
  server: ServerHandle,
  pageId: string,
): Promise<{ total: number; gaps: Gap[]; lastMs: number }> {
  const result = await server.call("list_source_frames", { page_id: pageId, max_frames: 200 });
  assert(!result.isError, textOf(result));
  const r = structured(result);
  const listed = r.frames as Array<{ session_time_ms: number }>;
  const total = r.total_frame_count as number;
  // The newest frame's time: the list is in time order, so page to its end when there are more.
  const tail = total > listed.length
    ? structured(await server.call("list_source_frames", { page_id: pageId, offset: total - 1 }))
      .frames as Array<{ session_time_ms: number }>
    : listed;
  return { total, gaps: r.gaps as Gap[], lastMs: tail.at(-1)?.session_time_ms ?? -1 };
}

async function status(server: ServerHandle) {
  const r = await server.call("browser_status", {});
  assert(!r.isError, textOf(r));
  const st = structured(r);
  return {
    text: textOf(r),
    crashed: (st.crashed_pages ?? []) as Array<{ page_id: string; crashed_at_ms: number; status: string }>,
  };
}

Deno.test(
  "renderer crash: an attached page crashed with Page.crash is an event, a gap, a status entry and a page_crashed refusal until reload_page recovers it; the other page keeps recording",
  e2e,
  async () => {
    const port = freePort();
    const profile = await Deno.makeTempDir({ prefix: "krometrail-crash-chrome-" });
    const chrome = await startChromium(port, profile);
    try {
      await withServer(async (server, site) => {
        const attached = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${port}` });
        assert(!attached.isError, textOf(attached));
        const doomedUrl = `${site.origin}/crash/animated.html?which=doomed`;
        const nav = await server.call("navigate_page", { url: doomedUrl });
        assert(!nav.isError, textOf(nav));
        const doomed = (structured(nav).page as { page_id: string }).page_id;
        const created = await server.call("create_page", {
          url: `${site.origin}/crash/animated.html?which=other`,
        });
        assert(!created.isError, textOf(created));
        const other = String(structured(created).page_id);
        assert(doomed !== other, `two pages: ${doomed}, ${other}`);
        // Both pages paint continuously; their screencasts have delivered frames before the crash.
        for (const page of [doomed, other]) {
          await until(
            `frames on ${page}`,
            async () => (await frames(server, page)).total >= 3 ? true : undefined,
          );
        }

        const crashedAt = performance.now();
        await crashTarget(port, "which=doomed");

        // browser_status names the crashed page and says to reload it.
        const st = await until("crashed_pages in browser_status", async () => {
          const s = await status(server);
          return s.crashed.some((p) => p.page_id === doomed) ? s : undefined;
        });
        const entry = st.crashed.find((p) => p.page_id === doomed);
        assertEquals(entry?.status, "crashed", JSON.stringify(st.crashed));
        assert(
          !st.crashed.some((p) => p.page_id === other),
          `only ${doomed} crashed: ${JSON.stringify(st.crashed)}`,
        );
        assert(st.text.includes(doomed) && st.text.includes("reload_page"), st.text);
        console.error(
          `crash seen in browser_status ${Math.round(performance.now() - crashedAt)} ms after Page.crash`,
        );

        // The crash is a browser event on that page, on the session clock.
        const crashEvent = await until("a crash event", async () => {
          const r = structured(await server.call("query_browser_events", { kinds: ["crash"] }));
          return (r.events as BrowserEvent[]).find((e) => e.page_id === doomed);
        });
        assertEquals(crashEvent.level, "error");
        assert(crashEvent.text?.includes("crashed"), JSON.stringify(crashEvent));
        assert(
          Math.abs(crashEvent.session_time_ms - (entry?.crashed_at_ms ?? -1)) < 1_000,
          `event at ${crashEvent.session_time_ms} ms, status says ${entry?.crashed_at_ms} ms`,
        );

        // A gap of kind "crashed" on that page only, opening at the crash.
        const atCrash = await frames(server, doomed);
        const gap = await until("a crashed gap", async () => {
          const f = await frames(server, doomed);
          return f.gaps.find((g) => g.kind === "crashed" && g.page_id === doomed);
        });
        assert(gap.start_ns / 1e6 >= atCrash.lastMs - 1_000, `gap starts at ${gap.start_ns / 1e6} ms`);
        const otherAtCrash = await frames(server, other);
        assert(
          !otherAtCrash.gaps.some((g) => g.kind === "crashed"),
          `no crash gap on ${other}: ${JSON.stringify(otherAtCrash.gaps)}`,
        );

        // The next page-scoped tool on the crashed page fails with the reload guidance.
        for (const [tool, args] of [["snapshot_page", {}], ["click", { selector: "#ping" }]] as const) {
          const r = await server.call(tool, { page_id: doomed, ...args });
          assertEquals(errorCode(r), "page_crashed", `${tool}: ${textOf(r).slice(0, 300)}`);
          const error = structured(r).error as {
            retry: string;
            recovery: string;
            affected: { page_id: string };
          };
          assertEquals(error.retry, "after_recovery");
          assertEquals(error.affected.page_id, doomed);
          for (const recovery of ["reload_page", "close_page"]) {
            assert(error.recovery.includes(recovery), error.recovery);
          }
        }
        // list_pages and select_page still work on it, and say it crashed.
        const listed = await server.call("list_pages", {});
        assert(!listed.isError && /CRASHED/.test(textOf(listed)), textOf(listed));
        const row = (structured(listed).pages as Array<{ page_id: string; crashed?: { status: string } }>)
          .find((p) => p.page_id === doomed);
        assertEquals(row?.crashed?.status, "crashed");

        // The other page keeps recording after the crash.
        await until(`${other} frames after the crash`, async () => {
          const f = await frames(server, other);
          return f.total > otherAtCrash.total + 2 && f.lastMs > gap.start_ns / 1e6 ? true : undefined;
        });
        const selected = await server.call("select_page", { page_id: doomed });
        assert(!selected.isError, textOf(selected));

        // reload_page (the selected page: no page_id) gives the page a new renderer; frames resume on it.
        const reloaded = await server.call("reload_page", {});
        assert(!reloaded.isError, `reload recovers the page: ${textOf(reloaded).slice(0, 400)}`);
        assertEquals((structured(reloaded).page as { page_id: string }).page_id, doomed);
        const after = await status(server);
        assert(
          !after.crashed.some((p) => p.page_id === doomed),
          `recovered: ${JSON.stringify(after.crashed)}`,
        );
        assert(!after.text.includes("crashed"), after.text);
        const resumed = await until(`frames on ${doomed} after the reload`, async () => {
          const f = await frames(server, doomed);
          return f.total > atCrash.total + 2 && f.lastMs > gap.start_ns / 1e6 ? f : undefined;
        });
        const closedGap = resumed.gaps.find((g) => g.kind === "crashed" && g.page_id === doomed);
        assert(closedGap?.end_ns !== null && closedGap?.end_ns !== undefined, JSON.stringify(resumed.gaps));
        const snap = await server.call("snapshot_page", { page_id: doomed });
        assert(!snap.isError, textOf(snap));
        assert(textOf(snap).includes("Ping"), textOf(snap).slice(0, 300));
        console.error(
          `crash test: ${doomed} frames ${atCrash.total} at the crash, ${resumed.total} after reload; ` +
            `${other} ${otherAtCrash.total} → kept recording; gap ${Math.round(gap.start_ns / 1e6)}–${
              Math.round((closedGap?.end_ns ?? 0) / 1e6)
            } ms; status ${st.text.length} chars`,
        );
      });
    } finally {
      try {
        Deno.kill(-chrome.pid, "SIGKILL");
      } catch { /* already gone */ }
      await chrome.status;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    }
  },
);
