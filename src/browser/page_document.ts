/**
 * A page's current document for source-mapping inline-script frames, read from the renderer rather than
 * fetched again (a second GET of an app's page could have effects). One read serves every error row of
 * a burst: the text is kept per page for a few seconds, keyed by the document's loader and URL, so a
 * reload or navigation reads the new one.
 */

import { type FrameOptions, isLoopbackUrl } from "./source_maps.ts";
import type { PageTarget } from "./targets.ts";
import type { NetworkLog } from "./network_log.ts";

/** How long one read of a document's text is reused. */
export const DOCUMENT_TEXT_TTL_MS = 5_000;

interface KeptText {
  key: string;
  text: Promise<string | null>;
}

/** At most one document text per page, dropped by a timer once it is stale (a document can be large). */
const kept = new WeakMap<PageTarget, KeptText>();

/** Reads the document: its resource content, else its response in Chrome's network buffer (no-store). */
async function readDocument(page: PageTarget, frameId: string, url: string, log?: NetworkLog) {
  const decode = (r: { body?: string; content?: string; base64Encoded: boolean }) => {
    const text = r.body ?? r.content ?? "";
    return r.base64Encoded ? new TextDecoder().decode(Uint8Array.fromBase64(text)) : text;
  };
  try {
    return decode(await page.send("Page.getResourceContent", { frameId, url }));
  } catch {
    const requestId = log?.latestDocument(page.id, url);
    return requestId ? decode(await page.send("Network.getResponseBody", { requestId })) : null;
  }
}

/** The page's document as FrameOptions wants it; `ttlMs` is injectable for tests. */
export function pageDocument(
  page: PageTarget,
  log?: NetworkLog,
  ttlMs = DOCUMENT_TEXT_TTL_MS,
): NonNullable<FrameOptions["document"]> {
  const url = page.url;
  const frameId = page.mainFrameId;
  const key = `${page.loaderId ?? ""}\n${url}`;
  return {
    url,
    text: () => {
      if (!frameId || !isLoopbackUrl(url)) return Promise.resolve(null);
      const hit = kept.get(page);
      if (hit?.key === key) return hit.text;
      const entry: KeptText = { key, text: readDocument(page, frameId, url, log).catch(() => null) };
      kept.set(page, entry);
      const timer = setTimeout(() => {
        if (kept.get(page) === entry) kept.delete(page);
      }, ttlMs);
      Deno.unrefTimer(timer);
      return entry.text;
    },
  };
}
