import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, fixtures, refOf, startServer, structured, textOf } from "./harness.ts";
import { droppedSocketTwice, launchedBrowserExits, stopDuringOutage } from "./reconnect_extra.ts";
import {
  attachAndRecord,
  type Chrome,
  type Event,
  expectReconnecting,
  type Frame,
  frameCount,
  type Gap,
  newestFrame,
  pageShowing,
  size,
  status,
  WINDOW_MS,
} from "./reconnect_util.ts";
import {
  type ChromiumOptions,
  pollUntil,
  startChromium,
  startChromiumOnFixedPort,
} from "./chromium_process.ts";

/**
 * Issue 18's reconnect acceptance with real processes: an attached Chromium is SIGKILLed, the session
 * waits in `reconnecting`, a new Chromium on the same port is re-adopted under the same page id with one
 * outage gap, and without a restart the session ends after the window with every accepted frame kept.
 */

Deno.test({
  name:
    "reconnect: a killed attached Chromium is retried, a restarted one is re-adopted with one outage gap, and without one the session ends after the window keeping its frames",
  ...e2e,
  fn: async (t) => {
    const site = fixtures();
    const server = await startServer({ env: { KROMETRAIL_RECONNECT_WINDOW_MS: String(WINDOW_MS) } });
    const url = `${site.origin}/reconnect/spinner.html`;
    const chromes: Chrome[] = [];
    // "fixed": a port picked now that a restart can take again; a number: that port (the restart).
    const launch = async (port?: number | "fixed", profile?: string) => {
      const opts: ChromiumOptions = { url, profile };
      const chrome = port === "fixed"
        ? await startChromiumOnFixedPort(opts)
        : await startChromium({ ...opts, port });
      chromes.push(chrome);
      return chrome;
    };
    const context = { server, url, launch };
    try {
      await t.step({
        name: "a restart on the same port within the window: same page id, frames resume, one gap",
        ...e2e,
        fn: async () => {
          const first = await launch("fixed");
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
          assertEquals(
            errorCode(await server.call("snapshot_page", { page_id: pageId })),
            "browser_reconnecting",
          );
          // The restart starts at once, so that a cold start on a loaded box has most of the window.
          await launch(first.port, first.profile);
          const relaunchedAfterMs = Date.now() - killedAt;
          const err = structured(during).error as { retry: string; details?: { attempts?: number } };
          assertEquals(err.retry, "safe");
          assertEquals(typeof err.details?.attempts, "number");
          const back = await pollUntil(
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
          const gaps = await pollUntil(
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
          const after = await pollUntil(
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
          const title = await pollUntil(
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
            `reconnect: seen reconnecting (${outage.attempts_seen} tries), relaunched ${relaunchedAfterMs} ms and running ` +
              `again ${resumedAfterMs} ms after the kill ` +
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
          const chrome = await launch();
          const { sessionId, pageId } = await attachAndRecord(server, chrome, url);
          const beforeKill = await frameCount(server, { session_id: sessionId });

          // The loss can be noticed as soon as the signal lands, so the window is timed from before it.
          const killedAt = Date.now();
          await chrome.kill();
          await expectReconnecting(server);
          // Nothing can arrive over a dead socket: what is stored now is everything accepted.
          const accepted = await frameCount(server, { session_id: sessionId });
          assert(accepted >= beforeKill, `${accepted} frames accepted, ${beforeKill} seen before the kill`);

          const ended = await pollUntil(() => status(server), (s) => s.running === false, WINDOW_MS + 20_000);
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
        fn: () => stopDuringOutage(context),
      });

      await t.step({
        name: "a launched browser that exits ends its session (no reconnect), every frame kept",
        ...e2e,
        fn: () => launchedBrowserExits(context),
      });

      await t.step({
        name:
          "a dropped socket to a browser that stayed, twice: the same target is re-adopted with its viewport",
        ...e2e,
        fn: () => droppedSocketTwice(context),
      });
    } finally {
      for (const chrome of chromes) await chrome.kill();
      await server.close();
      await site.close();
    }
  },
});
