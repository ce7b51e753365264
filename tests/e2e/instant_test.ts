/**
 * The frame on screen at an instant (issue 10, fix 5) and the session time a future range is told
 * (fix 7). fixtures/site/instant.html paints once on the click and is still otherwise, so a narrow
 * window after a paint holds no frame: the question is which frame was on screen.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { decodeJpeg } from "../../src/vision/jpeg_decode.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

interface Frame {
  frame_id: number;
  page_id: string;
  session_time_ns: number;
  session_time_ms: number;
  /** Chrome's paint stamp (s), when the frame carried one. */
  chrome_timestamp: number | null;
}

interface OnScreen {
  at_ms: number;
  frame_id: number;
  received_ms: number;
  received_before_ms: number;
}

async function allFrames(server: ServerHandle): Promise<Frame[]> {
  const frames: Frame[] = [];
  for (let offset = 0;;) {
    const page = structured(await server.call("list_source_frames", { offset, max_frames: 200 }));
    frames.push(...page.frames as Frame[]);
    if (page.next_offset === undefined) return frames;
    offset = page.next_offset as number;
  }
}

type Colour = "blue" | "red" | "other";

async function colourOf(server: ServerHandle, frameId: number): Promise<Colour> {
  const fetched = await server.call("fetch_source_frames", { frame_ids: [frameId] });
  const image = fetched.content.find((c) => c.type === "image");
  assert(image?.data, `frame ${frameId} is inlined`);
  const img = decodeJpeg(Uint8Array.from(atob(image.data), (c) => c.charCodeAt(0)));
  const i = (20 * img.width + 20) * 4;
  const [r, g, b] = [img.data[i], img.data[i + 1], img.data[i + 2]];
  if (r < 80 && g < 110 && b > 150) return "blue";
  if (r > 180 && g < 80 && b < 80) return "red";
  return "other";
}

