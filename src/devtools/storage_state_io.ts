/**
 * Saving and loading a Playwright storage state against the live session: the file on disk (0600, it
 * holds secrets), the context's cookies, and localStorage of the origins the session's pages have open.
 * An origin no page has a frame of is written the scenario seed's way (storage_seed.ts): a document-start
 * script in the page that writes the entries in the first document of that origin, before its scripts.
 */
import { dirname, resolve } from "node:path";
import type { Protocol } from "devtools-protocol";
import type { BrowserSession } from "../browser/session.ts";
import type { PageTarget } from "../browser/targets.ts";
import { cdpMessage } from "../browser/cdp.ts";
import { ToolError } from "../errors.ts";
import { seedStorage, STORAGE_SEED_BINDING } from "../scenario/storage_seed.ts";
import { contextCookies } from "./cookies.ts";
import { pageSeesCookies, pageSeesStorage } from "./page_agreement.ts";
import {
  buildStorageState,
  type ParsedState,
  parseStorageState,
  serializedOrigin,
  STATE_LIMITS,
  type StateOrigin,
} from "./storage_state.ts";
import { pageFrames, readItems, storageIdFor, writeItem } from "./web_storage.ts";

const CDP_MS = 10_000;

function fileError(code: string, path: string, problem: string, recovery: string): ToolError {
  return new ToolError({
    code,
    message: `${path}: ${problem}.`,
    retry: "after_recovery",
    recovery,
    affected: { argument: "path" },
    details: { path },
  });
}

/** An absolute path (relative ones against the server's working directory). */
export function statePath(path: string): string {
  return resolve(Deno.cwd(), path);
}

/** localStorage of every http(s) origin framed in the session's open pages, each read once. */
export async function openOrigins(
  session: BrowserSession,
): Promise<{ origins: StateOrigin[]; unread: string[] }> {
  const seen = new Set<string>();
  const origins: StateOrigin[] = [];
  const unread: string[] = [];
  for (const page of session.pages.values()) {
    if (page.closed) continue;
    const frames = await pageFrames(page).catch(() => []);
    for (const f of frames) {
      const origin = serializedOrigin(f.origin);
      if (!origin || seen.has(origin)) continue;
      seen.add(origin);
      try {
        const items = await readItems(page, await storageIdFor(page, origin, "local"));
        origins.push({ origin, localStorage: items.map(([name, value]) => ({ name, value })) });
      } catch {
        unread.push(origin);
      }
    }
  }
  return { origins, unread };
}

export interface SaveResult {
  path: string;
  bytes: number;
  cookies: Protocol.Network.Cookie[];
  origins: StateOrigin[];
  unread: string[];
}

export async function saveState(
  session: BrowserSession,
  page: PageTarget,
  given: string,
): Promise<SaveResult> {
  const path = statePath(given);
  const existing = await Deno.stat(path).catch(() => undefined);
  if (existing?.isDirectory) {
    throw fileError("path_is_directory", path, "is a directory", "Give a file path, e.g. <dir>/state.json.");
  }
  const parent = await Deno.stat(dirname(path)).catch(() => undefined);
  if (!parent?.isDirectory) {
    throw fileError(
      "path_not_writable",
      path,
      "its folder does not exist",
      "Create the folder, or give another path.",
    );
  }
  const cookies = await contextCookies(page);
  const { origins, unread } = await openOrigins(session);
  // Loaded but not yet visited: their entries exist only in the armed seed, and go into the file too.
  const read = new Set(origins.map((o) => o.origin));
  for (const [origin, o] of pendingOf(session)) if (!read.has(origin)) origins.push(o);
  const state = buildStorageState(cookies, origins);
  const text = JSON.stringify(state, null, 2);
  // Written beside the target with mode 0600 from the start, then renamed over it: never world-readable,
  // never a half-written file.
  const temp = `${path}.${crypto.randomUUID().slice(0, 8)}.tmp`;
  try {
    await Deno.writeTextFile(temp, text, { mode: 0o600, createNew: true });
    await Deno.chmod(temp, 0o600).catch(() => {});
    await Deno.rename(temp, path);
  } catch (err) {
    await Deno.remove(temp).catch(() => {});
    throw fileError(
      "path_not_writable",
      path,
      `cannot be written (${err instanceof Error ? err.message : String(err)})`,
      "Give a path in a folder the server may write to.",
    );
  }
  return { path, bytes: new TextEncoder().encode(text).byteLength, cookies, origins: state.origins, unread };
}

