/**
 * SessionCapture across a connection outage and a renderer crash, against a fake session and recorder:
 * which rows it sends, in which order, and how the per-page ordinals and counters continue.
 */
import { assert, assertEquals } from "../../assert.ts";
import { SessionCapture } from "../../../src/capture/session_capture.ts";
import type {
  BrowserSession,
  ConnectionState,
  PageTrouble,
  Reconnected,
} from "../../../src/browser/session.ts";
import type { PageTarget } from "../../../src/browser/targets.ts";
import type { Recorder } from "../../../src/capture/recorder.ts";
import type { FrameMessage, RowMessage } from "../../../src/capture/messages.ts";

class FakePage {
  closed = false;
  sent: string[] = [];
  /** What Chrome answers a screencast start with, when it refuses. */
  refuseStart?: string;
  crash?: { at_ms: number; status: string; error_code: number };
  constructor(readonly id: string, readonly targetId: string, readonly url = "http://127.0.0.1/a") {}
  send(method: string): Promise<unknown> {
    this.sent.push(method);
    if (this.closed) return Promise.reject(new Error("closed"));
    if (method === "Page.startScreencast" && this.refuseStart) {
      return Promise.reject(new Error(`Page.startScreencast: ${this.refuseStart}`));
    }
    return Promise.resolve({});
  }
  markClosed(): void {
    this.closed = true;
  }
}

type Handler = (page: PageTarget, params: unknown) => void;

