/**
 * A call cut off by an attached session's connection dropping (define_tool.ts duringOutage): whether it is
 * safe to repeat follows the cancellation rule, never "retry safe" for a call that may have acted.
 */
import { z } from "zod";
import { assert, assertEquals } from "../../assert.ts";
import { defineTool } from "../../../src/mcp/define_tool.ts";
import { CallAdmission } from "../../../src/mcp/admission.ts";
import type { AppContext } from "../../../src/mcp/context.ts";
import { ToolError } from "../../../src/errors.ts";
import { pageClosed } from "../../../src/browser/targets.ts";
import type { ConnectionState } from "../../../src/browser/reconnect.ts";

interface FakeSession {
  id: string;
  mode: "attached" | "launched";
  ended: boolean;
  connection: ConnectionState;
  readonly reconnecting: boolean;
  selectedPageId?: string;
  pages: Map<string, { id: string; closed: boolean; url: string }>;
  latestInteractionId?: string;
}

const RECONNECTING: Extract<ConnectionState, { state: "reconnecting" }> = {
  state: "reconnecting",
  since: new Date(Date.now() - 1_500),
  since_ms: 100,
  attempts: 2,
  window_ms: 30_000,
  last_error: "connection refused",
};

function fakeSession(mode: "attached" | "launched", connection: ConnectionState, pageClosedNow = true) {
  const session: FakeSession = {
    id: "s1",
    mode,
    ended: false,
    connection,
    get reconnecting() {
      return this.connection.state === "reconnecting";
    },
    pages: new Map([["p1", { id: "p1", closed: pageClosedNow, url: "http://127.0.0.1/" }]]),
    // An interaction of an earlier call: it is not this call's.
    latestInteractionId: "i1",
  };
  return session;
}

/** The socket dies under the call: the session starts reconnecting (its pages orphaned, still listed). */
function drop(s: FakeSession): void {
  s.connection = { ...RECONNECTING, since: new Date() };
  for (const page of s.pages.values()) page.closed = true;
}

function appOf(session: FakeSession): AppContext {
  return { browsers: { current: session }, calls: new CallAdmission() } as unknown as AppContext;
}

const disconnected = () =>
  new ToolError({
    code: "browser_disconnected",
    message: "The browser connection is closed.",
    retry: "after_recovery",
    recovery: "Call start_browser (or attach_browser) to begin a new session.",
  });

/** A tool that (optionally) begins an interaction, then fails with `error`. */
function failing(readOnly: boolean, error: () => ToolError, begin?: (s: FakeSession) => void) {
  return defineTool({
    name: readOnly ? "snapshot_page" : "click",
    capability: "control",
    description: "test",
    input: z.object({ page_id: z.string().optional() }).strict(),
    output: z.object({}).passthrough(),
    annotations: { readOnlyHint: readOnly },
    handler: (_args, app) => {
      begin?.(app.browsers.current as unknown as FakeSession);
      return Promise.reject(error());
    },
  });
}

interface ErrorJson {
  code: string;
  message: string;
  retry: string;
  recovery?: string;
  affected?: Record<string, string>;
  details?: Record<string, unknown>;
}

function errorOf(out: { structured: Record<string, unknown>; isError?: boolean }): ErrorJson {
  assert(out.isError, "an error result");
  return out.structured.error as ErrorJson;
}

Deno.test("a click whose interaction began before the socket died is not called safe to repeat", async () => {
  const session = fakeSession("attached", { state: "connected" }, false);
  const tool = failing(false, disconnected, (s) => {
    s.latestInteractionId = "i2";
    drop(s);
  });
  const e = errorOf(await tool.run({ page_id: "p1" }, appOf(session)));
  assertEquals(e.code, "browser_reconnecting");
  assertEquals(e.retry, "after_recovery");
  assertEquals(e.affected?.interaction_id, "i2");
  assertEquals(e.affected?.session_id, "s1");
  assert(/interaction i2 had begun and may have acted/.test(e.message), e.message);
  assert(
    /snapshot_page/.test(e.recovery ?? "") && /browser_status/.test(e.recovery ?? "") &&
      /interaction i2 may have acted/.test(e.recovery ?? ""),
    e.recovery,
  );
  assertEquals(e.details?.connection, "reconnecting");
  assertEquals(e.details?.attempts, 2);
});

