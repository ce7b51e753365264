import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { runQuery } from "../snapshot/query_page.ts";
import { cdpMessage } from "../browser/cdp.ts";
import { sleepInCall } from "../browser/call_signal.ts";
import { ToolError } from "../errors.ts";
import { describeLocator, type Locator, normalizeText, textMatches } from "../snapshot/locator.ts";
import { dialogOpen } from "./interaction.ts";
import { type Checker, navigationWatch, networkWatch, type Reading } from "./wait_events.ts";
import {
  pageForTarget,
  releaseTargeting,
  type ResolvedTarget,
  resolveTarget,
  type TargetSpec,
} from "./targeting.ts";

export const ELEMENT_STATES = [
  "visible",
  "hidden",
  "enabled",
  "disabled",
  "checked",
  "unchecked",
  "attached",
  "detached",
] as const;
export type ElementState = typeof ELEMENT_STATES[number];

/** Exactly one condition per wait (spec: Waiting). */
export type WaitCondition =
  | { kind: "time"; ms: number }
  | { kind: "text"; text: string; gone: boolean }
  | { kind: "element"; target: TargetSpec; state: ElementState }
  | { kind: "locator"; locator: Locator; present: boolean }
  | { kind: "navigation"; urlIncludes?: string }
  | { kind: "condition"; expression: string }
  | { kind: "network_quiet"; quietMs: number };

export interface WaitResult {
  page_id: string;
  url: string;
  elapsed_ms: number;
  timeout_ms: number;
  polls: number;
  observed: Record<string, unknown>;
}

/** Page-side polls are cheap; a full AX tree read every 100 ms would load a busy 2-core box. */
const POLL_MS = 100;
const TREE_POLL_MS = 250;
const PREVIEW_LIMIT = 200;
const WAIT_GROUP = "krometrail-wait";

const clip = (s: string, n = PREVIEW_LIMIT) => (s.length > n ? s.slice(0, n - 1) + "…" : s);

export function describeCondition(c: WaitCondition): string {
  switch (c.kind) {
    case "time":
      return `${c.ms} ms to pass`;
    case "text":
      return `text ${JSON.stringify(clip(c.text, 80))} to ${c.gone ? "disappear" : "appear"}`;
    case "element": {
      const t = c.target;
      const what = t.ref ?? (t.locator ? describeLocator(t.locator) : JSON.stringify(t.selector ?? ""));
      return `element ${clip(what, 120)} to be ${c.state}`;
    }
    case "locator":
      return `${describeLocator(c.locator)} to be ${
        c.present ? "present" : "absent"
      } in the accessibility tree`;
    case "navigation":
      return c.urlIncludes === undefined
        ? "a main-frame navigation"
        : `a main-frame navigation to a URL containing ${JSON.stringify(clip(c.urlIncludes, 120))}`;
    case "condition":
      return `condition ${JSON.stringify(clip(c.expression, 80))} to be truthy`;
    case "network_quiet":
      return `${c.quietMs} ms with no request in flight`;
  }
}

/** CDP answers that can clear up by the next poll: a document swap mid-read, or a slow renderer. */
function transient(err: unknown): boolean {
  return !(err instanceof ToolError) || err.code === "cdp_timeout" || err.code === "document_changed";
}

function timeoutError(
  page: PageTarget,
  c: WaitCondition,
  elapsed: number,
  timeoutMs: number,
  last: Record<string, unknown> | undefined,
): ToolError {
  return new ToolError({
    code: "wait_timeout",
    message: `Waited ${Math.round(elapsed)} ms for ${
      describeCondition(c)
    }; not satisfied within the ${timeoutMs} ms limit.`,
    retry: "safe",
    recovery:
      "Check the page (snapshot_page, take_screenshot) to see why; if it is only slow, wait again with a larger timeout_ms (at most 60000).",
    affected: { page_id: page.id },
    details: {
      condition: c.kind,
      elapsed_ms: Math.round(elapsed),
      timeout_ms: timeoutMs,
      ...(last ? { last_observed: last } : {}),
    },
  });
}

