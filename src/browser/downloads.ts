import { join } from "node:path";
import { InstanceStore } from "../store/instance.ts";
import type { CdpConnection } from "./cdp.ts";
import { sanitizeText, sanitizeUrl } from "./privacy.ts";
import type { BrowserSession } from "./session.ts";
import { asToolError, limitExceeded, ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { currentCallSignal } from "./call_signal.ts";

const log = logger("downloads");

export type DownloadState = "in_progress" | "completed" | "canceled";

export interface DownloadRow {
  download_id: string;
  page_id?: string;
  suggested_filename: string;
  url: string;
  state: DownloadState;
  bytes: number;
  total_bytes?: number;
  started_ms: number;
  finished_ms?: number;
  /** Present once completed, for managed sessions only (an attached browser keeps its own files). */
  uri?: string;
  mime_type?: string;
  /** Why a completed download's file was not kept (larger than this instance's disk-budget share). */
  not_kept?: { code: string; message: string; recovery?: string };
}

interface Entry {
  row: DownloadRow;
  /** Cursor value of the begin event: a wait after cursor C is satisfied by entries with beginSeq > C. */
  beginSeq: number;
  /** Chrome names the file by its guid under the session's download folder (allowAndName). */
  file?: string;
  /** Our own resource name (never derived from page-controlled text beyond a checked extension). */
  resourceName: string;
}

/** Downloads remembered per session; the oldest finished ones are forgotten first. */
const RETAINED_DOWNLOADS = 500;
/** Frames remembered for attributing a download to its page. */
const FRAME_MEMORY = 2_000;
const FILENAME_LIMIT_BYTES = 200;
/** Resources are read whole into one MCP response; larger files stay listed but not readable. */
export const DOWNLOAD_RESOURCE_LIMIT = 64 * 1024 * 1024;

const MIME_BY_EXT: Record<string, string> = {
  csv: "text/csv",
  txt: "text/plain",
  json: "application/json",
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  zip: "application/zip",
  html: "text/html",
  xml: "application/xml",
};

/** A file name a page suggested, made safe to show: no separators, no controls, privacy-scanned, bounded. */
export function sanitizeFilename(raw: string): string {
  const flat = raw.replace(/[\p{Cc}\u202A-\u202E\u2066-\u2069]/gu, " ").replace(/[/\\]/g, "_")
    .replace(/\s+/g, " ").trim();
  const text = sanitizeText(flat, FILENAME_LIMIT_BYTES).text;
  return text === "" ? "download" : text;
}

function extensionOf(name: string): string | undefined {
  const m = /\.([A-Za-z0-9]{1,8})$/.exec(name);
  return m ? m[1].toLowerCase() : undefined;
}

/**
 * Browser-wide download observation for one session. It is activated inside session start, before
 * any page is attached or released, so a download started by the very first interaction is seen.
 * Every event advances a monotonic cursor; waits are anchored to a cursor the caller took earlier.
 */
export class DownloadTracker {
  #session: BrowserSession;
  #dir?: string;
  #cursor = 0;
  #ordinal = 0;
  #entries = new Map<string, Entry>();
  #frames = new Map<string, string>();
  #listeners = new Set<() => void>();
  #unavailable?: string;
  #ended = false;

  constructor(session: BrowserSession) {
    this.#session = session;
  }

  /** The current cursor: seeded at 0 so an empty inventory still anchors a wait. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Why observation is off, when Chrome refused it. */
  get unavailable(): string | undefined {
    return this.#unavailable;
  }

  /** Managed sessions keep files in a session folder; attached browsers only report metadata. */
  get keepsFiles(): boolean {
    return this.#dir !== undefined;
  }

  async activate(conn: CdpConnection, managed: boolean, root?: string): Promise<void> {
    conn.on("Browser.downloadWillBegin", (p) => this.#begin(p.guid, p.frameId, p.url, p.suggestedFilename));
    conn.on(
      "Browser.downloadProgress",
      (p) => this.#progress(p.guid, p.receivedBytes, p.totalBytes, p.state),
    );
    this.#session.onPageEvent("Page.frameAttached", (page, p) => this.#rememberFrame(p.frameId, page.id));
    this.#session.onPageEvent("Page.frameNavigated", (page, p) => this.#rememberFrame(p.frame.id, page.id));
    this.#session.onEnded(() => this.#end());
    try {
      if (managed) {
        if (root) await Deno.mkdir(root, { recursive: true });
        this.#dir = await Deno.makeTempDir({
          prefix: "krometrail-downloads-",
          ...(root ? { dir: root } : {}),
        });
        await conn.send("Browser.setDownloadBehavior", {
          behavior: "allowAndName",
          downloadPath: this.#dir,
          eventsEnabled: true,
        });
      } else {
        // The attached browser stays externally owned: its download location is left alone.
        await conn.send("Browser.setDownloadBehavior", { behavior: "default", eventsEnabled: true });
      }
    } catch (err) {
      // Without observation no file can be claimed as ours: drop the folder with the claim.
      if (this.#dir) Deno.remove(this.#dir, { recursive: true }).catch(() => {});
      this.#dir = undefined;
      this.#unavailable = err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200);
      log.warning("download observation unavailable: {err}", { err: this.#unavailable });
    }
  }

  /** A reconnected session's new socket gets the same download behaviour (the listeners carried over). */
  async resume(conn: CdpConnection, managed: boolean): Promise<void> {
    if (this.#unavailable || this.#ended) return;
    await conn.send(
      "Browser.setDownloadBehavior",
      managed && this.#dir
        ? { behavior: "allowAndName", downloadPath: this.#dir, eventsEnabled: true }
        : { behavior: "default", eventsEnabled: true },
    ).catch((err) => log.debug("download behaviour not restored: {err}", { err: String(err) }));
  }

  #rememberFrame(frameId: string, pageId: string): void {
    this.#frames.delete(frameId);
    this.#frames.set(frameId, pageId);
    if (this.#frames.size > FRAME_MEMORY) {
      const oldest = this.#frames.keys().next();
      if (!oldest.done) this.#frames.delete(oldest.value);
    }
  }

  #pageOf(frameId: string): string | undefined {
    for (const page of this.#session.pages.values()) {
      if (page.mainFrameId === frameId || page.targetId === frameId) return page.id;
    }
    return this.#frames.get(frameId);
  }

  #begin(guid: string, frameId: string, url: string, suggested: string): void {
    if (this.#entries.has(guid)) return;
    const filename = sanitizeFilename(suggested);
    const ext = extensionOf(filename);
    const id = `d${++this.#ordinal}`;
    const pageId = this.#pageOf(frameId);
    const entry: Entry = {
      beginSeq: ++this.#cursor,
      resourceName: `s${this.#session.ordinal}-${id}${ext ? `.${ext}` : ""}`,
      // Chrome names the file by the guid; anything else is not a name we created, so no file.
      file: this.#dir && /^[0-9a-fA-F-]{8,64}$/.test(guid) ? join(this.#dir, guid) : undefined,
      row: {
        download_id: id,
        ...(pageId ? { page_id: pageId } : {}),
        suggested_filename: filename,
        url: sanitizeUrl(url).redacted,
        state: "in_progress",
        bytes: 0,
        started_ms: this.#session.now(),
        ...(ext && MIME_BY_EXT[ext] ? { mime_type: MIME_BY_EXT[ext] } : {}),
      },
    };
    this.#entries.set(guid, entry);
    this.#evict();
    this.#notify();
  }

  #progress(guid: string, received: number, total: number, state: string): void {
    const entry = this.#entries.get(guid);
    if (!entry || entry.row.state !== "in_progress") return;
    const row = entry.row;
    row.bytes = received;
    if (total > 0) row.total_bytes = total;
    if (state === "inProgress") return;
    row.state = state === "completed" ? "completed" : "canceled";
    row.finished_ms = this.#session.now();
    if (row.state === "completed" && entry.file) {
      this.#keepOrRefuse(entry).then(() => {
        this.#cursor++;
        this.#notify();
      });
      return;
    }
    this.#cursor++;
    this.#notify();
  }

  /** Chrome wrote the file itself; one larger than the budget share is removed, and the row says why. */
  async #keepOrRefuse(entry: Entry): Promise<void> {
    try {
      await InstanceStore.current?.admission?.("download", entry.row.bytes);
      entry.row.uri = `krometrail://evidence/downloads/${entry.resourceName}`;
    } catch (err) {
      const refused = asToolError(err);
      entry.row.not_kept = {
        code: refused.code,
        message: refused.message,
        ...(refused.recovery ? { recovery: refused.recovery } : {}),
      };
      if (entry.file) await Deno.remove(entry.file).catch(() => {});
      entry.file = undefined;
    }
  }

  #evict(): void {
    for (const [guid, entry] of this.#entries) {
      if (this.#entries.size <= RETAINED_DOWNLOADS) break;
      if (entry.row.state === "in_progress") continue;
      this.#entries.delete(guid);
      if (entry.file) Deno.remove(entry.file).catch(() => {});
    }
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  #end(): void {
    this.#ended = true;
    this.#notify();
    const dir = this.#dir;
    this.#dir = undefined;
    // Download resources live only as long as their managed session (spec: MCP protocol). Removed
    // synchronously so a shutdown that exits right after stopping the browser leaves nothing behind.
    if (!dir) return;
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* already gone */ }
  }

  /** Rows oldest first, each a copy. */
  list(): DownloadRow[] {
    return [...this.#entries.values()].map((e) => ({ ...e.row }));
  }

  /**
   * The first download that began after `after` and has finished (completed or canceled);
   * undefined when none did within the timeout.
   */
  async waitFor(after: number, timeoutMs: number): Promise<DownloadRow | undefined> {
    if (after > this.#cursor) {
      throw new ToolError({
        code: "invalid_cursor",
        message: `Cursor ${after} is ahead of this session's download cursor ${this.#cursor}.`,
        retry: "never",
        recovery:
          "Take the cursor from list_downloads (or an earlier wait_for_download result) of this session.",
        affected: { argument: "after" },
        details: { after, cursor: this.#cursor },
      });
    }
    const settled = () =>
      [...this.#entries.values()].filter((e) => e.beginSeq > after && e.row.state !== "in_progress")
        .sort((a, b) => a.beginSeq - b.beginSeq)[0]?.row;
    const found = settled();
    if (found || this.#ended) return found ? { ...found } : undefined;
    // A cancelled call stops waiting at once (cooperative cancellation: the download itself runs on).
    const signal = currentCallSignal();
    signal?.throwIfAborted();
    return await new Promise((resolve, reject) => {
      const finish = () => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        signal?.removeEventListener("abort", onAbort);
      };
      const done = (row: DownloadRow | undefined) => {
        finish();
        resolve(row ? { ...row } : undefined);
      };
      const onAbort = () => {
        finish();
        reject(signal?.reason);
      };
      const check = () => {
        const row = settled();
        if (row || this.#ended) done(row);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.#listeners.add(check);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** How many downloads began after the cursor (an interaction's download activity). */
  startedAfter(after: number): number {
    return [...this.#entries.values()].filter((e) => e.beginSeq > after).length;
  }

  /** How many downloads began after the cursor and are still running (for a timeout's guidance). */
  inProgressAfter(after: number): number {
    return [...this.#entries.values()].filter((e) => e.beginSeq > after && e.row.state === "in_progress")
      .length;
  }

  /** The completed file behind a resource name, while the session lives. */
  resolveResource(name: string): { path: string; mimeType: string } | undefined {
    if (this.#ended || !this.#dir) return undefined;
    for (const entry of this.#entries.values()) {
      if (entry.resourceName === name && entry.row.state === "completed" && entry.file) {
        return { path: entry.file, mimeType: entry.row.mime_type ?? "application/octet-stream" };
      }
    }
    return undefined;
  }
}

/** Reads a completed download resource of the live session; bounded, never outside its folder. */
export async function readDownload(
  session: BrowserSession | undefined,
  name: string,
): Promise<{ bytes: Uint8Array; mimeType: string }> {
  const file = session && !session.ended ? session.downloads.resolveResource(name) : undefined;
  if (!file) {
    throw new ToolError({
      code: "download_not_available",
      message: `No completed download ${name.slice(0, 80)} in a live managed browser session.`,
      retry: "never",
      recovery:
        "Download resources last only while their managed session runs: call list_downloads in the live session for current URIs, or trigger the download again.",
    });
  }
  const size = (await Deno.stat(file.path).catch(() => undefined))?.size;
  if (size === undefined) {
    throw new ToolError({
      code: "download_not_available",
      message: `The file of download ${name.slice(0, 80)} is gone.`,
      retry: "never",
      recovery: "Trigger the download again, then wait_for_download.",
    });
  }
  if (size > DOWNLOAD_RESOURCE_LIMIT) {
    throw limitExceeded(
      "download resource size (bytes)",
      size,
      DOWNLOAD_RESOURCE_LIMIT,
      "The download completed but is too large for one resource read; fetch it outside Krometrail.",
    );
  }
  return { bytes: await Deno.readFile(file.path), mimeType: file.mimeType };
}