class FakeSession {
  readonly id = "s1";
  readonly ordinal = 1;
  readonly mode = "attached";
  readonly profile = { kind: "attached", endpoint: "http://127.0.0.1:9222" };
  readonly browserVersion = "Chrome/1";
  readonly protocolVersion = "1.3";
  readonly startedAt = new Date(0);
  readonly config = { every_nth_frame: 1, focus: "foreground", record_dom: false };
  readonly interactions = { at: () => undefined };
  readonly activeInteractionId = undefined;
  endedAt?: Date;
  endReason?: string;
  connection: ConnectionState = { state: "connected" };
  readonly pages = new Map<string, PageTarget>();
  clockMs = 0;
  #events = new Map<string, Set<Handler>>();
  #sets = {
    added: new Set<(page: PageTarget, origin: "new" | "readopted") => void>(),
    removed: new Set<(page: PageTarget) => void>(),
    lost: new Set<(atMs: number) => void>(),
    reconnected: new Set<(info: Reconnected) => void>(),
    trouble: new Set<(page: PageTarget, t: PageTrouble) => void>(),
    recovered: new Set<(page: PageTarget) => void>(),
    ended: new Set<(reason: string) => void>(),
  };

  now(): number {
    return this.clockMs;
  }
  #sub<T>(set: Set<T>, fn: T): () => void {
    set.add(fn);
    return () => set.delete(fn);
  }
  onPageEvent(event: string, handler: Handler): () => void {
    const set = this.#events.get(event) ?? new Set();
    this.#events.set(event, set);
    return this.#sub(set, handler);
  }
  onPageAdded(fn: (page: PageTarget, origin: "new" | "readopted") => void) {
    return this.#sub(this.#sets.added, fn);
  }
  onPageRemoved(fn: (page: PageTarget) => void) {
    return this.#sub(this.#sets.removed, fn);
  }
  onConnectionLost(fn: (atMs: number) => void) {
    return this.#sub(this.#sets.lost, fn);
  }
  onReconnected(fn: (info: Reconnected) => void) {
    return this.#sub(this.#sets.reconnected, fn);
  }
  onPageTrouble(fn: (page: PageTarget, t: PageTrouble) => void) {
    return this.#sub(this.#sets.trouble, fn);
  }
  onPageRecovered(fn: (page: PageTarget) => void) {
    return this.#sub(this.#sets.recovered, fn);
  }
  onEnded(fn: (reason: string) => void): void {
    this.#sets.ended.add(fn);
  }

  // What the real session does, reduced to the calls capture sees.
  frame(page: FakePage): void {
    for (const h of this.#events.get("Page.screencastFrame") ?? []) {
      h(page as unknown as PageTarget, {
        sessionId: 1,
        data: "",
        metadata: { deviceWidth: 10, deviceHeight: 10, pageScaleFactor: 1, timestamp: this.clockMs / 1000 },
      });
    }
  }
  add(page: FakePage, origin: "new" | "readopted" = "new"): void {
    this.pages.set(page.id, page as unknown as PageTarget);
    for (const fn of this.#sets.added) fn(page as unknown as PageTarget, origin);
  }
  remove(page: FakePage): void {
    page.markClosed();
    for (const fn of this.#sets.removed) fn(page as unknown as PageTarget);
    this.pages.delete(page.id);
  }
  lose(): void {
    this.connection = {
      state: "reconnecting",
      since: new Date(),
      since_ms: this.clockMs,
      attempts: 0,
      window_ms: 5_000,
    };
    for (const p of this.pages.values()) p.markClosed();
    for (const fn of this.#sets.lost) fn(this.clockMs);
  }
  reconnected(info: Omit<Reconnected, "resumed_at_ms">): void {
    this.connection = { state: "connected" };
    for (const fn of this.#sets.reconnected) fn({ ...info, resumed_at_ms: this.clockMs });
  }
  crash(page: FakePage): void {
    for (const fn of this.#sets.trouble) {
      fn(page as unknown as PageTarget, {
        kind: "crashed",
        at_ms: this.clockMs,
        status: "crashed",
        error_code: 7,
      });
    }
  }
  recover(page: FakePage): void {
    for (const fn of this.#sets.recovered) fn(page as unknown as PageTarget);
  }
  end(reason: string): void {
    this.endedAt = new Date();
    this.endReason = reason;
    for (const fn of this.#sets.ended) fn(reason);
  }
}

class FakeRecorder {
  readonly faults = {};
  readonly capabilities = {};
  readonly retention = undefined;
  readonly log: Array<RowMessage | FrameMessage | { type: "flush" }> = [];
  send(m: RowMessage): void {
    this.log.push(m);
  }
  handoff(f: FrameMessage): boolean {
    this.log.push(f);
    return true;
  }
  flush(): Promise<{ stats: { frames_stored: number; bytes_stored: number; rows_committed: number } }> {
    this.log.push({ type: "flush" });
    return Promise.resolve({ stats: { frames_stored: 0, bytes_stored: 0, rows_committed: 0 } });
  }
  of<T extends string>(type: T): Array<Extract<RowMessage | FrameMessage, { type: T }>> {
    return this.log.filter((m) => m.type === type) as Array<Extract<RowMessage | FrameMessage, { type: T }>>;
  }
  events(kind: string): Array<Record<string, string | number | null>> {
    return this.of("event").map((e) => e.row).filter((r) => r.kind === kind);
  }
}

function setup(...pages: FakePage[]) {
  const session = new FakeSession();
  for (const p of pages) session.pages.set(p.id, p as unknown as PageTarget);
  const recorder = new FakeRecorder();
  const capture = new SessionCapture(
    session as unknown as BrowserSession,
    recorder as unknown as Recorder,
  );
  capture.start();
  return { session, recorder, capture };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

Deno.test("capture outage: one disconnected gap per page from the loss to its re-adoption; ordinals and counters continue, no second target row", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  for (let t = 1; t <= 3; t++) {
    session.clockMs = t * 100;
    session.frame(p1);
  }
  session.clockMs = 1_000;
  session.lose();
  // A frame delivered for the orphaned object (it cannot happen on a dead socket) feeds nothing.
  session.frame(p1);
  const lost = recorder.of("gap");
  assertEquals(lost.length, 1);
  assertEquals(lost[0].row.kind, "disconnected");
  assertEquals(lost[0].row.start_ns, 1e9);
  assertEquals(lost[0].row.ordinal, 3);
  assert(String(lost[0].row.cause).includes("connection dropped"), String(lost[0].row.cause));
  assertEquals(capture.status().streams[0].interrupted, "disconnected");
  assertEquals(recorder.events("connection").map((e) => [e.level, e.at_ns, e.page_id]), [[
    "warning",
    1e9,
    null,
  ]]);

  session.clockMs = 1_500;
  const back = new FakePage("p1", "T1");
  session.add(back, "readopted");
  await settle();
  assert(back.sent.includes("Page.startScreencast"), back.sent.join());
  assertEquals(recorder.of("target").length, 1, "the page keeps its one target row");
  // The gap waits for the reconnection to complete.
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "disconnected").length, 0);
  session.clockMs = 1_600;
  session.reconnected({ lost_at_ms: 1_000, attempts: 2, readopted: ["p1"], closed: [], added: [] });
  const ends = recorder.of("gap_end").filter((g) => g.kind === "disconnected");
  assertEquals(ends.map((g) => [g.page_id, g.end_ns]), [["p1", 1.5e9]]);

  session.clockMs = 1_700;
  session.frame(back);
  const frames = recorder.of("frame");
  assertEquals(frames.map((f) => f.ordinal), [1, 2, 3, 4]);
  const st = capture.status();
  assertEquals(st.frames_received, 4);
  assertEquals(st.streams.length, 1);
  assertEquals(st.streams[0].interrupted, undefined);
  const reattached = recorder.events("target").find((e) => e.text === "page reattached");
  assert(reattached, JSON.stringify(recorder.events("target")));
  assertEquals(JSON.parse(String(reattached.data)).same_target, true);
  const resumed = recorder.events("connection").find((e) => e.level === "info");
  assertEquals(resumed?.text, "reconnected after 600 ms (2 attempts)");
  assertEquals(JSON.parse(String(resumed?.data)), {
    outage_ms: 600,
    attempts: 2,
    readopted: ["p1"],
    closed: [],
    added: [],
  });
  await capture.stop();
});

Deno.test("capture outage: a re-adoption in an attempt that failed moves the gap's end to the final one; ordinals go on from the latest stream", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.lose();
  session.clockMs = 200;
  const first = new FakePage("p1", "T1");
  session.add(first, "readopted");
  session.frame(first);
  first.markClosed(); // the attempt failed after re-adopting: the session closes the page again
  session.clockMs = 900;
  const second = new FakePage("p1", "T9");
  session.add(second, "readopted");
  session.frame(second);
  session.reconnected({ lost_at_ms: 100, attempts: 3, readopted: ["p1"], closed: [], added: [] });
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "disconnected").map((g) => g.end_ns), [9e8]);
  assertEquals(recorder.of("frame").map((f) => f.ordinal), [1, 2, 3]);
  const reattached = recorder.events("target").filter((e) => e.text === "page reattached");
  assertEquals(reattached.map((e) => JSON.parse(String(e.data)).same_target), [true, false]);
  await settle();
});

