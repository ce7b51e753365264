/**
 * `krometrail record URL`: a recording for people. Opens the URL in Chrome, runs the steps through the
 * same tool layer an MCP client uses, records for a few seconds more with a progress line on stderr,
 * then writes the pictures, the events and a self-contained report into a folder and prints its path
 * as stdout's last line.
 *
 * Exit codes: 0 ok · 1 a step failed (the files are still written) · 2 bad arguments · 4 could not run.
 */
import { join, resolve } from "node:path";
import type { AppContext } from "../mcp/context.ts";
import type { ToolOutput } from "../mcp/response.ts";
import {
  buildEventsMd,
  type EventRecord,
  type InteractionRecord,
  type RecordSummary,
  type StepRecord,
} from "./events_md.ts";
import { formatBytes, formatSeconds, Progress } from "./progress.ts";
import {
  describeStep,
  parseRecordArgs,
  RECORD_USAGE,
  type RecordArgs,
  type RecordStep,
  resolveHeadless,
} from "./record_args.ts";
import {
  errorOf,
  firstLine,
  readEvents,
  readInteractions,
  recordedRange,
  renderArtifacts,
} from "./record_collect.ts";
import { type RunTool, toolRunner } from "../mcp/tool_runner.ts";
import { buildReportHtml, type ReportImages } from "./report_html.ts";

export const RECORD_EXIT = { ok: 0, step_failed: 1, invalid: 2, could_not_run: 4 } as const;

/** The click tool's `{text}` locator; a button or link of that name when the text alone finds nothing unique. */
async function clickByText(run: RunTool, text: string): Promise<ToolOutput> {
  const first = await run("click", { locator: { text }, inline_images: false });
  if (!first.isError) return first;
  const code = errorOf(first).code;
  if (code !== "locator_no_match" && code !== "locator_ambiguous") return first;
  for (const role of ["button", "link"]) {
    const out = await run("click", { locator: { role, name: text }, inline_images: false });
    if (!out.isError) return out;
  }
  return first;
}

function runStep(run: RunTool, step: RecordStep): Promise<ToolOutput> | undefined {
  if (step.kind === "click") return clickByText(run, step.text);
  if (step.kind === "fill") {
    return run("fill", { locator: { label: step.label }, value: step.value, inline_images: false });
  }
  return undefined;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    if (signal.aborted) return done();
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener("abort", finish);
      done();
    }
    signal.addEventListener("abort", finish);
  });
}

function timestampName(now: Date): string {
  return `krometrail-record-${now.toISOString().replace(/[:.]/g, "-")}`;
}

/** What the recording phase hands to the writing phase. */
interface Recorded {
  steps: StepRecord[];
  described: Map<string, string>;
  failed: boolean;
  pageId?: string;
}

async function runSteps(
  run: RunTool,
  url: string,
  userSteps: RecordStep[],
  now: () => number,
  signal: AbortSignal,
  show: (activity: string) => void,
  log: (line: string) => void,
): Promise<Recorded> {
  const result: Recorded = { steps: [], described: new Map(), failed: false };
  const plan: Array<{ description: string; step?: RecordStep }> = [
    { description: `open ${url}` },
    ...userSteps.map((step) => ({ description: describeStep(step), step })),
  ];
  for (const [i, item] of plan.entries()) {
    const base = { index: i + 1, description: item.description, started_ms: now() };
    if (result.failed || signal.aborted) {
      result.steps.push({ ...base, duration_ms: 0, status: "skipped" });
      continue;
    }
    show(`step ${i + 1}/${plan.length}: ${item.description}`);
    const t0 = performance.now();
    let out: ToolOutput | undefined;
    if (!item.step) out = await run("navigate_page", { url, inline_images: false });
    else if (item.step.kind === "wait") await sleep(item.step.ms, signal);
    else out = await runStep(run, item.step);
    const record: StepRecord = {
      ...base,
      duration_ms: performance.now() - t0,
      status: out?.isError ? "failed" : "ok",
    };
    const interaction = out?.structured.interaction_id;
    if (typeof interaction === "string") {
      record.interaction_id = interaction;
      result.described.set(interaction, item.description);
    }
    const page = (out?.structured.page as { page_id?: string } | undefined)?.page_id;
    if (!item.step && page) result.pageId = page;
    if (out?.isError) {
      record.message = firstLine(out);
      result.failed = true;
      log(`krometrail record: step ${i + 1} failed: ${item.description}: ${record.message}`);
    }
    result.steps.push(record);
  }
  return result;
}

