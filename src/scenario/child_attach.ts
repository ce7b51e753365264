/**
 * One auto-attachment of every page's child targets (iframes, dedicated and service workers) for the
 * scenario's page setups to share. Target.setAutoAttach is a single setting per CDP session: a second
 * setup sending it replaces the first one's filter and pause policy, so whoever needs children registers
 * here instead of sending its own.
 *
 * Children attach paused (waitForDebuggerOnStart). On each attachment the registered initializers send
 * their commands to the child, in registration order, and the child is released after them: CDP runs a
 * session's commands in order, so the child's first request already meets its rules. Children are
 * released even when no initializer is registered (any more), so nothing stays paused.
 *
 * Only a page's direct children are attached: a child session's own events do not reach page listeners
 * (BrowserSession routes page sessions only), so grandchildren (a nested out-of-process iframe, a worker
 * inside one) would attach with no one to release them.
 */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import type { Protocol } from "devtools-protocol";
import { logger } from "../log.ts";

const log = logger("scenario", "children");

export const CHILD_AUTO_ATTACH = {
  autoAttach: true,
  waitForDebuggerOnStart: true,
  flatten: true,
  filter: [{ type: "iframe" }, { type: "worker" }, { type: "service_worker" }],
};

/** The page setup's key (BrowserSession.addPageSetup). */
export const CHILD_ATTACH_SETUP = "scenario_child_attach";

const RELEASE_TIMEOUT_MS = 5_000;

export interface AttachedChild {
  page: PageTarget;
  sessionId: string;
  targetInfo: Protocol.Target.TargetInfo;
}

/** Sends the child's commands synchronously (through session.sendToSession); awaits nothing. */
export type ChildInit = (child: AttachedChild) => void;

const registries = new WeakMap<BrowserSession, Set<ChildInit>>();

/**
 * Makes every page of the session (now and later) attach its children paused, runs `init` on each child
 * before it is released, and returns the unregistration of `init`. Idempotent per session.
 */
export function attachChildren(session: BrowserSession, init?: ChildInit): () => void {
  let inits = registries.get(session);
  if (!inits) {
    const registered = new Set<ChildInit>();
    inits = registered;
    registries.set(session, registered);
    session.onPageEvent("Target.attachedToTarget", (page, { sessionId, targetInfo, waitingForDebugger }) => {
      for (const run of [...registered]) {
        try {
          run({ page, sessionId, targetInfo });
        } catch (err) {
          log.warning("child initializer failed: {err}", { err: String(err) });
        }
      }
      if (!waitingForDebugger) return;
      session.sendToSession(sessionId, "Runtime.runIfWaitingForDebugger", undefined, RELEASE_TIMEOUT_MS)
        .catch((err) =>
          log.debug("child {id} of {page} not released: {err}", {
            id: targetInfo.targetId,
            page: page.id,
            err: String(err),
          })
        );
    });
    session.addPageSetup(CHILD_ATTACH_SETUP, {
      apply: (page, timeoutMs) => [page.send("Target.setAutoAttach", CHILD_AUTO_ATTACH, timeoutMs)],
    });
  }
  if (!init) return () => {};
  const own = inits;
  own.add(init);
  return () => own.delete(init);
}
