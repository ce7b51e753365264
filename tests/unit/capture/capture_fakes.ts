/** A fake session and recorder for SessionCapture tests: the calls capture makes and the rows it sends. */
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

export class FakePage {
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

export class FakeSession {
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

export class FakeRecorder {
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

export function setup(...pages: FakePage[]) {
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

export const settle = () => new Promise((r) => setTimeout(r, 0));
