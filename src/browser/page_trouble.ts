import type { Protocol } from "devtools-protocol";
import type { PageCrash, PageTarget } from "./targets.ts";
import { logger } from "../log.ts";

const log = logger("browser");

/** A renderer signal on a page: it crashed, or it stopped answering (a deadline's probe got no reply). */
export type PageTrouble =
  | ({ kind: "crashed" } & PageCrash)
  | { kind: "unresponsive"; at_ms: number; tool: string };

/**
 * The session's renderer-trouble signals: a page crashed or stopped answering, and a crashed page
 * rendering again. The session routes the CDP events here; capture and events listen.
 */
export class PageTroubleSignals {
  #troubleListeners = new Set<(page: PageTarget, trouble: PageTrouble) => void>();
  #recoveredListeners = new Set<(page: PageTarget) => void>();

  onTrouble(listener: (page: PageTarget, trouble: PageTrouble) => void): () => void {
    this.#troubleListeners.add(listener);
    return () => this.#troubleListeners.delete(listener);
  }

  onRecovered(listener: (page: PageTarget) => void): () => void {
    this.#recoveredListeners.add(listener);
    return () => this.#recoveredListeners.delete(listener);
  }

  /** Target.targetCrashed for a live page: it stays listed, marked crashed, until a new document commits. */
  crashed(page: PageTarget, atMs: number, status: string, errorCode: number): void {
    page.crash = { at_ms: atMs, status, error_code: errorCode };
    log.warning("page {page} renderer crashed ({status})", { page: page.id, status });
    this.#emit(page, { kind: "crashed", ...page.crash });
  }

  unresponsive(page: PageTarget, atMs: number, tool: string): void {
    this.#emit(page, { kind: "unresponsive", at_ms: atMs, tool });
  }

  /** A frame of the page committed a document (after the page's own bookkeeping). */
  committed(page: PageTarget, frame: Protocol.Page.Frame): void {
    // A crashed page renders again once a new main-frame document commits (reload or navigation).
    if (page.crash && !frame.parentId) {
      page.crash = undefined;
      for (const listener of this.#recoveredListeners) listener(page);
    }
  }

  #emit(page: PageTarget, trouble: PageTrouble): void {
    for (const listener of this.#troubleListeners) {
      try {
        listener(page, trouble);
      } catch (err) {
        log.debug("page trouble listener failed: {err}", { err: String(err) });
      }
    }
  }
}
