/**
 * Runs one declared scenario as an ordinary krometrail session: frames, events and DOM are recorded as
 * for any session, each step is an interaction the temporal tools accept, and the result is the capture
 * document (capture.ts). The browser boundary is the contract's: launch owns a temporary profile that is
 * closed and deleted at the end; connect only disconnects from the external browser.
 */
import type { BrowserManager } from "../browser/lifecycle.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { Recorder } from "../capture/recorder.ts";
import { ToolError } from "../errors.ts";
import type { InstanceStore } from "../store/instance.ts";
import { type StepCall, stepCall } from "./actions.ts";
import { type CaptureStep, INITIAL_STEP, type ScenarioCapture, type StepError } from "./capture.ts";
import { installEnvironment } from "./environment.ts";
import { type GuardEvent, installGuard } from "./guard.ts";
import {
  captureDocument,
  exists,
  finishStep,
  redactedCapture,
  refusalError,
  skippedArtifacts,
  stepErrorOf,
  stepKinds,
} from "./run_record.ts";
import { guardPlan, openBrowser, scenarioScope, seedPlan } from "./run_setup.ts";
import { effectiveOrigins, type Scenario } from "./schema.ts";
import { resolveSecrets, resolveUrl, resolveValue, SecretRedactor } from "./secrets.ts";
import { captureArtifacts } from "./step_capture.ts";
import { observedUrl } from "./step_capture_text.ts";
import { collectEvents, type EventCollector } from "./step_events.ts";
import { seedStorage } from "./storage_seed.ts";
import { withinLimit } from "./time_limit.ts";
import { readChecked } from "./toggle.ts";

/** Provider-owned liveness limits (the request cannot change them: contract). */
export const SCENARIO_DURATION_LIMIT_MS = 300_000;
/** Each tool bounds itself (mcp/deadlines.ts); this catches a step that outlives its own bound. */
export const STEP_LIMIT_MS = 60_000;
export const NAVIGATION_LIMIT_MS = 30_000;

export type ToolResult =
  | { ok: true; structured: Record<string, unknown> }
  | { ok: false; error: StepError; interaction_id?: string };

/** What the run needs from its host (the MCP layer): the app's browser, recorder and tools. */
export interface ScenarioHost {
  browsers: BrowserManager;
  recorder: Recorder;
  store: InstanceStore;
  /** The DOM recorder's session setup, as start_browser installs it. */
  prepareSession(session: BrowserSession): void;
  /** Recording (frames, events, DOM) attached as for start_browser / attach_browser. */
  attachCapture(session: BrowserSession): void;
  /** One control tool call through its own schema, deadline and observation. */
  runTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  env(name: string): string | undefined;
  progress(line: string): void;
}

interface RunState {
  session: BrowserSession;
  page: PageTarget;
  redactor: SecretRedactor;
  events: EventCollector;
  refusals: GuardEvent[];
  durableUrl: (raw: string) => string;
  startedAt: number;
}

function stepTimeout(what: string, ms: number): ToolError {
  return new ToolError({
    code: "scenario_step_timeout",
    message: `${what} did not finish within the provider-owned limit of ${ms} ms.`,
    retry: "after_recovery",
    recovery: "Check that the page responds (evaluate_page) and that the step's target exists.",
  });
}

/** A check/uncheck: read the box, click only when it differs, then confirm it took. */
async function toggle(
  host: ScenarioHost,
  st: RunState,
  call: Extract<StepCall, { kind: "toggle" }>,
): Promise<ToolResult> {
  const before = await readChecked(st.session, st.page, call.target);
  if (before === call.want) return { ok: true, structured: { already: true } };
  const clicked = await host.runTool("click", { ...call.target, inline_images: false });
  if (!clicked.ok) return clicked;
  const after = await readChecked(st.session, st.page, call.target);
  if (after !== call.want) {
    return {
      ok: false,
      interaction_id: typeof clicked.structured.interaction_id === "string"
        ? clicked.structured.interaction_id
        : undefined,
      error: {
        code: call.want ? "check_failed" : "uncheck_failed",
        message: `The click left the box ${after ? "checked" : "unchecked"}.`,
        recovery: "Target the checkbox or its label itself; a script may be resetting it.",
      },
    };
  }
  return clicked;
}