async function writeFiles(
  outDir: string,
  files: Array<[string, Uint8Array | string | undefined]>,
): Promise<string[]> {
  const written: string[] = [];
  for (const [name, content] of files) {
    if (content === undefined) continue;
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    await Deno.writeFile(join(outDir, name), bytes);
    written.push(`${name} (${formatBytes(bytes.length)})`);
  }
  return written;
}

function refuseArguments(flag: string, message: string): number {
  console.error(`krometrail record: ${flag}: ${message}`);
  console.error(JSON.stringify({ error: { code: "invalid_arguments", flag, message } }));
  console.error(RECORD_USAGE);
  return RECORD_EXIT.invalid;
}

/** Ctrl-C, and a SIGTERM (a terminal closed, a supervisor stopping us; not on Windows), end it early. */
const STOP_SIGNALS: Deno.Signal[] = Deno.build.os === "windows" ? ["SIGINT"] : ["SIGINT", "SIGTERM"];

export async function recordCommand(app: AppContext, argv: string[]): Promise<number> {
  const parsed = parseRecordArgs(argv);
  if (!parsed.ok) {
    if (!parsed.help) return refuseArguments(parsed.flag, parsed.message);
    console.log(RECORD_USAGE);
    return RECORD_EXIT.ok;
  }
  // From here a stop signal ends the recording early: what was recorded is still written, the browser
  // stopped and its temporary profile removed. Registered before the launch, so none of that is skipped.
  const interrupt = new AbortController();
  const onSignal = () => interrupt.abort();
  for (const sig of STOP_SIGNALS) Deno.addSignalListener(sig, onSignal);
  try {
    return await record(app, parsed.args, interrupt.signal);
  } finally {
    for (const sig of STOP_SIGNALS) Deno.removeSignalListener(sig, onSignal);
  }
}

/** True when `dir` did not exist (so a run that wrote nothing may remove what it made). */
async function absent(dir: string): Promise<boolean> {
  try {
    await Deno.stat(dir);
    return false;
  } catch {
    return true;
  }
}