Deno.test("a state-changing call without an interaction may still have acted: after_recovery", async () => {
  const session = fakeSession("attached", { state: "connected" }, false);
  const e = errorOf(await failing(false, disconnected, drop).run({}, appOf(session)));
  assertEquals(e.code, "browser_reconnecting");
  assertEquals(e.retry, "after_recovery");
  assertEquals(e.affected?.interaction_id, undefined, "the earlier call's interaction is not named");
  assert(/may have changed the page/.test(e.message), e.message);
});

Deno.test("a read-only call that began nothing is retry safe while the session reconnects", async () => {
  const session = fakeSession("attached", RECONNECTING);
  const e = errorOf(await failing(true, disconnected).run({ page_id: "p1" }, appOf(session)));
  assertEquals(e.code, "browser_reconnecting");
  assertEquals(e.retry, "safe");
  assertEquals(e.affected?.page_id, undefined, "browser_disconnected names no page");
  assertEquals(e.details?.tool, "snapshot_page");
  assertEquals(e.details?.window_ms, 30_000);
});

Deno.test("page_closed from an orphaned page object of a still listed page is the outage, not a closed page", async () => {
  // While reconnecting: the page is listed (closed to commands) until it is re-adopted.
  const reconnecting = fakeSession("attached", { state: "connected" }, false);
  const during = errorOf(
    await failing(false, () => pageClosed("p1"), (s) => {
      s.latestInteractionId = "i3";
      drop(s);
    }).run(
      { page_id: "p1" },
      appOf(reconnecting),
    ),
  );
  assertEquals(during.code, "browser_reconnecting");
  assertEquals(during.retry, "after_recovery");
  assertEquals(during.affected?.page_id, "p1");
  assertEquals(during.affected?.interaction_id, "i3");

  // Just reconnected: a new object under the same id is listed and open; the call held the old one.
  const resumed = fakeSession("attached", { state: "connected" }, false);
  const after = errorOf(await failing(true, () => pageClosed("p1")).run({ page_id: "p1" }, appOf(resumed)));
  assertEquals(after.code, "browser_reconnecting");
  assertEquals(after.retry, "safe");
  assertEquals(after.details?.connection, "connected");
  assert(/reconnected since/.test(after.message), after.message);

  const resumedClick = errorOf(
    await failing(false, () => pageClosed("p1")).run(
      { page_id: "p1" },
      appOf(fakeSession("attached", {
        state: "connected",
      }, false)),
    ),
  );
  assertEquals(resumedClick.retry, "after_recovery");
  assert(/snapshot_page\) now/.test(resumedClick.recovery ?? ""), resumedClick.recovery);
});

Deno.test("a page that is really gone, or a launched browser's lost socket, keeps its own error", async () => {
  const session = fakeSession("attached", { state: "connected" }, false);
  session.pages.clear();
  const gone = errorOf(await failing(true, () => pageClosed("p1")).run({ page_id: "p1" }, appOf(session)));
  assertEquals(gone.code, "page_closed");
  assertEquals(gone.retry, "never");

  // Only an attached session reconnects: a launched one's lost socket is the end of it.
  const launched = fakeSession("launched", { state: "connected" });
  const lost = errorOf(await failing(false, disconnected).run({}, appOf(launched)));
  assertEquals(lost.code, "browser_disconnected");
  const launchedPage = errorOf(await failing(true, () => pageClosed("p1")).run({}, appOf(launched)));
  assertEquals(launchedPage.code, "page_closed");

  const ended = fakeSession("attached", RECONNECTING);
  ended.ended = true;
  assertEquals(
    errorOf(await failing(false, disconnected).run({}, appOf(ended))).code,
    "browser_disconnected",
  );
});

Deno.test("a state-changing call that began while the connection was already down sent nothing: retry safe", async () => {
  const session = fakeSession("attached", RECONNECTING);
  // The handler meets an orphaned page object of the outage under way when the call began.
  const e = errorOf(await failing(false, () => pageClosed("p1")).run({ page_id: "p1" }, appOf(session)));
  assertEquals(e.code, "browser_reconnecting");
  assertEquals(e.retry, "safe");
  // A second outage during the call (a new one began after it started) may have followed a resumed one.
  const flapping = fakeSession("attached", RECONNECTING);
  const tool = failing(false, disconnected, drop);
  assertEquals(errorOf(await tool.run({}, appOf(flapping))).retry, "after_recovery");
});
