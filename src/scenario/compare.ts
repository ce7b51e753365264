/**
 * compareCaptures: two scenario captures, aligned by exact unique step_id, compared artifact by
 * artifact under a committed normalization. "unchanged" is claimed only when every section was
 * captured on both sides, alignment is clean and both captures are equality-eligible; observed
 * differences prove "changed" even when alignment failed.
 */
import { type CaptureStep, INITIAL_STEP, type ScenarioCapture } from "./capture.ts";
import {
  type ArtifactDiff,
  type ArtifactOutcome,
  compareArtifact,
  COMPARED_ARTIFACTS,
  type StepSide,
} from "./compare_artifacts.ts";
import {
  canonicalJson,
  commitNormalization,
  compareCodePoints,
  type NormalizationCommitment,
  type NormalizationRule,
  parseNormalizationRules,
} from "./normalize.ts";

export { type ArtifactDiff, COMPARED_ARTIFACTS, type ComparedArtifact } from "./compare_artifacts.ts";

export type ComparisonStatus = "changed" | "unchanged" | "unknown";

export type AlignmentFailureCode =
  | "duplicate_before_step_id"
  | "duplicate_after_step_id"
  | "missing_before_step"
  | "missing_after_step"
  | "action_mismatch"
  | "capture_context_mismatch";

export interface AlignmentFailure {
  code: AlignmentFailureCode;
  step_id: string | null;
  reason: string;
}

export interface Alignment {
  status: "aligned" | "partial" | "failed";
  aligned_steps: number;
  /** Step ids only the before capture has (unique there), in its order. */
  before_only: string[];
  after_only: string[];
  failures: AlignmentFailure[];
}

export interface SideContext {
  capture_id: string;
  session_id: string;
  start_url: string;
  browser: { product: string; version: string };
}

export interface StepComparison {
  step_id: string;
  before_step_index: number;
  after_step_index: number;
  before_action: string;
  after_action: string;
  status: ComparisonStatus;
  /** Interaction anchors of both runs (temporal_debug_bundle {interaction_id}). */
  before_interaction_id: string | null;
  after_interaction_id: string | null;
  /** Only changed and unknown artifacts; an artifact not requested on either side is not compared. */
  artifact_diffs: ArtifactDiff[];
}

export interface ComparisonResult {
  schema_version: 1;
  comparison_kind: "browser_scenario";
  overall_status: ComparisonStatus;
  normalization: NormalizationCommitment;
  context: { before: SideContext; after: SideContext; start_url_differs: boolean };
  alignment: Alignment;
  steps: StepComparison[];
  artifact_diffs: { total: number; changed: number; unknown: number };
  limitations: string[];
}

