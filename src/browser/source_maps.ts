/**
 * Source-mapped stack frames. A script's map is found from its `SourceMap` header or its trailing
 * `//# sourceMappingURL=` comment (an inline `data:` map included) and fetched only from loopback
 * (127.0.0.1, localhost, [::1]) with a short timeout and a size cap, never following a redirect (it
 * could lead off loopback): a dev server's maps, never the internet. Maps are cached per session
 * (bounded in count and in bytes of map text, least recently used out first, short-lived so a rebuild
 * is picked up) and never written to disk. Lookup uses source-map-js.
 */

import { SourceMapConsumer } from "source-map-js";
import { sanitizeStackFunction, sanitizeUrl } from "./privacy.ts";
import { cappedText, decodeDataMap, findSourceMappingUrl, inlineScriptAt } from "./source_map_text.ts";

export { decodeDataMap, findSourceMappingUrl, inlineScriptAt, storedSource } from "./source_map_text.ts";

export const SOURCE_MAP_LIMITS = {
  fetch_timeout_ms: 1_500,
  max_script_bytes: 8 * 1024 * 1024,
  max_map_bytes: 8 * 1024 * 1024,
  cached_scripts: 64,
  /** Map text held by one session's cache in total (each parsed into a consumer several times its size). */
  cached_map_bytes: 32 * 1024 * 1024,
  cache_ttl_ms: 60_000,
} as const;

/** A frame as CDP reports it: 0-based line and column. */
export interface CdpFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Where a generated position came from, 1-based line and column as editors show them. */
export interface OriginalPosition {
  source: string;
  line: number;
  column: number;
  name?: string;
}

/** One frame as events and get_network_request report it: 1-based line and column. */
export interface MappedFrame {
  function: string;
  url: string;
  line: number;
  column: number;
  original?: OriginalPosition;
}

