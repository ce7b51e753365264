/**
 * The scenario's records: each step's artifacts and completeness, the capture document, and its redaction.
 * What the runner observed becomes durable here (capture.ts).
 */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { asToolError } from "../errors.ts";
import {
  type ArtifactKind,
  type CaptureStep,
  classifyCompleteness,
  type CompletenessSection,
  type ScenarioCapture,
  type ScenarioEvent,
  type StepArtifacts,
  type StepError,
  withoutScreenshotData,
} from "./capture.ts";
import type { GuardEvent } from "./guard.ts";
import { canonicalJson, sha256Hex } from "./normalize.ts";
import type { Scenario } from "./schema.ts";
import { durableUrl as durableSpec, type SecretRedactor } from "./secrets.ts";
import type { EventCollector } from "./step_events.ts";

export function stepKinds(s: Scenario, last: boolean): Set<ArtifactKind> {
  return new Set([...s.capture.after_each_step, ...(last ? s.capture.at_end : [])]);
}

export function refusalError(e: GuardEvent, origins: string[]): StepError {
  return {
    code: "origin_not_allowed",
    origin: e.origin,
    message: `${
      e.navigation ? "Navigation" : e.transport === "websocket" ? "WebSocket" : "Request"
    } to ${e.origin} was refused: it is not in allowed_origins [${origins.join(", ")}].`,
    recovery: `Add ${e.origin} to allowed_origins if the scenario should reach it, or change the step.`,
  };
}

export function stepErrorOf(err: unknown): StepError {
  const e = asToolError(err);
  return { code: e.code, message: e.message, ...(e.recovery ? { recovery: e.recovery } : {}) };
}

export function skippedArtifacts(kinds: Set<ArtifactKind>, reason: string): StepArtifacts {
  const state = (k: ArtifactKind) =>
    kinds.has(k) ? { state: "missing" as const, reason } : { state: "not_requested" as const };
  return {
    screenshot: state("screenshot"),
    dom: state("dom"),
    accessibility: state("accessibility"),
    url: state("url"),
    history: state("history"),
    storage: state("storage"),
  };
}

export function completenessOf(step: Pick<CaptureStep, "status" | "artifacts">) {
  const missing: CompletenessSection[] = [];
  const truncated: CompletenessSection[] = [];
  if (step.status === "skipped") missing.push("action");
  for (const [kind, state] of Object.entries(step.artifacts) as [CompletenessSection, { state: string }][]) {
    if (state.state === "missing") missing.push(kind);
    if (state.state === "truncated") truncated.push(kind);
  }
  return classifyCompleteness(missing, truncated);
}

/** Every string redacted except the screenshots' base64 (a short secret could occur inside it by chance). */
export function redactedCapture(capture: ScenarioCapture, redactor: SecretRedactor): ScenarioCapture {
  const images = capture.steps.map((s) =>
    s.artifacts.screenshot.state === "captured" ? s.artifacts.screenshot.value.data_base64 : undefined
  );
  const out: ScenarioCapture = redactor.deep(withoutScreenshotData(capture));
  out.steps.forEach((s, i) => {
    const data = images[i];
    if (data !== undefined && s.artifacts.screenshot.state === "captured") {
      s.artifacts.screenshot.value.data_base64 = data;
    }
  });
  return out;
}

export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

export function finishStep(
  step: Omit<CaptureStep, "completeness" | "event_sequence_start" | "event_sequence_end">,
  events: EventCollector,
  index: number,
): CaptureStep {
  const b = events.snapshot().bounds(index);
  return {
    ...step,
    event_sequence_start: b.start,
    event_sequence_end: b.end,
    completeness: completenessOf(step),
  };
}

export function limitations(s: Scenario): string[] {
  const out = [
    "Steps run on krometrail's control layer; each step's interaction_id anchors the temporal tools (temporal_debug_bundle) on this session.",
    "Screenshots are compared by the SHA-256 of their PNG bytes; DOM and accessibility by normalized text.",
  ];
  if (s.browser.mode === "connect") {
    out.push(
      "Connect mode: events before the attach are not observed (pre_attach_gap); the external browser was left running.",
    );
  }
  if (s.capture.events.length === 0) out.push("No event families were requested: events are not compared.");
  return out;
}

export interface CaptureInputs {
  scenario: Scenario;
  session: BrowserSession;
  page: PageTarget;
  origins: string[];
  steps: CaptureStep[];
  events: { items: ScenarioEvent[]; dropped: number };
  startedAt: number;
  profile: { profile_dir?: string; profile_removed?: boolean };
}

/** The capture document of a finished run (not yet redacted: redactedCapture does that). */
export function captureDocument(
  { scenario, session, page, origins, steps, events, startedAt, profile }: CaptureInputs,
): ScenarioCapture {
  const product = session.browserVersion.split("/");
  return {
    schema_version: 1,
    capture_kind: "browser_scenario",
    capture_id: crypto.randomUUID(),
    session_id: session.id,
    page_id: page.id,
    browser: scenario.browser.mode === "launch"
      ? {
        mode: "launch",
        process_ownership: "provider-owned",
        cleanup: "terminated-owned-process",
        product: product[0] || "Chrome",
        version: product[1] ?? "",
        ...profile,
      }
      : {
        mode: "connect",
        process_ownership: "external",
        cleanup: "disconnected-external",
        product: product[0] || "Chrome",
        version: product[1] ?? "",
      },
    scenario: {
      start_url: durableSpec(scenario.start_url),
      start_origin: new URL(scenario.start_url.url).origin,
      allowed_origins: [...origins].sort(),
      action_count: scenario.actions.length,
      secret_references: scenario.secrets.map((s) => s.secret_id).sort(),
      request_sha256: sha256Hex(canonicalJson(scenario)),
    },
    environment: scenario.environment,
    capture_plan: {
      after_each_step: [...scenario.capture.after_each_step],
      at_end: [...scenario.capture.at_end],
      events: [...scenario.capture.events],
    },
    started_at: new Date(startedAt).toISOString(),
    duration_ms: Date.now() - startedAt,
    steps,
    events: { retained: events.items.length, dropped: events.dropped, items: events.items },
    completeness: classifyCompleteness(
      [
        ...steps.flatMap((s) => s.completeness.missing_sections),
      ],
      [
        ...steps.flatMap((s) => s.completeness.truncated_sections),
        ...(events.dropped > 0 ? ["events" as const] : []),
      ],
    ),
    pre_attach_gap: scenario.browser.mode === "connect"
      ? {
        declared: true,
        reason:
          "Connect mode attaches to a browser that was already running: what its pages did before the attach was not observed.",
      }
      : null,
    limitations: limitations(scenario),
  };
}
