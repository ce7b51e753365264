/**
 * Opaque range handles: a short name for one immutable resolved range, valid for this process's
 * lifetime. The process nonce inside each handle lets a handle from before a restart fail as such
 * instead of as a typo.
 */
import { ToolError } from "../errors.ts";
import type { ResolvedRange } from "./range.ts";

const HANDLE_SHAPE = /^rh-([0-9a-z]{6})-(\d{1,9})$/;

export class RangeHandles {
  readonly #nonce = crypto.getRandomValues(new Uint32Array(1))[0].toString(36).padStart(6, "0").slice(-6);
  readonly #ranges = new Map<string, ResolvedRange>();
  #seq = 0;

  issue(range: ResolvedRange): string {
    const handle = `rh-${this.#nonce}-${++this.#seq}`;
    this.#ranges.set(handle, Object.freeze(structuredClone(range)));
    return handle;
  }

  get(handle: string): ResolvedRange {
    const range = this.#ranges.get(handle);
    if (range) return structuredClone(range);
    const shape = HANDLE_SHAPE.exec(handle);
    const why = !shape
      ? "is not a range handle"
      : shape[1] !== this.#nonce
      ? "was issued by another server process (handles do not survive a restart)"
      : "was invalidated (its session was deleted) or never issued";
    throw new ToolError({
      code: "range_handle_invalid",
      message: `Range handle ${JSON.stringify(handle.slice(0, 40))} ${why}.`,
      retry: "never",
      recovery: "Resolve the range again with resolve_temporal_range and use the new handle.",
      affected: { argument: "range_handle" },
    });
  }

  /** Session deletion ends every handle into it. */
  invalidateSession(sessionId: string): void {
    for (const [handle, range] of this.#ranges) {
      if (range.session_id === sessionId) this.#ranges.delete(handle);
    }
  }
}
