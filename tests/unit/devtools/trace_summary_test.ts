import type * as Trace from "@paulirish/trace_engine";
import { assert, assertEquals } from "../../assert.ts";
import { parseTrace, SOURCE_LIMIT, summarizeTrace } from "../../../src/devtools/trace_summary.ts";
import { fileName, INSIGHT_LIMIT, summarizeInsights } from "../../../src/devtools/trace_insights.ts";
import { shiftText } from "../../../src/devtools/performance_report.ts";
import { loadTraceFixture } from "./trace_fixture.ts";

Deno.test("summarizeTrace: a reload's LCP element, the late banner's shift with rects, the busy loop, insights", async () => {
  const s = summarizeTrace(await parseTrace(await loadTraceFixture("shift_reload")));
  assert(s.navigation_ts_us !== undefined, "the reload's navigation is the measured one");
  assert(s.lcp, "LCP found");
  assertEquals(s.lcp.node_name, "H1 id='hero'");
  assertEquals(s.lcp.type, "text");
  assert(typeof s.lcp.node_id === "number", "LCP node is a backend node id");
  assert(s.lcp.ms > 0 && s.lcp.ts_us > (s.navigation_ts_us ?? 0), `LCP time: ${JSON.stringify(s.lcp)}`);
  assert(s.fcp_ms !== undefined && s.fcp_ms > 0 && s.fcp_ms <= s.lcp.ms, `FCP ${s.fcp_ms} <= LCP`);
  assert(s.ttfb_ms !== undefined && s.ttfb_ms >= 0, "TTFB from the LCP breakdown");

  assertEquals(s.layout_shifts.length, 1);
  const shift = s.layout_shifts[0];
  assertEquals(s.cls.score, shift.score);
  assert(shift.score > 0.05 && shift.score < 0.07, `the 120 px banner's shift: ${shift.score}`);
  assert(shift.sources.length >= 1 && shift.sources.length <= SOURCE_LIMIT, "sources bounded");
  const src = shift.sources[0];
  // Content that began 16 px down ends below the 120 px banner: the box now spans to 16 + 265 + 120.
  assertEquals(src.previous_rect, { x: 0, y: 16, width: 1280, height: 265 });
  assertEquals(src.current_rect.y + src.current_rect.height, 401);

  const busy = s.long_tasks.find((t) => t.duration_ms >= 190);
  assert(busy, `the 200 ms busy loop: ${JSON.stringify(s.long_tasks)}`);
  assert(busy.ts_us > shift.ts_us, "the loop runs 50 ms after the banner");
  assert(s.long_tasks.every((t) => t.duration_ms > 50), "only tasks over 50 ms");

  const names = s.insights.map((i) => i.name);
  assert(names.includes("CLSCulprits") && names.includes("LCPBreakdown"), `insights: ${names}`);
  assert(s.insights_passed.includes("DocumentLatency"), "passing insights by name");
  assert(!s.insights_passed.some((n) => names.includes(n)), "an insight is listed once");
  const lcpLine = s.insights.find((i) => i.name === "LCPBreakdown");
  assert(/^LCP \d+ ms: TTFB/.test(lcpLine?.summary ?? ""), `LCP breakdown line: ${lcpLine?.summary}`);
  assertEquals(s.inp, undefined);
});

Deno.test("summarizeTrace: long tasks from before sinceUs (tracing's own start-up) are left out", async () => {
  const parsed = await parseTrace(await loadTraceFixture("shift_reload"));
  const all = summarizeTrace(parsed).long_tasks;
  const busy = all.find((t) => t.duration_ms >= 190);
  assert(busy, "the busy loop");
  const after = summarizeTrace(parsed, { sinceUs: busy.ts_us + 1 }).long_tasks;
  assert(!after.some((t) => t.ts_us <= busy.ts_us), `nothing before sinceUs: ${JSON.stringify(after)}`);
  assertEquals(summarizeTrace(parsed, { sinceUs: busy.ts_us }).long_tasks.includes(busy), false);
  assert(summarizeTrace(parsed, { sinceUs: busy.ts_us }).long_tasks.some((t) => t.ts_us === busy.ts_us));
});

Deno.test("summarizeTrace: a click's INP with its phases, no navigation", async () => {
  const s = summarizeTrace(await parseTrace(await loadTraceFixture("click_inp")));
  assertEquals(s.navigation_ts_us, undefined);
  assertEquals(s.lcp, undefined);
  assert(s.inp, "INP found");
  assertEquals(s.inp.type, "click");
  assert(s.inp.ms >= 150, `the 150 ms handler: ${s.inp.ms}`);
  const p = s.inp.phases;
  assert(p.processing_ms >= 150, `processing holds the handler: ${JSON.stringify(p)}`);
  const sum = p.input_delay_ms + p.processing_ms + p.presentation_delay_ms;
  assert(Math.abs(sum - s.inp.ms) < 1, `phases add up: ${sum} vs ${s.inp.ms}`);
  assertEquals(s.cls.score, 0);
  assert(s.long_tasks.some((t) => t.duration_ms >= 150), "the handler is a long task");
  assert(
    /^longest interaction .* \(click\)/.test(
      s.insights.find((i) => i.name === "INPBreakdown")?.summary ?? "",
    ),
  );
});

Deno.test("summarizeInsights: failing first, bounded with a count, passes by name", () => {
  const model = (state: string, title: string, extra: Record<string, unknown> = {}) => ({
    state,
    title: { i18nId: title },
    description: { i18nId: `${title} [explained](https://example.test/x). More text.` },
    ...extra,
  });
  const models: Record<string, unknown> = { Passing: model("pass", "Fine") };
  for (let i = 0; i < INSIGHT_LIMIT + 2; i++) models[`Info${i}`] = model("informative", `Info ${i}`);
  models.Bad = model("fail", "Bad thing", { metricSavings: { LCP: 120.4, FCP: 0 } });
  const set = { id: "NAVIGATION_0", model: models } as unknown as Trace.Insights.Types.InsightSet;
  const r = summarizeInsights([set]);
  assertEquals(r.insights.length, INSIGHT_LIMIT);
  assertEquals(r.insights_omitted, 3);
  assertEquals(r.insights[0].name, "Bad");
  assertEquals(r.insights[0].summary, "Bad thing explained.; could save LCP ~120 ms");
  assertEquals(r.insights[1].summary, "Info 0 explained.");
  assertEquals(r.insights_passed, ["Passing"]);
});

Deno.test("shiftText: the event text names what moved", () => {
  assertEquals(
    shiftText(0.1834, ["div#banner", "main > button#buy"]),
    "layout shift 0.183: div#banner, main > button#buy moved",
  );
  assertEquals(shiftText(0.01, []), "layout shift 0.010: no source node reported");
});

Deno.test("fileName: an insight names a request by its file, without query values", () => {
  assertEquals(fileName("https://cdn.test/js/app.js?token=s3cr3t#x"), "app.js");
  assertEquals(fileName("https://cdn.test/?q=1"), "cdn.test");
  assertEquals(fileName("data:text/css,body{}"), "data:…");
  assertEquals(fileName("nope"), "(invalid URL)");
});
