import type { Protocol } from "devtools-protocol";
import type { PageTarget } from "../browser/targets.ts";
import type { StorageArtifact } from "./capture.ts";
import { currentUrl, readPageStorage } from "./step_capture_page.ts";
import { type Redactor, storedValue } from "./step_capture_text.ts";

/**
 * A cookie the page wrote reaches the browser's cookie store asynchronously (measured: under load a cookie
 * set by a click's handler was not yet in Network.getCookies when the step's capture ran), so the store is
 * read again, this long at most, until it agrees with what the page itself sees in document.cookie.
 */
export const COOKIE_AGREEMENT_MS = 1_000;
const COOKIE_POLL_MS = 25;

/** name=value pairs of a document.cookie string, as the page sees them. */
export function documentCookies(raw: string): Set<string> {
  return new Set(raw.split(";").map((p) => p.trim()).filter((p) => p !== ""));
}

/** Whether the store's script-visible cookies are exactly the page's view. */
export function cookiesAgree(store: readonly Protocol.Network.Cookie[], page: Set<string>): boolean {
  const visible = store.filter((c) => !c.httpOnly).map((c) =>
    c.name === "" ? c.value : `${c.name}=${c.value}`
  );
  return visible.length === page.size && visible.every((c) => page.has(c));
}

async function pageCookies(
  page: PageTarget,
  url: string,
  pageView: string | null,
  timeoutMs: number,
): Promise<Protocol.Network.Cookie[]> {
  if (!/^https?:/i.test(url)) return [];
  const read = async () => (await page.send("Network.getCookies", { urls: [url] }, timeoutMs)).cookies;
  let cookies = await read();
  if (pageView === null) return cookies;
  const view = documentCookies(pageView);
  for (const end = Date.now() + COOKIE_AGREEMENT_MS; !cookiesAgree(cookies, view) && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, COOKIE_POLL_MS));
    cookies = await read();
  }
  return cookies;
}

const order = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0;

/**
 * The page's own storage: the cookies Chrome would send to the page's URL (not every cookie of every
 * allowed origin: what the page sees is what the step did), and the local and session storage of its
 * origin. Values are digests; a value that is or holds a declared secret has none.
 */
export async function captureStorage(
  ctx: { page: PageTarget; redactor: Redactor },
  timeoutMs: number,
): Promise<StorageArtifact> {
  const [url, read] = await Promise.all([
    currentUrl(ctx.page, timeoutMs),
    readPageStorage(ctx.page, timeoutMs),
  ]);
  const cookies = await pageCookies(ctx.page, url, read.cookie, timeoutMs);
  const text = (s: string) => ctx.redactor.text(s);
  const entries = (list: Array<[string, string]> | null) =>
    (list ?? []).map(([name, value]) => ({ name: text(name), ...storedValue(value, ctx.redactor) }))
      .sort((a, b) => order(a.name, b.name));
  return {
    cookies: cookies.map((c) => ({
      name: text(c.name),
      domain: c.domain,
      path: c.path,
      secure: c.secure,
      http_only: c.httpOnly,
      same_site: c.sameSite ?? null,
      ...storedValue(c.value, ctx.redactor),
    })).sort((a, b) => order(a.name, b.name) || order(a.domain, b.domain) || order(a.path, b.path)),
    local_storage: entries(read.local),
    session_storage: entries(read.session),
    origin: read.origin === "null" ? null : read.origin,
  };
}
