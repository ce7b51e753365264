import { assert, assertEquals, assertMatch } from "../assert.ts";
import { chromeArgs } from "../../src/browser/launch.ts";
import {
  e2e,
  errorCode,
  fixtures,
  refOf,
  type ServerHandle,
  startServer,
  structured,
  textOf,
  type ToolResult,
} from "./harness.ts";

/**
 * Issue 18's reconnect acceptance with real processes: an attached Chromium is SIGKILLed, the session
 * waits in `reconnecting`, a new Chromium on the same port is re-adopted under the same page id with one
 * outage gap, and without a restart the session ends after the window with every accepted frame kept.
 */

/** Short enough that the no-restart case stays quick, long enough for a restart under load. */
const WINDOW_MS = 15_000;

interface Frame {
  frame_id: number;
  page_id: string;
  ordinal: number;
  session_time_ns: number;
}
interface Gap {
  page_id: string;
  kind: string;
  start_ns: number;
  end_ns: number | null;
}
interface Event {
  session_time_ms: number;
  kind: string;
  level: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Probes until `done` holds or the cap passes, and returns the last probe. */
async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, capMs: number): Promise<T> {
  const deadline = Date.now() + capMs;
  let value = await probe();
  while (!done(value) && Date.now() < deadline) {
    await wait(100);
    value = await probe();
  }
  return value;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A Chromium in a process group of its own (setsid), so the whole browser dies with one SIGKILL. */
interface Chrome {
  port: number;
  profile: string;
  /** SIGKILLs the group (idempotent), waits for the leader, removes the profile unless it is kept. */
  kill(opts?: { keepProfile?: boolean }): Promise<void>;
}

/** `profile`: a killed browser's profile, as a restarted dev browser reuses its own (its lock is stale). */
async function launchChrome(port: number, startUrl: string, profile?: string): Promise<Chrome> {
  const executable = Deno.env.get("KROMETRAIL_CHROME") ?? Deno.env.get("CHROME_BIN") ?? "/usr/bin/chromium";
  profile ??= await Deno.makeTempDir({ prefix: "krometrail-reconnect-" });
  const args = chromeArgs({ executable, userDataDir: profile, profileLabel: "test", headless: true })
    .map((a) => a === "--remote-debugging-port=0" ? `--remote-debugging-port=${port}` : a)
    .map((a) => a === "about:blank" ? startUrl : a);
  const child = new Deno.Command("setsid", { args: [executable, ...args], stdout: "null", stderr: "null" })
    .spawn();
  let killed = false;
  const chrome: Chrome = {
    port,
    profile,
    async kill(opts) {
      if (!killed) {
        killed = true;
        // The group outlives its leader when a child process lingers, so it is signalled either way.
        try {
          Deno.kill(-child.pid, "SIGKILL");
        } catch { /* already gone */ }
      }
      await child.status;
      if (!opts?.keepProfile) await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/json/version`);
      await res.body?.cancel();
      if (res.ok) return chrome;
    } catch { /* not listening yet */ }
    await wait(50);
  }
  await chrome.kill();
  throw new Error(`Chromium did not serve port ${port} within 20 s`);
}

/** Characters of a response's text and structured content (kept lean; printed with the timings). */
function size(result: ToolResult): number {
  return textOf(result).length + JSON.stringify(result.structuredContent ?? {}).length;
}

/**
 * A loopback TCP relay in front of a browser's port: `cut()` drops every connection through it (the
 * socket fails, the browser stays) and refuses new ones until `restore()`.
 */
function relay(targetPort: number) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  let refusing = false;
  const accepting = (async () => {
    for await (const inbound of listener) {
      if (refusing) {
        inbound.close();
        continue;
      }
      const outbound = await Deno.connect({ hostname: "127.0.0.1", port: targetPort }).catch(() => undefined);
      if (!outbound) {
        inbound.close();
        continue;
      }
      open.add(inbound).add(outbound);
      inbound.readable.pipeTo(outbound.writable).catch(() => {});
      outbound.readable.pipeTo(inbound.writable).catch(() => {});
    }
  })().catch(() => {});
  const drop = () => {
    for (const conn of open) {
      try {
        conn.close();
      } catch { /* already closed by its pipe */ }
    }
    open.clear();
  };
  return {
    port: (listener.addr as Deno.NetAddr).port,
    cut() {
      refusing = true;
      drop();
    },
    restore() {
      refusing = false;
    },
    async close() {
      listener.close();
      drop();
      await accepting;
    },
  };
}

/** The pid of the browser process (not a helper: those carry --type=) whose profile is under `dir`. */
function browserPid(dir: string): number | undefined {
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    let cmdline = "";
    try {
      cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
    } catch {
      continue;
    }
    const args = cmdline.split("\0");
    if (
      args.some((a) => a.startsWith(`--user-data-dir=${dir}`)) && !args.some((a) => a.startsWith("--type="))
    ) {
      return Number(entry.name);
    }
  }
  return undefined;
}

async function status(server: ServerHandle): Promise<Record<string, unknown>> {
  return structured(await server.call("browser_status", { detail: "expanded" }));
}

async function frameCount(server: ServerHandle, args: Record<string, unknown>): Promise<number> {
  return structured(await server.call("list_source_frames", { ...args, max_frames: 1 }))
    .total_frame_count as number;
}

/** The page's newest stored frame. */
async function newestFrame(server: ServerHandle, args: Record<string, unknown>): Promise<Frame | undefined> {
  const total = await frameCount(server, args);
  const last = structured(
    await server.call("list_source_frames", { ...args, offset: Math.max(0, total - 1), max_frames: 1 }),
  );
  return (last.frames as Frame[])[0];
}

/** The id of the page showing `url` (the start URL's tab). */
async function pageShowing(server: ServerHandle, url: string): Promise<string> {
  const st = await until(
    () => status(server),
    (s) => (s.pages as Array<{ url: string }>).some((p) => p.url === url),
    10_000,
  );
  const page = (st.pages as Array<{ page_id: string; url: string }>).find((p) => p.url === url);
  const id = page?.page_id;
  assert(id, `a page shows ${url}: ${JSON.stringify(st.pages)}`);
  return id;
}

/** Attaches, finds the fixture's page and waits until it has recorded a few frames. */
async function attachAndRecord(server: ServerHandle, chrome: Chrome, url: string) {
  const attached = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` });
  assertEquals(attached.isError, undefined, textOf(attached));
  const sessionId = String(structured(attached).session_id);
  const pageId = await pageShowing(server, url);
  const frames = await until(() => frameCount(server, { page_id: pageId }), (n) => n >= 20, 30_000);
  assert(frames >= 20, `the animated page recorded frames before the kill (${frames})`);
  return { sessionId, pageId };
}

/** Polls browser_status until the session reconnects after a kill; checks what it says meanwhile. */
async function expectReconnecting(server: ServerHandle): Promise<Record<string, unknown>> {
  const st = await until(() => status(server), (s) => s.state !== "running", 15_000);
  assertEquals(st.state, "reconnecting", `after the kill: ${JSON.stringify(st).slice(0, 600)}`);
  assertEquals(st.running, true, "a reconnecting session has not ended");
  const r = st.reconnecting as { since: string; since_ms: number; attempts: number; window_ms: number };
  assert(r, "status names the outage");
  assert(!Number.isNaN(Date.parse(r.since)), `since is a time: ${r.since}`);
  assert(Date.now() - Date.parse(r.since) < WINDOW_MS, "since is the loss just now");
  assertEquals(r.window_ms, WINDOW_MS);
  assertEquals(typeof r.since_ms, "number");
  // The first retry comes within a second; the count of tries is reported as it grows.
  const tried = await until(
    () => status(server),
    (s) => ((s.reconnecting as { attempts?: number } | undefined)?.attempts ?? 0) >= 1,
    10_000,
  );
  const attempts = (tried.reconnecting as { attempts: number } | undefined)?.attempts ?? 0;
  assert(attempts >= 1, `tries are counted: ${JSON.stringify(tried.reconnecting)}`);
  const concise = await server.call("browser_status");
  assertMatch(textOf(concise), /reconnecting since .*tries/);
  return { ...r, attempts_seen: attempts, status_chars: size(concise) } as unknown as Record<string, unknown>;
}

Deno.test({
  name:
    "reconnect: a killed attached Chromium is retried, a restarted one is re-adopted with one outage gap, and without one the session ends after the window keeping its frames",
  ...e2e,
  fn: async (t) => {
    const site = fixtures();
    const server = await startServer({ env: { KROMETRAIL_RECONNECT_WINDOW_MS: String(WINDOW_MS) } });
    const url = `${site.origin}/reconnect/spinner.html`;
    const chromes: Chrome[] = [];
    const launch = async (port: number, profile?: string) => {
      const chrome = await launchChrome(port, url, profile);
      chromes.push(chrome);
      return chrome;
    };
    try {
      await t.step({
        name: "a restart on the same port within the window: same page id, frames resume, one gap",
        ...e2e,
        fn: async () => {
          const port = freePort();
          const first = await launch(port);
          const { sessionId, pageId } = await attachAndRecord(server, first, url);
          const oldRef = refOf(
            structured(await server.call("snapshot_page", { page_id: pageId })),
            "button",
            "Mark",
          );
          // A second tab that the restarted browser does not reopen: it is closed after the reconnection.
          const other = await server.call("create_page", {
            url: `${site.origin}/stable.html`,
            background: true,
          });
          const otherId = String(structured(other).page_id);
          await server.call("select_page", { page_id: pageId });
          const before = await newestFrame(server, { page_id: pageId });
          assert(before, "a frame before the kill");

          const killedAt = Date.now();
          await first.kill({ keepProfile: true });
          const outage = await expectReconnecting(server);
          const sinceNs = (outage.since_ms as number) * 1e6;
          assert(sinceNs >= before.session_time_ns, "the loss comes after the last frame before it");

          // A page tool during the outage fails with the retryable code, naming the session.
          const during = await server.call("evaluate_page", { expression: "1 + 1" });
          assertEquals(errorCode(during), "browser_reconnecting", textOf(during));
          const err = structured(during).error as { retry: string; details?: { attempts?: number } };
          assertEquals(err.retry, "safe");
          assertEquals(typeof err.details?.attempts, "number");
          assertEquals(
            errorCode(await server.call("snapshot_page", { page_id: pageId })),
            "browser_reconnecting",
          );

          await launch(port, first.profile);
          const back = await until(
            () => status(server),
            (s) => s.state !== "reconnecting",
            WINDOW_MS + 10_000,
          );
          assertEquals(back.state, "running", `after the restart: ${JSON.stringify(back).slice(0, 600)}`);
          const resumedAfterMs = Date.now() - killedAt;
          assertEquals(back.session_id, sessionId, "the same session runs on");
          assertEquals(back.reconnecting, undefined);
          assertEquals(
            (back.pages as Array<{ page_id: string }>).map((p) => p.page_id),
            [pageId],
            "the restarted browser's tab is re-adopted under its page id; the other tab is gone",
          );
          assertEquals(back.selected_page_id, pageId);
          // Its URL shows once the restarted tab's document commits (the session resumes while it loads).
          assertEquals(await pageShowing(server, url), pageId);
          // Frames resume on the same page id, after the outage gap closes.
          const outageGap = async () =>
            (structured(await server.call("list_source_frames", { page_id: pageId, max_frames: 1 }))
              .gaps as Gap[])
              .filter((g) => g.kind === "disconnected");
          const gaps = await until(
            outageGap,
            (g) => g.length > 0 && g.every((x) => x.end_ns !== null),
            10_000,
          );
          assertEquals(gaps.length, 1, `exactly one outage gap: ${JSON.stringify(gaps)}`);
          const gap = gaps[0];
          const gapEnd = gap.end_ns ?? 0;
          assert(
            Math.abs(gap.start_ns - sinceNs) < 1e6,
            `the gap opens at the loss (${gap.start_ns} vs ${sinceNs})`,
          );
          assert(gapEnd > gap.start_ns, "the gap has a length");
          const after = await until(
            () => newestFrame(server, { page_id: pageId }),
            (f) => f !== undefined && f.session_time_ns > gapEnd + 500e6,
            20_000,
          );
          assert(after && after.session_time_ns > gapEnd, "frames resume after the gap on the same page id");
          assert(
            after.ordinal > before.ordinal,
            `ordinals continue (${before.ordinal} then ${after.ordinal})`,
          );

          // The retry the error promised works on the same page id (once the restarted tab has loaded: the
          // endpoint answers, and so the session resumes, while it still parses); a ref of the dead
          // renderer's document does not.
          const title = await until(
            async () =>
              String(
                structured(
                  await server.call("evaluate_page", {
                    page_id: pageId,
                    expression: "document.readyState + ' ' + document.title",
                  }),
                ).value,
              ),
            (v) => v.startsWith("complete"),
            15_000,
          );
          assertEquals(title, "complete Reconnect spinner");
          assertEquals(errorCode(await server.call("click", { ref: oldRef })), "stale_ref");

          // No frame falls inside the outage.
          const inside = structured(
            await server.call("list_source_frames", {
              range: { start_ms: gap.start_ns / 1e6, end_ms: gapEnd / 1e6, page_id: pageId },
              max_frames: 200,
            }),
          );
          for (const f of inside.frames as Frame[]) {
            assert(
              f.session_time_ns <= gap.start_ns || f.session_time_ns >= gapEnd,
              `frame #${f.frame_id} at ${f.session_time_ns} ns lies in the outage`,
            );
          }

          // The temporal tools answer over a range from before the kill to after the resume, and say so.
          const across = {
            start_ms: Math.max(0, before.session_time_ns / 1e6 - 1_000),
            end_ms: after.session_time_ns / 1e6,
            page_id: pageId,
          };
          const resolved = structured(await server.call("resolve_temporal_range", { range: across }));
          const quality = resolved.capture_quality as { gaps: Gap[]; complete: boolean; frame_count: number };
          assert(quality.frame_count > 0, "frames on both sides");
          assertEquals(
            quality.gaps.filter((g) => g.kind === "disconnected").length,
            1,
            JSON.stringify(quality),
          );
          assertEquals(quality.complete, false, "a range across the outage is not complete");
          const made = await server.call("generate_artifacts", {
            range_handle: resolved.range_handle,
            generators: ["storyboard"],
            inline_images: false,
          });
          assertEquals(made.isError, undefined, textOf(made));
          const range = structured(made).range as { gaps: Gap[] };
          assertEquals(
            range.gaps.filter((g) => g.kind === "disconnected").length,
            1,
            "the artifact's range names the gap",
          );

          // The outage is on the timeline as connection events.
          const eventsResult = await server.call("query_browser_events", {
            kinds: ["connection"],
            max_events: 20,
          });
          const events = structured(eventsResult).events as Event[];
          const lost = events.find((e) => e.level === "warning");
          const resumed = events.find((e) => e.level === "info");
          assert(lost && resumed, `a loss and a resume event: ${JSON.stringify(events)}`);
          assert(
            Math.abs(lost.session_time_ms - (outage.since_ms as number)) < 1,
            "the loss event is at the loss",
          );
          assert(resumed.session_time_ms > lost.session_time_ms, "the resume comes after the loss");
          const data = resumed.data as { attempts?: number; readopted?: string[]; outage_ms?: number };
          assert((data.attempts ?? 0) >= 1 && (data.outage_ms ?? 0) > 0, JSON.stringify(resumed));
          // Running again within the window: the resume is on the session clock less than a window after the loss.
          assert(resumed.session_time_ms - lost.session_time_ms < WINDOW_MS, JSON.stringify(resumed));
          console.error(
            `reconnect: seen reconnecting (${outage.attempts_seen} tries), running again ${resumedAfterMs} ms after the kill ` +
              `(outage ${data.outage_ms} ms on the session clock, ${data.attempts} attempts); chars: status while ` +
              `reconnecting ${outage.status_chars}, browser_reconnecting error ${size(during)}, ` +
              `connection events ${size(eventsResult)}, generate_artifacts ${size(made)}`,
          );
          assert(
            data.readopted?.includes(pageId),
            `${pageId} is named re-adopted: ${JSON.stringify(resumed)}`,
          );
          // The tab that did not come back is closed: named so, gone from the page list, its outage gap ended.
          assertEquals((resumed.data as { closed?: string[] }).closed, [otherId], JSON.stringify(resumed));
          const listed = structured(await server.call("list_pages")).pages as Array<{ page_id: string }>;
          assertEquals(listed.map((p) => p.page_id), [pageId]);
          assertEquals(
            errorCode(await server.call("evaluate_page", { page_id: otherId, expression: "1" })),
            "page_closed",
          );
          const otherGaps = (structured(
            await server.call("list_source_frames", { page_id: otherId, max_frames: 1 }),
          ).gaps as Gap[]).filter((g) => g.kind === "disconnected");
          assertEquals(otherGaps.length, 1, JSON.stringify(otherGaps));
          assert(otherGaps[0].end_ns !== null, "a closed page's outage gap ends");

          const stopped = await server.call("stop_browser");
          assertEquals(stopped.isError, undefined, textOf(stopped));
        },
      });

      await t.step({
        name: "no restart: the session ends after the window with every accepted frame queryable",
        ...e2e,
        fn: async () => {
          // Whatever the first step left attached is let go (stop_browser detaches, and is idempotent).
          await server.call("stop_browser");
          const chrome = await launch(freePort());
          const { sessionId, pageId } = await attachAndRecord(server, chrome, url);
          const beforeKill = await frameCount(server, { session_id: sessionId });

          // The loss can be noticed as soon as the signal lands, so the window is timed from before it.
          const killedAt = Date.now();
          await chrome.kill();
          await expectReconnecting(server);
          // Nothing can arrive over a dead socket: what is stored now is everything accepted.
          const accepted = await frameCount(server, { session_id: sessionId });
          assert(accepted >= beforeKill, `${accepted} frames accepted, ${beforeKill} seen before the kill`);

          const ended = await until(() => status(server), (s) => s.running === false, WINDOW_MS + 20_000);
          const endedAfterMs = Date.now() - killedAt;
          assertEquals(ended.running, false, `the session ends: ${JSON.stringify(ended).slice(0, 400)}`);
          assertEquals(ended.end_reason, "reconnect_window_exhausted");
          assert(endedAfterMs >= WINDOW_MS, `it waited out the window (${endedAfterMs} ms)`);
          console.error(
            `reconnect: no restart, the session ended ${endedAfterMs} ms after the kill, ${accepted} frames kept`,
          );
          assertMatch(textOf(await server.call("browser_status")), /reconnect_window_exhausted/);

          assertEquals(await frameCount(server, { session_id: sessionId }), accepted, "every frame kept");
          const last = await newestFrame(server, { session_id: sessionId, page_id: pageId });
          assert(last, "the last frame is listed");
          const fetched = await server.call("fetch_source_frames", {
            session_id: sessionId,
            frame_ids: [last.frame_id],
            inline_images: false,
          });
          assertEquals(fetched.isError, undefined, textOf(fetched));
          const gaps =
            (structured(await server.call("list_source_frames", { session_id: sessionId, max_frames: 1 }))
              .gaps as Gap[]).filter((g) => g.kind === "disconnected");
          assertEquals(gaps.length, 1, JSON.stringify(gaps));
          assert(gaps[0].end_ns !== null, "the outage gap is closed at the end");
          const events = structured(
            await server.call("query_browser_events", {
              session_id: sessionId,
              kinds: ["connection"],
              max_events: 20,
            }),
          ).events as Event[];
          assert(
            events.some((e) => e.level === "error"),
            `the failed reconnect is an event: ${JSON.stringify(events)}`,
          );
        },
      });

      await t.step({
        name: "stop_browser during the outage ends the session at once, and a new attach works",
        ...e2e,
        fn: async () => {
          const chrome = await launch(freePort());
          const { sessionId } = await attachAndRecord(server, chrome, url);
          await chrome.kill();
          await expectReconnecting(server);
          const accepted = await frameCount(server, { session_id: sessionId });
          const stopAt = Date.now();
          const stopped = await server.call("stop_browser");
          const stopMs = Date.now() - stopAt;
          assertEquals(stopped.isError, undefined, textOf(stopped));
          assertEquals(structured(stopped).closed_browser, false, "an attached browser is never closed");
          const after = await status(server);
          assertEquals(after.running, false, `stopped: ${JSON.stringify(after).slice(0, 400)}`);
          assertEquals(await frameCount(server, { session_id: sessionId }), accepted, "every frame kept");
          // The retry loop is over: a browser on a new port is attached as a new session.
          const next = await launch(freePort());
          const again = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${next.port}` });
          assertEquals(again.isError, undefined, textOf(again));
          assert(structured(again).session_id !== sessionId, "a new session");
          assertEquals(structured(again).state, "running");
          console.error(
            `reconnect: stop_browser during the outage took ${stopMs} ms, ${accepted} frames kept`,
          );
          await server.call("stop_browser");
        },
      });

      await t.step({
        name: "a launched browser that exits ends its session (no reconnect), every frame kept",
        ...e2e,
        fn: async () => {
          // A managed profile lives under this server's data dir, which names its browser among all processes.
          const started = await server.call("start_browser", { profile: "h5-exit", url });
          assertEquals(started.isError, undefined, textOf(started));
          const sessionId = String(structured(started).session_id);
          const pageId = await pageShowing(server, url);
          await until(() => frameCount(server, { page_id: pageId }), (n) => n >= 20, 30_000);
          const pid = browserPid(server.dataDir);
          assert(pid, "the launched browser's process is found by its profile");
          Deno.kill(pid, "SIGKILL");
          const ended = await until(() => status(server), (s) => s.running === false, 15_000);
          assertEquals(ended.running, false, `the session ends: ${JSON.stringify(ended).slice(0, 400)}`);
          assertEquals(ended.state, "ended", "a launched browser is never waited for");
          assertEquals(ended.reconnecting, undefined);
          assert(
            ["browser_exited", "browser_disconnected"].includes(String(ended.end_reason)),
            `end_reason ${ended.end_reason}`,
          );
          const kept = await frameCount(server, { session_id: sessionId });
          console.error(
            `reconnect: a launched browser killed ends its session (${ended.end_reason}), ${kept} frames kept`,
          );
          assert(kept >= 20, `${kept} frames kept`);
          assertEquals(await frameCount(server, { session_id: sessionId }), kept, "nothing more arrives");
          // A new session can start at once; nothing of the dead one holds the slot.
          const fresh = await server.call("start_browser", { temporary: true });
          assertEquals(fresh.isError, undefined, textOf(fresh));
          await server.call("stop_browser");
        },
      });

      await t.step({
        name:
          "a dropped socket to a browser that stayed, twice: the same target is re-adopted with its viewport",
        ...e2e,
        fn: async () => {
          const chrome = await launch(freePort());
          const front = relay(chrome.port);
          try {
            const { sessionId, pageId } = await attachAndRecord(server, { ...chrome, port: front.port }, url);
            const sized = await server.call("set_viewport", { width: 640, height: 480, page_id: pageId });
            assertEquals(sized.isError, undefined, textOf(sized));
            const before = await newestFrame(server, { page_id: pageId });
            assert(before, "a frame before the drop");
            front.cut();
            // Tries fail while the relay refuses; once it lets connections through, the next one succeeds.
            await expectReconnecting(server);
            const failed = await until(
              () => status(server),
              (st) => (st.reconnecting as { last_error?: string } | undefined)?.last_error !== undefined,
              10_000,
            );
            const lastError = (failed.reconnecting as { last_error?: string } | undefined)?.last_error;
            assertEquals(
              typeof lastError,
              "string",
              `a failed try says why: ${JSON.stringify(failed.reconnecting)}`,
            );
            front.restore();
            const back = await until(
              () => status(server),
              (s) => s.state !== "reconnecting",
              WINDOW_MS + 10_000,
            );
            assertEquals(back.state, "running", JSON.stringify(back).slice(0, 600));
            assertEquals(back.session_id, sessionId);
            assertEquals((back.pages as Array<{ page_id: string }>).map((p) => p.page_id), [pageId]);
            // The same document, so no reload: the page answers at once, under the viewport set before.
            const width = await server.call("evaluate_page", {
              page_id: pageId,
              expression: "`${innerWidth}x${innerHeight} ${document.title}`",
            });
            assertEquals(structured(width).value, "640x480 Reconnect spinner", textOf(width));
            const gaps = await until(
              async () =>
                (structured(await server.call("list_source_frames", { page_id: pageId, max_frames: 1 }))
                  .gaps as Gap[]).filter((g) => g.kind === "disconnected"),
              (g) => g.length > 0 && g.every((x) => x.end_ns !== null),
              10_000,
            );
            assertEquals(gaps.length, 1, JSON.stringify(gaps));
            const gapEnd = gaps[0].end_ns ?? 0;
            const after = await until(
              () => newestFrame(server, { page_id: pageId }),
              (f) => f !== undefined && f.session_time_ns > gapEnd,
              20_000,
            );
            assert(
              after && after.ordinal > before.ordinal,
              "frames resume on the same page, ordinals continuing",
            );
            const resumed = (structured(
              await server.call("query_browser_events", { kinds: ["connection"], max_events: 20 }),
            ).events as Event[]).find((e) => e.level === "info");
            assertEquals((resumed?.data as { readopted?: string[] } | undefined)?.readopted, [pageId]);

            // A second outage in the same session is handled the same way: a second gap, after the first.
            front.cut();
            await expectReconnecting(server);
            front.restore();
            const again = await until(
              () => status(server),
              (st) => st.state !== "reconnecting",
              WINDOW_MS + 10_000,
            );
            assertEquals(again.state, "running", JSON.stringify(again).slice(0, 600));
            const both = await until(
              async () =>
                (structured(await server.call("list_source_frames", { page_id: pageId, max_frames: 1 }))
                  .gaps as Gap[]).filter((g) => g.kind === "disconnected"),
              (g) => g.length === 2 && g.every((x) => x.end_ns !== null),
              10_000,
            );
            assertEquals(both.length, 2, JSON.stringify(both));
            const [one, two] = [...both].sort((x, y) => x.start_ns - y.start_ns);
            assert(
              two.start_ns >= (one.end_ns ?? Infinity),
              `the outages do not overlap: ${JSON.stringify(both)}`,
            );
            const latest = await until(
              () => newestFrame(server, { page_id: pageId }),
              (f) => f !== undefined && f.session_time_ns > (two.end_ns ?? Infinity),
              20_000,
            );
            assert(
              latest && latest.ordinal > after.ordinal,
              "frames resume again, ordinals still continuing",
            );
            const resumes = (structured(
              await server.call("query_browser_events", { kinds: ["connection"], max_events: 20 }),
            ).events as Event[]).filter((e) => e.level === "info");
            assertEquals(resumes.length, 2, JSON.stringify(resumes));
            await server.call("stop_browser");
          } finally {
            await front.close();
          }
        },
      });
    } finally {
      for (const chrome of chromes) await chrome.kill();
      await server.close();
      await site.close();
    }
  },
});