Deno.test("capture outage: a page that did not come back ends its gap when dropped; an added page gets its own target row", () => {
  const p1 = new FakePage("p1", "T1");
  const p2 = new FakePage("p2", "T2");
  const { session, recorder } = setup(p1, p2);
  session.clockMs = 100;
  session.lose();
  assertEquals(recorder.of("gap").map((g) => g.row.page_id), ["p1", "p2"]);
  session.clockMs = 300;
  session.add(new FakePage("p1", "T1"), "readopted");
  session.remove(p2);
  session.add(new FakePage("p3", "T3"));
  session.clockMs = 400;
  session.reconnected({ lost_at_ms: 100, attempts: 1, readopted: ["p1"], closed: ["p2"], added: ["p3"] });
  const ends = recorder.of("gap_end").filter((g) => g.kind === "disconnected");
  assertEquals(ends.map((g) => [g.page_id, g.end_ns]), [["p2", 3e8], ["p1", 3e8]]);
  assertEquals(recorder.of("target_closed").map((t) => t.page_id), ["p2"]);
  assertEquals(recorder.of("target").map((t) => t.row.page_id), ["p1", "p2", "p3"]);
  assertEquals(recorder.events("target").filter((e) => e.text === "page closed").map((e) => e.page_id), [
    "p2",
  ]);
});