/** Waits until `c` holds on the page, polling within `timeoutMs`; read-only, records no interaction. */
export async function waitFor(
  session: BrowserSession,
  c: WaitCondition,
  timeoutMs: number,
  pageId?: string,
): Promise<WaitResult> {
  const started = session.now();
  const page = c.kind === "element" ? pageForTarget(session, c.target, pageId) : session.page(pageId);
  const evaluates = c.kind === "text" || c.kind === "element" || c.kind === "locator" ||
    c.kind === "condition";
  if (evaluates && page.dialog) throw dialogOpen(page);
  const finish = (observed: Record<string, unknown>, polls: number): WaitResult => ({
    page_id: page.id,
    url: page.url,
    elapsed_ms: Math.round(session.now() - started),
    timeout_ms: timeoutMs,
    polls,
    observed,
  });
  // Sleeps and polls end at once when the call is cancelled (its deadline, the client, shutdown).
  if (c.kind === "time") {
    await sleepInCall(c.ms);
    return finish({ waited_ms: Math.round(session.now() - started) }, 0);
  }
  const { check, interval, dispose } = await checker(session, page, c);
  let last: Record<string, unknown> | undefined;
  let polls = 0;
  try {
    while (true) {
      const remaining = timeoutMs - (session.now() - started);
      if (evaluates && page.dialog) throw dialogOpen(page);
      try {
        const reading = await check(Math.max(200, Math.min(remaining, 5_000)));
        polls++;
        if (reading.done) return finish(reading.observed, polls);
        last = reading.observed;
      } catch (err) {
        if (!transient(err)) throw err;
        polls++;
        last = { transient_error: cdpMessage(err) };
      }
      const left = timeoutMs - (session.now() - started);
      if (left <= 0) throw timeoutError(page, c, session.now() - started, timeoutMs, last);
      await sleepInCall(Math.min(interval, left));
    }
  } finally {
    dispose?.();
  }
}

async function checker(session: BrowserSession, page: PageTarget, c: WaitCondition): Promise<Checker> {
  switch (c.kind) {
    case "text":
      return { check: (b) => textCheck(page, c.text, c.gone, b), interval: POLL_MS };
    case "element":
      return {
        check: () => elementCheck(session, page, c.target, c.state).finally(() => releaseTargeting(page)),
        interval: POLL_MS,
      };
    case "locator": {
      const interval = c.locator.role !== undefined ? TREE_POLL_MS : POLL_MS;
      return { check: () => locatorCheck(session, page, c.locator, c.present), interval };
    }
    case "condition":
      return {
        check: (b) =>
          conditionCheck(page, c.expression, b).finally(() => {
            page.send("Runtime.releaseObjectGroup", { objectGroup: WAIT_GROUP }).catch(() => {});
          }),
        interval: POLL_MS,
      };
    case "navigation":
      return navigationWatch(session, page, c.urlIncludes);
    case "network_quiet":
      return await networkWatch(session, page, c.quietMs);
    case "time":
      return { check: () => Promise.resolve({ done: true, observed: {} }), interval: POLL_MS };
  }
}

async function textCheck(page: PageTarget, text: string, gone: boolean, budget: number): Promise<Reading> {
  const fn = `(function(query) {
    const normalizeText = ${normalizeText.toString()};
    const textMatches = ${textMatches.toString()};
    return textMatches(document.body ? document.body.innerText : "", query, false);
  })`;
  const r = await page.send("Runtime.evaluate", {
    expression: `${fn}(${JSON.stringify(text)})`,
    returnByValue: true,
  }, budget);
  if (r.exceptionDetails) throw new Error(r.exceptionDetails.text);
  const present = r.result.value === true;
  return { done: present !== gone, observed: { text_present: present } };
}

const ELEMENT_STATE = `function() {
  const el = this;
  const rect = el.getBoundingClientRect();
  const visible = rect.width > 0 && rect.height > 0 &&
    (typeof el.checkVisibility !== "function" || el.checkVisibility({ visibilityProperty: true }));
  const disabled = (typeof el.matches === "function" && el.matches(":disabled")) ||
    !!(el.closest && el.closest("[aria-disabled=true]"));
  let checked = null;
  if (el instanceof HTMLInputElement && (el.type === "checkbox" || el.type === "radio")) checked = el.checked;
  else {
    const aria = el.getAttribute && el.getAttribute("aria-checked");
    if (aria === "true" || aria === "mixed") checked = true;
    else if (aria === "false") checked = false;
  }
  return { visible, enabled: !disabled, checked };
}`;

const ABSENT_CODES = new Set(["selector_no_match", "locator_no_match"]);

