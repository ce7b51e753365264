import { gunzipSync } from "fflate";
import { assert, assertEquals } from "../assert.ts";
import {
  e2e,
  errorCode,
  type ServerHandle,
  structured,
  textOf,
  type ToolResult,
  withServer,
} from "./harness.ts";

interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}
interface Shift {
  at_ms: number;
  score: number;
  sources: Array<{ node: string; previous_rect: Rect; current_rect: Rect }>;
}
interface Event {
  session_time_ms: number;
  kind: string;
  text: string | null;
  data: Record<string, unknown> | null;
}

/** `outer` holds `inner` (1 px of slack for the trace's integer rects). */
const covers = (outer: Rect, inner: Rect) =>
  outer.x <= inner.x + 1 && outer.y <= inner.y + 1 &&
  outer.x + outer.width >= inner.x + inner.width - 1 && outer.y + outer.height >= inner.y + inner.height - 1;

function size(result: ToolResult): number {
  return textOf(result).length + JSON.stringify(result.structuredContent ?? {}).length;
}

async function timed(server: ServerHandle, args: Record<string, unknown>) {
  const t0 = performance.now();
  const result = await server.call("measure_performance", args);
  const ms = Math.round(performance.now() - t0);
  console.error(`measure_performance ${JSON.stringify(args)}: ${ms} ms, ${size(result)} chars`);
  return result;
}

