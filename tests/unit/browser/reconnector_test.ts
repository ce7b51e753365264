import { assert, assertEquals } from "../../assert.ts";
import type { Protocol } from "devtools-protocol";
import type { CdpConnection } from "../../../src/browser/cdp.ts";
import { PageTarget } from "../../../src/browser/targets.ts";
import {
  matchOrphans,
  type Reconnected,
  type ReconnectHost,
  SessionReconnector,
} from "../../../src/browser/reconnect.ts";
import { sleep, until } from "./reconnect_fakes.ts";

type Tab = { targetId: string; url: string };

/** The socket side the reconnector touches: open/closed, reopen, close, and the target list. */
class FakeConn {
  closed = false;
  reopens = 0;
  closes = 0;
  tabs: Tab[] = [];
  /** Overrides how long a reopen takes (it honours the abandon signal as CdpConnection.reopen does). */
  reopenDelay: () => Promise<void> = () => Promise.resolve();
  onDrop: () => void = () => {};

  async reopen(_url: string, abandoned?: AbortSignal): Promise<void> {
    this.reopens++;
    await this.reopenDelay();
    if (abandoned?.aborted) throw new Error("reopen: abandoned");
    this.closed = false;
  }

  close(): Promise<void> {
    if (!this.closed) this.drop(true);
    return Promise.resolve();
  }

  /** The socket closes (a drop, or ours): the session's disconnect handler runs. */
  drop(ours = false): void {
    this.closed = true;
    if (ours) this.closes++;
    this.onDrop();
  }

  send(method: string): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error("The browser connection is closed."));
    if (method === "Target.getTargets") {
      return Promise.resolve({
        targetInfos: this.tabs.map((t) => ({ ...t, type: "page", title: "", attached: false })),
      });
    }
    return Promise.resolve({});
  }
}

interface Harness {
  conn: FakeConn;
  pages: Map<string, PageTarget>;
  reconnector: SessionReconnector;
  reconnected: Reconnected[];
  ended: string[];
  stop(): void;
  /** Runs inside each discovery, after the targets were adopted (`n`: the discovery's number). */
  duringDiscovery: (n: number) => Promise<void> | void;
  /** The resolve step of each attempt. */
  resolve: () => Promise<string>;
}

/** A session of `tabs` pages (p1, p2, … in order) on a fake socket; the reconnector under test. */
function harness(tabs: Tab[], windowMs = 5_000): Harness {
  const conn = new FakeConn();
  conn.tabs = tabs;
  const pages = new Map<string, PageTarget>();
  let ordinal = 0;
  let stopping = false;
  let discoveries = 0;
  const fake = conn as unknown as CdpConnection;
  const adopt = (tab: Tab, orphan?: PageTarget) => {
    const page = new PageTarget({
      conn: fake,
      ordinal: orphan?.ordinal ?? ++ordinal,
      targetId: tab.targetId,
      sessionId: `session-${tab.targetId}-${discoveries}`,
      url: tab.url,
      title: "",
    });
    pages.set(page.id, page);
  };
  for (const tab of tabs) adopt(tab);
  const h: Harness = {
    conn,
    pages,
    reconnected: [],
    ended: [],
    stop: () => {
      stopping = true;
      h.ended.push("stopped");
    },
    duringDiscovery: () => {},
    resolve: () => Promise.resolve("ws://127.0.0.1:9/devtools/browser/x"),
    reconnector: undefined as unknown as SessionReconnector,
  };
  const host: ReconnectHost = {
    conn: fake,
    pages,
    ended: () => h.ended.length > 0,
    stopping: () => stopping,
    now: () => performance.now(),
    forgetAttachments: () => {},
    readVersion: () => conn.send("Browser.getVersion").then(() => {}),
    resumeDownloads: () => Promise.resolve(),
    discoverPages: async () => {
      discoveries++;
      for (const tab of conn.tabs) {
        const info = { ...tab, type: "page", title: "", attached: true } as Protocol.Target.TargetInfo;
        adopt(tab, h.reconnector.claimOrphan(info));
      }
      await h.duringDiscovery(discoveries);
    },
    dropPage: (page) => {
      page.markClosed();
      if (pages.get(page.id) === page) pages.delete(page.id);
    },
    reselect: () => {},
    markEnded: (reason) => h.ended.push(reason),
    endDisconnected: () => h.ended.push("browser_disconnected"),
  };
  h.reconnector = new SessionReconnector(host, { resolve: () => h.resolve(), windowMs });
  h.reconnector.onReconnected((info) => h.reconnected.push(info));
  conn.onDrop = () => h.reconnector.disconnected();
  return h;
}