async function elementCheck(
  session: BrowserSession,
  page: PageTarget,
  spec: TargetSpec,
  state: ElementState,
): Promise<Reading> {
  const absentOk = state === "detached" || state === "hidden";
  let target: ResolvedTarget;
  try {
    target = await resolveTarget(session, spec, page.id);
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    // A stale ref's node is gone for good: that settles detached/hidden and rules out the rest.
    if (err.code === "stale_ref" && absentOk) return { done: true, observed: { attached: false } };
    if (ABSENT_CODES.has(err.code)) return { done: absentOk, observed: { attached: false } };
    throw err;
  }
  if (target.kind !== "element") {
    throw new ToolError({
      code: "invalid_target",
      message: "An element-state wait needs an element (ref, locator or selector), not coordinates.",
      retry: "never",
      recovery: "Pass a ref from snapshot_page, a locator or a selector.",
    });
  }
  const ref = target.ref;
  if (state === "attached" || state === "detached") {
    return { done: state === "attached", observed: { attached: true, ref } };
  }
  const { result } = await page.send("Runtime.callFunctionOn", {
    objectId: target.objectId,
    functionDeclaration: ELEMENT_STATE,
    returnByValue: true,
  });
  const s = result.value as { visible: boolean; enabled: boolean; checked: boolean | null };
  const observed = { attached: true, visible: s.visible, enabled: s.enabled, checked: s.checked, ref };
  if ((state === "checked" || state === "unchecked") && s.checked === null) {
    throw new ToolError({
      code: "not_checkable",
      message: "The element is not a checkbox, radio or aria-checked control, so it has no checked state.",
      retry: "never",
      recovery: "Target the checkbox itself (snapshot_page shows its ref), or wait for another state.",
      affected: { page_id: page.id, ref },
    });
  }
  const done = {
    visible: s.visible,
    hidden: !s.visible,
    enabled: s.enabled,
    disabled: !s.enabled,
    checked: s.checked === true,
    unchecked: s.checked === false,
  }[state];
  return { done, observed };
}

function queryOutcome(count: number): string {
  return count === 0 ? "no_match" : count === 1 ? "match" : "ambiguous";
}

/**
 * Semantic presence over the full tree of the main document, actionable or not, through the same
 * query core as query_page (shapes, matching modes, normalization, container qualification). Reports
 * the outcome and count, never a ref: callers use query_page before acting.
 */
async function locatorCheck(
  session: BrowserSession,
  page: PageTarget,
  loc: Locator,
  present: boolean,
): Promise<Reading> {
  const generation = page.generation;
  const run = await runQuery(session, page, loc);
  // A document swapped mid-read gives a stale capture: read again at the next poll.
  if (page.generation !== generation) throw new Error("the document changed during the read");
  const d = run.decision;
  // The full tree counts: when nothing actionable matched, non-actionable matches still satisfy a wait.
  const count = d.outcome === "no_match" ? (d.non_actionable?.count ?? 0) : d.match_count;
  const saturated = d.outcome === "no_match" ? (d.non_actionable?.saturated ?? false) : d.saturated;
  const observed = {
    outcome: saturated ? "truncated" : queryOutcome(count),
    match_count: count,
    saturated,
    source: run.dom ? "dom" : "accessibility_tree",
  };
  return { done: present ? count > 0 : count === 0, observed };
}

function truthy(o: Protocol.Runtime.RemoteObject): boolean {
  if (o.type === "undefined") return false;
  if (o.type === "object") return o.subtype !== "null";
  if (o.type === "function" || o.type === "symbol") return true;
  if (o.unserializableValue !== undefined) return !["NaN", "-0", "0n"].includes(o.unserializableValue);
  return Boolean(o.value);
}

async function conditionCheck(page: PageTarget, expression: string, budget: number): Promise<Reading> {
  const r = await page.send("Runtime.evaluate", {
    expression,
    awaitPromise: true,
    returnByValue: false,
    objectGroup: WAIT_GROUP,
    timeout: budget,
  }, budget + 500);
  if (r.exceptionDetails) {
    const text = r.exceptionDetails.exception?.description ?? r.exceptionDetails.text;
    throw new ToolError({
      code: "evaluation_exception",
      message: `The condition threw: ${clip(text.split("\n")[0], 300)}`,
      retry: "never",
      recovery:
        "Fix the expression (guard missing elements, e.g. with ?.); it runs in the page's main world.",
      affected: { page_id: page.id, argument: "condition" },
    });
  }
  const o = r.result;
  const preview = o.value !== undefined
    ? JSON.stringify(o.value) ?? String(o.value)
    : o.description ?? o.type;
  return { done: truthy(o), observed: { type: o.type, value_preview: clip(preview) } };
}
