/**
 * A write through CDP (Storage.setCookies, DOMStorage.setDOMStorageItem) lands in the browser's store and
 * reaches the renderer's cached copy asynchronously, so "set, then the page reads it" could race. After a
 * change the tools wait, bounded, until the page itself (document.cookie, localStorage, sessionStorage read
 * in an isolated world) agrees with the store; when it does not in time they say so instead of implying it.
 */
import type { PageTarget } from "../browser/targets.ts";
import { currentUrl, type PageStorage, readPageStorage } from "../scenario/step_capture_page.ts";
import { COOKIE_AGREEMENT_MS, cookiesAgree, documentCookies } from "../scenario/step_capture_storage.ts";
import { urlCookies } from "./cookies.ts";

const POLL_MS = 25;
const READ_MS = 2_000;

/** `agrees` over the page's own view until it holds or the bound passes; true when nothing can be read. */
async function until(
  page: PageTarget,
  agrees: (view: PageStorage) => Promise<boolean> | boolean,
): Promise<boolean> {
  if (page.closed || page.dialog) return true;
  for (const end = Date.now() + COOKIE_AGREEMENT_MS;;) {
    const view = await readPageStorage(page, READ_MS).catch(() => undefined);
    if (!view) return true;
    if (await agrees(view)) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Whether the page's document.cookie shows what the store would send to the page's URL. */
export async function pageSeesCookies(page: PageTarget): Promise<boolean> {
  const url = await currentUrl(page, READ_MS).catch(() => "");
  if (!/^https?:/i.test(url)) return true;
  return until(page, async (view) => {
    if (view.cookie === null) return true;
    return cookiesAgree(await urlCookies(page, url), documentCookies(view.cookie));
  });
}

/** Whether the page's main document shows these entries of its own origin's storage area. */
export function pageSeesStorage(
  page: PageTarget,
  origin: string,
  area: "local" | "session",
  entries: readonly [string, string][],
): Promise<boolean> {
  const want = JSON.stringify([...entries].sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return until(page, (view) => {
    if (view.origin !== origin) return true;
    const seen = area === "local" ? view.local : view.session;
    return seen === null || JSON.stringify(seen) === want;
  });
}
