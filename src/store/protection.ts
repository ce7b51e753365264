/**
 * What reclaim must step over (spec: "Reclaim"): pinned ranges, protected against budget pressure and
 * age-out until unpinned, and the short grace window behind a freshly published artifact, protected
 * against budget pressure only and dropped when nothing else is left.
 */

/** A span of one page's recording in session time, the unit both protections speak. */
export interface PageSpan {
  session_id: string;
  page_id: string;
  start_ns: number;
  end_ns: number;
}

export interface Pin extends PageSpan {
  pin_id: string;
  /**
   * Where protection starts: the last frame at or before start_ns, which is what is on screen at the
   * range's start, so the segment holding it is needed to rebuild the range.
   */
  hold_from_ns: number;
  label?: string;
  created_at: string;
}

export interface GraceSpan extends PageSpan {
  /** Wall-clock ms after which the span stops protecting. */
  until_ms: number;
}

/** How long a freshly published artifact keeps its source segments (and its own files) safe from pressure. */
export const ARTIFACT_GRACE_MS = 30_000;

/** A stored unit reclaim can delete: a sealed segment of one page, or a file with no page. */
export interface Retained {
  kind: "segment" | "file";
  session_id?: string;
  page_id?: string;
  start_ns?: number;
  /** Where the segment's time ends (up to the next segment's first frame). */
  end_ns?: number;
  /** Its last frame: a segment holds a frame of a span exactly when [start_ns, last_ns] meets it. */
  last_ns?: number;
}

function overlaps(r: Retained, span: PageSpan, fromNs: number): boolean {
  return r.kind === "segment" && r.session_id === span.session_id && r.page_id === span.page_id &&
    (r.start_ns ?? 0) <= span.end_ns && (r.last_ns ?? r.end_ns ?? 0) >= fromNs;
}

export function pinnedBy(r: Retained, pins: Iterable<Pin>): boolean {
  for (const p of pins) if (overlaps(r, p, p.hold_from_ns)) return true;
  return false;
}

export function inGrace(r: Retained, grace: readonly GraceSpan[], nowMs: number): boolean {
  return grace.some((g) => g.until_ms > nowMs && overlaps(r, g, g.start_ns));
}

/** Spans of one session whose events survive the eviction of an older segment. */
export function keptEventSpans(
  sessionId: string,
  pins: Iterable<Pin>,
  grace: readonly GraceSpan[],
  nowMs: number,
): Array<{ from_ns: number; to_ns: number }> {
  const spans: Array<{ from_ns: number; to_ns: number }> = [];
  for (const p of pins) {
    if (p.session_id === sessionId) spans.push({ from_ns: p.hold_from_ns, to_ns: p.end_ns });
  }
  for (const g of grace) {
    if (g.session_id === sessionId && g.until_ms > nowMs) {
      spans.push({ from_ns: g.start_ns, to_ns: g.end_ns });
    }
  }
  return spans;
}

/** The pin's public face: what it protects and what that costs. */
export interface PinView {
  pin_id: string;
  session_id: string;
  page_id: string;
  start_ms: number;
  end_ms: number;
  label?: string;
  created_at: string;
  /** Segments (sealed or still open) the pin holds. */
  segments: number;
  bytes: number;
}

export function pinView(p: Pin, held: { segments: number; bytes: number }): PinView {
  return {
    pin_id: p.pin_id,
    session_id: p.session_id,
    page_id: p.page_id,
    start_ms: Math.round(p.start_ns / 1e4) / 100,
    end_ms: Math.round(p.end_ns / 1e4) / 100,
    ...(p.label ? { label: p.label } : {}),
    created_at: p.created_at,
    segments: held.segments,
    bytes: held.bytes,
  };
}
