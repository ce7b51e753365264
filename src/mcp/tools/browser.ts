import { z } from "zod";
import { browserWebSocketUrl } from "../../browser/endpoint_discovery.ts";
import { parseLoopbackEndpoint } from "../../browser/lifecycle.ts";
import type { BrowserSession } from "../../browser/session.ts";
import { listManagedProfiles } from "../../store/profiles.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import type { AppContext } from "../context.ts";
import { output } from "../response.ts";
import type { CaptureStatus } from "../../capture/recorder.ts";
import type { RetentionStatus } from "../../capture/ingest_budget.ts";
import { detail, everyNthFrame } from "../schemas.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { navigableUrl } from "../../control/navigation.ts";
import { prepareDomRecording, recordPageDom } from "../../pagestate/recorder.ts";
import { emulationState, emulationSummary } from "../../devtools/emulation.ts";

type Detail = "concise" | "expanded" | "full";

export function sessionStatus(
  s: BrowserSession,
  level: Detail,
  capture?: CaptureStatus,
): Record<string, unknown> {
  const pages = [...s.pages.values()];
  const dialogPages = pages.filter((p) => p.dialog).map((p) => ({ page_id: p.id, dialog: p.dialog?.type }));
  // Pages under emulate: what a measurement or storyboard made there ran under.
  const emulated = pages.flatMap((p) => {
    const state = emulationState(p);
    return state ? [{ page_id: p.id, summary: emulationSummary(p), state }] : [];
  });
  const crashed = pages.flatMap((p) =>
    p.crash ? [{ page_id: p.id, crashed_at_ms: p.crash.at_ms, status: p.crash.status }] : []
  );
  const c = s.connection;
  const base: Record<string, unknown> = {
    running: !s.ended,
    // "reconnecting": an attached session's connection dropped and is being retried (tools wait for it).
    state: s.ended ? "ended" : c.state === "reconnecting" ? "reconnecting" : "running",
    ...(c.state === "reconnecting" && !s.ended
      ? {
        reconnecting: {
          since: c.since.toISOString(),
          since_ms: c.since_ms,
          attempts: c.attempts,
          window_ms: c.window_ms,
          ...(c.last_error ? { last_error: c.last_error } : {}),
        },
      }
      : {}),
    ...(crashed.length > 0 ? { crashed_pages: crashed } : {}),
    session_id: s.id,
    mode: s.mode,
    profile: s.profile,
    browser: s.browserVersion,
    protocol_version: s.protocolVersion,
    started_at: s.startedAt.toISOString(),
    ...(s.endedAt ? { ended_at: s.endedAt.toISOString(), end_reason: s.endReason } : {}),
    selected_page_id: s.selectedPageId,
    page_count: pages.length,
    pages_with_open_dialog: dialogPages,
    emulation: emulated,
    record_dom: s.config.record_dom,
    capture: capture
      ? (level === "concise" ? conciseCapture(capture) : capture)
      : { configured: { every_nth_frame: s.config.every_nth_frame, focus: s.config.focus } },
  };
  if (level === "concise") return base;
  return {
    ...base,
    headless: s.config.headless,
    session_time_ms: s.now(),
    pages: pages.map((p) => p.describe(p.id === s.selectedPageId)),
  };
}

function conciseCapture(c: CaptureStatus): Record<string, unknown> {
  return {
    configured: c.configured,
    observed: c.observed,
    frames_received: c.frames_received,
    frames_stored: c.frames_stored,
    frames_dropped: c.frames_dropped,
    gaps: c.gaps,
    ...(c.budget ? { budget: c.budget } : {}),
    ...(c.retention ? { retention: conciseRetention(c.retention) } : {}),
    bytes_stored: c.bytes_stored,
    ...(c.persistence_failure ? { persistence_failure: c.persistence_failure } : {}),
  };
}

/** The budget figures an agent acts on; the reclaim tallies and age limit stay in expanded. */
function conciseRetention(r: NonNullable<CaptureStatus["retention"]>): Record<string, unknown> {
  return {
    share_bytes: r.share_bytes,
    instances: r.instances,
    instances_source: r.instances_source,
    used_bytes: r.used_bytes,
    ...(r.pinned_bytes > 0 ? { pinned_bytes: r.pinned_bytes, pins: r.pins } : {}),
    ...(r.oldest_retained_at ? { oldest_retained_at: r.oldest_retained_at } : {}),
    ...(r.grace_overridden_through ? { grace_overridden_through: r.grace_overridden_through } : {}),
    ...(r.recording_blocked ? { recording_blocked: true, blocked_reason: r.blocked_reason } : {}),
  };
}

/** Status with stored counts made current: the worker reports what it holds on a flush. */
async function statusOf(app: AppContext, s: BrowserSession, level: Detail): Promise<Record<string, unknown>> {
  const capture = app.recorder.captures.get(s.id);
  if (capture) await app.recorder.flush();
  return sessionStatus(s, level, capture?.status());
}

