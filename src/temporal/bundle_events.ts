/**
 * The browser events a temporal debug bundle names: the events nearest its major visual changes
 * (ranked: errors, failed requests and layout shifts, navigation and emulation changes, ...), the
 * range's layout shifts in one header line, and the emulation the range ran under for structured content.
 */
import { sanitizeUrl } from "../browser/privacy.ts";
import type { EventView } from "../capture/events_query.ts";
import type { Prepared } from "./prepare.ts";
import { ms } from "./range.ts";
import { signedMs } from "./render/layout.ts";

/**
 * A layout shift is what moved the thing the agent saw move, so it ranks beside failed requests; an
 * emulation change (throttling switched on, offline) explains a change as well as a navigation does.
 * A renderer crash explains whatever followed it; a dropped connection or a hung page, a gap or a stall.
 */
const EVENT_RANK: Record<string, number> = {
  exception: 0,
  crash: 0,
  connection: 1,
  unresponsive: 1,
  request_failed: 1,
  layout_shift: 1,
  navigation: 2,
  emulation: 2,
  dialog: 3,
  long_task: 3,
};

const FAVICON_PATHS = ["/favicon.ico", "/favicon.png", "/favicon.svg"];

/**
 * The browser's own favicon fetch: not something the page did, so never ranked near a change.
 * Recorded URLs carry a hash of the path (privacy), so the favicon paths are hashed the same way.
 */
export function isFavicon(e: EventView): boolean {
  if (e.kind !== "request" && e.kind !== "request_failed") return false;
  const raw = typeof e.data?.url === "string" ? e.data.url : (e.text ?? "").split(" ")[1] ?? "";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  return FAVICON_PATHS.some((p) =>
    url.pathname === p || url.pathname === new URL(sanitizeUrl(`${url.origin}${p}`).redacted).pathname
  );
}

function eventRank(e: EventView): number {
  if (e.kind === "console" && e.level === "error") return 0;
  return EVENT_RANK[e.kind] ?? (e.kind === "console" && e.level === "warning" ? 3 : 4);
}

/**
 * Events nearest the major visual changes: errors first, then failed requests, navigation, dialogs,
 * then the rest; within a rank the nearest to any major change, then time, then id. Favicon
 * requests are left out.
 */
export function eventsNearChanges(
  events: EventView[],
  changeTimesNs: number[],
  limit: number,
): { events: Array<EventView & { nearest_change_ms: number | null }>; omitted: number } {
  const scored = events.filter((e) => !isFavicon(e)).map((e) => {
    const distance = changeTimesNs.length
      ? Math.min(...changeTimesNs.map((t) => Math.abs(e.session_time_ns - t)))
      : null;
    return { e, rank: eventRank(e), distance };
  }).sort((a, b) =>
    a.rank - b.rank || (a.distance ?? Infinity) - (b.distance ?? Infinity) ||
    a.e.session_time_ns - b.e.session_time_ns || a.e.event_id - b.e.event_id
  );
  return {
    events: scored.slice(0, limit).map((s) => ({
      ...s.e,
      nearest_change_ms: s.distance === null ? null : ms(s.distance),
    })),
    omitted: Math.max(0, scored.length - limit),
  };
}

export interface EmulationView {
  at_start: string;
  at_end: string;
  changes: Array<{ at_ms: number; offset_ms: number; text: string }>;
}

/** The range's emulation for structured content: session ms and offsets from the anchor. */
export function emulationView(p: Prepared): EmulationView | undefined {
  const e = p.emulation;
  if (!e) return undefined;
  return {
    at_start: e.at_start,
    at_end: e.at_end,
    changes: e.changes.map((c) => ({
      at_ms: ms(c.at_ns),
      offset_ms: ms(c.at_ns - p.range.anchor.at_ns),
      text: c.text,
    })),
  };
}

const SHIFT_TEXT = 100;

/** The range's layout shifts in one line: how many, their total score, and the largest with its words. */
export function layoutShiftLine(events: EventView[], anchorNs: number): string | undefined {
  const shifts = events.filter((e) => e.kind === "layout_shift");
  if (shifts.length === 0) return undefined;
  const score = (e: EventView) => typeof e.data?.score === "number" ? e.data.score : 0;
  let largest = shifts[0];
  for (const e of shifts) if (score(e) > score(largest)) largest = e;
  const total = Math.round(shifts.reduce((sum, e) => sum + score(e), 0) * 1e4) / 1e4;
  return `- layout shifts: ${shifts.length} (total score ${total}); largest at ${
    signedMs(ms(largest.session_time_ns - anchorNs))
  }: ${(largest.text ?? `score ${score(largest)}`).slice(0, SHIFT_TEXT)}`;
}
