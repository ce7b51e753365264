/**
 * One aligned step's artifacts, before against after: each side's capture state (what the result
 * shows inline) and, when captured, its normalized value and digest. Pure.
 */
import {
  ARTIFACT_KINDS,
  type CaptureState,
  type CaptureStep,
  type EvidenceState,
  type ScenarioCapture,
  type ScenarioEvent,
} from "./capture.ts";
import {
  applyCallerRules,
  digestCanonical,
  eventWithoutVolatiles,
  type NormalizableKind,
  type NormalizationRule,
  normalizeText,
  relativeToStartUrl,
  sortCanonically,
} from "./normalize.ts";

export const COMPARED_ARTIFACTS = ["action_state", ...ARTIFACT_KINDS, "events"] as const;
export type ComparedArtifact = typeof COMPARED_ARTIFACTS[number];

export interface ArtifactDiff {
  artifact: ComparedArtifact;
  status: "changed" | "unknown";
  before_state: EvidenceState;
  after_state: EvidenceState;
  /** Digest of the normalized value; null when that side was not captured. */
  before_sha256: string | null;
  after_sha256: string | null;
  reason: string | null;
  /** The side's capture state as captured (screenshots without data_base64). */
  before: CaptureState<unknown>;
  after: CaptureState<unknown>;
  /** Set after the comparison for a changed screenshot (compare_run.ts: the difference image). */
  visual_difference?: unknown;
}

export type ArtifactOutcome =
  | { artifact: ComparedArtifact; status: "not_compared" | "unchanged" }
  | { artifact: ComparedArtifact; status: "changed" | "unknown"; diff: ArtifactDiff };

/** One side of an aligned step. */
export interface StepSide {
  capture: ScenarioCapture;
  step: CaptureStep;
}

/** The step's action outcome, as compared (no elapsed or session times: those are per run). */
export interface ActionState {
  action: string;
  status: CaptureStep["status"];
  error_code: string | null;
}

function actionState(side: StepSide): CaptureState<unknown> {
  const { step } = side;
  if (step.completeness.missing_sections.includes("action")) {
    return { state: "missing", reason: "the step's action outcome was not recorded" };
  }
  return {
    state: "captured",
    value: { action: step.action, status: step.status, error: step.error },
  };
}

function eventsState(side: StepSide): CaptureState<unknown> {
  const { capture, step } = side;
  if (capture.capture_plan.events.length === 0) return { state: "not_requested" };
  if (step.completeness.missing_sections.includes("events")) {
    return { state: "missing", reason: "the step's events were not recorded" };
  }
  const { retained, dropped } = capture.events;
  if (dropped > 0 || step.completeness.truncated_sections.includes("events")) {
    return {
      state: "truncated",
      observed: retained + dropped,
      retained,
      reason: `the capture dropped ${dropped} of ${retained + dropped} events; this step's may be incomplete`,
    };
  }
  const items: ScenarioEvent[] = capture.events.items.filter((e) => e.step_index === step.step_index);
  return { state: "captured", value: items };
}

function withoutScreenshotData(state: CaptureStep["artifacts"]["screenshot"]): CaptureState<unknown> {
  if (state.state !== "captured") return state;
  const { data_base64: _data, ...rest } = state.value;
  return { state: "captured", value: rest };
}

export function sideState(side: StepSide, artifact: ComparedArtifact): CaptureState<unknown> {
  const artifacts = side.step.artifacts;
  switch (artifact) {
    case "action_state":
      return actionState(side);
    case "events":
      return eventsState(side);
    case "screenshot":
      return withoutScreenshotData(artifacts.screenshot);
    default:
      return artifacts[artifact];
  }
}

function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
}

/** The built-in projection of a captured value: only what the comparison looks at. */
function project(artifact: ComparedArtifact, value: unknown): unknown {
  switch (artifact) {
    case "action_state": {
      const error = field(value, "error");
      const code = field(error, "code");
      const projected: ActionState = {
        action: String(field(value, "action")),
        status: field(value, "status") as ActionState["status"],
        error_code: typeof code === "string" ? code : null,
      };
      return projected;
    }
    case "screenshot":
      return { sha256: field(value, "sha256"), width: field(value, "width"), height: field(value, "height") };
    case "dom":
    case "accessibility":
      return String(field(value, "text") ?? "");
    case "events":
      return Array.isArray(value)
        ? value.map((event) => eventWithoutVolatiles(event as Record<string, unknown>))
        : [];
    default:
      return value;
  }
}

/**
 * The normalized value: built-in projection, then the side's start_url as a token (url, history,
 * events), then the caller rules naming the kind, then text normalization (dom, accessibility) and the
 * events' canonical order.
 */
export function normalizedValue(
  artifact: ComparedArtifact,
  value: unknown,
  startUrl: string,
  rules: readonly NormalizationRule[],
): unknown {
  let out = project(artifact, value);
  if (artifact === "url" || artifact === "history" || artifact === "events") {
    out = relativeToStartUrl(out, startUrl);
  }
  if (artifact !== "screenshot") out = applyCallerRules(out, artifact satisfies NormalizableKind, rules);
  if (artifact === "dom" || artifact === "accessibility") out = normalizeText(String(out));
  if (artifact === "events" && Array.isArray(out)) out = sortCanonically(out);
  return out;
}

function describe(state: CaptureState<unknown>): string {
  switch (state.state) {
    case "missing":
      return `missing (${state.reason})`;
    case "truncated":
      return `truncated (${state.retained} of ${state.observed} retained: ${state.reason})`;
    default:
      return state.state;
  }
}

/** Compares one artifact of an aligned step; `rules` must be in canonical order. */
export function compareArtifact(
  artifact: ComparedArtifact,
  before: StepSide,
  after: StepSide,
  rules: readonly NormalizationRule[],
): ArtifactOutcome {
  const beforeState = sideState(before, artifact);
  const afterState = sideState(after, artifact);
  if (beforeState.state === "not_requested" && afterState.state === "not_requested") {
    return { artifact, status: "not_compared" };
  }
  const digest = (side: StepSide, state: CaptureState<unknown>) =>
    state.state === "captured"
      ? digestCanonical(normalizedValue(artifact, state.value, side.capture.scenario.start_url, rules))
      : null;
  const before_sha256 = digest(before, beforeState);
  const after_sha256 = digest(after, afterState);
  const base = {
    artifact,
    before_state: beforeState.state,
    after_state: afterState.state,
    before_sha256,
    after_sha256,
    before: beforeState,
    after: afterState,
  };
  if (before_sha256 === null || after_sha256 === null) {
    const reason = `${artifact} cannot be compared: before is ${describe(beforeState)}, after is ${
      describe(afterState)
    }; only captured on both sides can be equal.`;
    return { artifact, status: "unknown", diff: { ...base, status: "unknown", reason } };
  }
  if (before_sha256 === after_sha256) return { artifact, status: "unchanged" };
  return { artifact, status: "changed", diff: { ...base, status: "changed", reason: null } };
}
