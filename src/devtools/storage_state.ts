/**
 * Playwright's storage-state JSON (`context.storageState()` / `newContext({storageState})`), the file a
 * logged-in state travels in between tools. Pure: parse and validate a file, produce one from Chrome's
 * cookies and localStorage, and map its cookies to CDP's CookieParam the way Playwright itself does
 * (playwright-core 1.65 `toChromiumCookie`: domain and path as given, so Chrome makes of a "127.0.0.1"
 * domain what it makes of Playwright's own call).
 *
 * Validation follows Playwright's protocol schema (SetNetworkCookie, SetOriginStorage): unknown keys are
 * tolerated as it tolerates them; the newer fields it writes (origins[].indexedDB / opfs, credentials,
 * cookie partitionKey) are accepted and, where we cannot load them, named as not loaded.
 */
import type { Protocol } from "devtools-protocol";
import { ToolError } from "../errors.ts";

export type SameSite = "Strict" | "Lax" | "None";

export interface StateCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  /** Unix seconds; -1 for a session cookie. */
  expires: number;
  httpOnly: boolean;
  secure: boolean;
  sameSite: SameSite;
  partitionKey?: string;
  _crHasCrossSiteAncestor?: boolean;
}

export interface StateOrigin {
  origin: string;
  localStorage: { name: string; value: string }[];
}

export interface StorageState {
  cookies: StateCookie[];
  origins: StateOrigin[];
}

/** A validated file: cookies as CDP takes them, origins, and the parts we do not load. */
export interface ParsedState {
  cookies: Protocol.Network.CookieParam[];
  origins: StateOrigin[];
  /** Field paths present in the file that this server does not load (IndexedDB, OPFS, passkeys). */
  not_loaded: string[];
}

export const STATE_LIMITS = {
  file_bytes: 16 * 1024 * 1024,
  cookies: 10_000,
  origins: 1_000,
  entries_per_origin: 10_000,
} as const;

/** Playwright's own cap (kMaxCookieExpiresDateInSeconds: 400 days past 2038 is refused). */
const MAX_EXPIRES_S = 253402300799;

export function invalidState(path: string, field: string, problem: string): ToolError {
  return new ToolError({
    code: "invalid_storage_state",
    message: `${path} is not a valid Playwright storage state: ${field}: ${problem}.`,
    retry: "never",
    recovery:
      "Fix that field (Playwright's format: {cookies: [{name, value, domain, path, expires, httpOnly, secure, sameSite}], origins: [{origin, localStorage: [{name, value}]}]}), or save the file again with save_storage_state or Playwright's context.storageState({path}). Nothing was loaded.",
    affected: { argument: "path" },
    details: { path, field, problem },
  });
}

type Obj = Record<string, unknown>;

const kind = (v: unknown): string => v === null ? "null" : Array.isArray(v) ? "array" : typeof v;

class Checker {
  constructor(readonly file: string) {}
  fail(field: string, problem: string): never {
    throw invalidState(this.file, field, problem);
  }
  object(v: unknown, field: string): Obj {
    if (typeof v !== "object" || v === null || Array.isArray(v)) {
      this.fail(field, `expected an object, got ${kind(v)}`);
    }
    return v as Obj;
  }
  array(v: unknown, field: string, max: number): unknown[] {
    if (!Array.isArray(v)) this.fail(field, `expected an array, got ${kind(v)}`);
    if (v.length > max) this.fail(field, `${v.length} items, over the limit of ${max}`);
    return v;
  }
  string(v: unknown, field: string): string {
    if (typeof v !== "string") this.fail(field, `expected a string, got ${kind(v)}`);
    return v;
  }
  optString(v: unknown, field: string): string | undefined {
    return v === undefined ? undefined : this.string(v, field);
  }
  optBool(v: unknown, field: string): boolean | undefined {
    if (v === undefined) return undefined;
    if (typeof v !== "boolean") this.fail(field, `expected true or false, got ${kind(v)}`);
    return v;
  }
}

