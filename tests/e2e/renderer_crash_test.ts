import { assert, assertEquals } from "../assert.ts";
import { managedProfileDir } from "../../src/store/profiles.ts";
import type { StaticServer } from "../../src/demo/static_server.ts";
import {
  e2e,
  errorCode,
  type ServerHandle,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";
import { crashTarget } from "./crash_cdp.ts";
import { startChromium, until } from "./chromium_process.ts";

/**
 * On a loaded box one frame's acknowledgement can pass the production 1 s deadline, which ends that
 * page's stream for good (capture_faults_test covers that); this test is about crashes, so acks get
 * a longer deadline through the test-fault plan (as pins_test does).
 */
const patientAcks = { KROMETRAIL_TEST_FAULTS: JSON.stringify({ ack_deadline_ms: 10_000 }) };

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
    chars: chars(r),
    crashed: (st.crashed_pages ?? []) as Array<{ page_id: string; crashed_at_ms: number; status: string }>,
  };
}

/** What a response costs a client: its text plus its structured content. */
function chars(r: ToolResult): number {
  return textOf(r).length + JSON.stringify(r.structuredContent ?? {}).length;
}

/** Response sizes of the crash path, printed at the end (the tools' answers stay lean). */
const sizes: Record<string, number> = {};

async function pageIdOf(server: ServerHandle, tool: string, args: Record<string, unknown>): Promise<string> {
  const r = await server.call(tool, args);
  assert(!r.isError, `${tool}: ${textOf(r).slice(0, 400)}`);
  const st = structured(r);
  return String((st.page as { page_id?: string } | undefined)?.page_id ?? st.page_id);
}

/**
 * After Page.crash on `pageId`: browser_status names it and says to reload, a crash event and a "crashed" gap
 * are on its timeline, and page-scoped tools refuse it with page_crashed and the recoveries.
 */
async function expectCrash(server: ServerHandle, pageId: string, otherPageId: string, nth = 1) {
  const st = await until(`${pageId} in browser_status crashed_pages`, async () => {
    const s = await status(server);
    return s.crashed.some((p) => p.page_id === pageId) ? s : undefined;
  });
  sizes["browser_status (a crashed page)"] = st.chars;
  const entry = st.crashed.find((p) => p.page_id === pageId);
  assertEquals(entry?.status, "crashed", JSON.stringify(st.crashed));
  assert(!st.crashed.some((p) => p.page_id === otherPageId), `only ${pageId}: ${JSON.stringify(st.crashed)}`);
  assert(st.text.includes(pageId) && st.text.includes("reload_page"), st.text);

  // The crash is a browser event on that page, on the session clock: its nth crash, its nth crash event.
  const event = await until(`crash event ${nth} on ${pageId}`, async () => {
    const r = structured(await server.call("query_browser_events", { kinds: ["crash"], page_id: pageId }));
    const events = r.events as BrowserEvent[];
    assert(events.length <= nth, `one event per crash: ${JSON.stringify(events)}`);
    return events[nth - 1];
  });
  assertEquals(event.level, "error");
  assert(event.text?.includes("crashed"), JSON.stringify(event));
  assertEquals(event.data?.status, "crashed");
  assert(
    Math.abs(event.session_time_ms - (entry?.crashed_at_ms ?? -1)) < 1_000,
    `event at ${event.session_time_ms} ms, status says ${entry?.crashed_at_ms} ms`,
  );

  // An open gap of kind "crashed" on that page, from the crash on.
  const gap = await until(`an open crashed gap on ${pageId}`, async () => {
    const f = await frames(server, pageId);
    return f.gaps.find((g) => g.kind === "crashed" && g.page_id === pageId && g.end_ns === null);
  });
  assert(
    Math.abs(gap.start_ns / 1e6 - (entry?.crashed_at_ms ?? -1)) < 1_000,
    `gap from ${gap.start_ns / 1e6} ms, crash at ${entry?.crashed_at_ms} ms`,
  );

  // The next page-scoped tool on it fails with the reload guidance.
  for (const [tool, args] of [["snapshot_page", {}], ["click", { selector: "#ping" }]] as const) {
    const r = await server.call(tool, { page_id: pageId, ...args });
    assertEquals(errorCode(r), "page_crashed", `${tool}: ${textOf(r).slice(0, 300)}`);
    sizes[`${tool} → page_crashed`] = chars(r);
    const error = structured(r).error as { retry: string; recovery: string; affected: { page_id: string } };
    assertEquals(error.retry, "after_recovery");
    assertEquals(error.affected.page_id, pageId);
    for (const recovery of ["reload_page", "navigate_page", "close_page"]) {
      assert(error.recovery.includes(recovery), error.recovery);
    }
  }
  return { entry, gap };
}

