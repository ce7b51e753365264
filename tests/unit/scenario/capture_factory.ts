/** Builds scenario captures for the comparison tests: @initial, open (goto), press (click), all captured. */
import { assert } from "../../assert.ts";
import {
  type CaptureStep,
  classifyCompleteness,
  type ScenarioCapture,
  type ScenarioEvent,
  type StepArtifacts,
  type TextArtifact,
} from "../../../src/scenario/capture.ts";
import { sha256Hex } from "../../../src/scenario/normalize.ts";

export const ORIGIN = "http://127.0.0.1:4100";

export function text(t: string): TextArtifact {
  return { sha256: sha256Hex(t), bytes: new TextEncoder().encode(t).length, text: t };
}

function artifacts(id: string, url: string): StepArtifacts {
  return {
    screenshot: {
      state: "captured",
      value: {
        sha256: sha256Hex(`png ${id}`),
        mime_type: "image/png",
        width: 800,
        height: 600,
        bytes: 1234,
        uri: `krometrail://evidence/screenshots/${id}-${Math.random()}.png`,
        data_base64: "iVBORw0KGgo=",
      },
    },
    dom: { state: "captured", value: text(`<html>\n  <body>\n    <p>${id}</p>`) },
    accessibility: { state: "captured", value: text(`RootWebArea "App"\n  paragraph "${id}"`) },
    url: { state: "captured", value: url },
    history: {
      state: "captured",
      value: { length: 1, current_index: 0, entries: [{ url, transition: "typed" }] },
    },
    storage: {
      state: "captured",
      value: {
        cookies: [{
          name: "sid",
          domain: "127.0.0.1",
          path: "/",
          secure: false,
          http_only: true,
          same_site: "Lax",
          value_state: "hashed",
          value_sha256: sha256Hex("c"),
        }],
        local_storage: [{ name: "theme", value_state: "redacted-secret", value_sha256: null }],
        session_storage: [],
        origin: ORIGIN,
      },
    },
  };
}

let run = 0;

export function step(index: number, id: string, action: string, url: string): CaptureStep {
  const t0 = index * 100 + run * 7;
  return {
    step_index: index,
    step_id: id,
    action,
    status: "completed",
    error: null,
    elapsed_ms: 40 + run,
    started_ms: t0,
    ended_ms: t0 + 40 + run,
    before_url: url,
    after_url: url,
    event_sequence_start: index + 1,
    event_sequence_end: index + 1,
    interaction_id: index === 0 ? null : `int-${run}-${index}`,
    artifacts: artifacts(id, url),
    completeness: classifyCompleteness([], []),
  };
}

export function event(
  sequence: number,
  step_index: number,
  fields: Record<string, string | number>,
): ScenarioEvent {
  return { sequence, step_index, time_ms: sequence * 11 + run, kind: "console", ...fields };
}

/** A fresh capture: every call is another "run" (new ids, times, URIs), same observations. */
export function capture(startUrl = `${ORIGIN}/app`): ScenarioCapture {
  run++;
  const steps = [
    step(0, "@initial", "@initial", startUrl),
    step(1, "open", "goto", `${ORIGIN}/page`),
    step(2, "press", "click", `${ORIGIN}/page`),
  ];
  const items = [
    event(1, 0, { level: "log", text: `loaded ${startUrl}`, request_id: `r${run}` }),
    event(2, 1, { level: "log", text: "opened" }),
    event(3, 2, { level: "info", text: "pressed" }),
  ];
  return {
    schema_version: 1,
    capture_kind: "browser_scenario",
    capture_id: `cap-${run}`,
    session_id: `ses-${run}`,
    page_id: `p${run}`,
    browser: {
      mode: "launch",
      process_ownership: "provider-owned",
      cleanup: "terminated-owned-process",
      product: "Chrome",
      version: "140.0.7339.0",
    },
    scenario: {
      start_url: startUrl,
      start_origin: ORIGIN,
      allowed_origins: [ORIGIN, "http://127.0.0.1:4200"],
      action_count: 2,
      secret_references: [],
      request_sha256: sha256Hex(startUrl),
    },
    environment: { viewport: { width: 800, height: 600 }, color_scheme: "light" },
    capture_plan: {
      after_each_step: ["screenshot", "dom", "accessibility", "url", "history", "storage"],
      at_end: [],
      events: ["console"],
    },
    started_at: new Date(1_700_000_000_000 + run).toISOString(),
    duration_ms: 300 + run,
    steps,
    events: { retained: items.length, dropped: 0, items },
    completeness: classifyCompleteness([], []),
    pre_attach_gap: null,
    limitations: [],
  };
}

export function findStep(c: ScenarioCapture, id: string): CaptureStep {
  const found = c.steps.find((s) => s.step_id === id);
  assert(found !== undefined, `step ${id} is in the capture`);
  return found;
}
