import { assert, assertEquals } from "../../assert.ts";
import { buildEventsMd, mdCell, sessionTime, timeline } from "../../../src/cli/events_md.ts";
import { hostileSummary } from "./report_fixture.ts";

Deno.test("events.md: steps with timings, then one timeline in time order", () => {
  const md = buildEventsMd(hostileSummary());
  const lines = md.split("\n");
  assert(lines[0].startsWith("# "), "a title");
  assert(md.includes("| 1 | open http://127.0.0.1:9/ | 0.100 s | 812 ms | ok |"), md);
  assert(md.includes("| 3 | wait 500 ms | 1.300 s | 0 ms | **skipped** |"), md);
  assert(md.includes("**failed** locator_no_match: No element \\| matches"), md);
  assert(md.includes("(the first 2 of 7 browser events)"), "a capped list says so");
  assert(md.includes("Note: video.mp4 skipped"), "why the video is missing");
  const rows = lines.filter((l) => /^\| \d+\.\d{3} s \|/.test(l));
  assertEquals(rows.length, 3);
  assert(rows[0].includes("request"), rows[0]);
  assert(rows[1].includes("interaction: click") && rows[1].includes("Show \\| details"), rows[1]);
  assert(rows[2].includes("console") && rows[2].includes("error"), rows[2]);
});

Deno.test("events.md: a cell is one line with pipes and markup escaped", () => {
  assertEquals(mdCell("a | b\nc <b>d</b>"), "a \\| b c &lt;b&gt;d&lt;/b&gt;");
  assertEquals(mdCell("back\\slash"), "back\\\\slash");
  assertEquals(mdCell("x".repeat(500)).length, 240);
  const md = buildEventsMd(hostileSummary());
  assert(!md.includes("<script>") && !md.includes("<img"), "no raw markup reaches the file");
  for (const row of md.split("\n").filter((l) => l.startsWith("| "))) {
    const cells = row.replace(/\\\|/g, "").split("|").length;
    assert(cells === 6 || cells === 7, `a row keeps its columns: ${row}`);
  }
});

Deno.test("events.md: an interaction sorts before an event at the same instant", () => {
  const rows = timeline(hostileSummary());
  assertEquals(rows.map((r) => r.what), ["request", "interaction: click", "console"]);
  assertEquals(rows[1].text, 'click "Show | details" failed (locator_no_match)');
  assertEquals(sessionTime(1234.5678), "1.235 s");
});

Deno.test("events.md: an empty recording says so", () => {
  const md = buildEventsMd({ ...hostileSummary(), interactions: [], events: [], events_total: 0 });
  assert(md.includes("Nothing was recorded."));
});