/** The crash gap on the page has ended and frames arrive on it again, after the crash. */
async function expectRecovered(server: ServerHandle, pageId: string, crashNs: number, framesAtCrash: number) {
  const after = await status(server);
  assert(!after.crashed.some((p) => p.page_id === pageId), `recovered: ${JSON.stringify(after.crashed)}`);
  assert(!after.text.includes(`${pageId} crashed`), after.text);
  let last: unknown;
  const resumed = await until(`frames on ${pageId} after the recovery`, async () => {
    const f = await frames(server, pageId);
    last = f;
    return f.total > framesAtCrash + 2 && f.lastMs > crashNs / 1e6 ? f : undefined;
  }).catch(async (err) => {
    const capture = structured(await server.call("browser_status", { detail: "expanded" })).capture;
    throw new Error(
      `${err.message}: ${JSON.stringify(last)} capture ${JSON.stringify(capture).slice(0, 1500)}`,
    );
  });
  const closed = resumed.gaps.find((g) => g.kind === "crashed" && g.start_ns === crashNs);
  assert(closed && closed.end_ns !== null && closed.end_ns >= crashNs, JSON.stringify(resumed.gaps));
  const snap = await server.call("snapshot_page", { page_id: pageId });
  assert(!snap.isError && textOf(snap).includes("Ping"), textOf(snap).slice(0, 300));
  return { resumed, gapEndNs: closed.end_ns };
}