export function isLoopbackUrl(raw: string): boolean {
  try {
    const u = new URL(raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") return false;
    return u.hostname === "127.0.0.1" || u.hostname === "localhost" || u.hostname === "[::1]";
  } catch {
    return false;
  }
}

/** A parsed map with its text's size, or null. */
function loaded(json: string | null): LoadedMap | null {
  const map = json === null ? null : parseSourceMap(json);
  return map && json !== null ? { map, bytes: json.length } : null;
}

/** A consumer over map JSON, or null for anything that is not a usable map. */
export function parseSourceMap(json: string): SourceMapConsumer | null {
  try {
    const raw = JSON.parse(json);
    if (raw === null || typeof raw !== "object" || (!("mappings" in raw) && !("sections" in raw))) {
      return null;
    }
    return new SourceMapConsumer(raw);
  } catch {
    return null;
  }
}

/** `line0`/`column0` are CDP's 0-based position in the generated script. */
export function originalOf(map: SourceMapConsumer, line0: number, column0: number): OriginalPosition | null {
  const p = map.originalPositionFor({ line: line0 + 1, column: column0 });
  if (p.source === null || p.line === null) return null;
  return {
    source: p.source,
    line: p.line,
    column: (p.column ?? 0) + 1,
    ...(p.name ? { name: p.name } : {}),
  };
}

export type Fetcher = (url: string, init: { signal: AbortSignal; redirect: "manual" }) => Promise<Response>;

export interface FrameOptions {
  /** The original's source name as the caller may show it (storedSource for event rows). */
  source?: (s: string) => string;
  /**
   * The page's document: frames of its inline scripts name it, and its text (from the renderer, not
   * fetched again) holds their blocks and map comments.
   */
  document?: { url: string; text: () => Promise<string | null> };
}

const withoutFragment = (u: string) => u.split("#")[0];
const sameDocument = (a: string, b: string) => withoutFragment(a) === withoutFragment(b);

interface CacheEntry {
  at: number;
  map: Promise<SourceMapConsumer | null>;
  /** The map text's length once loaded (0 before, and for no map). */
  bytes: number;
}

interface LoadedMap {
  map: SourceMapConsumer;
  bytes: number;
}

/** Per-session map cache and lookups; `fetcher` is injectable for tests. */
export class SourceMapResolver {
  readonly #cache = new Map<string, CacheEntry>();
  readonly #fetch: Fetcher;
  readonly #now: () => number;

  constructor(fetcher: Fetcher = (url, init) => fetch(url, init), now: () => number = () => Date.now()) {
    this.#fetch = fetcher;
    this.#now = now;
  }

  /** Whether `url` could have a map this resolver would fetch (so callers skip the wait otherwise). */
  static candidate(url: string): boolean {
    return isLoopbackUrl(url);
  }

  /** The map of a loopback script, or null (no map, not loopback, too big, slow, unparseable). */
  mapFor(scriptUrl: string): Promise<SourceMapConsumer | null> {
    if (!isLoopbackUrl(scriptUrl)) return Promise.resolve(null);
    const now = this.#now();
    const hit = this.#cache.get(scriptUrl);
    if (hit && now - hit.at < SOURCE_MAP_LIMITS.cache_ttl_ms) {
      this.#cache.delete(scriptUrl);
      this.#cache.set(scriptUrl, hit);
      return hit.map;
    }
    return this.#cached(scriptUrl, () => this.#load(scriptUrl)).map;
  }

  /** Map text the cache holds now, in bytes (kept under SOURCE_MAP_LIMITS.cached_map_bytes). */
  get cachedBytes(): number {
    let total = 0;
    for (const e of this.#cache.values()) total += e.bytes;
    return total;
  }

  /** A fresh entry for `key`, remembered now and weighed once its map has loaded. */
  #cached(key: string, load: () => Promise<LoadedMap | null>): CacheEntry {
    const loading = load().catch(() => null);
    const entry: CacheEntry = { at: this.#now(), bytes: 0, map: loading.then((l) => l?.map ?? null) };
    this.#remember(key, entry);
    void loading.then((l) => {
      entry.bytes = l?.bytes ?? 0;
      if (this.#cache.get(key) === entry) this.#trimBytes();
    });
    return entry;
  }

  async #get(url: string, cap: number): Promise<{ text: string; res: Response } | null> {
    // A redirect is not followed (a loopback URL may point off loopback): a 3xx, like any non-2xx, is no map.
    const res = await this.#fetch(url, {
      signal: AbortSignal.timeout(SOURCE_MAP_LIMITS.fetch_timeout_ms),
      redirect: "manual",
    });
    if (!res.ok || res.redirected) {
      await res.body?.cancel();
      return null;
    }
    if (/^text\/html\b/i.test(res.headers.get("content-type") ?? "")) {
      // An inline script's frames name the document: there is no one map to read.
      await res.body?.cancel();
      return null;
    }
    const text = await cappedText(res, cap);
    return text === null ? null : { text, res };
  }

  async #load(scriptUrl: string): Promise<LoadedMap | null> {
    const script = await this.#get(scriptUrl, SOURCE_MAP_LIMITS.max_script_bytes);
    if (!script) return null;
    const ref = script.res.headers.get("sourcemap") ?? script.res.headers.get("x-sourcemap") ??
      findSourceMappingUrl(script.text);
    return ref ? await this.#mapAt(ref, scriptUrl) : null;
  }

  /** A map reference (relative to `base`): decoded when inline, fetched when on loopback. */
  async #mapAt(ref: string, base: string): Promise<LoadedMap | null> {
    let mapUrl: string;
    try {
      mapUrl = new URL(ref, base).href;
    } catch {
      return null;
    }
    if (mapUrl.startsWith("data:")) {
      return loaded(decodeDataMap(mapUrl));
    }
    if (!isLoopbackUrl(mapUrl)) return null;
    const map = await this.#get(mapUrl, SOURCE_MAP_LIMITS.max_map_bytes);
    return loaded(map?.text ?? null);
  }

  /** The original position of a generated one (CDP 0-based), or null. */
  async original(scriptUrl: string, line0: number, column0: number): Promise<OriginalPosition | null> {
    const map = await this.mapFor(scriptUrl);
    return map ? originalOf(map, line0, column0) : null;
  }

  /**
   * A frame in an inline script of a loopback document: the script block holding the position, its
   * own map (mappings count from the block's start), and the position made block-relative.
   */
  async originalInline(
    docUrl: string,
    html: string,
    line0: number,
    column0: number,
  ): Promise<OriginalPosition | null> {
    if (!isLoopbackUrl(docUrl)) return null;
    const block = inlineScriptAt(html, line0, column0);
    const ref = block ? findSourceMappingUrl(block.text) : null;
    if (!block || !ref) return null;
    const key = `${docUrl}\n${block.line0}:${block.column0}:${block.text.length}`;
    const now = this.#now();
    let hit = this.#cache.get(key);
    if (hit && now - hit.at < SOURCE_MAP_LIMITS.cache_ttl_ms) {
      this.#cache.delete(key);
      this.#cache.set(key, hit);
    } else hit = this.#cached(key, () => this.#mapAt(ref, docUrl));
    const map = await hit.map;
    const line = line0 - block.line0;
    return map ? originalOf(map, line, line === 0 ? column0 - block.column0 : column0) : null;
  }

  #remember(key: string, entry: CacheEntry): void {
    this.#cache.delete(key);
    this.#cache.set(key, entry);
    while (this.#cache.size > SOURCE_MAP_LIMITS.cached_scripts) {
      const oldest = this.#cache.keys().next().value;
      if (oldest === undefined) break;
      this.#cache.delete(oldest);
    }
  }

  /** Least recently used out until the map text held fits the byte budget (the newest always stays). */
  #trimBytes(): void {
    let total = this.cachedBytes;
    while (total > SOURCE_MAP_LIMITS.cached_map_bytes && this.#cache.size > 1) {
      const [oldest, entry] = this.#cache.entries().next().value ?? [];
      if (oldest === undefined || !entry) break;
      this.#cache.delete(oldest);
      total -= entry.bytes;
    }
  }

  /**
   * Up to `max` frames, each with its original position where a map resolves. `present` turns the
   * generated URL into what the caller may show (sanitized for stored events, live for a tool reply);
   * stored callers also pass `storedSource` for the original's source name.
   */
  async frames(
    frames: CdpFrame[],
    max: number,
    present: (url: string) => string,
    opts: FrameOptions = {},
  ): Promise<MappedFrame[]> {
    const source = opts.source ?? ((s: string) => s);
    let doc: Promise<string | null> | undefined;
    const lookup = async (f: CdpFrame): Promise<OriginalPosition | null> => {
      if (!f.url || !isLoopbackUrl(f.url)) return null;
      if (opts.document && sameDocument(f.url, opts.document.url)) {
        doc ??= opts.document.text().catch(() => null);
        const html = await doc;
        return html === null ? null : await this.originalInline(f.url, html, f.lineNumber, f.columnNumber);
      }
      return await this.original(f.url, f.lineNumber, f.columnNumber);
    };
    return await Promise.all(
      frames.slice(0, max).map(async (f) => {
        const original = await lookup(f);
        return {
          function: sanitizeStackFunction(f.functionName || "(anonymous)"),
          url: present(f.url),
          line: f.lineNumber + 1,
          column: f.columnNumber + 1,
          ...(original
            ? {
              original: {
                ...original,
                source: source(original.source),
                ...(original.name ? { name: sanitizeStackFunction(original.name) } : {}),
              },
            }
            : {}),
        };
      }),
    );
  }
}

/** Frames without any lookup (no loopback script among them): same shape, synchronously. */
export function plainFrames(
  frames: CdpFrame[],
  max: number,
  present: (url: string) => string,
): MappedFrame[] {
  return frames.slice(0, max).map((f) => ({
    function: sanitizeStackFunction(f.functionName || "(anonymous)"),
    url: present(f.url),
    line: f.lineNumber + 1,
    column: f.columnNumber + 1,
  }));
}

/** The stored form of a frame URL: the event rows' path hashing. */
export const storedFrameUrl = (url: string): string => (url ? sanitizeUrl(url).redacted : "");

const resolvers = new WeakMap<object, SourceMapResolver>();

/** The session's resolver (keyed by the session object, so its cache ends with it). */
export function sessionResolver(session: object): SourceMapResolver {
  let r = resolvers.get(session);
  if (!r) {
    r = new SourceMapResolver();
    resolvers.set(session, r);
  }
  return r;
}
