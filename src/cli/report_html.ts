/**
 * report.html for `krometrail record`: one self-contained page a person opens offline. Images are
 * inlined as data: URLs; the only other reference is the optional video beside it, and the page
 * renders without it. A strict CSP in a meta tag allows nothing else: no script at all, images from
 * data: only, the one inline style by its hash.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { type RecordSummary, sessionTime, timeline } from "./events_md.ts";
import { formatBytes } from "./progress.ts";

export interface ReportImages {
  storyboard?: Uint8Array;
  difference_map?: Uint8Array;
}

export interface ReportInput {
  summary: RecordSummary;
  images: ReportImages;
  /** Relative path of the video beside the report, when one was written. */
  video?: string;
  version: string;
}

const STYLE = `
:root { color-scheme: light dark; --muted: #667; --line: #ccd; --bad: #b00020; --warn: #8a5a00; }
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; padding: 1.5rem; max-width: 1400px; }
h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 2rem 0 .5rem; }
.url { font-family: ui-monospace, monospace; word-break: break-all; }
.meta { color: var(--muted); margin: 0; }
figure { margin: 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption, .note { color: var(--muted); font-size: .9em; }
video { max-width: 100%; border: 1px solid var(--line); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.t { font-family: ui-monospace, monospace; white-space: nowrap; }
td.d { word-break: break-word; }
tr.failed td, tr.error td { color: var(--bad); }
tr.warning td { color: var(--warn); }
tr.interaction td { font-weight: 600; }
`.trim();

/** `'sha256-…'` of the inline style, so the CSP needs no 'unsafe-inline'. */
export function styleHash(style: string = STYLE): string {
  return `'sha256-${createHash("sha256").update(style, "utf8").digest("base64")}'`;
}

export function reportCsp(): string {
  return [
    "default-src 'none'",
    "img-src data:",
    "media-src 'self'",
    `style-src ${styleHash()}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** Text and attribute values: every character HTML gives meaning to. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

function pngDataUrl(bytes: Uint8Array): string {
  return `data:image/png;base64,${
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")
  }`;
}

/** A relative file name beside the report; anything else (a scheme, a path up) is refused. */
function safeRelative(path: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$/.test(path) ? path : undefined;
}

function figure(title: string, id: string, bytes: Uint8Array | undefined, caption: string): string {
  if (!bytes) return `<h2>${escapeHtml(title)}</h2>\n<p class="note">Not available.</p>`;
  return [
    `<h2>${escapeHtml(title)}</h2>`,
    `<figure><img id="${id}" alt="${escapeHtml(title)}" src="${pngDataUrl(bytes)}">`,
    `<figcaption>${escapeHtml(caption)}</figcaption></figure>`,
  ].join("\n");
}

function stepsTable(summary: RecordSummary): string {
  const rows = summary.steps.map((s) =>
    `<tr class="${s.status}"><td>${s.index}</td><td>${escapeHtml(s.description)}</td><td class="t">${
      escapeHtml(sessionTime(s.started_ms))
    }</td><td class="t">${Math.round(s.duration_ms)} ms</td><td class="d">${escapeHtml(s.status)}${
      s.message ? ` · ${escapeHtml(s.message)}` : ""
    }</td></tr>`
  );
  return [
    "<table><thead><tr><th>#</th><th>step</th><th>at</th><th>took</th><th>result</th></tr></thead><tbody>",
    ...rows,
    "</tbody></table>",
  ].join("\n");
}

function timelineTable(summary: RecordSummary): string {
  const rows = timeline(summary);
  if (rows.length === 0) return `<p class="note">Nothing was recorded.</p>`;
  const body = rows.map((r) => {
    const cls = r.what.startsWith("interaction") ? "interaction" : escapeHtml(r.level ?? "");
    return `<tr class="${cls}"><td class="t">${escapeHtml(sessionTime(r.at_ms))}</td><td>${
      escapeHtml(r.what)
    }</td><td>${escapeHtml(r.level ?? "")}</td><td class="d">${escapeHtml(r.text)}</td></tr>`;
  });
  return [
    "<table><thead><tr><th>time</th><th>what</th><th>level</th><th>detail</th></tr></thead><tbody>",
    ...body,
    "</tbody></table>",
  ].join("\n");
}

export function buildReportHtml(input: ReportInput): string {
  const { summary, images } = input;
  const failed = summary.steps.filter((s) => s.status === "failed").length;
  const range = summary.range;
  const video = input.video ? safeRelative(input.video) : undefined;
  const capped = summary.events_total > summary.events.length
    ? ` (the first ${summary.events.length} of ${summary.events_total} browser events)`
    : "";
  const parts = [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(reportCsp())}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width">',
    `<title>krometrail record: ${escapeHtml(summary.url)}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    "<body>",
    "<header>",
    "<h1>krometrail record</h1>",
    `<p class="url">${escapeHtml(summary.url)}</p>`,
    `<p class="meta">Started ${escapeHtml(summary.started_at)}${
      summary.session_id ? ` · session ${escapeHtml(summary.session_id)}` : ""
    }${
      range
        ? ` · ${escapeHtml(sessionTime(range.start_ms))} to ${
          escapeHtml(sessionTime(range.end_ms))
        } on page ${escapeHtml(range.page_id)}`
        : ""
    } · ${summary.frames} frames · ${escapeHtml(formatBytes(summary.bytes))} recorded · ${
      failed === 0 ? "every step ran" : `${failed} step${failed === 1 ? "" : "s"} failed`
    }</p>`,
    ...summary.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`),
    "</header>",
    "<h2>Steps</h2>",
    stepsTable(summary),
    figure(
      "Storyboard",
      "storyboard",
      images.storyboard,
      "Frames chosen across the recording: the states before and after each step, first changes and the settled look.",
    ),
    figure(
      "Difference map",
      "difference-map",
      images.difference_map,
      "Where the page changed over the recording, and when.",
    ),
  ];
  if (video) {
    parts.push(
      "<h2>Video</h2>",
      `<video controls preload="metadata" src="${escapeHtml(video)}"></video>`,
      `<p class="note">Plays ${escapeHtml(video)} from the folder beside this report.</p>`,
    );
  }
  parts.push(
    "<h2>Timeline</h2>",
    `<p class="note">${summary.interactions.length} interactions and ${summary.events.length} browser events${
      escapeHtml(capped)
    }, on the session clock.</p>`,
    timelineTable(summary),
    `<footer><p class="note">Written by krometrail ${escapeHtml(input.version)}.</p></footer>`,
    "</body>",
    "</html>",
  );
  return parts.join("\n") + "\n";
}
