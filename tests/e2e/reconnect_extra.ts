import { assert, assertEquals } from "../assert.ts";
import { type ServerHandle, structured, textOf } from "./harness.ts";
import { managedProfileDir } from "../../src/store/profiles.ts";
import {
  attachAndRecord,
  type Chrome,
  type Event,
  expectReconnecting,
  frameCount,
  type Gap,
  newestFrame,
  pageShowing,
  relay,
  status,
  WINDOW_MS,
} from "./reconnect_util.ts";
import { browserPid, pollUntil, profileProcesses } from "./chromium_process.ts";

/** The reconnect e2e's checks beyond the two acceptance cases (run as steps of reconnect_test.ts). */

export interface StepContext {
  server: ServerHandle;
  /** The animated fixture every browser here shows. */
  url: string;
  /**
   * Starts a Chromium at `url` that the test file kills at the end whatever happens: on a port it picks
   * (none given), on a fixed port picked now ("fixed"), or on `port` (a restart, with its old `profile`).
   */
  launch: (port?: number | "fixed", profile?: string) => Promise<Chrome>;
}

/** stop_browser during the outage ends the session at once, and a new attach works. */
export async function stopDuringOutage({ server, url, launch }: StepContext): Promise<void> {
  const chrome = await launch();
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
  const next = await launch();
  const again = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${next.port}` });
  assertEquals(again.isError, undefined, textOf(again));
  assert(structured(again).session_id !== sessionId, "a new session");
  assertEquals(structured(again).state, "running");
  console.error(
    `reconnect: stop_browser during the outage took ${stopMs} ms, ${accepted} frames kept`,
  );
  await server.call("stop_browser");
}

/** A launched browser that exits ends its session (no reconnect), every frame kept. */
export async function launchedBrowserExits(context: StepContext): Promise<void> {
  try {
    await launchedExit(context);
  } finally {
    // Whatever a failure left running is let go, so the next step starts from no session.
    await context.server.call("stop_browser");
  }
}

async function launchedExit({ server, url }: StepContext): Promise<void> {
  // A managed profile lives under this server's data dir, which names its browser among all processes.
  const profile = managedProfileDir(server.dataDir, "h5-exit");
  const started = await server.call("start_browser", { profile: "h5-exit", url });
  assertEquals(started.isError, undefined, textOf(started));
  const sessionId = String(structured(started).session_id);
  const pageId = await pageShowing(server, url);
  await pollUntil(() => frameCount(server, { page_id: pageId }), (n) => n >= 20, 30_000);
  const pid = browserPid(profile);
  assert(pid, "the launched browser's process is found by its profile");
  assert(profileProcesses(profile).length > 1, "the browser runs helper processes of that profile");
  Deno.kill(pid, "SIGKILL");
  const ended = await pollUntil(() => status(server), (s) => s.running === false, 15_000);
  assertEquals(ended.running, false, `the session ends: ${JSON.stringify(ended).slice(0, 400)}`);
  assertEquals(ended.state, "ended", "a launched browser is never waited for");
  assertEquals(ended.reconnecting, undefined);
  // The socket closes a moment before the exit is seen; the session names the exit, not the socket.
  assertEquals(ended.end_reason, "browser_exited");
  // Nothing of that browser is left: its helpers (zygote, GPU, renderers) go with it.
  const left = await pollUntil(
    () => Promise.resolve(profileProcesses(profile)),
    (l) => l.length === 0,
    10_000,
  );
  assertEquals(left, [], `no process of the profile remains: ${JSON.stringify(left)}`);
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
}

/** A dropped socket to a browser that stayed, twice: the same target is re-adopted with its viewport. */
export async function droppedSocketTwice({ server, url, launch }: StepContext): Promise<void> {
  const chrome = await launch();
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
    const failed = await pollUntil(
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
    const back = await pollUntil(
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
    const gaps = await pollUntil(
      async () =>
        (structured(await server.call("list_source_frames", { page_id: pageId, max_frames: 1 }))
          .gaps as Gap[]).filter((g) => g.kind === "disconnected"),
      (g) => g.length > 0 && g.every((x) => x.end_ns !== null),
      10_000,
    );
    assertEquals(gaps.length, 1, JSON.stringify(gaps));
    const gapEnd = gaps[0].end_ns ?? 0;
    const after = await pollUntil(
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
    const again = await pollUntil(
      () => status(server),
      (st) => st.state !== "reconnecting",
      WINDOW_MS + 10_000,
    );
    assertEquals(again.state, "running", JSON.stringify(again).slice(0, 600));
    const both = await pollUntil(
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
    const latest = await pollUntil(
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
}