Deno.test({
  name:
    "measure_performance: a reload reports the late banner's shift over the moved button, the LCP hero, the busy loop's long task, all on the timeline; start/stop gives INP",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/performance/shift.html` });

      const reload = await timed(server, { mode: "reload" });
      const r = structured(reload);
      assertEquals(r.status, "measured", textOf(reload));

      // The LCP element is the hero heading, named as an agent can select it.
      const lcp = r.lcp as { ms: number; element?: { node: string; rect?: Rect } };
      assert(lcp && lcp.ms > 0, `LCP measured: ${textOf(reload)}`);
      assert(lcp.element?.node.includes("h1#hero"), `LCP element is the hero: ${JSON.stringify(lcp)}`);

      // The late banner pushed the button down: a shift whose current rect covers where it is now.
      const button = structured(
        await server.call("evaluate_page", {
          expression: `(() => { const r = document.getElementById("buy").getBoundingClientRect();
            return { x: r.x, y: r.y, width: r.width, height: r.height }; })()`,
        }),
      ).value as Rect;
      const cls = r.cls as { score: number; shifts: Shift[] };
      assert(cls.score > 0, `CLS > 0: ${JSON.stringify(cls)}`);
      // One of its sources is the button itself (not body), and that source's rect is where the button is.
      const buttonSource = (src: Shift["sources"][number]) =>
        /(^|> )button#buy$/.test(src.node) && covers(src.current_rect, button);
      const moved = cls.shifts.find((s) => s.sources.some(buttonSource));
      assert(
        moved,
        `a shift's source is button#buy, covering ${JSON.stringify(button)}: ${JSON.stringify(cls.shifts)}`,
      );
      assert(
        moved.sources.every((src) => src.node !== "body"),
        `body is not named: ${JSON.stringify(moved.sources)}`,
      );

      // The 200 ms busy loop is a long task (a lower bound only: a loaded box makes it longer).
      const tasks = r.long_tasks as Array<{ at_ms: number; duration_ms: number }>;
      const busy = tasks.find((t) => t.duration_ms >= 150);
      assert(busy, `a long task >= 150 ms: ${JSON.stringify(tasks)}`);
      assert(
        (r.insights as unknown[]).length + (r.insights_passed as unknown[]).length > 5,
        "insights listed",
      );

      // Both land on the session clock as events, where the response put them.
      const events = structured(
        await server.call("query_browser_events", { kinds: ["layout_shift", "long_task"], max_events: 200 }),
      ).events as Event[];
      const shiftEvent = events.find((e) =>
        e.kind === "layout_shift" && Math.abs(e.session_time_ms - moved.at_ms) < 1
      );
      assert(shiftEvent, `layout_shift event at ${moved.at_ms}: ${JSON.stringify(events)}`);
      assert(
        /^layout shift 0\.\d{3}: .*\bbutton#buy\b.* moved$/.test(shiftEvent.text ?? ""),
        `shift text: ${shiftEvent.text}`,
      );
      const sources = (shiftEvent.data?.sources ?? []) as Shift["sources"];
      assertEquals(shiftEvent.data?.score, moved.score);
      assert(
        sources.length > 0 && sources[0].current_rect.width > 0,
        `sources with rects: ${JSON.stringify(sources)}`,
      );
      const taskEvent = events.find((e) =>
        e.kind === "long_task" && Math.abs(e.session_time_ms - busy.at_ms) < 1
      );
      assert(taskEvent, `long_task event at ${busy.at_ms}: ${JSON.stringify(events)}`);
      assertEquals(taskEvent.data?.duration_ms, busy.duration_ms);
      assert(/^long task \d+ ms$/.test(taskEvent.text ?? ""), `task text: ${taskEvent.text}`);

      // The raw trace reads back through the resource.
      const trace = r.trace as { uri: string; mime_type: string };
      const res = await server.client.readResource({ uri: trace.uri });
      const blob = (res.contents[0] as { blob?: string }).blob ?? "";
      const raw = JSON.parse(
        new TextDecoder().decode(gunzipSync(Uint8Array.from(atob(blob), (c) => c.charCodeAt(0)))),
      );
      assert(Array.isArray(raw.traceEvents) && raw.traceEvents.length > 100, "the trace holds its events");
      // Stored as stored event rows are: paths hashed, no headers (the analysis above read the full trace).
      const stored = JSON.stringify(raw);
      assert(!stored.includes("/performance/shift.html"), "the page's path is hashed in the stored trace");
      assert(stored.includes(`${site.origin}/~`), "its origin is kept");
      assert(!/"(request|response)?headers":[[{]/i.test(stored), "no header arrays in the stored trace");
      assert(
        /URLs hashed.*headers dropped/.test(String((trace as { privacy?: string }).privacy)),
        "the result says so",
      );

      // start … click … stop: INP from the click's event timing.
      const started = await timed(server, { mode: "start" });
      assertEquals(structured(started).status, "recording", textOf(started));
      const again = await server.call("measure_performance", { mode: "reload" });
      assertEquals(errorCode(again), "trace_already_running", textOf(again));
      await server.call("click", { selector: "#buy" });
      const stopped = await timed(server, { mode: "stop" });
      const s = structured(stopped);
      const inp = s.inp as { ms: number; type: string; phases: Record<string, number> };
      assert(inp && inp.ms >= 100, `INP from the 150 ms click handler: ${textOf(stopped)}`);
      assert(inp.phases.processing_ms >= 100, `processing phase: ${JSON.stringify(inp)}`);
      const none = await server.call("measure_performance", { mode: "stop" });
      assertEquals(errorCode(none), "no_trace_running", textOf(none));
      // navigate: a load of a given URL, as the reload measured the current one.
      const nav = structured(
        await timed(server, {
          mode: "navigate",
          url: `${site.origin}/performance/shift.html?again`,
          settle_ms: 1_000,
        }),
      );
      assertEquals(nav.status, "measured");
      assert(
        (nav.lcp as { element?: { node: string } }).element?.node.includes("h1#hero"),
        "navigate: LCP hero",
      );
      assertEquals(nav.settle_ms, 1_000);
      const noUrl = await server.call("measure_performance", { mode: "navigate" });
      assertEquals(errorCode(noUrl), "invalid_arguments", textOf(noUrl));
      const urlOnReload = await server.call("measure_performance", { mode: "reload", url: site.origin });
      assertEquals(errorCode(urlOnReload), "invalid_arguments", textOf(urlOnReload));
    }, { browser: {} }),
});