Deno.test("a drop during re-adoption retries: never connected on a dead socket", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }]);
  const first = h.pages.get("p1");
  // The first new socket drops while its pages are adopted; the second holds.
  h.duringDiscovery = (n) => {
    if (n === 1) h.conn.drop();
  };
  h.conn.drop();
  assertEquals(h.reconnector.state.state, "reconnecting");
  assert(first?.closed, "the pages of the dropped socket are closed");
  const seen: string[] = [];
  await until("reconnected", () => {
    if (h.reconnector.state.state === "connected") seen.push(h.conn.closed ? "dead" : "live");
    return h.reconnected.length > 0;
  });
  assert(!seen.includes("dead"), `never connected on a closed socket: ${seen}`);
  assertEquals(h.conn.closed, false);
  assertEquals(h.reconnected.length, 1);
  assertEquals(h.reconnected[0].attempts, 2);
  assertEquals(h.reconnected[0].readopted, ["p1"]);
  assertEquals(h.ended, []);
  assertEquals(h.pages.get("p1")?.closed, false);
});

Deno.test("an attempt that fails after re-adopting retries and re-adopts the same ids again", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }, {
    targetId: "B",
    url: "http://127.0.0.1/b",
  }]);
  const adoptedFirst: PageTarget[] = [];
  h.duringDiscovery = (n) => {
    if (n !== 1) return;
    adoptedFirst.push(...h.pages.values());
    throw new Error("Target.setAutoAttach: failed after attaching");
  };
  h.conn.drop();
  await until("reconnected", () => h.reconnected.length > 0);
  assertEquals(adoptedFirst.map((p) => p.id), ["p1", "p2"]);
  assert(adoptedFirst.every((p) => p.closed), "the failed attempt's pages are orphans again");
  const info = h.reconnected[0];
  assertEquals(info.attempts, 2);
  assertEquals(info.readopted, ["p1", "p2"]);
  assertEquals([info.closed, info.added], [[], []]);
  for (const page of h.pages.values()) {
    assert(!page.closed && !adoptedFirst.includes(page), `${page.id} is the second attempt's`);
  }
  const state = h.reconnector.state;
  assertEquals(state.state, "connected");
  assertEquals(h.ended, []);
});

Deno.test("stopped while the socket reopens: it is closed again, nothing resumed or announced", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }]);
  let release = () => {};
  h.conn.reopenDelay = () => new Promise<void>((r) => (release = r));
  h.conn.drop();
  await until("reopen under way", () => h.conn.reopens === 1);
  h.stop();
  release();
  await until("the new socket closed", () => h.conn.closed && h.conn.closes === 1);
  await sleep(700);
  assertEquals(h.reconnected, []);
  assertEquals(h.ended, ["stopped"]);
  assertEquals(h.conn.reopens, 1, "no further attempt after the stop");
  assert(h.reconnector.state.state !== "connected", "a stopped session is not connected");
});

Deno.test("stopped during the resume: no onReconnected, no window-exhausted end", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }]);
  h.duringDiscovery = () => h.stop();
  h.conn.drop();
  await until("discovery ran", () => h.ended.length > 0);
  await sleep(700);
  assertEquals(h.reconnected, []);
  assertEquals(h.ended, ["stopped"]);
  assertEquals(h.conn.reopens, 1);
  assert(h.reconnector.state.state !== "connected", "a stopped session is not connected");
});

