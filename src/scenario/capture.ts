/**
 * The scenario capture document (schema_version 1): what `capture_browser_scenario` returns and what
 * `compare_web_captures` compares. Everything in it is durable: secret values are already replaced by
 * `${secret:ID}` references and credential header values are never present.
 */

/** Artifact kinds a step can capture (the request's `capture.after_each_step` / `at_end`). */
export const ARTIFACT_KINDS = ["screenshot", "dom", "accessibility", "url", "history", "storage"] as const;
export type ArtifactKind = typeof ARTIFACT_KINDS[number];

/** Event families a request can ask for (`capture.events`). */
export const EVENT_FAMILIES = [
  "console",
  "page-errors",
  "network",
  "websockets",
  "frames",
  "workers",
  "popups",
  "downloads",
] as const;
export type EventFamily = typeof EVENT_FAMILIES[number];

/** Each section is typed on its own: captured, not asked for, asked for but missing, or cut short. */
export type CaptureState<T> =
  | { state: "captured"; value: T }
  | { state: "not_requested" }
  | { state: "missing"; reason: string }
  | { state: "truncated"; observed: number; retained: number; reason: string };
export type EvidenceState = CaptureState<unknown>["state"];

export interface ScreenshotArtifact {
  /** SHA-256 (hex) of the PNG bytes: the content digest screenshots are compared by. */
  sha256: string;
  mime_type: "image/png";
  width: number;
  height: number;
  bytes: number;
  /** The evidence resource in the process that captured it (krometrail://evidence/screenshots/...). */
  uri: string;
  /**
   * The PNG itself, base64: present in capture files (resource and CLI output) so a capture compares
   * in another process; left out of the MCP response to keep it lean.
   */
  data_base64?: string;
}

export interface TextArtifact {
  /** SHA-256 (hex) of the UTF-8 text. */
  sha256: string;
  bytes: number;
  text: string;
}

export interface HistoryArtifact {
  length: number;
  current_index: number;
  entries: { url: string; transition: string }[];
}

export type StoredValue =
  | { value_state: "hashed"; value_sha256: string }
  | { value_state: "redacted-secret"; value_sha256: null };

export interface StorageArtifact {
  cookies: ({
    name: string;
    domain: string;
    path: string;
    secure: boolean;
    http_only: boolean;
    same_site: "Strict" | "Lax" | "None" | null;
  } & StoredValue)[];
  /** Entries of the current page's origin, sorted by name. */
  local_storage: ({ name: string } & StoredValue)[];
  session_storage: ({ name: string } & StoredValue)[];
  origin: string | null;
}

export interface StepArtifacts {
  screenshot: CaptureState<ScreenshotArtifact>;
  dom: CaptureState<TextArtifact>;
  accessibility: CaptureState<TextArtifact>;
  url: CaptureState<string>;
  history: CaptureState<HistoryArtifact>;
  storage: CaptureState<StorageArtifact>;
}

export const COMPLETENESS_SECTIONS = ["action", ...ARTIFACT_KINDS, "events"] as const;
export type CompletenessSection = typeof COMPLETENESS_SECTIONS[number];

export interface Completeness {
  status: "complete" | "incomplete" | "truncated";
  /** Only a complete capture may support an "unchanged" claim. */
  equality_eligible: boolean;
  missing_sections: CompletenessSection[];
  truncated_sections: CompletenessSection[];
}

export interface StepError {
  code: string;
  message: string;
  recovery?: string;
  /** The origin a refusal named (origin_not_allowed). */
  origin?: string;
}

/** Step 0 is the initial state after start_url loaded; its step_id and action are INITIAL_STEP. */
export const INITIAL_STEP = "@initial";

export interface CaptureStep {
  step_index: number;
  step_id: string;
  /** The action tag (goto, click, ...), or INITIAL_STEP for step 0. */
  action: string;
  status: "completed" | "failed" | "skipped";
  error: StepError | null;
  elapsed_ms: number;
  /** Session-clock bounds of the step (ms since the session started): its event window. */
  started_ms: number;
  ended_ms: number;
  before_url: string;
  after_url: string;
  /** Sequence numbers of this step's events: [start, end], end < start when it had none. */
  event_sequence_start: number;
  event_sequence_end: number;
  /** The interaction anchor the temporal tools accept (temporal_debug_bundle {interaction_id}). */
  interaction_id: string | null;
  artifacts: StepArtifacts;
  completeness: Completeness;
}