export async function readStateFile(given: string): Promise<{ path: string; parsed: ParsedState }> {
  const path = statePath(given);
  const info = await Deno.stat(path).catch(() => undefined);
  if (!info) {
    throw fileError(
      "file_not_found",
      path,
      "no such file",
      "Check the path (relative paths are against the server's working directory).",
    );
  }
  if (!info.isFile) {
    throw fileError("path_is_directory", path, "is not a file", "Give the storage-state file's path.");
  }
  if (info.size > STATE_LIMITS.file_bytes) {
    throw fileError(
      "file_too_large",
      path,
      `${info.size} bytes, over the limit of ${STATE_LIMITS.file_bytes}`,
      "Load a smaller storage state.",
    );
  }
  return { path, parsed: parseStorageState(await Deno.readTextFile(path), path) };
}

/**
 * Per session, the origins a load armed a seed for that no document of has opened yet (storage_seed.ts
 * removes a seed once its origin's first document wrote it, and reports that through its binding).
 */
const pendingSeeds = new WeakMap<BrowserSession, Map<string, StateOrigin>>();

function pendingOf(session: BrowserSession): Map<string, StateOrigin> {
  let map = pendingSeeds.get(session);
  if (!map) {
    const created = new Map<string, StateOrigin>();
    pendingSeeds.set(session, map = created);
    session.onPageEvent("Runtime.bindingCalled", (_page, { name, payload }) => {
      if (name === STORAGE_SEED_BINDING) created.delete(payload);
    });
  }
  return map;
}

export interface OriginLoad {
  origin: string;
  entries: number;
  /** written: into an open frame of the origin now; on_first_visit: when this page first opens it. */
  status: "written" | "on_first_visit";
  page_id?: string;
}

export interface LoadResult {
  cookies_set: number;
  rejected_cookies: { name: string; domain: string; reason: string }[];
  origins: OriginLoad[];
  /** Views of pages that did not show what was loaded within the bound (page_agreement.ts). */
  lagging: string[];
}

async function setCookies(
  page: PageTarget,
  cookies: Protocol.Network.CookieParam[],
): Promise<LoadResult["rejected_cookies"]> {
  if (cookies.length === 0) return [];
  try {
    await page.send("Storage.setCookies", { cookies }, CDP_MS);
    return [];
  } catch {
    // One cookie Chrome refuses fails the whole call: set them one by one to name the refused ones.
  }
  const rejected: LoadResult["rejected_cookies"] = [];
  for (const c of cookies) {
    try {
      await page.send("Storage.setCookies", { cookies: [c] }, CDP_MS);
    } catch (err) {
      rejected.push({ name: c.name, domain: c.domain ?? c.url ?? "", reason: cdpMessage(err).slice(0, 160) });
    }
  }
  return rejected;
}

/** An open page of the session with a frame of `origin`, the target page first. */
async function pageOnOrigin(
  session: BrowserSession,
  first: PageTarget,
  origin: string,
): Promise<PageTarget | undefined> {
  const pages = [first, ...[...session.pages.values()].filter((p) => p !== first && !p.closed)];
  for (const p of pages) {
    const frames = await pageFrames(p).catch(() => []);
    if (frames.some((f) => f.origin === origin)) return p;
  }
  return undefined;
}

export async function loadState(
  session: BrowserSession,
  page: PageTarget,
  parsed: ParsedState,
): Promise<LoadResult> {
  const rejected = await setCookies(page, parsed.cookies);
  const lagging: string[] = [];
  if (parsed.cookies.length > 0 && !await pageSeesCookies(page)) {
    lagging.push(`document.cookie of ${page.id}`);
  }
  const origins: OriginLoad[] = [];
  const later: StateOrigin[] = [];
  for (const o of parsed.origins.filter((o) => o.localStorage.length > 0)) {
    const open = await pageOnOrigin(session, page, o.origin);
    if (!open) {
      later.push(o);
      continue;
    }
    const id = await storageIdFor(open, o.origin, "local");
    for (const e of o.localStorage) await writeItem(open, id, e.name, e.value);
    if (!await pageSeesStorage(open, o.origin, "local", await readItems(open, id))) {
      lagging.push(`localStorage of ${o.origin} in ${open.id}`);
    }
    origins.push({ origin: o.origin, entries: o.localStorage.length, status: "written", page_id: open.id });
  }
  if (later.length > 0) {
    await seedStorage(session, page, {
      cookies: [],
      local_storage: later.map((o) => ({ origin: o.origin, entries: o.localStorage })),
      session_storage: [],
    }, later.map((o) => o.origin));
    const pending = pendingOf(session);
    for (const o of later) pending.set(o.origin, o);
    for (const o of later) {
      origins.push({
        origin: o.origin,
        entries: o.localStorage.length,
        status: "on_first_visit",
        page_id: page.id,
      });
    }
  }
  return {
    cookies_set: parsed.cookies.length - rejected.length,
    rejected_cookies: rejected,
    origins,
    lagging,
  };
}