Deno.test("the window bounds an attempt that never answers: ended within window + 1 s", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }], 1_000);
  h.resolve = () => new Promise<string>(() => {});
  const lost = performance.now();
  h.conn.drop();
  await until("ended", () => h.ended.length > 0, 3_000);
  const elapsed = performance.now() - lost;
  assertEquals(h.ended, ["reconnect_window_exhausted"]);
  assert(elapsed < 2_000, `ended ${Math.round(elapsed)} ms after the drop (window 1000 ms)`);
  const state = h.reconnector.state;
  assert(
    state.state === "reconnecting" && /window closed/.test(state.last_error ?? ""),
    JSON.stringify(state),
  );
  assertEquals(h.reconnected, []);
  assertEquals(h.conn.reopens, 0);
});

Deno.test("attempts failing at once are retried until the window ends, not before", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }], 1_000);
  h.resolve = () => Promise.reject(new Error("connection refused"));
  const lost = performance.now();
  h.conn.drop();
  await until("ended", () => h.ended.length > 0, 3_000);
  const elapsed = performance.now() - lost;
  assertEquals(h.ended, ["reconnect_window_exhausted"]);
  assert(
    elapsed >= 980 && elapsed < 2_000,
    `ended ${Math.round(elapsed)} ms after the drop (window 1000 ms)`,
  );
  const state = h.reconnector.state;
  assert(state.state === "reconnecting" && state.attempts === 2, JSON.stringify(state));
  assertEquals(state.last_error, "connection refused");
});

Deno.test("a socket that opens after the window closed is not kept", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }], 1_000);
  let opened = false;
  h.conn.reopenDelay = () => sleep(1_500).then(() => void (opened = true));
  h.conn.drop();
  await until("ended", () => h.ended.length > 0, 3_000);
  assertEquals(h.ended, ["reconnect_window_exhausted"]);
  await until("the late reopen settled", () => opened, 3_000);
  await sleep(50);
  assert(h.conn.closed, "the late socket was refused");
  assertEquals(h.reconnected, []);
  assertEquals(h.conn.reopens, 1);
});

Deno.test("a tab at another page's URL does not take its id while that page's own target exists", async () => {
  const h = harness([{ targetId: "A", url: "http://127.0.0.1/a" }, {
    targetId: "B",
    url: "http://127.0.0.1/b",
  }]);
  // After the drop a new tab C at B's URL is listed (and attaches) before B itself.
  h.conn.tabs = [
    { targetId: "C", url: "http://127.0.0.1/b" },
    { targetId: "B", url: "http://127.0.0.1/b" },
    { targetId: "A", url: "http://127.0.0.1/a" },
  ];
  h.conn.drop();
  await until("reconnected", () => h.reconnected.length > 0);
  const info = h.reconnected[0];
  assertEquals([info.readopted.sort(), info.added], [["p1", "p2"], ["p3"]]);
  assertEquals(h.pages.get("p2")?.targetId, "B");
  assertEquals(h.pages.get("p3")?.targetId, "C");
});

Deno.test("matchOrphans: same target first, then URL among the rest, then the sole-tab rule", () => {
  const a = { targetId: "A", url: "u1" };
  const b = { targetId: "B", url: "u2" };
  // The same target wins over an earlier tab at its URL.
  assertEquals(
    [...matchOrphans([a, b], [{ targetId: "C", url: "u2" }, b, a])],
    [["B", b], ["A", a]],
  );
  // A restarted browser: new ids, pages found again by URL (first tab at a URL takes it).
  assertEquals(
    [...matchOrphans([a, b], [{ targetId: "X", url: "u2" }, { targetId: "Y", url: "u2" }, {
      targetId: "Z",
      url: "u1",
    }])],
    [["X", b], ["Z", a]],
  );
  // URL matches only among what exact matches left: B's tab kept B, so A's URL goes to nobody else.
  assertEquals([...matchOrphans([a, b], [b, { targetId: "Q", url: "u2" }])], [["B", b]]);
  // One page, one tab at another URL: a single-tab browser restarted at its start page continues it.
  assertEquals([...matchOrphans([a], [{ targetId: "N", url: "about:blank" }])], [["N", a]]);
  // Not with two tabs, nor with two pages.
  assertEquals(matchOrphans([a], [{ targetId: "N", url: "x" }, { targetId: "M", url: "y" }]).size, 0);
  assertEquals(matchOrphans([a, b], [{ targetId: "N", url: "x" }]).size, 0);
});
