/**
 * One overall deadline per tool call (spec: "Errors and Degraded Operation"). A page whose main
 * thread is stuck answers no page-level CDP command, and a handler that chains several of them
 * used to wait out a 30 s command timeout for each (62-90 s for snapshot_page). Every call is raced
 * against its deadline here; when it passes, the call's CDP commands are cancelled (call_signal.ts),
 * the page is probed once, and a structured error says what happened and how to recover.
 */
import { currentCallSignal, outsideCall, runInCall } from "../browser/call_signal.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { asToolError, ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import type { AppContext } from "./context.ts";
import type { ToolOutput } from "./response.ts";
import {
  callCancelled,
  type CallControl,
  type CancelCause,
  type CancelSubject,
  stopWatch,
} from "./admission.ts";
import { SCENARIO_DURATION_LIMIT_MS } from "../scenario/run.ts";

const log = logger("mcp");

export const DEADLINE_ENV = "KROMETRAIL_TOOL_DEADLINE_MS";
/** Covers the slowest healthy page call: an action whose navigation settles (10 s) plus its screenshot. */
export const DEFAULT_TOOL_DEADLINE_MS = 20_000;
export const MIN_TOOL_DEADLINE_MS = 1_000;
export const MAX_TOOL_DEADLINE_MS = 600_000;
/** What a tool with its own wait bound needs around the wait: pre-checks and the post-action observation. */
export const WAIT_MARGIN_MS = 5_000;
/** Bound on the trivial evaluation that tells a stuck page from slow work after a deadline. */
export const PROBE_MS = 1_000;
/** Evidence tools read the store and decode frames; they never wait on a page. */
export const EVIDENCE_DEADLINE_MS = 120_000;
export const VIDEO_DEADLINE_MS = 300_000;

type Args = Record<string, unknown>;
type Rule = (args: Args, base: number) => number;

