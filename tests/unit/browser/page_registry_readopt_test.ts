/** PageRegistry re-adopting pages after a reconnection: crashed orphans and stale adoptions. */
import { assertEquals } from "../../assert.ts";
import type { Protocol } from "devtools-protocol";
import type { CdpConnection } from "../../../src/browser/cdp.ts";
import { PageTarget } from "../../../src/browser/targets.ts";
import { type PageOrigin, PageRegistry } from "../../../src/browser/page_registry.ts";
import { PageTroubleSignals } from "../../../src/browser/page_trouble.ts";
import { sleep, until } from "./reconnect_fakes.ts";

/** A socket for the page registry: events emitted by the test, each page session answering as told. */
class RegistryConn {
  #listeners = new Map<string, Array<(params: unknown, sid?: string) => void>>();
  /** How a page session answers its initialization: a document (loader id), never, or after a gate. */
  answers = new Map<string, { loaderId?: string; gate?: Promise<void> }>();

  on(event: string, listener: (params: unknown, sid?: string) => void): () => void {
    this.#listeners.set(event, [...(this.#listeners.get(event) ?? []), listener]);
    return () => {};
  }

  emit(event: string, params: unknown, sessionId?: string): void {
    for (const listener of this.#listeners.get(event) ?? []) listener(params, sessionId);
  }

  attach(sessionId: string, targetId: string, url: string): void {
    const targetInfo = { targetId, url, type: "page", title: "", attached: true };
    this.emit("Target.attachedToTarget", { sessionId, targetInfo, waitingForDebugger: true });
  }

  async send(method: string, _params?: unknown, sessionId?: string): Promise<unknown> {
    const answer = sessionId ? this.answers.get(sessionId) : undefined;
    await answer?.gate;
    // A crashed renderer answers nothing: what the real socket reports as a timeout.
    if (!answer?.loaderId) throw new Error(`The browser did not answer ${method}`);
    if (method !== "Page.getFrameTree") return {};
    return { frameTree: { frame: { id: "F", loaderId: answer.loaderId, url: "http://127.0.0.1/a" } } };
  }
}

function registry(claim: (info: Protocol.Target.TargetInfo) => PageTarget | undefined) {
  const conn = new RegistryConn();
  const added: Array<[PageTarget, PageOrigin]> = [];
  const trouble = new PageTroubleSignals();
  const recovered: string[] = [];
  trouble.onRecovered((page) => recovered.push(page.id));
  const reg = new PageRegistry({
    conn: conn as unknown as CdpConnection,
    trouble,
    now: () => performance.now(),
    claimOrphan: claim,
    initialized: () => {},
    removed: () => {},
  });
  reg.wire();
  reg.onAdded((page, origin) => added.push([page, origin]));
  return { conn, reg, added, recovered };
}

function crashedOrphan(targetId: string): PageTarget {
  const orphan = new PageTarget({
    conn: new RegistryConn() as unknown as CdpConnection,
    ordinal: 1,
    targetId,
    sessionId: "old",
    url: "http://127.0.0.1/a",
    title: "",
  });
  orphan.loaderId = "L1";
  orphan.crash = { at_ms: 12, status: "crashed", error_code: 5 };
  orphan.markClosed();
  return orphan;
}

Deno.test("a crashed page re-adopted as the same target stays crashed unless it answers with a new document", async () => {
  for (
    const [targetId, loaderId, crashed] of [
      ["A", undefined, true], // no answer: still crashed
      ["A", "L1", true], // the same document answering: unsure, kept
      ["A", "L2", false], // a new document: the renderer was replaced
      ["B", undefined, false], // another target at the same URL: a renderer of its own
    ] as const
  ) {
    const orphan = crashedOrphan("A");
    const { conn, reg, added } = registry(() => orphan);
    conn.answers.set("s1", { loaderId });
    conn.attach("s1", targetId, orphan.url);
    await Promise.all(reg.pending());
    const [page, origin] = added[0];
    assertEquals([page.id, origin], ["p1", "readopted"]);
    assertEquals(page.crash?.status, crashed ? "crashed" : undefined, `${targetId} ${loaderId}`);
  }
});

Deno.test("a stale adoption of a dropped socket runs no added listeners and keeps the new one pending", async () => {
  const { conn, reg, added } = registry(() => undefined);
  let releaseOld = () => {};
  let releaseNew = () => {};
  conn.answers.set("old", { loaderId: "L1", gate: new Promise<void>((r) => (releaseOld = r)) });
  conn.answers.set("new", { loaderId: "L2", gate: new Promise<void>((r) => (releaseNew = r)) });
  conn.attach("old", "A", "http://127.0.0.1/a");
  const stale = reg.pages.get("p1");
  // The socket drops mid-adoption: its page is an orphan, and the same target attaches on the new one.
  reg.forgetAttachments();
  stale?.markClosed();
  conn.attach("new", "A", "http://127.0.0.1/a");
  const fresh = reg.pending();
  assertEquals(fresh.length, 1);
  releaseOld();
  await sleep(20);
  assertEquals(reg.pending().length, 1, "the stale adoption's end does not forget the new one");
  assertEquals(added, []);
  releaseNew();
  await Promise.all(fresh);
  assertEquals(added.map(([p]) => p.id), ["p2"]);
  assertEquals(reg.pending().length, 0);
});

Deno.test("a page re-adopted crashed is enabled once a reload gives it a renderer, which ends the crash", async () => {
  const orphan = crashedOrphan("A");
  const { conn, reg, added, recovered } = registry(() => orphan);
  conn.attach("s1", "A", orphan.url);
  await Promise.all(reg.pending());
  const [page] = added[0];
  assertEquals(page.crash?.status, "crashed");
  // A reload: the browser reports loading to the session, and the new renderer answers.
  conn.answers.set("s1", { loaderId: "L2" });
  conn.emit("Page.frameStartedLoading", { frameId: "F" }, "s1");
  await until("recovered", () => recovered.length > 0);
  assertEquals([page.crash, page.loaderId, recovered], [undefined, "L2", ["p1"]]);
});
