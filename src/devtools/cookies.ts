/**
 * The session's cookie store, through one page's CDP session: Storage.getCookies / setCookies /
 * clearCookies act on that page's browser context (every page of a session shares it), Network.getCookies
 * answers which cookies a URL would be sent, Network.deleteCookies removes one by name, domain and path.
 */
import type { Protocol } from "devtools-protocol";
import type { PageTarget } from "../browser/targets.ts";
import { cdpMessage } from "../browser/cdp.ts";
import { ToolError } from "../errors.ts";

type Cookie = Protocol.Network.Cookie;

export const COOKIE_LIMITS = { list: 200, name: 4096, value: 4096 } as const;
const CDP_MS = 10_000;

/** A secret's placeholder: its length only, unless the caller asked for values. */
export function shownValue(value: string, show: boolean): string {
  return show ? value : `<${value.length} chars>`;
}

export interface CookieRow {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix seconds; -1 for a session cookie. */
  expires: number;
  http_only: boolean;
  secure: boolean;
  same_site: string | null;
  partitioned?: true;
}

export function cookieRow(c: Cookie, show: boolean): CookieRow {
  return {
    name: c.name,
    value: shownValue(c.value, show),
    domain: c.domain,
    path: c.path,
    expires: c.session || c.expires < 0 ? -1 : Math.round(c.expires),
    http_only: c.httpOnly,
    secure: c.secure,
    same_site: c.sameSite ?? null,
    ...(c.partitionKey ? { partitioned: true as const } : {}),
  };
}

export interface CookieFilter {
  name?: string;
  /** A host or cookie domain: matches the cookie's own domain and any domain it is set on above it. */
  domain?: string;
  path?: string;
}

const bare = (d: string) => d.replace(/^\./, "").toLowerCase();

export function matchesFilter(c: Cookie, f: CookieFilter): boolean {
  if (f.name !== undefined && c.name !== f.name) return false;
  if (f.path !== undefined && c.path !== f.path) return false;
  if (f.domain !== undefined) {
    const want = bare(f.domain);
    const have = bare(c.domain);
    // A host-only cookie of the host, or a domain cookie the host is inside.
    if (have !== want && !(c.domain.startsWith(".") && want.endsWith(`.${have}`))) return false;
  }
  return true;
}

/** Every cookie of the page's browser context. */
export async function contextCookies(page: PageTarget): Promise<Cookie[]> {
  try {
    return (await page.send("Storage.getCookies", {}, CDP_MS)).cookies;
  } catch {
    // Older or embedded Chromium builds without the Storage domain on a page session.
    return (await page.send("Network.getAllCookies", undefined, CDP_MS)).cookies;
  }
}

/** The cookies Chrome would send with a request to `url`. */
export async function urlCookies(page: PageTarget, url: string): Promise<Cookie[]> {
  return (await page.send("Network.getCookies", { urls: [url] }, CDP_MS)).cookies;
}

export function cookieRejected(name: string, where: string, reason: string): ToolError {
  return new ToolError({
    code: "cookie_rejected",
    message: `The browser did not keep the cookie ${JSON.stringify(name)} for ${where}: ${reason}.`,
    retry: "never",
    recovery:
      "Fix the cookie: SameSite=None needs secure: true; secure needs https (or localhost); the domain must be the URL's host or a parent of it; name and value together at most 4096 bytes.",
    details: { name, where },
  });
}

export interface SetCookieArgs {
  name: string;
  value: string;
  url?: string;
  domain?: string;
  path?: string;
  expires?: number;
  http_only?: boolean;
  secure?: boolean;
  same_site?: "Strict" | "Lax" | "None";
}

/** Sets one cookie and reads it back, so a cookie Chrome refused fails instead of vanishing. */
export async function setCookie(page: PageTarget, a: SetCookieArgs): Promise<Cookie> {
  const param: Protocol.Network.CookieParam = {
    name: a.name,
    value: a.value,
    // Path "/" unless given: a cookie set from a tool is for the site, not the directory of one page.
    ...(a.domain !== undefined ? { domain: a.domain } : { url: a.url }),
    path: a.path ?? "/",
    ...(a.expires !== undefined && a.expires !== -1 ? { expires: a.expires } : {}),
    ...(a.http_only !== undefined ? { httpOnly: a.http_only } : {}),
    ...(a.secure !== undefined ? { secure: a.secure } : {}),
    ...(a.same_site !== undefined ? { sameSite: a.same_site as Protocol.Network.CookieSameSite } : {}),
  };
  const where = a.domain ?? a.url ?? "?";
  try {
    await page.send("Storage.setCookies", { cookies: [param] }, CDP_MS);
  } catch (err) {
    throw cookieRejected(a.name, where, cdpMessage(err));
  }
  const stored = (await contextCookies(page)).filter((c) =>
    c.name === a.name && c.path === param.path &&
    (a.domain !== undefined
      ? bare(c.domain) === bare(a.domain)
      : a.url
      ? hostOf(a.url) === bare(c.domain)
      : true)
  );
  const kept = stored.find((c) => c.value === a.value);
  if (!kept) {
    throw cookieRejected(a.name, where, stored.length > 0 ? "another value stayed" : "no cookie was stored");
  }
  return kept;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return "";
  }
}

/** Deletes exactly these cookies (by name, domain, path and partition). */
export async function deleteCookies(page: PageTarget, cookies: readonly Cookie[]): Promise<void> {
  for (const c of cookies) {
    await page.send("Network.deleteCookies", {
      name: c.name,
      domain: c.domain,
      path: c.path,
      ...(c.partitionKey ? { partitionKey: c.partitionKey } : {}),
    }, CDP_MS);
  }
}

export async function clearAllCookies(page: PageTarget): Promise<void> {
  try {
    await page.send("Storage.clearCookies", {}, CDP_MS);
  } catch {
    await page.send("Network.clearBrowserCookies", undefined, CDP_MS);
  }
}