export function compareCaptures(
  before: ScenarioCapture,
  after: ScenarioCapture,
  rules: readonly NormalizationRule[] = [],
): ComparisonResult {
  const normalization = commitNormalization(parseNormalizationRules(rules));
  const beforeSteps = uniqueSteps(before.steps);
  const afterSteps = uniqueSteps(after.steps);
  const duplicated = new Set([...beforeSteps.duplicates, ...afterSteps.duplicates]);
  const failures: AlignmentFailure[] = [
    ...[...beforeSteps.duplicates].sort(compareCodePoints).map((id) => duplicateFailure("before", id)),
    ...[...afterSteps.duplicates].sort(compareCodePoints).map((id) => duplicateFailure("after", id)),
  ];
  const before_only = orderedIds(before.steps).filter((id) =>
    !duplicated.has(id) && !afterSteps.byId.has(id)
  );
  const after_only = orderedIds(after.steps).filter((id) => !duplicated.has(id) && !beforeSteps.byId.has(id));
  for (const id of after_only) {
    failures.push({
      code: "missing_before_step",
      step_id: id,
      reason: `Step ${id} is in the after capture but not in the before capture.`,
    });
  }
  for (const id of before_only) {
    failures.push({
      code: "missing_after_step",
      step_id: id,
      reason: `Step ${id} is in the before capture but not in the after capture.`,
    });
  }

  const steps: StepComparison[] = [];
  for (const id of orderedIds(before.steps)) {
    const b = beforeSteps.byId.get(id);
    const a = afterSteps.byId.get(id);
    if (b === undefined || a === undefined) continue;
    if (b.action !== a.action) {
      failures.push({
        code: "action_mismatch",
        step_id: id,
        reason: `Step ${id} is a ${b.action} before and a ${a.action} after; the scenarios differ there.`,
      });
    }
    steps.push(compareStep({ capture: before, step: b }, { capture: after, step: a }, normalization.rules));
  }

  const contextDifferences = contextMismatches(before, after);
  if (contextDifferences.length > 0) {
    failures.push({
      code: "capture_context_mismatch",
      step_id: null,
      reason: `The captures were taken in different contexts (${
        contextDifferences.join("; ")
      }); their artifacts are not comparable as equal.`,
    });
  }

  const alignment: Alignment = {
    status: failures.length === 0 ? "aligned" : steps.length === 0 ? "failed" : "partial",
    aligned_steps: steps.length,
    before_only,
    after_only,
    failures,
  };
  const diffs = steps.flatMap((step) => step.artifact_diffs);
  return {
    schema_version: 1,
    comparison_kind: "browser_scenario",
    overall_status: overallStatus(steps, alignment, before, after),
    normalization,
    context: {
      before: sideContext(before),
      after: sideContext(after),
      start_url_differs: before.scenario.start_url !== after.scenario.start_url,
    },
    alignment,
    steps,
    artifact_diffs: {
      total: diffs.length,
      changed: diffs.filter((d) => d.status === "changed").length,
      unknown: diffs.filter((d) => d.status === "unknown").length,
    },
    limitations: limitations(before, after, alignment),
  };
}

function compareStep(before: StepSide, after: StepSide, rules: readonly NormalizationRule[]): StepComparison {
  const outcomes: ArtifactOutcome[] = COMPARED_ARTIFACTS.map((artifact) =>
    compareArtifact(artifact, before, after, rules)
  );
  const artifact_diffs = outcomes.flatMap((o) => "diff" in o ? [o.diff] : []);
  const status: ComparisonStatus = outcomes.some((o) => o.status === "changed")
    ? "changed"
    : outcomes.some((o) => o.status === "unknown")
    ? "unknown"
    : "unchanged";
  return {
    step_id: before.step.step_id,
    before_step_index: before.step.step_index,
    after_step_index: after.step.step_index,
    before_action: before.step.action,
    after_action: after.step.action,
    status,
    before_interaction_id: before.step.interaction_id,
    after_interaction_id: after.step.interaction_id,
    artifact_diffs,
  };
}

function overallStatus(
  steps: readonly StepComparison[],
  alignment: Alignment,
  before: ScenarioCapture,
  after: ScenarioCapture,
): ComparisonStatus {
  if (steps.some((s) => s.status === "changed")) return "changed";
  if (steps.some((s) => s.status === "unknown")) return "unknown";
  if (alignment.status !== "aligned") return "unknown";
  if (!before.completeness.equality_eligible || !after.completeness.equality_eligible) return "unknown";
  return "unchanged";
}

/** Steps by id, leaving out every id that occurs more than once: such a step has no exact counterpart. */
function uniqueSteps(
  steps: readonly CaptureStep[],
): { byId: Map<string, CaptureStep>; duplicates: Set<string> } {
  const byId = new Map<string, CaptureStep>();
  const duplicates = new Set<string>();
  for (const step of steps) {
    if (byId.has(step.step_id)) duplicates.add(step.step_id);
    else byId.set(step.step_id, step);
  }
  for (const id of duplicates) byId.delete(id);
  return { byId, duplicates };
}

