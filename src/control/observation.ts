import type { BrowserSession } from "../browser/session.ts";
import { phase } from "../phase_timing.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { InstanceStore } from "../store/instance.ts";
import { observeSnapshot } from "../snapshot/acquire.ts";
import { type Detail, presentSnapshot, unchangedMarker } from "../snapshot/present.ts";
import type { SemanticOutcome } from "../snapshot/probe.ts";
import { cdpMessage } from "../browser/cdp.ts";
import {
  type FrameSource,
  postActionImage,
  SETTLE_CAP_MS,
  settledAfter,
  type Shot,
  wallMs,
} from "./post_action_image.ts";
import { type ActionRequests, watchRequests } from "./action_requests.ts";

export type { FrameSource } from "./post_action_image.ts";
export { pngSize } from "./post_action_image.ts";

/** The spec's bounded compositor rendezvous: two animation frames, at most 250 ms. */
export const RENDEZVOUS_CAP_MS = 250;
const NAVIGATION_SETTLE_MS = 10_000;

export interface InteractionRecord {
  interaction_id: string;
  session_id: string;
  page_id: string;
  operation: string;
  params: Record<string, unknown>;
  started_ms: number;
  dispatched_ms?: number;
  completed_ms?: number;
  observed_ms?: number;
  outcome: "ok" | "failed" | "degraded";
  navigation?: { url: string; new_document: boolean };
  error_code?: string;
  warnings: string[];
}

export interface ActionContext {
  session: BrowserSession;
  page: PageTarget;
  record: InteractionRecord;
  startedAt: Date;
  /** Requests the action starts (the settle watch waits for their results). */
  requests: ActionRequests;
  before: { url: string; generation: number; navigationCount: number; pageIds: Set<string> };
}

export function beginAction(
  session: BrowserSession,
  page: PageTarget,
  operation: string,
  params: Record<string, unknown>,
): ActionContext {
  return {
    session,
    page,
    startedAt: new Date(),
    requests: watchRequests(session, page),
    before: {
      url: page.url,
      generation: page.generation,
      navigationCount: page.navigationCount,
      pageIds: new Set(session.pages.keys()),
    },
    record: {
      interaction_id: session.nextInteractionId(),
      session_id: session.id,
      page_id: page.id,
      operation,
      params,
      started_ms: session.now(),
      outcome: "ok",
      warnings: [],
    },
  };
}

/** One animation frame (the first also reports a background page, which runs none, at once). */
function animationFrame(page: PageTarget, first: boolean, capMs: number): Promise<Rendezvous> {
  const frame = page.send("Runtime.evaluate", {
    expression: `${first ? `document.visibilityState === "hidden" ? "hidden" : ` : ""}
      new Promise((r) => requestAnimationFrame(() => r("observed")))`,
    awaitPromise: true,
    returnByValue: true,
  }, capMs + 50).then(
    (r) => r.result.value === "hidden" || r.result.value === "observed" ? r.result.value : "unobserved",
    () => "unobserved" as const,
  );
  const cap = new Promise<"unobserved">((r) => setTimeout(() => r("unobserved"), Math.max(0, capMs)));
  return Promise.race([frame, cap]);
}

type Rendezvous = "observed" | "unobserved" | "hidden";

/**
 * Two animation frames, at most RENDEZVOUS_CAP_MS; each is requested after the previous one ran, as
 * nested requestAnimationFrame calls would be. `onFirstFrame` runs between them: a screenshot requested
 * then is drawn in the second frame, so it waits for two animation frames without costing a third.
 */
export async function rendezvous(page: PageTarget, onFirstFrame?: () => void): Promise<Rendezvous> {
  const deadline = performance.now() + RENDEZVOUS_CAP_MS;
  const first = await animationFrame(page, true, RENDEZVOUS_CAP_MS);
  if (first !== "observed") return first;
  onFirstFrame?.();
  return await animationFrame(page, false, deadline - performance.now());
}

export function decodeBase64(data: string): Uint8Array {
  return Uint8Array.fromBase64(data);
}

export interface Observation {
  structured: Record<string, unknown>;
  text: string;
  image?: { data: string; mimeType: string };
}

/** Adds an action-specific line right under the observation's first (summary) line. */
export function addLine(obs: Observation, line: string): void {
  const [head, ...rest] = obs.text.split("\n");
  obs.text = [head, line, ...rest].join("\n");
}

/** Appends a warning to structured.warnings, creating the list on first use. */
export function addWarning(obs: Observation, warning: string): void {
  const warnings = (obs.structured.warnings as string[] | undefined) ?? [];
  warnings.push(warning);
  obs.structured.warnings = warnings;
}

