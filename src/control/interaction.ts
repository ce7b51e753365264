import type { BrowserSession } from "../browser/session.ts";
import { phase } from "../phase_timing.ts";
import type { PageTarget } from "../browser/targets.ts";
import { asToolError, ToolError } from "../errors.ts";
import type { Detail } from "../snapshot/present.ts";
import type { InstanceStore } from "../store/instance.ts";
import {
  type ActionContext,
  beginAction,
  type FrameSource,
  type Observation,
  observe,
} from "./observation.ts";
import { releaseTargeting } from "./targeting.ts";
import { lastSnapshot } from "../snapshot/acquire.ts";
import { postconditions, subjectIn } from "./postconditions.ts";
import { interactionRow, type InteractionSink } from "./timeline.ts";
import type { InteractionRecord } from "./observation.ts";
import { storedUrl } from "../browser/url_redaction.ts";

export interface ActionEnv {
  session: BrowserSession;
  store: InstanceStore;
  detail: Detail;
  inlineImage: boolean;
  /** Persists each finished interaction record so it anchors the timeline. */
  persist?: InteractionSink;
  /** Recorded frames, used as the post-action image while capture runs. */
  frames?: FrameSource;
}

export function dialogOpen(page: PageTarget): ToolError {
  return new ToolError({
    code: "dialog_open",
    message: `A ${page.dialog?.type ?? "JavaScript"} dialog is open on ${page.id} and blocks the page.`,
    retry: "after_recovery",
    recovery: "Handle the dialog first (handle_dialog accept or dismiss), then retry.",
    affected: { page_id: page.id },
  });
}

export function usablePage(page: PageTarget): PageTarget {
  if (page.dialog) throw dialogOpen(page);
  return page;
}

/**
 * Runs dispatch inside an interaction: record timing, observe, persist the record. `subject` is the
 * element acted on, whose state the postconditions compare before and after.
 */
export async function interact(
  env: ActionEnv,
  page: PageTarget,
  operation: string,
  params: Record<string, unknown>,
  dispatch: () => Promise<void>,
  startedMs?: number,
  subject?: { backendNodeId: number },
): Promise<Observation> {
  const ctx = beginAction(env.session, page, operation, params);
  if (startedMs !== undefined) ctx.record.started_ms = startedMs;
  env.session.activeInteractionId = ctx.record.interaction_id;
  const subjectBefore = subject
    ? subjectIn(lastSnapshot(page), subject.backendNodeId, page.generation)
    : undefined;
  const downloadCursor = env.session.downloads.cursor;
  try {
    const observation = await dispatchAndObserve(env, page, ctx, dispatch);
    const nav = observation.structured.navigation as
      | { navigated?: boolean; new_document?: boolean }
      | undefined;
    const pc = postconditions({
      operation,
      url_before: ctx.before.url,
      url_after: page.url,
      navigated: nav?.navigated === true,
      new_document: nav?.new_document === true,
      new_pages: Array.isArray(observation.structured.new_pages)
        ? observation.structured.new_pages.length
        : 0,
      ...(subjectBefore ? { subject_before: subjectBefore } : {}),
      // A dialog blocks the renderer: the snapshot from before the dialog cannot vouch for after.
      ...(page.dialog ? {} : { after_snapshot: lastSnapshot(page) }),
      generation_after: page.generation,
      downloads: {
        cursor_before: downloadCursor,
        started: env.session.downloads.startedAfter(downloadCursor),
      },
    });
    observation.structured.postconditions = pc;
    const facts = [
      ...(pc.subject?.changed.length
        ? [
          `${
            pc.subject.changed.map((k) => `${k} ${pc.subject?.before[k]} → ${pc.subject?.after?.[k]}`).join(
              ", ",
            )
          }`,
        ]
        : []),
      ...(pc.subject && !pc.subject.present_after ? ["the target's node is gone (removed or replaced)"] : []),
      ...(pc.downloads?.started
        ? [
          `${pc.downloads.started} download(s) began (wait_for_download after ${pc.downloads.cursor_before})`,
        ]
        : []),
      ...(pc.note ? [`note: ${pc.note}`] : []),
    ];
    if (facts.length > 0) observation.text += `\npostconditions: ${facts.join("; ")}`;
    return observation;
  } finally {
    if (env.session.activeInteractionId === ctx.record.interaction_id) {
      env.session.activeInteractionId = undefined;
    }
  }
}

async function dispatchAndObserve(
  env: ActionEnv,
  page: PageTarget,
  ctx: ActionContext,
  dispatch: () => Promise<void>,
): Promise<Observation> {
  try {
    ctx.requests.arm();
    await phase("dispatch", dispatch);
    ctx.record.dispatched_ms = env.session.now();
  } catch (err) {
    // Dispatch itself failed: no observation; the error carries the interaction anchor.
    const failure = asToolError(err);
    ctx.record.outcome = "failed";
    ctx.record.error_code = failure.code;
    env.persist?.(interactionRow(storable(ctx.record)));
    throw anchoredFailure(failure, page.id, ctx.record.interaction_id);
  }
  const observation = await phase("observe", () =>
    observe(ctx, {
      store: env.store,
      detail: env.detail,
      inlineImage: env.inlineImage,
      frames: env.frames,
    }));
  env.persist?.(interactionRow(storable(ctx.record)));
  // Not awaited: a dialog the action opened blocks the renderer until it is handled.
  releaseTargeting(page);
  return observation;
}

/**
 * The record as it may be written: the URL a navigation reached (a redirect, a history entry, a
 * page-side location.replace or pushState) gets the stored-URL treatment. Done in place so the
 * expanded echo, which shares the navigation object, says the same as the index.
 */
function storable(record: InteractionRecord): InteractionRecord {
  const nav = record.navigation;
  // Hashing a stored URL's path again would change it, so a record is treated once.
  if (nav && !STORED.has(nav)) {
    nav.url = storedUrl(nav.url).url;
    STORED.add(nav);
  }
  return record;
}

const STORED = new WeakSet<object>();

/** A dispatch failure re-thrown with the interaction it was recorded as, so the error anchors the timeline. */
export function anchoredFailure(failure: ToolError, pageId: string, interactionId: string): ToolError {
  return new ToolError({
    code: failure.code,
    message: failure.message,
    retry: failure.retry,
    recovery: failure.recovery,
    details: failure.details,
    affected: { ...failure.affected, page_id: pageId, interaction_id: interactionId },
  });
}