Deno.test("capture outage: when the window runs out, the reconnect-failed event and every open gap's end precede the flush and session_end", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.lose();
  session.clockMs = 5_100;
  if (session.connection.state === "reconnecting") {
    session.connection.attempts = 9;
    session.connection.last_error = "connect ECONNREFUSED 127.0.0.1:9222";
  }
  session.end("reconnect_window_exhausted");
  await settle();
  await capture.stop();
  const order = recorder.log.map((m) => m.type);
  const gapEnd = recorder.log.findIndex((m) => m.type === "gap_end" && m.kind === "disconnected");
  const failed = recorder.log.findIndex((m) => m.type === "event" && m.row.level === "error");
  const flush = order.indexOf("flush");
  const end = order.indexOf("session_end");
  assert(failed >= 0 && gapEnd >= 0 && failed < flush && gapEnd < flush && flush < end, order.join());
  const gapEndRow = recorder.log[gapEnd];
  assertEquals(gapEndRow.type === "gap_end" ? gapEndRow.end_ns : -1, 5.1e9);
  const ev = recorder.events("connection").find((e) => e.level === "error");
  assert(
    String(ev?.text).startsWith("reconnect failed: the browser did not come back within 5000 ms (9 attempts"),
  );
  assertEquals(JSON.parse(String(ev?.data)).outage_ms, 5_000);
  const sessionEnd = recorder.of("session_end")[0];
  assertEquals(sessionEnd.end_reason, "reconnect_window_exhausted");
});

Deno.test("capture crash: a crashed gap on that page only, ended by its first frame after recovery; the screencast restarts and ordinals continue", async () => {
  const p1 = new FakePage("p1", "T1");
  const p2 = new FakePage("p2", "T2");
  const { session, recorder, capture } = setup(p1, p2);
  session.frame(p1);
  session.frame(p2);
  session.clockMs = 200;
  session.crash(p1);
  const gaps = recorder.of("gap");
  assertEquals(gaps.map((g) => [g.row.page_id, g.row.kind, g.row.start_ns]), [["p1", "crashed", 2e8]]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), ["crashed", undefined]);
  const crash = recorder.events("crash");
  assertEquals(crash.map((e) => [e.page_id, e.level, e.text, e.at_ns]), [[
    "p1",
    "error",
    "renderer crashed (crashed)",
    2e8,
  ]]);
  assertEquals(JSON.parse(String(crash[0].data)), { status: "crashed", error_code: 7 });
  session.clockMs = 250;
  session.frame(p2);
  session.frame(p1); // in flight before the reload: does not end the gap
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "crashed").length, 0);
  const starts = p1.sent.filter((m) => m === "Page.startScreencast").length;
  session.clockMs = 400;
  session.recover(p1);
  await settle();
  assertEquals(p1.sent.filter((m) => m === "Page.startScreencast").length, starts + 1);
  session.clockMs = 450;
  session.frame(p1);
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "crashed").map((g) => g.end_ns), [4.5e8]);
  assertEquals(recorder.of("frame").filter((f) => f.page_id === "p1").map((f) => f.ordinal), [1, 2, 3]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), [undefined, undefined]);
  await capture.stop();
});

Deno.test("capture crash: a crashed page closed before it recovered ends its gap at the close", () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 50;
  session.crash(p1);
  session.clockMs = 80;
  session.remove(p1);
  assertEquals(recorder.of("gap_end").map((g) => [g.kind, g.end_ns]), [["crashed", 8e7]]);
});

Deno.test("capture crash: Chrome keeping its screencast across the crash ('already active') is no stream error; the gap still ends at the first frame", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.crash(p1);
  p1.refuseStart = "Screencast is already active";
  session.clockMs = 300;
  session.recover(p1);
  await settle();
  await settle();
  assertEquals(recorder.of("gap").map((g) => g.row.kind), ["crashed"]);
  session.clockMs = 350;
  session.frame(p1);
  assertEquals(recorder.of("gap_end").map((g) => [g.kind, g.end_ns]), [["crashed", 3.5e8]]);
});