export interface ObserveOptions {
  store: InstanceStore;
  detail: Detail;
  inlineImage: boolean;
  /** Recorded frames, when capture runs: they tell whether the page kept changing. */
  frames?: FrameSource;
}

/**
 * Completes an action: settles navigation it started, waits for the compositor rendezvous, takes
 * the post-action screenshot (an evidence resource) and the snapshot, and finishes the record.
 * Observation failures degrade the result; they never turn a proven dispatch into an error.
 */
export async function observe(ctx: ActionContext, opts: ObserveOptions): Promise<Observation> {
  const { session, page, record } = ctx;
  record.completed_ms ??= session.now();
  const warnings = record.warnings;
  let rendezvousObserved = false;
  let screenshot: Record<string, unknown> | undefined;
  let image: Observation["image"];
  let snapshotBlock: Record<string, unknown> | undefined;
  let snapshotText = "";
  let outcomes: SemanticOutcome[] = [];
  let settled: boolean | undefined;

  // The screenshot and the snapshot start between the rendezvous's frames (the input's handlers have
  // run); a later rendezvous starts them again.
  let shotTaken: Promise<Shot> | undefined;
  let snapTaken: ReturnType<typeof observeSnapshot> | undefined;
  const takeShot = () => {
    // A document still loading is met again once it is idle.
    if (page.loading) return;
    shotTaken = phase("post_action_image", () => postActionImage(page, opts.frames !== undefined));
    shotTaken.catch(() => {});
    snapTaken = phase("observe_snapshot", () => observeSnapshot(session, page, opts.detail === "concise"));
    snapTaken.catch(() => {});
  };
  let hidden = false;
  if (!page.closed && !page.dialog) {
    let met = await phase("rendezvous", () => rendezvous(page, takeShot));
    if (met === "hidden") {
      // A background page paints nothing: bring it forward, or under preserve say so.
      hidden = await session.ensureVisible(page).then(() => false, () => true);
      if (!hidden && !page.dialog) met = await rendezvous(page, takeShot);
    }
    // A navigation the action started: settle it, then meet the compositor again on the new document.
    if (!hidden && page.loading) {
      shotTaken = snapTaken = undefined;
      const idle = await phase("wait_for_idle", () => page.waitForIdle(NAVIGATION_SETTLE_MS));
      if (!idle) warnings.push("navigation_still_loading");
      if (!page.dialog) met = await phase("rendezvous_after_load", () => rendezvous(page, takeShot));
    }
    rendezvousObserved = met === "observed";
  }
  const navigated = page.navigationCount !== ctx.before.navigationCount || page.url !== ctx.before.url;
  const newDocument = page.generation !== ctx.before.generation;
  if (navigated) record.navigation = { url: page.url, new_document: newDocument };

  if (page.closed) {
    warnings.push("page_closed_during_action");
  } else if (page.dialog) {
    warnings.push("dialog_open_blocks_observation");
  } else if (hidden) {
    warnings.push("target_hidden: the page is in the background (focus preserve); no screenshot or snapshot");
  } else {
    // The screenshot (unless the rendezvous has it coming), the settle watch, beside the snapshot.
    const shotPromise = shotTaken ??
      phase("post_action_image", () => postActionImage(page, opts.frames !== undefined));
    const snapped = snapTaken ??
      phase("observe_snapshot", () => observeSnapshot(session, page, opts.detail === "concise"));
    const capWallMs = wallMs() - session.now() + (record.dispatched_ms ?? record.started_ms) + SETTLE_CAP_MS;
    const [shotResult, snapResult, settleResult] = await Promise.allSettled([
      shotPromise,
      snapped,
      shotPromise.then((shot) =>
        phase("settle_watch", () =>
          settledAfter(shot, opts.frames, page.id, {
            observed: snapped.catch(() => {}),
            requestsQuiet: ctx.requests.quiet(),
            dispatchStartMs: ctx.requests.armedAtMs,
            capWallMs,
          }))
      ),
    ]);
    if (settleResult.status === "fulfilled") settled = settleResult.value;
    if (shotResult.status === "fulfilled") {
      const shot = shotResult.value;
      // The action already happened: a budget refusal of its picture is a warning, never the result.
      const saved = await phase("write_evidence", () =>
        opts.store.writeEvidence(
          "screenshots",
          shot.mimeType === "image/png" ? "png" : "jpg",
          shot.bytes,
        )).catch((err: unknown) => {
          warnings.push(
            `screenshot_not_stored: ${err instanceof Error ? err.message.slice(0, 200) : String(err)}`,
          );
          return undefined;
        });
      if (saved) {
        screenshot = {
          uri: saved.uri,
          mime_type: shot.mimeType,
          width: shot.width,
          height: shot.height,
          source: shot.source,
          rendezvous: rendezvousObserved ? "observed" : "unobserved",
          ...(rendezvousObserved ? {} : {
            marker: "compositor_rendezvous_unobserved",
            marker_note:
              "Image is not confirmed settled; retained temporal frames are the authority for settled visual state.",
          }),
        };
      }
      if (opts.inlineImage) image = { data: shot.data, mimeType: shot.mimeType };
    } else {
      warnings.push(`screenshot_unavailable: ${cdpMessage(shotResult.reason)}`);
    }
    if (snapResult.status === "fulfilled") {
      const { snapshot, unchanged } = snapResult.value;
      outcomes = snapResult.value.outcomes;
      if (unchanged && opts.detail !== "full") {
        snapshotBlock = unchangedMarker(snapshot);
        snapshotText = `snapshot unchanged (generation ${snapshot.snapshot_generation}, ${snapshotBlock
          .target_count as number} targets)`;
      } else {
        const presented = presentSnapshot(snapshot, opts.detail);
        snapshotBlock = { ...presented.structured, source: snapResult.value.source };
        snapshotText = presented.text;
      }
    } else {
      warnings.push(`snapshot_unavailable: ${cdpMessage(snapResult.reason)}`);
    }
  }
  ctx.requests.stop();
  record.observed_ms = session.now();
  if (warnings.some((w) => w.startsWith("screenshot_unavailable") || w.startsWith("snapshot_unavailable"))) {
    record.outcome = "degraded";
  }

  const newPages = [...session.pages.values()].filter((p) => !ctx.before.pageIds.has(p.id)).map((p) => ({
    page_id: p.id,
    url: p.url,
    ...(p.openerPageId ? { opener_page_id: p.openerPageId } : {}),
  }));
  const structured: Record<string, unknown> = {
    status: record.outcome,
    interaction_id: record.interaction_id,
    operation: record.operation,
    page: { page_id: page.id, url: page.url, title: page.title },
    started_at: ctx.startedAt.toISOString(),
    completed_at: new Date().toISOString(),
    timing_ms: {
      start: record.started_ms,
      ...(record.dispatched_ms !== undefined ? { dispatch: record.dispatched_ms } : {}),
      complete: record.completed_ms,
      observed: record.observed_ms,
    },
    navigation: navigated
      ? { navigated: true, url: page.url, new_document: newDocument }
      : { navigated: false },
    dialog: page.dialog
      ? { open: true, type: page.dialog.type, message: page.dialog.message }
      : { open: false },
    ...(newPages.length > 0 ? { new_pages: newPages } : {}),
    ...(screenshot ? { screenshot } : {}),
    ...(settled !== undefined ? { settled } : {}),
    ...(outcomes.length > 0 ? { semantic_outcomes: outcomes } : {}),
    ...(snapshotBlock ? { snapshot: snapshotBlock } : {}),
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  if (opts.detail !== "concise") structured.interaction = { ...record };

  const lines = [
    `${record.operation} ${record.outcome} (${record.interaction_id}) in ${
      Math.round((record.observed_ms ?? 0) - record.started_ms)
    } ms on ${page.id} ${page.url}`,
  ];
  if (navigated) {
    lines.push(`navigated${newDocument ? " to a new document" : " within the document"}: ${page.url}`);
  }
  if (page.dialog) lines.push(`dialog open: ${page.dialog.type} ${JSON.stringify(page.dialog.message)}`);
  for (const p of newPages) lines.push(`new page ${p.page_id}: ${p.url}`);
  if (screenshot) {
    lines.push(
      `screenshot ${screenshot.uri as string}${
        rendezvousObserved ? "" : " [compositor_rendezvous_unobserved]"
      }`,
    );
  }
  if (settled === false) {
    lines.push(
      `The page was still changing after this observation; see temporal_debug_bundle {interaction_id: "${record.interaction_id}"}.`,
    );
  }
  if (warnings.length > 0) lines.push(`warnings: ${warnings.join("; ")}`);
  for (const o of outcomes) lines.push(`${o.role}: ${JSON.stringify(o.text)}`);
  if (snapshotText) lines.push(snapshotText);
  return { structured, text: lines.join("\n"), image };
}