/** The origin a storage entry belongs to: http(s) only, in its serialized form. */
export function serializedOrigin(raw: string): string | undefined {
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

function parseCookie(c: Checker, raw: unknown, at: string): Protocol.Network.CookieParam {
  const o = c.object(raw, at);
  const name = c.string(o.name, `${at}.name`);
  const value = c.string(o.value, `${at}.value`);
  const url = c.optString(o.url, `${at}.url`);
  const domain = c.optString(o.domain, `${at}.domain`);
  const path = c.optString(o.path, `${at}.path`);
  if (url !== undefined) {
    if (domain !== undefined || path !== undefined) {
      c.fail(`${at}.url`, "a cookie has either url or domain/path");
    }
    if (!serializedOrigin(url)) c.fail(`${at}.url`, "expected an http(s) URL");
  } else {
    if (domain === undefined || domain === "") c.fail(`${at}.domain`, "required (or url)");
    if (path === undefined || !path.startsWith("/")) c.fail(`${at}.path`, 'required, starting with "/"');
  }
  let expires: number | undefined;
  if (o.expires !== undefined) {
    if (typeof o.expires !== "number" || !Number.isFinite(o.expires)) {
      c.fail(`${at}.expires`, `expected a number, got ${kind(o.expires)}`);
    }
    if (o.expires !== -1 && (o.expires <= 0 || o.expires > MAX_EXPIRES_S)) {
      c.fail(`${at}.expires`, `${o.expires}: only -1 (session) or Unix seconds up to ${MAX_EXPIRES_S}`);
    }
    expires = o.expires;
  }
  const httpOnly = c.optBool(o.httpOnly, `${at}.httpOnly`);
  const secure = c.optBool(o.secure, `${at}.secure`);
  let sameSite: SameSite | undefined;
  if (o.sameSite !== undefined) {
    if (o.sameSite !== "Strict" && o.sameSite !== "Lax" && o.sameSite !== "None") {
      c.fail(`${at}.sameSite`, `expected "Strict", "Lax" or "None", got ${JSON.stringify(o.sameSite)}`);
    }
    sameSite = o.sameSite;
  }
  const partitionKey = c.optString(o.partitionKey, `${at}.partitionKey`);
  const crossSite = c.optBool(o._crHasCrossSiteAncestor, `${at}._crHasCrossSiteAncestor`);
  return {
    name,
    value,
    ...(url !== undefined ? { url } : { domain, path }),
    // -1 and absent alike make a session cookie; CDP takes -1 as "no expiry" too, as Playwright relies on.
    ...(expires !== undefined && expires !== -1 ? { expires } : {}),
    ...(httpOnly !== undefined ? { httpOnly } : {}),
    ...(secure !== undefined ? { secure } : {}),
    ...(sameSite !== undefined ? { sameSite: sameSite as Protocol.Network.CookieSameSite } : {}),
    ...(partitionKey !== undefined
      ? { partitionKey: { topLevelSite: partitionKey, hasCrossSiteAncestor: crossSite ?? true } }
      : {}),
  };
}

function parseOrigin(c: Checker, raw: unknown, at: string, notLoaded: string[]): StateOrigin {
  const o = c.object(raw, at);
  const given = c.string(o.origin, `${at}.origin`);
  const origin = serializedOrigin(given);
  if (!origin) {
    c.fail(`${at}.origin`, `expected an http(s) origin, got ${JSON.stringify(given.slice(0, 100))}`);
  }
  const entries = c.array(o.localStorage, `${at}.localStorage`, STATE_LIMITS.entries_per_origin).map(
    (e, i) => {
      const eo = c.object(e, `${at}.localStorage[${i}]`);
      return {
        name: c.string(eo.name, `${at}.localStorage[${i}].name`),
        value: c.string(eo.value, `${at}.localStorage[${i}].value`),
      };
    },
  );
  for (const extra of ["indexedDB", "opfs"]) {
    if (o[extra] === undefined) continue;
    const list = c.array(o[extra], `${at}.${extra}`, Number.MAX_SAFE_INTEGER);
    if (list.length > 0) notLoaded.push(`${at}.${extra}`);
  }
  return { origin, localStorage: entries };
}

/** Validates a storage-state document; `file` names it in errors. */
export function parseStorageState(text: string, file: string): ParsedState {
  const c: Checker = new Checker(file);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    // V8's message quotes the input: never echo the start of whatever file the path named.
    const at = err instanceof Error ? /position (\d+)/.exec(err.message)?.[1] : undefined;
    c.fail("(file)", `not JSON${at ? ` (the first error at character ${at})` : ""}`);
  }
  const top = c.object(doc, "(root)");
  const notLoaded: string[] = [];
  const cookies = top.cookies === undefined
    ? []
    : c.array(top.cookies, "cookies", STATE_LIMITS.cookies).map((v, i) => parseCookie(c, v, `cookies[${i}]`));
  const origins = top.origins === undefined
    ? []
    : c.array(top.origins, "origins", STATE_LIMITS.origins).map((v, i) =>
      parseOrigin(c, v, `origins[${i}]`, notLoaded)
    );
  if (top.credentials !== undefined) {
    if (c.array(top.credentials, "credentials", Number.MAX_SAFE_INTEGER).length > 0) {
      notLoaded.push("credentials");
    }
  }
  return { cookies, origins, not_loaded: notLoaded };
}

/** Chrome's cookie as Playwright writes it (crBrowser doGetCookies: sameSite defaults to Lax). */
export function stateCookie(c: Protocol.Network.Cookie): StateCookie {
  return {
    name: c.name,
    value: c.value,
    domain: c.domain,
    path: c.path,
    expires: c.session || c.expires < 0 ? -1 : c.expires,
    httpOnly: c.httpOnly,
    secure: c.secure,
    sameSite: c.sameSite ?? "Lax",
    ...(c.partitionKey
      ? {
        partitionKey: c.partitionKey.topLevelSite,
        _crHasCrossSiteAncestor: c.partitionKey.hasCrossSiteAncestor,
      }
      : {}),
  };
}

/** The file's document: origins without entries are left out, as Playwright leaves them out. */
export function buildStorageState(
  cookies: readonly Protocol.Network.Cookie[],
  origins: readonly StateOrigin[],
): StorageState {
  return {
    cookies: cookies.map(stateCookie),
    origins: origins.filter((o) => o.localStorage.length > 0).map((o) => ({
      origin: o.origin,
      localStorage: o.localStorage.map((e) => ({ name: e.name, value: e.value })),
    })),
  };
}