Deno.test("capture crash: a screencast that cannot start again ends the crash gap at the recovery and opens a stream_error gap", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder } = setup(p1);
  session.frame(p1);
  session.clockMs = 100;
  session.crash(p1);
  p1.refuseStart = "Internal error";
  session.clockMs = 300;
  session.recover(p1);
  for (let i = 0; i < 10; i++) await settle();
  assertEquals(recorder.of("gap_end").map((g) => [g.kind, g.end_ns]), [["crashed", 3e8]]);
  const kinds = recorder.of("gap").map((g) => [g.row.kind, g.row.start_ns]);
  assertEquals(kinds, [["crashed", 1e8], ["stream_error", 3e8]]);
});

Deno.test("capture crash: a page re-adopted still crashed gets its crash gap again from the resume; no screencast until it recovers", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  session.frame(p1);
  session.clockMs = 200;
  session.crash(p1);
  session.clockMs = 500;
  session.lose();
  // The same target re-adopted: the registry carried its crash (Chrome's renderer is still gone).
  const again = new FakePage("p1", "T1");
  again.crash = { at_ms: 200, status: "crashed", error_code: 7 };
  session.clockMs = 900;
  session.add(again, "readopted");
  await settle();
  assertEquals(again.sent.filter((m) => m === "Page.startScreencast").length, 0, "nothing renders yet");
  session.clockMs = 950;
  session.reconnected({ lost_at_ms: 500, attempts: 1, readopted: ["p1"], closed: [], added: [] });
  const gaps = recorder.of("gap").map((g) => [g.row.kind, g.row.start_ns]);
  assertEquals(gaps, [["crashed", 2e8], ["disconnected", 5e8], ["crashed", 9e8]]);
  const ends = recorder.of("gap_end").map((g) => [g.kind, g.end_ns]);
  assertEquals(ends, [["crashed", 5e8], ["disconnected", 9e8]]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), ["crashed"]);
  // A reload: the screencast starts, and the first frame ends the reopened gap.
  again.crash = undefined;
  session.clockMs = 1_200;
  session.recover(again);
  await settle();
  assertEquals(again.sent.filter((m) => m === "Page.startScreencast").length, 1);
  session.clockMs = 1_300;
  session.frame(again);
  assertEquals(recorder.of("gap_end").filter((g) => g.kind === "crashed").map((g) => g.end_ns), [5e8, 1.3e9]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), [undefined]);
  await capture.stop();
});

Deno.test("capture crash: a page re-adopted crashed that recovered before the resume completes starts its screencast then", async () => {
  const p1 = new FakePage("p1", "T1");
  const { session, recorder, capture } = setup(p1);
  session.crash(p1);
  session.clockMs = 500;
  session.lose();
  const again = new FakePage("p1", "T1");
  again.crash = { at_ms: 0, status: "crashed", error_code: 7 };
  session.add(again, "readopted");
  again.crash = undefined; // its document committed before the reconnection completed
  session.clockMs = 900;
  session.reconnected({ lost_at_ms: 500, attempts: 1, readopted: ["p1"], closed: [], added: [] });
  await settle();
  assertEquals(again.sent.filter((m) => m === "Page.startScreencast").length, 1);
  assertEquals(recorder.of("gap").map((g) => g.row.kind), ["crashed", "disconnected"]);
  assertEquals(capture.status().streams.map((s) => s.interrupted), [undefined]);
  await capture.stop();
});

Deno.test("capture: a browser that went away without a reconnection is one connection event before the flush; a stop is none", async () => {
  const exited = setup(new FakePage("p1", "T1"));
  exited.session.end("browser_exited");
  await exited.capture.stop();
  const ev = exited.recorder.events("connection");
  assertEquals(ev.map((e) => [e.level, e.text]), [["error", "the browser process exited; session ended"]]);
  const order = exited.recorder.log.map((m) => m.type);
  assert(order.indexOf("event") < order.indexOf("flush"), order.join());

  const stopped = setup(new FakePage("p1", "T1"));
  stopped.session.end("stopped");
  await stopped.capture.stop();
  assertEquals(stopped.recorder.events("connection"), []);
});
