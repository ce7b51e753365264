/**
 * The error bound of the page-clock → session-clock mapping, measured against screencast frames: a page
 * steps a full-viewport block through four shades in turn; each step's recorded mutation (rrweb's Date.now()
 * stamp minus the batch's clock_offset_ms) is compared with the first frame whose pixels show the new
 * shade, timed on the session clock as src/temporal/frames.ts `inPaintOrder` maps frames. A mutation
 * reaches the screen at the next paint, so the lag is positive and about a frame; a mapping error would
 * show as a negative lag (the DOM change mapped after the frame showing it) or a lag that drifts. Four
 * shades name the step a frame shows, so a state a starved screencast never painted costs that one step,
 * not the alignment of every later one.
 */
import { EventType, IncrementalSource } from "@rrweb/types";
import { assert, assertEquals } from "../assert.ts";
import { e2e } from "./harness.ts";
import type { FrameRow } from "../../src/capture/frames.ts";
import { inPaintOrder } from "../../src/temporal/frames.ts";
import { decodeJpegLuma } from "../../src/vision/jpeg_dc.ts";
import { evaluate, sleep, until, withRecorder } from "./dom_recorder_util.ts";

const FLIPS = 16;

const CLOCK_PAGE = `<!doctype html><title>clock</title>
<style>html, body { margin: 0; } #block { position: fixed; inset: 0; background: #000; }
#block[data-shade="1"] { background: #555; } #block[data-shade="2"] { background: #aaa; }
#block[data-shade="3"] { background: #fff; }</style>
<div id="block" data-shade="0"></div>
<script>
window.flip = (n) => new Promise((done) => {
  let i = 0;
  const step = () => {
    const b = document.getElementById("block");
    b.dataset.shade = String((Number(b.dataset.shade) + 1) % 4);
    if (++i === n) setTimeout(done, 400); else setTimeout(step, 180 + (i * 37) % 90);
  };
  setTimeout(step, 200);
});
</script>`;

/** Steps a starved screencast may skip; each costs its own measurement only. */
const MISSED_LIMIT = 4;

interface Shot {
  recv_ns: number;
  chrome_ts: number;
  data: string;
}

/** The shade (0 black, 1 #555, 2 #aaa, 3 white) a frame shows, or -1 for none of them. */
function shadeOf(data: string): number {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const img = decodeJpegLuma(bytes);
  let sum = 0;
  for (const v of img.luma) sum += v;
  const mean = sum / img.luma.length;
  const shade = Math.round(mean / 85);
  return Math.abs(mean - shade * 85) < 20 ? shade : -1;
}

function frameRow(s: Shot, ordinal: number): FrameRow {
  return {
    frame_id: ordinal,
    session_id: "s",
    page_id: "p",
    ordinal,
    session_time_ns: s.recv_ns,
    session_time_ms: s.recv_ns / 1e6,
    chrome_timestamp: s.chrome_ts,
    format: "jpeg",
    width: 0,
    height: 0,
    viewport: { width: 0, height: 0, device_scale: 1 },
    changed_proportion: null,
    change_bounds: null,
    warnings: [],
    uri: "",
  };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];

Deno.test({
  name: "dom recorder clock: a mutation's mapped time precedes the first frame showing it by about one paint",
  ...e2e,
  fn: () =>
    withRecorder({ files: { "clock.html": CLOCK_PAGE } }, async (r) => {
      const page = r.session.page();
      await r.session.navigate(page, `${r.pages.origin}/clock.html`, "load", 15_000);
      assert(await until(() => r.events(page.id).some((e) => e.type === EventType.FullSnapshot)));
      const shots: Shot[] = [];
      const off = r.session.onPageEvent("Page.screencastFrame", (p, f) => {
        if (p.id !== page.id) return;
        shots.push({
          recv_ns: Math.round(r.session.now() * 1e6),
          chrome_ts: f.metadata.timestamp ?? 0,
          data: f.data,
        });
        p.send("Page.screencastFrameAck", { sessionId: f.sessionId }).catch(() => {});
      });
      await page.send("Page.startScreencast", { format: "jpeg", quality: 60, everyNthFrame: 1 });
      await sleep(300);
      await evaluate(page, `flip(${FLIPS})`);
      await sleep(200);
      await page.send("Page.stopScreencast");
      off();

      const flips = r.events(page.id).filter((e) =>
        e.type === EventType.IncrementalSnapshot && e.data.source === IncrementalSource.Mutation &&
        JSON.stringify(e.data.attributes).includes("data-shade")
      );
      assertEquals(flips.length, FLIPS, "every flip recorded as its own mutation");
      const frames = inPaintOrder(shots.map(frameRow));
      const byOrdinal = new Map(shots.map((s, i) => [i, s]));
      // The first frame, in paint order, showing each step's shade: step i (0-based) shows shade (i+1) % 4,
      // the baseline shade 0. A frame may show one of the next three steps (the ones between it and the
      // current step never painted); a fourth would wear the current step's own shade again.
      const firstShown = new Map<number, number>();
      let step = -1;
      for (const f of frames) {
        const shot = byOrdinal.get(f.ordinal);
        if (!shot) continue;
        const shade = shadeOf(shot.data);
        for (let next = step + 1; shade >= 0 && next <= step + 3 && next < FLIPS; next++) {
          if ((next + 1) % 4 !== shade) continue;
          firstShown.set(next, f.session_time_ns / 1e6);
          step = next;
          break;
        }
      }
      const measured = flips.flatMap((m, i) => {
        const ms = firstShown.get(i);
        return ms === undefined ? [] : [{ m, ms }];
      });
      const missed = FLIPS - measured.length;
      assert(
        missed <= MISSED_LIMIT,
        `${missed} of ${FLIPS} steps never painted in ${frames.length} frames (limit ${MISSED_LIMIT})`,
      );
      const offsets = r.batches.map((b) => b.clock_offset_ms);
      const lags = measured.map(({ m, ms }) => ms - m.session_ms);
      const recvLags = measured.map(({ m, ms }) => {
        const shot = shots.find((s) => s.recv_ns / 1e6 >= ms);
        return (shot?.recv_ns ?? NaN) / 1e6 - m.session_ms;
      });
      console.error(
        `mutation → first frame showing it (paint time, inPaintOrder): min ${
          quantile(lags, 0).toFixed(1)
        } ms, ` +
          `median ${quantile(lags, 0.5).toFixed(1)} ms, max ${
            quantile(lags, 1).toFixed(1)
          } ms over ${measured.length} of ${FLIPS} steps; ` +
          `to its receipt: median ${quantile(recvLags, 0.5).toFixed(1)} ms; ${frames.length} frames; ` +
          `clock_offset_ms spread over ${r.batches.length} batches ${
            (Math.max(...offsets) - Math.min(...offsets)).toFixed(3)
          } ms`,
      );
      assert(Math.max(...offsets) - Math.min(...offsets) < 2, "the offset holds across batches");
      for (const lag of lags) {
        assert(lag > -5, `a frame showed a mutation ${-lag} ms before its mapped time`);
        // Generous: under a loaded machine a paint can lag; the bound that matters is the lower one.
        assert(lag < 1_000, `the first frame showing a mutation came ${lag} ms after it`);
      }
    }),
});