async function runCall(host: ScenarioHost, st: RunState, call: StepCall): Promise<ToolResult> {
  if (call.kind === "toggle") return await toggle(host, st, call);
  return await host.runTool(call.tool, { ...call.args, page_id: st.page.id });
}

function interactionOf(r: ToolResult): string | null {
  if (r.ok) return typeof r.structured.interaction_id === "string" ? r.structured.interaction_id : null;
  return r.interaction_id ?? null;
}

function currentUrl(st: RunState): string {
  return st.durableUrl(st.page.url);
}

export async function runScenario(host: ScenarioHost, scenario: Scenario): Promise<ScenarioCapture> {
  const origins = effectiveOrigins(scenario);
  const secrets = resolveSecrets(scenario.secrets, (n) => host.env(n));
  const redactor = new SecretRedactor(secrets);
  const durableUrl = observedUrl(redactor);
  const startedAt = Date.now();
  const refusals: GuardEvent[] = [];
  let collectorRef: EventCollector | undefined;
  let sessionRef: BrowserSession | undefined;
  let guardOff: (() => void) | undefined;
  const onGuardEvent = (e: GuardEvent) => {
    if (e.kind === "request-refused") refusals.push(e);
    collectorRef?.add({
      time_ms: sessionRef?.now() ?? 0,
      kind: e.kind === "request-refused" ? "request-refused" : "request-replayed",
      method: e.method,
      url: durableUrl(e.url),
      origin: e.origin,
      resource_type: e.resource_type,
      transport: e.transport,
      ...(e.kind === "request-refused" ? {} : { decision: e.kind.replace(/^replay-/, "") }),
      ...(e.route_id ? { route_id: e.route_id } : {}),
    });
  };
  // Every row and DOM batch this run's session records passes the redactor first (recorder.ts).
  if (secrets.length > 0) host.recorder.redact = (m) => redactor.deep(m);
  let closed = false;
  const close = async (session?: BrowserSession) => {
    if (closed) return;
    closed = true;
    guardOff?.();
    collectorRef?.stop();
    // Only the scenario's own session: a refused start (another session running) must leave that one be.
    if (!session) return;
    await host.recorder.captures.get(session.id)?.stop().catch(() => {});
    if (host.browsers.current === session) await host.browsers.stop().catch(() => {});
    await host.recorder.flush().catch(() => {});
  };
  try {
    const { session, page } = await openBrowser(host, scenario, (s) => {
      host.prepareSession(s);
      const scope = scenarioScope(scenario);
      installEnvironment(s, scenario.environment, scope);
      guardOff = installGuard(
        s,
        guardPlan(scenario, secrets, origins),
        onGuardEvent,
        scope ? { pages: scope } : {},
      );
    });
    sessionRef = session;
    const events = collectEvents(
      session,
      new Set(scenario.capture.events),
      redactor,
      durableUrl,
      () => session.now(),
      // In connect mode the scenario's target need not be the selected page; its popups join on their own.
      { pageIds: [page.id] },
    );
    collectorRef = events;
    const st: RunState = { session, page, redactor, events, refusals, durableUrl, startedAt };
    const resolvers = {
      value: (v: unknown) => resolveValue(v as Parameters<typeof resolveValue>[0], secrets),
      url: (u: unknown) => resolveUrl(u as Parameters<typeof resolveUrl>[0], secrets),
    };
    await seedStorage(session, page, seedPlan(scenario, secrets), origins);

    const steps: CaptureStep[] = [];
    const plan: { id: string; action: string; call: StepCall }[] = [
      {
        id: INITIAL_STEP,
        action: INITIAL_STEP,
        call: {
          kind: "tool",
          tool: "navigate_page",
          args: { url: resolvers.url(scenario.start_url), wait_until: "load", inline_images: false },
        },
      },
      ...scenario.actions.map((a) => ({ id: a.step_id, action: a.action, call: stepCall(a, resolvers) })),
    ];
    let stopped: { index: number; id: string; reason: string } | undefined;
    for (const [index, p] of plan.entries()) {
      const last = index === plan.length - 1;
      const kinds = stepKinds(scenario, last);
      const startedMs = session.now();
      const beforeUrl = currentUrl(st);
      events.beginStep(index);
      if (stopped === undefined && Date.now() - startedAt > SCENARIO_DURATION_LIMIT_MS) {
        stopped = {
          index,
          id: p.id,
          reason: `the scenario passed its provider-owned duration limit of ${SCENARIO_DURATION_LIMIT_MS} ms`,
        };
      }
      if (stopped !== undefined) {
        const reason = `skipped: ${stopped.reason}`;
        const artifacts = last
          ? await captureArtifacts(captureContext(host, st, origins), kinds)
          : skippedArtifacts(kinds, reason);
        steps.push(
          finishStep(
            {
              step_index: index,
              step_id: p.id,
              action: p.action,
              status: "skipped",
              error: { code: "step_skipped", message: reason },
              elapsed_ms: 0,
              started_ms: startedMs,
              ended_ms: startedMs,
              before_url: beforeUrl,
              after_url: beforeUrl,
              interaction_id: null,
              artifacts,
            },
            events,
            index,
          ),
        );
        continue;
      }
      host.progress(`step ${index}/${plan.length - 1} ${p.id} (${p.action})`);
      const refusedBefore = refusals.length;
      const t0 = performance.now();
      let result: ToolResult;
      try {
        const limit = p.call.kind === "tool" && p.call.tool === "navigate_page"
          ? NAVIGATION_LIMIT_MS + 15_000
          : STEP_LIMIT_MS;
        const what = `Step ${p.id} (${p.action})`;
        result = await withinLimit(runCall(host, st, p.call), limit, () => stepTimeout(what, limit));
      } catch (err) {
        result = { ok: false, error: stepErrorOf(err) };
      }
      const refused = refusals.slice(refusedBefore);
      // A refusal fails the step even when the action itself returned: the page did not get what it asked.
      const error: StepError | null = refused.length > 0
        ? refusalError(refused[0], origins)
        : result.ok
        ? null
        : result.error;
      const elapsed = Math.round(performance.now() - t0);
      // The action's own observation already watched recorded frames until the page held still; then one
      // picture is the settled one. Otherwise (still changing, or no verdict) the capture confirms it.
      const settled = result.ok && result.structured.settled === true;
      const artifacts = await captureArtifacts({
        ...captureContext(host, st, origins),
        confirmScreenshot: !settled,
      }, kinds);
      const endedMs = session.now();
      steps.push(
        finishStep(
          {
            step_index: index,
            step_id: p.id,
            action: p.action,
            status: error ? "failed" : "completed",
            error,
            elapsed_ms: elapsed,
            started_ms: startedMs,
            ended_ms: endedMs,
            before_url: beforeUrl,
            after_url: currentUrl(st),
            interaction_id: interactionOf(result),
            artifacts,
          },
          events,
          index,
        ),
      );
      if (error) stopped = { index, id: p.id, reason: `step ${p.id} failed (${error.code})` };
    }
    const snapshot = events.snapshot();
    await close(session);
    const profile = session.profileDir && scenario.browser.mode === "launch"
      ? { profile_dir: session.profileDir, profile_removed: !(await exists(session.profileDir)) }
      : {};
    const capture = captureDocument({
      scenario,
      session,
      page,
      origins,
      steps,
      events: snapshot,
      startedAt,
      profile,
    });
    return redactedCapture(capture, redactor);
  } finally {
    await close(sessionRef);
    host.recorder.redact = undefined;
  }
}

function captureContext(host: ScenarioHost, st: RunState, origins: string[]) {
  return {
    page: st.page,
    store: host.store,
    redactor: st.redactor,
    allowedOrigins: origins,
    durableUrl: st.durableUrl,
  };
}