async function record(app: AppContext, args: RecordArgs, signal: AbortSignal): Promise<number> {
  const startedAt = new Date();
  // `deno task` runs in the config's folder; INIT_CWD is where the user typed the command.
  const outDir = resolve(Deno.env.get("INIT_CWD") || Deno.cwd(), args.out ?? timestampName(startedAt));
  // Made before the launch so a bad path fails in a moment, and removed again if no browser came up.
  const madeHere = await absent(outDir);
  try {
    await Deno.mkdir(outDir, { recursive: true });
  } catch (err) {
    console.error(`krometrail record: cannot create ${outDir}: ${(err as Error).message}`);
    return RECORD_EXIT.could_not_run;
  }
  const run = toolRunner(app);
  const headless = resolveHeadless(args.headless, (n) => Deno.env.get(n), Deno.build.os);
  const launched = await run("start_browser", { headless, temporary: true });
  const session = app.browsers.current;
  if (launched.isError || !session) {
    const e = errorOf(launched);
    console.error(`krometrail record: could not start a browser: ${e.code}: ${e.message}`);
    if (e.recovery) console.error(`  ${e.recovery}`);
    console.error("  Run `krometrail doctor` to see what is missing and the fix.");
    // Only the empty folder this run made: never a user's folder, never one holding files.
    if (madeHere) await Deno.remove(outDir).catch(() => undefined);
    return RECORD_EXIT.could_not_run;
  }
  const sessionId = session.id;
  const clockStart = performance.now();
  let activity = "starting";
  let frozen: { frames: number; bytes: number } | undefined;
  const show = (what: string) => (activity = what);
  const progress = new Progress(async () => {
    if (!frozen) await app.recorder.flush();
    const status = app.recorder.captures.get(sessionId)?.status();
    const share = app.recorder.retention?.share_bytes;
    return `krometrail record: ${frozen?.frames ?? status?.frames_stored ?? 0} frames · ${
      formatSeconds(performance.now() - clockStart)
    } · ${formatBytes(app.recorder.usedBytes)} on disk${
      share ? ` of ${formatBytes(share)}` : ""
    } · ${activity}`;
  }, Deno.stderr);
  progress.start();
  let recorded: Recorded;
  const notes: string[] = [];
  let rendered: { images: ReportImages; video?: Uint8Array } = { images: {} };
  let events: EventRecord[] = [];
  let eventsTotal = 0;
  let interactions: InteractionRecord[] = [];
  let range: { start_ms: number; end_ms: number; page_id: string } | undefined;
  try {
    recorded = await runSteps(
      run,
      args.url,
      args.steps,
      () => session.now(),
      signal,
      show,
      (l) => progress.log(l),
    );
    show(`recording ${args.seconds} s`);
    await sleep(args.seconds * 1000, signal);
    if (signal.aborted) progress.log("krometrail record: interrupted; writing what was recorded");
    await app.recorder.flush();
    const endMs = session.now();
    const status = app.recorder.captures.get(sessionId)?.status();
    // The page keeps painting (a caret blinks) while the files are made; the report counts the recording.
    frozen = { frames: status?.frames_stored ?? 0, bytes: status?.bytes_stored ?? 0 };
    // A navigation that failed still leaves Chrome's error page on the selected page.
    const pageId = recorded.pageId ?? session.selectedPageId;
    range = pageId
      ? await recordedRange(run, sessionId, pageId, recorded.steps[0]?.started_ms ?? 0, endMs)
      : undefined;
    rendered = await renderArtifacts(app, run, sessionId, range, notes, show);
    show("collecting events");
    [events, eventsTotal] = await readEvents(run, sessionId, endMs);
    interactions = readInteractions(app, sessionId, recorded.described);
    show("closing the browser");
  } finally {
    await run("stop_browser", {}).catch(() => undefined);
    await progress.stop();
  }
  const summary: RecordSummary = {
    url: args.url,
    session_id: sessionId,
    started_at: startedAt.toISOString(),
    ...(range ? { range } : {}),
    frames: frozen?.frames ?? 0,
    bytes: frozen?.bytes ?? 0,
    steps: recorded.steps,
    interactions,
    events,
    events_total: eventsTotal,
    notes,
  };
  const { images, video } = rendered;
  let written: string[];
  try {
    written = await writeFiles(outDir, [
      ["storyboard.png", images.storyboard],
      ["difference-map.png", images.difference_map],
      ["video.mp4", video],
      ["events.md", buildEventsMd(summary)],
      [
        "report.html",
        buildReportHtml({ summary, images, ...(video ? { video: "video.mp4" } : {}), version: app.version }),
      ],
    ]);
  } catch (err) {
    console.error(`krometrail record: cannot write into ${outDir}: ${(err as Error).message}`);
    return RECORD_EXIT.could_not_run;
  }
  for (const note of notes) console.error(`krometrail record: ${note}`);
  console.error(`krometrail record: wrote ${written.join(", ")}`);
  console.log(outDir);
  return recorded.failed ? RECORD_EXIT.step_failed : RECORD_EXIT.ok;
}