async function attachedCrash(server: ServerHandle, site: StaticServer): Promise<void> {
  // No fixed port: Chromium picks one, so no other process can take it first.
  const chrome = await startChromium({ windowSize: { width: 1000, height: 700 } });
  const { port } = chrome;
  try {
    const attached = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${port}` });
    assert(!attached.isError, textOf(attached));
    const doomed = await pageIdOf(server, "navigate_page", {
      url: `${site.origin}/crash/animated.html?which=doomed`,
    });
    const other = await pageIdOf(server, "create_page", {
      url: `${site.origin}/crash/animated.html?which=other`,
    });
    assert(doomed !== other, `two pages: ${doomed}, ${other}`);
    // Both pages paint continuously; their screencasts have delivered frames before the crash.
    for (const page of [doomed, other]) {
      await until(
        `frames on ${page}`,
        async () => (await frames(server, page)).total >= 3 ? true : undefined,
      );
    }
    const sent = performance.now();
    await crashTarget(port, "which=doomed");
    const { gap } = await expectCrash(server, doomed, other);
    const seenMs = Math.round(performance.now() - sent);
    const atCrash = await frames(server, doomed);
    const otherAtCrash = await frames(server, other);
    assert(!otherAtCrash.gaps.some((g) => g.kind === "crashed"), `no crash gap on ${other}`);
    // The other page keeps recording after the crash (checked before select_page brings the crashed page
    // forward: a page sent to the background pauses its screencast, a visibility gap, not a crash).
    await until(`${other} frames after the crash`, async () => {
      const f = await frames(server, other);
      return f.total > otherAtCrash.total + 2 && f.lastMs > gap.start_ns / 1e6 ? true : undefined;
    });

    // list_pages and select_page still work on it, and say it crashed.
    const listed = await server.call("list_pages", {});
    assert(!listed.isError && textOf(listed).includes("CRASHED"), textOf(listed));
    sizes["list_pages (two pages, one crashed)"] = chars(listed);
    const row = (structured(listed).pages as Array<{ page_id: string; crashed?: { status: string } }>)
      .find((p) => p.page_id === doomed);
    assertEquals(row?.crashed?.status, "crashed");
    const selected = await server.call("select_page", { page_id: doomed });
    assert(!selected.isError, textOf(selected));
    sizes["select_page (crashed)"] = chars(selected);

    // reload_page (the selected page: no page_id) gives the page a new renderer; frames resume on it.
    const reloaded = await server.call("reload_page", {});
    assert(!reloaded.isError, `reload recovers the page: ${textOf(reloaded).slice(0, 400)}`);
    sizes["reload_page (recovering)"] = chars(reloaded);
    assertEquals((structured(reloaded).page as { page_id: string }).page_id, doomed);
    // Its observation is a whole one: a new document, observed after the renderer came back.
    assertEquals((structured(reloaded).navigation as { new_document?: boolean }).new_document, true);
    assert((structured(reloaded).snapshot as { target_count?: number }).target_count, textOf(reloaded));
    const { resumed, gapEndNs } = await expectRecovered(server, doomed, gap.start_ns, atCrash.total);
    // The temporal tools answer across the crash, naming its gap.
    const across = await server.call("resolve_temporal_range", {
      range: { page_id: doomed, start_ms: Math.max(0, gap.start_ns / 1e6 - 500), end_ms: resumed.lastMs },
    });
    assert(!across.isError, textOf(across));
    const range = structured(across).range as { gaps: Gap[]; warnings: Array<{ code: string }> };
    assert(
      range.gaps.some((g) => g.kind === "crashed" && g.start_ns === gap.start_ns),
      JSON.stringify(range.gaps),
    );
    assert(range.warnings.some((w) => w.code === "capture_gaps"), JSON.stringify(range.warnings));
    sizes["resolve_temporal_range (across the crash)"] = chars(across);
    console.error(
      `attached: crash seen ${seenMs} ms after Page.crash; ${doomed} ${atCrash.total} frames at the crash, ` +
        `${resumed.total} after reload_page; gap ${Math.round(gap.start_ns / 1e6)}–${
          Math.round(gapEndNs / 1e6)
        } ms; ${other} kept recording`,
    );
  } finally {
    // Detach first: a killed endpoint would put the session into reconnecting.
    await server.call("stop_browser", {}).catch(() => {});
    await chrome.kill();
  }
}

/**
 * The same detection in a launched session (the URL policy refuses chrome://crash, so the test crashes the
 * page from its own CDP connection; a managed profile under the server's data dir tells it the port).
 * navigate_page recovers one crash and close_page removes the page after a second.
 */
async function launchedCrash(server: ServerHandle, site: StaticServer): Promise<void> {
  const profile = "crash-launched";
  const started = await server.call("start_browser", { profile });
  assert(!started.isError, textOf(started));
  try {
    const port = Number(
      (await Deno.readTextFile(`${managedProfileDir(server.dataDir, profile)}/DevToolsActivePort`)).split(
        "\n",
      )[0],
    );
    const stays = await pageIdOf(server, "navigate_page", {
      url: `${site.origin}/crash/animated.html?which=stays`,
    });
    const doomed = await pageIdOf(server, "create_page", {
      url: `${site.origin}/crash/animated.html?which=first`,
    });
    await until(
      `frames on ${doomed}`,
      async () => (await frames(server, doomed)).total >= 3 ? true : undefined,
    );

    await crashTarget(port, "which=first");
    const first = await expectCrash(server, doomed, stays);
    const atCrash = await frames(server, doomed);
    const moved = await server.call("navigate_page", {
      page_id: doomed,
      url: `${site.origin}/crash/animated.html?which=second`,
    });
    assert(!moved.isError, `navigate_page recovers the page: ${textOf(moved).slice(0, 400)}`);
    sizes["navigate_page (recovering)"] = chars(moved);
    await expectRecovered(server, doomed, first.gap.start_ns, atCrash.total);

    await crashTarget(port, "which=second");
    await expectCrash(server, doomed, stays, 2);
    const closed = await server.call("close_page", { page_id: doomed });
    assert(!closed.isError, `close_page closes a crashed page: ${textOf(closed)}`);
    sizes["close_page (crashed)"] = chars(closed);
    const after = await status(server);
    assertEquals(after.crashed, [], after.text);
    const pages = structured(await server.call("list_pages", {})).pages as Array<{ page_id: string }>;
    assertEquals(pages.map((p) => p.page_id), [stays]);
  } finally {
    await server.call("stop_browser", {}).catch(() => {});
  }
}

Deno.test(
  "renderer crash: a page crashed with Page.crash is an event, a gap, a status entry and a page_crashed refusal until reload, navigation or close; the other page keeps recording",
  e2e,
  async (t) => {
    await withServer(async (server, site) => {
      await t.step({
        name: "attached Chromium: reload_page recovers",
        ...e2e,
        fn: () => attachedCrash(server, site),
      });
      await t.step({
        name: "launched Chromium: navigate_page recovers, close_page closes",
        ...e2e,
        fn: () => launchedCrash(server, site),
      });
      console.error(
        `response sizes (text + structuredContent chars): ${
          Object.entries(sizes).map(([k, v]) => `${k} ${v}`).join(", ")
        }`,
      );
    }, { env: patientAcks });
  },
);