function orderedIds(steps: readonly CaptureStep[]): string[] {
  return [...new Set(steps.map((s) => s.step_id))];
}

function duplicateFailure(side: "before" | "after", id: string): AlignmentFailure {
  return {
    code: side === "before" ? "duplicate_before_step_id" : "duplicate_after_step_id",
    step_id: id,
    reason: `The ${side} capture has more than one step with step_id ${id}${
      id === INITIAL_STEP ? " (the initial step's id)" : ""
    }; none of them is aligned.`,
  };
}

/** Browser product/version, start origin, the allowed origin set and the environment must agree. */
function contextMismatches(before: ScenarioCapture, after: ScenarioCapture): string[] {
  const out: string[] = [];
  const differs = (label: string, b: unknown, a: unknown) => {
    const bj = canonicalJson(b);
    const aj = canonicalJson(a);
    if (bj !== aj) out.push(`${label}: ${bj} before, ${aj} after`);
  };
  differs("browser product", before.browser.product, after.browser.product);
  differs("browser version", before.browser.version, after.browser.version);
  differs("start origin", before.scenario.start_origin, after.scenario.start_origin);
  differs(
    "allowed origins",
    [...new Set(before.scenario.allowed_origins)].sort(compareCodePoints),
    [...new Set(after.scenario.allowed_origins)].sort(compareCodePoints),
  );
  differs("environment", before.environment, after.environment);
  return out;
}

function sideContext(capture: ScenarioCapture): SideContext {
  return {
    capture_id: capture.capture_id,
    session_id: capture.session_id,
    start_url: capture.scenario.start_url,
    browser: { product: capture.browser.product, version: capture.browser.version },
  };
}

function limitations(before: ScenarioCapture, after: ScenarioCapture, alignment: Alignment): string[] {
  const out = [
    "Steps align only by exact, unique step_id; a duplicate, missing or action-mismatched step, or a " +
    "different browser, origin set or environment, is an alignment failure and prevents an unchanged claim.",
    "Not compared: step elapsed and session times, event sequence, step index and session time, and " +
    "per-run identifiers (interaction ids; event id, guid and *_id fields other than step_id, route_id, " +
    "secret_id, rule_id).",
    "Screenshots are compared by PNG content digest and size, not by pixels; DOM and accessibility by text " +
    "with line endings, trailing spaces and blank-line runs normalized. A step's events are compared as " +
    "a collection: their order within the step is not compared.",
    "Each capture's own start_url, where it stands as a whole URL in url, history and event strings, is " +
    "replaced by <start_url> before caller rules apply (in rule_id order, exact literals, on " +
    "already-redacted fields).",
    "changed means an observed normalized difference; missing, truncated or not-requested coverage on " +
    "either side is unknown, never unchanged.",
  ];
  if (before.scenario.start_url !== after.scenario.start_url) {
    out.push(
      `The start URLs differ (${before.scenario.start_url} before, ${after.scenario.start_url} after); ` +
        "navigation is compared relative to each.",
    );
  }
  for (const [side, capture] of [["before", before], ["after", after]] as const) {
    const c = capture.completeness;
    if (!c.equality_eligible) {
      const sections = [
        ...c.missing_sections.map((s) => `${s} missing`),
        ...c.truncated_sections.map((s) => `${s} truncated`),
      ];
      out.push(
        `The ${side} capture is ${c.status} (${
          sections.join(", ") || "no sections named"
        }): it cannot support an ` +
          "unchanged claim.",
      );
    }
    if (capture.pre_attach_gap !== null) {
      out.push(`The ${side} capture attached to a running browser: ${capture.pre_attach_gap.reason}`);
    }
  }
  if (alignment.status !== "aligned") {
    out.push(
      `Alignment is ${alignment.status} (${alignment.failures.length} failure(s)): unchanged cannot be claimed.`,
    );
  }
  return out;
}