export type ScenarioEventKind =
  | "console"
  | "page-error"
  | "request"
  | "response"
  | "request-failed"
  | "request-refused"
  /** A request request_replay answered: decision fulfilled | redirected | aborted | unmatched-aborted. */
  | "request-replayed"
  | "websocket-opened"
  | "websocket-closed"
  | "websocket-frame-sent"
  | "websocket-frame-received"
  | "frame-attached"
  | "frame-detached"
  | "frame-navigated"
  | "worker-created"
  | "worker-closed"
  | "popup-opened"
  | "popup-closed"
  | "download-cancelled";

/**
 * One observed event. `sequence` counts from 1 over the whole capture; `step_index` attributes it.
 * `time_ms` is session time. The rest depends on the kind (level/text, method/url/status/
 * resource_type/header_names, payload_bytes/payload_text, name, suggested_filename, origin, failure).
 */
export interface ScenarioEvent {
  sequence: number;
  step_index: number;
  time_ms: number;
  kind: ScenarioEventKind;
  [field: string]: string | number | boolean | null | string[];
}

export interface ScenarioCapture {
  schema_version: 1;
  capture_kind: "browser_scenario";
  capture_id: string;
  /** The krometrail session the run was: its frames, events and DOM stay queryable by the temporal tools. */
  session_id: string;
  page_id: string;
  browser: {
    mode: "launch" | "connect";
    process_ownership: "provider-owned" | "external";
    cleanup: "terminated-owned-process" | "disconnected-external";
    product: string;
    version: string;
    /** Launch mode: the scenario-owned temporary profile, and whether it was gone after cleanup. */
    profile_dir?: string;
    profile_removed?: boolean;
  };
  scenario: {
    /** start_url with secrets as references and userinfo removed. */
    start_url: string;
    start_origin: string;
    allowed_origins: string[];
    action_count: number;
    secret_references: string[];
    /** SHA-256 of the canonical redacted request: two captures of the same request share it. */
    request_sha256: string;
  };
  environment: Record<string, unknown>;
  capture_plan: { after_each_step: ArtifactKind[]; at_end: ArtifactKind[]; events: EventFamily[] };
  started_at: string;
  duration_ms: number;
  steps: CaptureStep[];
  events: { retained: number; dropped: number; items: ScenarioEvent[] };
  completeness: Completeness;
  /** Connect mode: what happened before the scenario attached was not observed. */
  pre_attach_gap: { declared: true; reason: string } | null;
  limitations: string[];
}

/** Classifies completeness from the sections that were missing or cut short. */
export function classifyCompleteness(
  missing: Iterable<CompletenessSection>,
  truncated: Iterable<CompletenessSection>,
): Completeness {
  const missing_sections = [...new Set(missing)].sort();
  const truncated_sections = [...new Set(truncated)].sort();
  if (truncated_sections.length > 0) {
    return { status: "truncated", equality_eligible: false, missing_sections, truncated_sections };
  }
  if (missing_sections.length > 0) {
    return { status: "incomplete", equality_eligible: false, missing_sections, truncated_sections };
  }
  return { status: "complete", equality_eligible: true, missing_sections, truncated_sections };
}

/** The capture without its screenshots' inline bytes (what a model reads; the capture file keeps them). */
export function withoutScreenshotData(capture: ScenarioCapture): ScenarioCapture {
  return {
    ...capture,
    steps: capture.steps.map((s) => {
      const shot = s.artifacts.screenshot;
      if (shot.state !== "captured" || shot.value.data_base64 === undefined) return s;
      const { data_base64: _, ...value } = shot.value;
      return { ...s, artifacts: { ...s.artifacts, screenshot: { state: "captured", value } } };
    }),
  };
}