/** Polls until the latest recorded frame shows `colour` (Chrome sends frames a little after it paints). */
async function latestFrameShows(server: ServerHandle, colour: Colour): Promise<Frame> {
  for (let i = 0; i < 200; i++) {
    const frames = await allFrames(server);
    const last = frames[frames.length - 1];
    if (last && await colourOf(server, last.frame_id) === colour) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${colour} frame was recorded`);
}

/** The frame a correct answer names: the last one received at or before the instant. */
function expectedAt(frames: Frame[], atNs: number): Frame {
  const before = frames.filter((f) => f.session_time_ns <= atNs);
  assert(before.length > 0, `a frame precedes ${atNs} ns`);
  return before[before.length - 1];
}

Deno.test({
  name:
    "instants: list_source_frames names the frame on screen at {interaction_id, offset_ms} and {at_ms}; an empty window shows the frame on screen; artifacts over an instant say to widen; a future range says the session time",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/instant.html` });
      await latestFrameShows(server, "blue");
      const clicked = structured(await server.call("click", { locator: { role: "button", name: "Blue" } }));
      assertEquals(clicked.status, "ok");
      const interaction = String(clicked.interaction_id);
      const red = await latestFrameShows(server, "red");

      const resolved = structured(
        await server.call("resolve_temporal_range", { interaction_id: interaction }),
      );
      const dispatchMs = (resolved.range as { anchor: { at_ms: number } }).anchor.at_ms;
      const frames = await allFrames(server);

      // Just after the red frame arrived: that frame, though no frame was received at the instant.
      const afterRed = red.session_time_ms + 2 - dispatchMs;
      const at = await server.call("list_source_frames", {
        range: { interaction_id: interaction, offset_ms: afterRed },
      });
      assert(!at.isError, `instant listing failed: ${textOf(at)}`);
      const atOut = structured(at);
      const expected = expectedAt(frames, (dispatchMs + afterRed) * 1e6);
      assertEquals((atOut.frames as Frame[]).map((f) => f.frame_id), [expected.frame_id]);
      assertEquals(await colourOf(server, expected.frame_id), "red");
      const onScreen = atOut.on_screen as OnScreen;
      assertEquals(onScreen.frame_id, expected.frame_id);
      assert(onScreen.received_before_ms >= 0, `received before the instant: ${onScreen.received_before_ms}`);
      assertMatch(textOf(at), new RegExp(`#${expected.frame_id} was on screen at`));
      assert(!/\b0 of 0 frames\b/.test(textOf(at)), textOf(at));

      // Just before dispatch: the blue page the click landed on.
      const before = structured(
        await server.call("list_source_frames", { range: { interaction_id: interaction, offset_ms: -1 } }),
      );
      const expectedBefore = expectedAt(frames, (dispatchMs - 1) * 1e6);
      assertEquals((before.frames as Frame[]).map((f) => f.frame_id), [expectedBefore.frame_id]);
      assertEquals(await colourOf(server, expectedBefore.frame_id), "blue");

      // A session-ms instant resolves to a handle that lists the same frame; the echoed range does too.
      const resolvedInstant = await server.call("resolve_temporal_range", {
        range: { at_ms: red.session_time_ms + 2 },
      });
      assert(!resolvedInstant.isError, textOf(resolvedInstant));
      assertMatch(textOf(resolvedInstant), new RegExp(`^Instant .*\\n.*#${expected.frame_id} was on screen`));
      const instant = structured(resolvedInstant);
      const instantRange = instant.range as { instant?: boolean; start_ms: number; end_ms: number };
      assertEquals(instantRange.instant, true);
      assertEquals(instantRange.start_ms, instantRange.end_ms);
      for (const args of [{ range_handle: instant.range_handle }, { range: instant.range }]) {
        const listed = structured(await server.call("list_source_frames", args));
        assertEquals((listed.frames as Frame[]).map((f) => f.frame_id), [expected.frame_id]);
      }

      // A narrow window between two frames holds none: the frame on screen through it is listed and
      // said to be received before the window.
      const pairs = frames.slice(1).map((b, i) => [frames[i], b] as const)
        .filter(([a, b]) => a.page_id === b.page_id && b.session_time_ms - a.session_time_ms > 6);
      assert(pairs.length > 0, "two frames at least 6 ms apart");
      const [a] = pairs[pairs.length - 1];
      const window = { start_ms: a.session_time_ms + 2, end_ms: a.session_time_ms + 4 };
      const narrow = await server.call("list_source_frames", { range: window });
      const narrowOut = structured(narrow);
      assertEquals((narrowOut.frames as Frame[]).map((f) => f.frame_id), [a.frame_id]);
      assertEquals((narrowOut.on_screen as OnScreen).frame_id, a.frame_id);
      assertMatch(textOf(narrow), /0 frames received in/);
      assertMatch(textOf(narrow), new RegExp(`#${a.frame_id}.*before the window`));

      // The bundle over that window shows the frame on screen through it. It orders frames by Chrome's
      // paint stamps, not by receipt (delivery lags and reorders under load): that is `a`, or a frame
      // Chrome painted after `a` whose delivery the listing's receipt order put elsewhere.
      const bundle = await server.call("temporal_debug_bundle", { range: window, inline_images: false });
      assert(!bundle.isError, `bundle over a window with no frame: ${textOf(bundle)}`);
      const paintedAfterA = (id: number) => {
        const f = frames.find((x) => x.frame_id === id);
        return f !== undefined && f.page_id === a.page_id && a.chrome_timestamp !== null &&
          f.chrome_timestamp !== null && f.chrome_timestamp > a.chrome_timestamp;
      };
      const shown = structured(bundle).selected_frame_ids as number[];
      assert(
        shown.includes(a.frame_id) || (shown.length > 0 && shown.every(paintedAfterA)),
        `frame #${a.frame_id} (painted ${a.chrome_timestamp}) or a later-painted one: ${textOf(bundle)}`,
      );

      // Artifacts over an instant fail, say which frame it shows and how to widen.
      const tools = [
        "temporal_debug_bundle",
        "generate_artifacts",
        "generate_temporal_video",
        "query_browser_events",
      ];
      for (const tool of tools) {
        const out = await server.call(tool, { range: { interaction_id: interaction, offset_ms: afterRed } });
        assert(out.isError, `${tool} over an instant is an error`);
        assertEquals(errorCode(out), "range_is_instant", `${tool}: ${textOf(out)}`);
        const err = structured(out).error as { message: string; recovery: string };
        assertMatch(err.message, new RegExp(`#${expected.frame_id}`));
        assertMatch(err.recovery, /before_ms|start_ms/);
      }

      // Future ranges and instants are not captured and say the current session time.
      for (const range of [{ start_ms: 9e8, end_ms: 9e8 + 10 }, { at_ms: 9e8 }]) {
        const out = await server.call("list_source_frames", { range });
        assertEquals(errorCode(out), "range_not_captured", textOf(out));
        const message = (structured(out).error as { message: string }).message;
        const now = /current session time is (\d+(?:\.\d+)?) ms/.exec(message);
        assert(now, `the message says the session time: ${message}`);
        assert(Number(now[1]) >= red.session_time_ms, `${now[1]} ms is after the last frame`);
      }
    }, { browser: { headless: true } }),
});
