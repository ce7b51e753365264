/**
 * Checks that a capture document read from outside (a file, a resource, inline JSON) is a
 * ScenarioCapture before it is compared. Strict on the document and step shape; events keep any
 * extra scalar fields, since their fields depend on the kind.
 */
import { z } from "zod";
import { ToolError } from "../errors.ts";
import {
  ARTIFACT_KINDS,
  COMPLETENESS_SECTIONS,
  EVENT_FAMILIES,
  type ScenarioCapture,
  type ScenarioEventKind,
} from "./capture.ts";

const EVENT_KINDS = [
  "console",
  "page-error",
  "request",
  "response",
  "request-failed",
  "request-refused",
  "request-replayed",
  "websocket-opened",
  "websocket-closed",
  "websocket-frame-sent",
  "websocket-frame-received",
  "frame-attached",
  "frame-detached",
  "frame-navigated",
  "worker-created",
  "worker-closed",
  "popup-opened",
  "popup-closed",
  "download-cancelled",
] as const satisfies readonly ScenarioEventKind[];

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "expected 64 lowercase hex digits (SHA-256)");
const count = z.number().int().nonnegative();
const time = z.number().finite();

const ABSENT = { state: "missing" as const, reason: "the section is absent from the capture document" };

function captureState<T extends z.ZodType>(value: T) {
  return z.discriminatedUnion("state", [
    z.strictObject({ state: z.literal("captured"), value }),
    z.strictObject({ state: z.literal("not_requested") }),
    z.strictObject({ state: z.literal("missing"), reason: z.string() }),
    z.strictObject({ state: z.literal("truncated"), observed: count, retained: count, reason: z.string() }),
  ]);
}

const screenshot = z.strictObject({
  sha256,
  mime_type: z.literal("image/png"),
  width: count,
  height: count,
  bytes: count,
  uri: z.string(),
  data_base64: z.string().optional(),
});

const textArtifact = z.strictObject({ sha256, bytes: count, text: z.string() });

const history = z.strictObject({
  length: count,
  current_index: z.number().int(),
  entries: z.array(z.strictObject({ url: z.string(), transition: z.string() })),
});

/** An entry with its value as a digest, or as a redacted secret (no digest). */
function storedEntry<S extends z.ZodRawShape>(shape: S) {
  return z.discriminatedUnion("value_state", [
    z.strictObject({ ...shape, value_state: z.literal("hashed"), value_sha256: sha256 }),
    z.strictObject({ ...shape, value_state: z.literal("redacted-secret"), value_sha256: z.null() }),
  ]);
}

const storage = z.strictObject({
  cookies: z.array(storedEntry({
    name: z.string(),
    domain: z.string(),
    path: z.string(),
    secure: z.boolean(),
    http_only: z.boolean(),
    same_site: z.enum(["Strict", "Lax", "None"]).nullable(),
  })),
  local_storage: z.array(storedEntry({ name: z.string() })),
  session_storage: z.array(storedEntry({ name: z.string() })),
  origin: z.string().nullable(),
});

const completeness = z.strictObject({
  status: z.enum(["complete", "incomplete", "truncated"]),
  equality_eligible: z.boolean(),
  missing_sections: z.array(z.enum(COMPLETENESS_SECTIONS)),
  truncated_sections: z.array(z.enum(COMPLETENESS_SECTIONS)),
});

const step = z.strictObject({
  step_index: count,
  step_id: z.string().min(1),
  action: z.string().min(1),
  status: z.enum(["completed", "failed", "skipped"]),
  error: z.strictObject({
    code: z.string(),
    message: z.string(),
    recovery: z.string().optional(),
    origin: z.string().optional(),
  }).nullable(),
  elapsed_ms: time,
  started_ms: time,
  ended_ms: time,
  before_url: z.string(),
  after_url: z.string(),
  event_sequence_start: z.number().int(),
  event_sequence_end: z.number().int(),
  interaction_id: z.string().nullable(),
  // A section cut out of a capture is missing, never a reason to refuse the comparison: it compares unknown.
  artifacts: z.strictObject({
    screenshot: captureState(screenshot).default(ABSENT),
    dom: captureState(textArtifact).default(ABSENT),
    accessibility: captureState(textArtifact).default(ABSENT),
    url: captureState(z.string()).default(ABSENT),
    history: captureState(history).default(ABSENT),
    storage: captureState(storage).default(ABSENT),
  }),
  completeness,
});

const event = z.object({
  sequence: z.number().int().positive(),
  step_index: count,
  time_ms: time,
  kind: z.enum(EVENT_KINDS),
}).catchall(z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.string())]));

export const scenarioCaptureSchema = z.strictObject({
  schema_version: z.literal(1),
  capture_kind: z.literal("browser_scenario"),
  capture_id: z.string().min(1),
  session_id: z.string(),
  page_id: z.string(),
  browser: z.strictObject({
    mode: z.enum(["launch", "connect"]),
    process_ownership: z.enum(["provider-owned", "external"]),
    cleanup: z.enum(["terminated-owned-process", "disconnected-external"]),
    product: z.string(),
    version: z.string(),
    profile_dir: z.string().optional(),
    profile_removed: z.boolean().optional(),
  }),
  scenario: z.strictObject({
    start_url: z.string(),
    start_origin: z.string(),
    allowed_origins: z.array(z.string()),
    action_count: count,
    secret_references: z.array(z.string()),
    request_sha256: sha256,
  }),
  environment: z.record(z.string(), z.unknown()),
  capture_plan: z.strictObject({
    after_each_step: z.array(z.enum(ARTIFACT_KINDS)),
    at_end: z.array(z.enum(ARTIFACT_KINDS)),
    events: z.array(z.enum(EVENT_FAMILIES)),
  }),
  started_at: z.string(),
  duration_ms: time,
  steps: z.array(step).min(1, "a capture has at least its initial step"),
  events: z.strictObject({ retained: count, dropped: count, items: z.array(event) }),
  completeness,
  pre_attach_gap: z.strictObject({ declared: z.literal(true), reason: z.string() }).nullable(),
  limitations: z.array(z.string()),
});

/** `steps.2.artifacts.dom` as `steps[2].artifacts.dom`. */
function issuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out === "" ? String(part) : `.${String(part)}`;
  }
  return out === "" ? "(document)" : out;
}

/** The capture, or a ToolError `invalid_capture` naming the side and the first failing path. */
export function parseCapture(value: unknown, side: "before" | "after"): ScenarioCapture {
  const parsed = scenarioCaptureSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.slice(0, 5).map((issue) => ({
    path: issuePath(issue.path),
    problem: issue.message.slice(0, 200),
  }));
  const first = issues[0] ?? { path: "(document)", problem: "unreadable" };
  throw new ToolError({
    code: "invalid_capture",
    message:
      `The ${side} capture is not a browser scenario capture (schema_version 1): ${first.path}: ${first.problem}.`,
    retry: "never",
    recovery:
      `Pass, as ${side}, the capture document capture_browser_scenario returned (its resource or saved JSON), unedited.`,
    affected: { argument: side },
    details: { side, path: first.path, issues, omitted_issues: Math.max(0, parsed.error.issues.length - 5) },
  });
}
