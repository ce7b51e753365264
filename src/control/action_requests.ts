import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { wallMs } from "../capture/screencast.ts";

/** A watch outlives no action by more than this, even when the action never reaches its observation. */
const WATCH_LIMIT_MS = 60_000;

/** The requests an action started: the settle watch waits for their results to paint. */
export interface ActionRequests {
  /** Called when the input is sent: requests seen from then on are the action's. */
  arm(): void;
  /** When arm() was called (Unix ms, our clock); undefined before. */
  readonly armedAtMs: number | undefined;
  /** Resolves when none of the action's requests is loading, with when the last finished (Unix ms). */
  quiet(): Promise<number | undefined>;
  stop(): void;
}

/** Follows one page's requests from before the dispatch, so a request begun by the input is not missed. */
export function watchRequests(session: BrowserSession, page: PageTarget): ActionRequests {
  const loading = new Set<string>();
  let armedAtMs: number | undefined;
  let lastFinishedMs: number | undefined;
  let idle: Array<() => void> = [];
  const done = (p: PageTarget, requestId: string) => {
    if (p !== page || !loading.delete(requestId)) return;
    lastFinishedMs = wallMs();
    if (loading.size > 0) return;
    for (const wake of idle) wake();
    idle = [];
  };
  const offs = [
    session.onPageEvent("Network.requestWillBeSent", (p, e) => {
      if (p !== page || armedAtMs === undefined || loading.has(e.requestId)) return;
      loading.add(e.requestId);
    }),
    session.onPageEvent("Network.loadingFinished", (p, e) => done(p, e.requestId)),
    session.onPageEvent("Network.loadingFailed", (p, e) => done(p, e.requestId)),
  ];
  const stop = () => {
    clearTimeout(limit);
    offs.forEach((off) => off());
    offs.length = 0;
    for (const wake of idle) wake();
    idle = [];
  };
  const limit = setTimeout(stop, WATCH_LIMIT_MS);
  Deno.unrefTimer(limit);
  return {
    arm: () => (armedAtMs = wallMs()),
    get armedAtMs() {
      return armedAtMs;
    },
    quiet: () =>
      loading.size === 0 || offs.length === 0
        ? Promise.resolve(lastFinishedMs)
        : new Promise((r) => idle.push(() => r(lastFinishedMs))),
    stop,
  };
}