function statusText(st: Record<string, unknown>): string {
  if (!st.running) {
    return `No browser running${st.end_reason ? ` (last session ended: ${st.end_reason})` : ""}.`;
  }
  const dialogs = st.pages_with_open_dialog as Array<{ page_id: string; dialog: string }>;
  const reconnecting = st.reconnecting as { since: string; attempts: number; window_ms: number } | undefined;
  const crashed = (st.crashed_pages ?? []) as Array<{ page_id: string; status: string }>;
  const emulated = (st.emulation ?? []) as Array<{ page_id: string; summary: string }>;
  return [
    `Browser ${st.mode} ${st.browser} (session ${st.session_id})`,
    ...(reconnecting
      ? [
        `reconnecting since ${reconnecting.since} (${reconnecting.attempts} tries, window ${reconnecting.window_ms} ms); tools fail with browser_reconnecting until it resumes`,
      ]
      : []),
    `pages: ${st.page_count}, selected ${st.selected_page_id}`,
    ...crashed.map((p) => `page ${p.page_id} crashed (${p.status}): reload_page or close_page it`),
    ...(st.record_dom === false ? ["DOM recording: off for this session (record_dom: false)"] : []),
    ...(dialogs.length > 0
      ? [`open dialogs: ${dialogs.map((d) => `${d.page_id} ${d.dialog}`).join(", ")}`]
      : []),
    ...emulated.map((e) => `emulation on ${e.page_id}: ${e.summary}`),
  ].join("\n");
}

/**
 * A line for the text an agent reads when N was not counted: the share is then a conservative
 * guess (spec: reading N when the directory turns hostile), which structured content alone hides.
 */
function budgetNote(r: RetentionStatus | undefined): string[] {
  if (!r) return [];
  const share = r.share_bytes === null ? "" : `, share ${r.share_bytes} of ${r.budget_bytes} bytes`;
  const lines = r.instances_source === "counted"
    ? []
    : r.instances_source === "assumed"
    ? [`disk budget: instances/ could not be read, so ${r.instances} live instances are assumed${share}`]
    : [`disk budget: instances/ could not be read; using the last count, ${r.instances} instances${share}`];
  if (r.recording_blocked) {
    lines.push(
      r.blocked_reason === "pinned"
        ? `recording paused: pins hold ${r.pinned_bytes} of ${r.share_bytes} bytes and are never deleted for room; unpin_resolved_range what you no longer need (query_pin_state lists pins)`
        : `recording paused: the disk budget share (${r.share_bytes} bytes) is full with nothing left to reclaim (${
          r.blocked_reason ?? "unreclaimable"
        })`,
    );
  }
  return lines;
}

function capabilitiesOf(app: AppContext): Record<string, unknown> {
  return {
    server_version: app.version,
    temporal_video: app.temporal.video.available
      ? { available: true, encoder: app.temporal.video.encoder }
      : { available: false, reason: app.temporal.video.reason },
    ...(app.store.recovered.length > 0 ? { recovered_instances: app.store.recovered } : {}),
  };
}

