/**
 * Storage seeds: cookies, localStorage and sessionStorage written into the run's page before start_url's
 * scripts see them. Called once, while the page is still on about:blank.
 *
 * Cookies go in at once (Network.setCookies with their URL) and are read back, so one Chrome refused (a
 * SameSite=None cookie without Secure, say) fails the run instead of vanishing.
 *
 * Web storage cannot be written from here: DOMStorage.setDOMStorageItem answers "Frame not found for the
 * given storage id" (Chromium 156) until a frame of the origin exists, and sessionStorage belongs to the
 * tab anyway. So each seeded origin gets a document-start script in an isolated world of this page: in the
 * first top-level document of that origin it writes the entries (storage is shared with the main world,
 * and isolated-world document scripts run before any page script), then tells us through a binding only
 * that world has, and the script is removed, so a later document of the origin never overwrites what the
 * page changed since. An origin the run never visits is never written.
 */
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { httpOrigin, normalizeOrigins } from "./guard_match.ts";

const log = logger("scenario", "storage");

export interface StorageEntry {
  name: string;
  value: string;
}

export interface StorageSeedPlan {
  cookies: {
    name: string;
    value: string;
    url: string;
    http_only: boolean;
    secure: boolean;
    same_site: "Strict" | "Lax" | "None";
  }[];
  local_storage: { origin: string; entries: StorageEntry[] }[];
  session_storage: { origin: string; entries: StorageEntry[] }[];
}

/** The isolated world the seed scripts run in, and the binding they report through. */
export const STORAGE_SEED_WORLD = "krometrail-storage-seed";
export const STORAGE_SEED_BINDING = "__krometrailStorageSeeded";

const SEED_TIMEOUT_MS = 5_000;

export function originNotAllowed(origin: string, allowed: readonly string[], what: string): ToolError {
  return new ToolError({
    code: "origin_not_allowed",
    message: `The ${what} origin ${origin} is not in allowed_origins [${allowed.join(", ")}].`,
    retry: "never",
    recovery: `Add ${origin} to allowed_origins, or remove the ${what}.`,
    details: { origin, allowed_origins: [...allowed] },
  });
}

function seedFailed(message: string, details: Record<string, unknown>): ToolError {
  return new ToolError({
    code: "storage_seed_failed",
    message,
    retry: "never",
    recovery:
      "Fix the seed so the browser accepts it (SameSite=None needs secure: true; Secure needs https " +
      "or localhost), or remove it.",
    details,
  });
}

/** Per origin, the entries of each storage area, in declaration order (a later entry of a name wins). */
export function groupByOrigin(
  plan: StorageSeedPlan,
): Map<string, { local: StorageEntry[]; session: StorageEntry[] }> {
  const out = new Map<string, { local: StorageEntry[]; session: StorageEntry[] }>();
  const slot = (origin: string) => {
    const o = httpOrigin(origin) ?? origin;
    let s = out.get(o);
    if (!s) out.set(o, s = { local: [], session: [] });
    return s;
  };
  for (const seed of plan.local_storage) slot(seed.origin).local.push(...seed.entries);
  for (const seed of plan.session_storage) slot(seed.origin).session.push(...seed.entries);
  return out;
}

/** The document-start script of one origin. Values travel as JSON data, never as code. */
export function seedScript(origin: string, seed: { local: StorageEntry[]; session: StorageEntry[] }): string {
  // U+2028/2029 escaped too, so the literal reads the same in any JavaScript parser.
  const data = JSON.stringify({ origin, local: seed.local, session: seed.session })
    .replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
  return `(() => {
  const seed = ${data};
  if (window !== window.top || location.origin !== seed.origin) return;
  for (const e of seed.local) localStorage.setItem(e.name, e.value);
  for (const e of seed.session) sessionStorage.setItem(e.name, e.value);
  globalThis[${JSON.stringify(STORAGE_SEED_BINDING)}](seed.origin);
})();`;
}

/** Refuses a seed outside the origin set (validation already did; this is defense in depth). */
export function checkSeedOrigins(plan: StorageSeedPlan, allowedOrigins: readonly string[]): void {
  const allowed = normalizeOrigins(allowedOrigins);
  const check = (url: string, what: string) => {
    const origin = httpOrigin(url) ?? url;
    if (!allowed.has(origin)) throw originNotAllowed(origin, allowedOrigins, what);
  };
  for (const c of plan.cookies) check(c.url, "cookie");
  for (const s of plan.local_storage) check(s.origin, "local_storage seed");
  for (const s of plan.session_storage) check(s.origin, "session_storage seed");
}

export async function seedStorage(
  session: BrowserSession,
  page: PageTarget,
  plan: StorageSeedPlan,
  allowedOrigins: string[],
): Promise<void> {
  checkSeedOrigins(plan, allowedOrigins);
  if (plan.cookies.length > 0) await seedCookies(page, plan.cookies);
  const origins = groupByOrigin(plan);
  if (origins.size === 0) return;

  // Script identifiers by origin, removed once that origin's first document has written its seed.
  const scripts = new Map<string, string>();
  const done = new Set<string>();
  const off = session.onPageEvent("Runtime.bindingCalled", (p, { name, payload }) => {
    if (p !== page || name !== STORAGE_SEED_BINDING) return;
    done.add(payload);
    const id = scripts.get(payload);
    if (id === undefined) return;
    scripts.delete(payload);
    page.send("Page.removeScriptToEvaluateOnNewDocument", { identifier: id }).catch(() => {});
    if (scripts.size === 0) off();
  });
  try {
    await page.send(
      "Runtime.addBinding",
      { name: STORAGE_SEED_BINDING, executionContextName: STORAGE_SEED_WORLD },
      SEED_TIMEOUT_MS,
    );
    for (const [origin, seed] of origins) {
      const { identifier } = await page.send("Page.addScriptToEvaluateOnNewDocument", {
        source: seedScript(origin, seed),
        worldName: STORAGE_SEED_WORLD,
      }, SEED_TIMEOUT_MS);
      if (done.has(origin)) {
        page.send("Page.removeScriptToEvaluateOnNewDocument", { identifier }).catch(() => {});
      } else scripts.set(origin, identifier);
    }
  } catch (err) {
    off();
    throw err;
  }
  log.debug("storage seeds armed for {n} origin(s)", { n: origins.size });
}

async function seedCookies(page: PageTarget, cookies: StorageSeedPlan["cookies"]): Promise<void> {
  try {
    await page.send("Network.setCookies", {
      cookies: cookies.map((c) => ({
        name: c.name,
        value: c.value,
        url: c.url,
        secure: c.secure,
        httpOnly: c.http_only,
        sameSite: c.same_site,
      })),
    }, SEED_TIMEOUT_MS);
  } catch (err) {
    throw seedFailed(`The browser refused the cookie seeds: ${err instanceof Error ? err.message : err}`, {
      cookies: cookies.map((c) => c.name),
    });
  }
  const { cookies: stored } = await page.send("Network.getCookies", {
    urls: [...new Set(cookies.map((c) => c.url))],
  }, SEED_TIMEOUT_MS);
  for (const c of cookies) {
    if (!stored.some((s) => s.name === c.name)) {
      throw seedFailed(`The browser did not keep the cookie ${c.name} for ${httpOrigin(c.url) ?? c.url}.`, {
        cookie: c.name,
        origin: httpOrigin(c.url),
        secure: c.secure,
        same_site: c.same_site,
      });
    }
  }
}