function num(args: Args, key: string, fallback: number): number {
  const v = args[key];
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/** A tool bounded by its own timeout_ms (default `fallback`) gets it plus the margin. */
const ownTimeout = (fallback: number): Rule => (args) => num(args, "timeout_ms", fallback) + WAIT_MARGIN_MS;
const fixed = (ms: number): Rule => () => ms;

/**
 * Tools whose deadline is not the default. Defaults here mirror the tools' own (pages.ts,
 * flow.ts, inspect.ts, downloads.ts, batch.ts); a tool that changes one must change it here too,
 * which deadlines_test.ts checks against the advertised schemas where it can.
 */
const RULES: Record<string, Rule> = {
  navigate_page: ownTimeout(30_000),
  reload_page: ownTimeout(30_000),
  go_back: ownTimeout(30_000),
  go_forward: ownTimeout(30_000),
  evaluate_page: ownTimeout(10_000),
  wait_for_download: ownTimeout(30_000),
  wait: (args) => Math.max(num(args, "time_ms", 0), num(args, "timeout_ms", 10_000)) + WAIT_MARGIN_MS,
  // The batch bounds itself (deadline_ms, then a 3 s grace for a dispatched step's observation).
  batch: (args) => num(args, "deadline_ms", 60_000) + 3_000 + WAIT_MARGIN_MS,
  // create_page with a url waits for its load (30 s, session.ts createPage).
  create_page: (args, base) =>
    (typeof args.url === "string" && args.url !== "about:blank" ? 30_000 : 0) + base,
  // Launch (Chrome's DevTools port, up to tens of seconds on a cold box), then an optional load.
  start_browser: (args) => 60_000 + (typeof args.url === "string" ? 30_000 : 0),
  attach_browser: fixed(30_000),
  stop_browser: fixed(30_000),
  list_source_frames: fixed(EVIDENCE_DEADLINE_MS),
  fetch_source_frames: fixed(EVIDENCE_DEADLINE_MS),
  delete_session: fixed(EVIDENCE_DEADLINE_MS),
  resolve_temporal_range: fixed(EVIDENCE_DEADLINE_MS),
  temporal_debug_bundle: fixed(EVIDENCE_DEADLINE_MS),
  generate_artifacts: fixed(EVIDENCE_DEADLINE_MS),
  generate_region_filmstrip: fixed(EVIDENCE_DEADLINE_MS),
  query_browser_events: fixed(EVIDENCE_DEADLINE_MS),
  generate_temporal_video: fixed(VIDEO_DEADLINE_MS),
  // Parsing, validating and storing up to 64 MiB of events (a 63 MB file took 64 s at load 20 on 2 CPUs);
  // render: true also launches a replay browser (as start_browser, up to 60 s on a cold box) and plays the
  // recording (at most 240 s, render_recording.ts).
  load_recording: (args) => args.render === true ? 420_000 : EVIDENCE_DEADLINE_MS,
  // The scenario bounds itself (its provider-owned duration); around it a launch (60 s) and the close.
  capture_browser_scenario: fixed(SCENARIO_DURATION_LIMIT_MS + 120_000),
  compare_web_captures: fixed(EVIDENCE_DEADLINE_MS),
  // A load (timeout_ms, default 15 s, performance.ts) and settle_ms (default 2 s), then ending, reading
  // and parsing the trace (the trace engine took ~1 s for a 5 s trace on an idle box; far more under load).
  // "start" only starts tracing and stamps the clock: the default deadline.
  measure_performance: (args, base) =>
    args.mode === "start" ? base : num(args, "timeout_ms", 15_000) + num(args, "settle_ms", 2_000) + 45_000,
  // Each field resolves, dispatches and reads back (~100 ms on an idle box, a locator's AX query several
  // times that under load) before the one observation: up to 50 fields (fill_form.ts MAX_FORM_FIELDS).
  fill_form: (args, base) => base + 500 * (Array.isArray(args.fields) ? args.fields.length : 0),
  // ask_human waits on the person up to its gate (wait_ms, default 30 s: tools/ask_human.ts WAIT_DEFAULT_MS).
  ask_human: (args) => num(args, "wait_ms", 30_000) + WAIT_MARGIN_MS,
};

const OWN_TIMEOUT = new Set([
  "navigate_page",
  "reload_page",
  "go_back",
  "go_forward",
  "evaluate_page",
  "wait_for_download",
  "wait",
  "measure_performance",
]);

/**
 * Launch and attach open the connection whose socket outlives the call, and stop tears it down:
 * their deadline is reported but their work is not cancelled, so a slow start that completes
 * late leaves a usable session (browser_status shows it) rather than a half-built one.
 */
const UNCANCELLED = new Set(["start_browser", "attach_browser", "stop_browser"]);

let warned = false;

/** The default deadline: KROMETRAIL_TOOL_DEADLINE_MS when it is a whole number in range. */
export function defaultDeadlineMs(env: (k: string) => string | undefined = (k) => Deno.env.get(k)): number {
  const raw = env(DEADLINE_ENV);
  if (raw === undefined || raw.trim() === "") return DEFAULT_TOOL_DEADLINE_MS;
  const value = Number(raw);
  if (Number.isSafeInteger(value) && value >= MIN_TOOL_DEADLINE_MS && value <= MAX_TOOL_DEADLINE_MS) {
    return value;
  }
  if (!warned) {
    warned = true;
    log.warn("{name}={raw} is not a whole number of ms in [{min}, {max}]; using {fallback}", {
      name: DEADLINE_ENV,
      raw: raw.slice(0, 40),
      min: MIN_TOOL_DEADLINE_MS,
      max: MAX_TOOL_DEADLINE_MS,
      fallback: DEFAULT_TOOL_DEADLINE_MS,
    });
  }
  return DEFAULT_TOOL_DEADLINE_MS;
}

/** The overall deadline of one call of `tool` with its parsed arguments. */
export function deadlineFor(tool: string, args: Args, base = defaultDeadlineMs()): number {
  const rule = RULES[tool];
  return Math.round(rule ? rule(args, base) : base);
}

export interface DeadlineSubject {
  tool: string;
  deadlineMs: number;
  session?: BrowserSession;
  page?: PageTarget;
}

export function pageUnresponsive(s: DeadlineSubject, page: PageTarget, began?: string): ToolError {
  return new ToolError({
    code: "page_unresponsive",
    message: `${s.tool} did not finish within its deadline of ${s.deadlineMs} ms: page ${page.id} (${
      page.url.slice(0, 200)
    }) does not answer (a ${PROBE_MS} ms trivial evaluation got no reply), so its main thread is likely stuck${
      began ? `; interaction ${began} had begun` : ""
    }.`,
    retry: "after_recovery",
    recovery:
      `close_page ${page.id} (create_page first if it is the last page), or navigate_page ${page.id} to ` +
      "about:blank or another site, which moves it to a fresh renderer. reload_page and same-site URLs reuse the " +
      "stuck renderer and fail, and once one of them is pending, every navigation of the page waits behind it.",
    affected: {
      page_id: page.id,
      ...(s.session ? { session_id: s.session.id } : {}),
      ...(began ? { interaction_id: began } : {}),
    },
    details: { tool: s.tool, deadline_ms: s.deadlineMs, probe_ms: PROBE_MS, url: page.url.slice(0, 200) },
  });
}

function dialogBlocking(s: DeadlineSubject, page: PageTarget, began?: string): ToolError {
  return new ToolError({
    code: "dialog_open",
    message: `${s.tool} did not finish within its deadline of ${s.deadlineMs} ms: a ${
      page.dialog?.type ?? "JavaScript"
    } dialog is open on ${page.id} and blocks the page${began ? `; interaction ${began} had begun` : ""}.`,
    retry: "after_recovery",
    recovery: "Handle the dialog first (handle_dialog accept or dismiss), then retry.",
    affected: { page_id: page.id, ...(began ? { interaction_id: began } : {}) },
    details: { tool: s.tool, deadline_ms: s.deadlineMs },
  });
}

/** What lets legitimately slow work of this tool finish in time. */
function raiseHint(tool: string): string {
  if (tool === "batch") return "or raise deadline_ms";
  if (OWN_TIMEOUT.has(tool)) return "or raise timeout_ms";
  if (RULES[tool]) return "or ask for less (a shorter range, fewer frames)";
  return `or raise ${DEADLINE_ENV} if this work is legitimately slow`;
}

export function deadlineExceeded(s: DeadlineSubject, began?: string): ToolError {
  const page = s.page && !s.page.closed ? s.page : undefined;
  return new ToolError({
    code: "deadline_exceeded",
    message: `${s.tool} did not finish within its deadline of ${s.deadlineMs} ms${
      page ? `; page ${page.id} still answers, so the work was slow rather than the page stuck` : ""
    }${began ? `; interaction ${began} had begun` : ""}.`,
    // A late interaction may have acted; repeating it blindly could act twice.
    retry: began ? "after_recovery" : "safe",
    recovery: began
      ? `Check the page (snapshot_page) before repeating: interaction ${began} may have acted.`
      : UNCANCELLED.has(s.tool)
      ? "The work may still complete: check browser_status before retrying."
      : `Retry once the page is idle, ${raiseHint(s.tool)}.`,
    affected: {
      ...(page ? { page_id: page.id } : {}),
      ...(s.session ? { session_id: s.session.id } : {}),
      ...(began ? { interaction_id: began } : {}),
    },
    details: { tool: s.tool, deadline_ms: s.deadlineMs },
  });
}

/** Why a cancelled call's commands failed: said before the page is probed, so it judges nothing. */
function cancelledAtDeadline(s: DeadlineSubject): ToolError {
  return new ToolError({
    code: "deadline_exceeded",
    message:
      `${s.tool} passed its deadline of ${s.deadlineMs} ms; its pending browser commands were cancelled.`,
    retry: "after_recovery",
    details: { tool: s.tool, deadline_ms: s.deadlineMs },
  });
}

/** Decides what a passed deadline means: a stuck page, a dialog, or slow work. */
async function verdict(s: DeadlineSubject, began: string | undefined): Promise<ToolError> {
  const page = s.page;
  if (!page || page.closed || s.session?.ended) return deadlineExceeded(s, began);
  if (page.dialog) return dialogBlocking(s, page, began);
  const answered = await outsideCall(() =>
    page.send("Runtime.evaluate", { expression: "1", returnByValue: true }, PROBE_MS).then(
      () => true,
      () => false,
    )
  );
  if (page.dialog) return dialogBlocking(s, page, began);
  if (answered) return deadlineExceeded(s, began);
  // A renderer that stopped answering is evidence on the timeline too (session.ts onPageTrouble).
  s.session?.noteUnresponsive(page, s.tool);
  return pageUnresponsive(s, page, began);
}

/**
 * From now on, the interaction a call began, if any: the one begun last, not the open one (a call whose
 * interaction already ended still acted).
 */
export function interactionsSince(session: BrowserSession | undefined): () => string | undefined {
  const before = session?.latestInteractionId;
  return () => {
    const latest = session?.latestInteractionId;
    return latest !== undefined && latest !== before ? latest : undefined;
  };
}

/** The page a call is about: its page_id, else the page selected when it began. */
function subjectPage(session: BrowserSession | undefined, args: Args): PageTarget | undefined {
  if (!session || session.ended) return undefined;
  const id = typeof args.page_id === "string" ? args.page_id : session.selectedPageId;
  return id ? session.pages.get(id) : undefined;
}

/**
 * Runs one call under its deadline. A call that passes it is cancelled and answered with a
 * structured error; whatever it still had in flight settles on its own, its result dropped. A call
 * the client cancels (or shutdown stops) is answered at once the same way with call_cancelled (or
 * shutting_down); the SDK sends nothing for a cancelled request.
 * `pageScoped`: the tool acts on one page (it takes page_id), which a passed deadline probes.
 */
export async function withDeadline(
  tool: string,
  args: Args,
  app: AppContext,
  pageScoped: boolean,
  work: () => Promise<ToolOutput>,
  control: CallControl = {},
): Promise<ToolOutput | ToolError> {
  const startedAt = performance.now();
  const deadlineMs = deadlineFor(tool, args);
  const session = app.browsers.current;
  const subject: DeadlineSubject = {
    tool,
    deadlineMs,
    session,
    page: pageScoped ? subjectPage(session, args) : undefined,
  };
  const beganSince = interactionsSince(session);
  // (`?.`: test doubles of the app may come without an admission.)
  const watch = stopWatch(control.cancel, app.calls?.signal);
  const controller = new AbortController();
  const early: CancelCause | undefined = app.calls?.closing
    ? "shutdown"
    : control.cancel?.aborted
    ? "client"
    : undefined;
  if (early) {
    watch.off();
    return callCancelled({ ...cancelSubject(subject, startedAt, control), ran: false }, early);
  }
  // A nested call (a batch step) of a call already cancelled starts nothing: it fails as its parent did.
  const outer = currentCallSignal();
  if (outer?.aborted) {
    watch.off();
    return asToolError(outer.reason);
  }
  const running = UNCANCELLED.has(tool) ? work() : runInCall(controller.signal, work);
  app.calls?.track(running);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), deadlineMs);
  });
  try {
    const first = await Promise.race([running, expired, watch.stopped]);
    if (first === "client" || first === "shutdown") {
      const error = callCancelled(cancelSubject(subject, startedAt, control), first, beganSince());
      controller.abort(error);
      const abortedAt = performance.now();
      running.then(() => {}, () => {}).finally(() =>
        log.info("{tool} cancelled ({cause}): its work settled {ms} ms after the abort; result dropped", {
          tool,
          cause: first,
          ms: Math.round(performance.now() - abortedAt),
        })
      );
      return error;
    }
    if (first !== "expired") return first;
  } catch (err) {
    return asToolError(err);
  } finally {
    clearTimeout(timer);
    watch.off();
  }
  const began = beganSince();
  controller.abort(cancelledAtDeadline(subject));
  // Cancelled commands fail at once, so a dispatched action's observation degrades within the probe.
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const grace = began
    ? Promise.race([
      running.then((out) => out, () => undefined),
      new Promise<undefined>((resolve) => {
        graceTimer = setTimeout(() => resolve(undefined), PROBE_MS);
      }),
    ])
    : undefined;
  const [error, late] = await Promise.all([verdict(subject, began), grace]);
  clearTimeout(graceTimer);
  if (began && late && !late.isError && late.structured.interaction_id === began) {
    return degraded(late, error);
  }
  running.then(
    () => log.debug("{tool} settled after its deadline of {ms} ms; result dropped", { tool, ms: deadlineMs }),
    () => {},
  );
  return error;
}

function cancelSubject(s: DeadlineSubject, startedAt: number, control: CallControl): CancelSubject {
  return {
    tool: s.tool,
    startedAt,
    readOnly: control.readOnly === true,
    ran: UNCANCELLED.has(s.tool) ? "continues" : true,
    ...(s.session ? { session_id: s.session.id } : {}),
    ...(s.page ? { page_id: s.page.id } : {}),
  };
}

/**
 * A dispatched interaction whose observation the deadline cut short is a degraded non-error result
 * with its record (spec: "Errors and Degraded Operation"), saying why the observation is missing.
 */
function degraded(out: ToolOutput, error: ToolError): ToolOutput {
  const warning = `${error.code}: ${error.message}`;
  const structured = { ...out.structured };
  structured.warnings = [...(Array.isArray(structured.warnings) ? structured.warnings : []), warning];
  const [head, ...rest] = out.text.split("\n");
  return {
    ...out,
    structured,
    text: [head, `${warning} Recovery: ${error.recovery ?? ""}`.trim(), ...rest].join("\n"),
  };
}
