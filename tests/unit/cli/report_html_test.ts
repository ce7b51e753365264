import { assert, assertEquals, assertMatch } from "../../assert.ts";
import { buildReportHtml, escapeHtml, reportCsp, styleHash } from "../../../src/cli/report_html.ts";
import { hostileSummary } from "./report_fixture.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 250]);

function build(video?: string): string {
  return buildReportHtml({
    summary: hostileSummary(),
    images: { storyboard: PNG, difference_map: PNG.slice(0, 9) },
    ...(video ? { video } : {}),
    version: "9.9.9",
  });
}

/** Every URL-bearing attribute and CSS url() in the page. */
function references(html: string): string[] {
  const attrs = [...html.matchAll(/\s(?:src|href|action|poster|srcset|data|formaction)\s*=\s*"([^"]*)"/gi)]
    .map((m) => m[1]);
  const css = [...html.matchAll(/url\(([^)]*)\)/gi)].map((m) => m[1]);
  const imports = [...html.matchAll(/@import/gi)].map(() => "@import");
  return [...attrs, ...css, ...imports];
}

Deno.test("report.html: hostile text is escaped everywhere", () => {
  const html = build();
  assert(!html.includes("<script"), "no script element, even from the URL");
  assert(!/<img src=https/i.test(html), "a step's text is not markup");
  assert(html.includes("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"), "the URL is shown, escaped");
  assert(html.includes("boom &lt;b&gt;bold&lt;/b&gt;"), "event text is escaped");
  assertEquals(escapeHtml(`<a href="x" title='y'>&`), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;");
});

Deno.test("report.html: no external reference at all; images are data: URLs", () => {
  const html = build("video.mp4");
  const refs = references(html);
  const images = refs.filter((r) => r.startsWith("data:"));
  assertEquals(images.length, 2, "storyboard and difference map inline");
  assertEquals(refs.filter((r) => !r.startsWith("data:")), ["video.mp4"], "only the video beside it");
  const b64 = images[0].replace(/^data:image\/png;base64,/, "");
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  assertEquals([...bytes], [...PNG], "the storyboard's bytes round-trip");
  assert(!/<link\b/i.test(html) && !/<iframe\b/i.test(html) && !/<object\b/i.test(html));
});

Deno.test("report.html: a video path that is not a plain file name beside it is dropped", () => {
  for (const bad of ["https://evil.test/v.mp4", "../v.mp4", "/etc/v.mp4", "javascript:alert(1)"]) {
    const html = build(bad);
    assert(!html.includes("<video"), bad);
    assertEquals(references(html).filter((r) => !r.startsWith("data:")), [], bad);
  }
});

Deno.test("report.html: a strict CSP allows data: images, the one style by hash, and no script", () => {
  const html = build();
  const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html);
  assert(meta, "a CSP meta tag");
  const csp = meta[1].replace(/&#39;/g, "'");
  assertEquals(csp, reportCsp());
  assertMatch(csp, /^default-src 'none'; /);
  assert(csp.includes("img-src data:"));
  assert(!csp.includes("unsafe-inline") && !csp.includes("unsafe-eval") && !csp.includes("script-src"));
  const style = /<style>([\s\S]*?)<\/style>/.exec(html);
  assert(style, "one inline style");
  assert(csp.includes(`style-src ${styleHash(style[1])}`), "the style's hash is what the CSP allows");
  assertEquals(html.match(/<style>/g)?.length, 1);
  assert(!/\sstyle="/.test(html), "no style attributes (the hash does not cover them)");
});

Deno.test("report.html: shows the URL, the steps with timings, both pictures and the events", () => {
  const html = build();
  for (
    const part of [
      "<h2>Steps</h2>",
      '<img id="storyboard"',
      '<img id="difference-map"',
      "<h2>Timeline</h2>",
      "812 ms",
      "0.100 s",
      "42 frames",
      "121 KB recorded",
      "1 step failed",
      "the first 2 of 7 browser events",
      "video.mp4 skipped",
      "krometrail 9.9.9",
    ]
  ) assert(html.includes(part), part);
  assert(html.indexOf("request") < html.indexOf("boom"), "timeline in time order");
});

Deno.test("report.html: a missing picture says so instead of a broken image", () => {
  const html = buildReportHtml({ summary: hostileSummary(), images: {}, version: "1" });
  assert(!html.includes("<img"));
  assertEquals(html.match(/Not available\./g)?.length, 2);
});