export const browserTools = [
  defineTool({
    name: "start_browser",
    capability: "control",
    output: OUTPUT_SCHEMAS.start_browser,
    description:
      "Launch Chrome with a managed profile (default: reusable 'default'), a named profile, or a temporary one.",
    input: z.strictObject({
      profile: z.string().max(64).optional(),
      temporary: z.boolean().optional(),
      headless: z.boolean().optional(),
      executable: z.string().max(4_096).optional(),
      url: z.string().max(8_192).optional(),
      every_nth_frame: everyNthFrame.optional(),
      focus: z.enum(["foreground", "preserve"]).optional(),
      record_dom: z.boolean().optional().describe(
        "For the page-state tools; default true, fixed for the session",
      ),
      detail: detail.optional(),
    }),
    handler: async (args, app) => {
      // A temporary profile is a fresh directory; launching it would quietly drop the named profile.
      if (args.temporary === true && args.profile !== undefined) {
        throw conflictingArguments(
          "profile",
          "temporary",
          `profile ${
            JSON.stringify(args.profile)
          } names a managed profile, temporary: true asks for a fresh throwaway one.`,
          "Drop temporary to use the managed profile, or drop profile for a temporary one.",
        );
      }
      const s = await app.browsers.start({
        profile: args.profile,
        temporary: args.temporary,
        headless: args.headless,
        executable: args.executable,
        // Checked before Chrome launches: the same schemes and file:// switch as navigate_page.
        url: args.url === undefined ? undefined : navigableUrl(args.url, app.config),
        every_nth_frame: args.every_nth_frame ?? 1,
        focus: args.focus ?? "foreground",
        record_dom: args.record_dom ?? true,
        prepare: prepareDomRecording,
      });
      app.recorder.attach(s);
      // DOM batches go to the ingest worker like frames (nothing is sent when record_dom is off).
      recordPageDom(s, (m) => app.recorder.send(m));
      const st = await statusOf(app, s, args.detail ?? "concise");
      return output(`Started. ${statusText(st)}`, st);
    },
  }),
  defineTool({
    name: "attach_browser",
    capability: "control",
    output: OUTPUT_SCHEMAS.attach_browser,
    description:
      "Attach to a running Chrome or Electron CDP endpoint on loopback (e.g. http://127.0.0.1:9222); a dropped connection is retried.",
    input: z.strictObject({
      endpoint: z.string().max(2_048),
      every_nth_frame: everyNthFrame.optional(),
      record_dom: z.boolean().optional().describe(
        "For the page-state tools; default true, fixed for the session",
      ),
      detail: detail.optional(),
    }),
    handler: async (args, app) => {
      const url = parseLoopbackEndpoint(args.endpoint);
      // Discovery runs here, redirect by redirect, so the attach only ever opens a checked ws:// URL; with a
      // session already running the attach is refused before any request.
      const live = app.browsers.current;
      const endpoint = live && !live.ended ? args.endpoint : await browserWebSocketUrl(url);
      const s = await app.browsers.attach({
        endpoint,
        reconnectEndpoint: args.endpoint,
        every_nth_frame: args.every_nth_frame ?? 1,
        record_dom: args.record_dom ?? true,
        prepare: prepareDomRecording,
      });
      // An attached browser is recorded exactly like a launched one (spec: a session begins on connect).
      app.recorder.attach(s);
      // DOM batches go to the ingest worker like frames (nothing is sent when record_dom is off).
      recordPageDom(s, (m) => app.recorder.send(m));
      const st = await statusOf(app, s, args.detail ?? "concise");
      return output(`Attached. ${statusText(st)}`, st);
    },
  }),
  defineTool({
    name: "browser_status",
    capability: "control",
    output: OUTPUT_SCHEMAS.browser_status,
    description: "Browser, profile, pages, open dialogs and capture configuration.",
    input: z.strictObject({ detail: detail.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const s = app.browsers.current;
      const st = s ? await statusOf(app, s, args.detail ?? "concise") : { running: false };
      // Without a recording session the budget still matters (peers, age-out): the flush runs the
      // worker's enforcement pass and reports it here instead of under capture.
      const idle = !s || !app.recorder.captures.has(s.id);
      if (idle) await app.recorder.flush();
      const retention = idle && app.recorder.retention ? { retention: app.recorder.retention } : {};
      const text = [statusText(st), ...budgetNote(app.recorder.retention)].join("\n");
      return output(text, { ...st, server: { ...capabilitiesOf(app), ...retention } });
    },
  }),
  defineTool({
    name: "stop_browser",
    capability: "control",
    output: OUTPUT_SCHEMAS.stop_browser,
    description: "Close a launched browser, or detach from an attached one without closing it.",
    input: z.strictObject({}),
    annotations: { idempotentHint: true },
    handler: async (_args, app) => {
      // Stop capture first: every accepted frame and row is flushed before the browser goes.
      const current = app.browsers.current;
      const capture = current ? app.recorder.captures.get(current.id) : undefined;
      const flushed = capture ? await capture.stop() : undefined;
      const captureStatus = capture?.status();
      const r = { ...(await app.browsers.stop()), ...(flushed ? { flushed, capture: captureStatus } : {}) };
      const text = !r.stopped
        ? "No browser session was active; nothing to stop."
        : r.mode === "attached"
        ? "Detached; the browser keeps running."
        : "Browser closed.";
      const flushedText = flushed
        ? ` Flushed ${flushed.frames} frames (${flushed.bytes} bytes) to the index before stopping.` +
          (captureStatus?.persistence_failure
            ? ` Persistence failed (${captureStatus.persistence_failure.operation}, ${captureStatus.persistence_failure.recoverability}): ${captureStatus.persistence_failure.recovery}`
            : "")
        : "";
      return output(text + flushedText, r);
    },
  }),
  defineTool({
    name: "list_managed_profiles",
    capability: "control",
    output: OUTPUT_SCHEMAS.list_managed_profiles,
    description: "Managed browser profiles under the data directory and whether each is in use.",
    input: z.strictObject({}),
    annotations: { readOnlyHint: true },
    handler: (_args, app) => {
      const profiles = listManagedProfiles(app.config.dataDir);
      const text = profiles.length === 0
        ? "No managed profiles yet; start_browser creates 'default'."
        : profiles.map((p) => `${p.name}${p.in_use ? " (in use)" : ""}`).join("\n");
      return Promise.resolve(output(text, { profiles }));
    },
  }),
];
