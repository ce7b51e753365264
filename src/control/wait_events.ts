import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { NETWORK_ENABLE_PARAMS } from "../browser/events.ts";

/** One poll of a wait: whether the condition holds, and what was seen. */
export interface Reading {
  done: boolean;
  observed: Record<string, unknown>;
}

/** How a wait polls one condition; dispose removes event subscriptions. */
export interface Checker {
  check: (budgetMs: number) => Promise<Reading>;
  interval: number;
  dispose?: () => void;
}

/** Event-driven waits only read local state, so they can poll often at no cost to the page. */
const LOCAL_POLL_MS = 25;
const URL_PREVIEW = 200;
const clip = (s: string) => (s.length > URL_PREVIEW ? s.slice(0, URL_PREVIEW - 1) + "…" : s);

/** Main-frame navigations committed after the wait began (document or same-document). */
export function navigationWatch(session: BrowserSession, page: PageTarget, urlIncludes?: string): Checker {
  const seen: Array<{ url: string; same_document: boolean }> = [];
  const offs = [
    session.onPageEvent("Page.frameNavigated", (p, { frame }) => {
      if (p === page && !frame.parentId) {
        seen.push({ url: frame.url + (frame.urlFragment ?? ""), same_document: false });
      }
    }),
    session.onPageEvent("Page.navigatedWithinDocument", (p, e) => {
      if (p === page && e.frameId === page.mainFrameId) seen.push({ url: e.url, same_document: true });
    }),
  ];
  return {
    check: () => {
      const hit = seen.find((n) => urlIncludes === undefined || n.url.includes(urlIncludes));
      return Promise.resolve(
        hit ? { done: true, observed: { ...hit, navigations_seen: seen.length } } : {
          done: false,
          observed: { navigations_seen: seen.length, last_url: clip(seen.at(-1)?.url ?? page.url) },
        },
      );
    },
    interval: LOCAL_POLL_MS,
    dispose: () => offs.forEach((off) => off()),
  };
}

/**
 * Quiet means no request of this page in flight for `quietMs`. Only requests seen after the wait
 * began are tracked (the page's earlier request ids are not known here).
 */
export async function networkWatch(
  session: BrowserSession,
  page: PageTarget,
  quietMs: number,
): Promise<Checker> {
  const inflight = new Set<string>();
  let lastActivity = session.now();
  let seen = 0;
  const done = (p: PageTarget, requestId: string) => {
    if (p !== page || !inflight.delete(requestId)) return;
    lastActivity = session.now();
  };
  const offs = [
    session.onPageEvent("Network.requestWillBeSent", (p, e) => {
      if (p !== page) return;
      if (!inflight.has(e.requestId)) seen++;
      inflight.add(e.requestId);
      lastActivity = session.now();
    }),
    session.onPageEvent("Network.loadingFinished", (p, e) => done(p, e.requestId)),
    session.onPageEvent("Network.loadingFailed", (p, e) => done(p, e.requestId)),
  ];
  // Already on when events are recorded; enabling again is idempotent and covers the other case.
  await page.send("Network.enable", NETWORK_ENABLE_PARAMS).catch(() => {});
  return {
    check: () => {
      const quietFor = inflight.size === 0 ? session.now() - lastActivity : 0;
      return Promise.resolve({
        done: quietFor >= quietMs,
        observed: { in_flight: inflight.size, quiet_for_ms: Math.round(quietFor), requests_seen: seen },
      });
    },
    interval: LOCAL_POLL_MS,
    dispose: () => offs.forEach((off) => off()),
  };
}
