/**
 * A recorded page's DOM at an instant or across a window, rebuilt from the store: the last checkpoint at or
 * before the instant, then every event up to it, applied to a DomMirror. Recorded scripts never run here;
 * this is data, not a document.
 */
import type { DatabaseSync } from "node:sqlite";
import { EventType, IncrementalSource } from "@rrweb/types";
import { domEvents, type DomGap, domGaps, domPages } from "../capture/dom_query.ts";
import type { TimedDomEvent } from "./dom_types.ts";
import { DomMirror } from "./mirror.ts";

/** How far past an instant to look for the page's next DOM change (which decides the frame that shows it). */
const NEXT_CHANGE_LOOKAHEAD_NS = 2_000_000_000;

/** The stretch of a page's recording that can be rebuilt. */
export interface DomExtent {
  /** The first retained checkpoint: nothing before it can be rebuilt. */
  first_ns: number;
  /** The last recorded DOM event. */
  last_event_ns: number;
  events: number;
  gaps: DomGap[];
}

export function domExtent(db: DatabaseSync, sessionId: string, pageId: string): DomExtent | undefined {
  const page = domPages(db, sessionId).find((p) => p.page_id === pageId);
  if (!page || page.first_checkpoint_ns === null) return undefined;
  return {
    first_ns: firstDocumentNs(db, sessionId, pageId, page.first_checkpoint_ns),
    last_event_ns: page.last_ns,
    events: page.events,
    gaps: domGaps(db, sessionId, pageId),
  };
}

/**
 * A checkpoint chunk starts at its Meta, but the document exists from the FullSnapshot after it, which plain
 * rrweb emits up to ~100 ms later (it waits for stylesheets; seen in loaded recordings): instants between
 * are outside the recording, not "no checkpoint precedes it". The two never split across chunks.
 */
function firstDocumentNs(db: DatabaseSync, sessionId: string, pageId: string, checkpointNs: number): number {
  const window = domEvents(db, sessionId, pageId, checkpointNs, checkpointNs);
  const full = window?.events.find((e) => e.event.type === EventType.FullSnapshot);
  return full ? Math.max(checkpointNs, full.at_ns) : checkpointNs;
}

/** Whether an event can change what the document holds (structure, attributes, text, form state). */
export function changesDom(e: TimedDomEvent): boolean {
  const ev = e.event;
  if (ev.type !== EventType.IncrementalSnapshot) return false;
  const source = (ev.data as { source: number }).source;
  return source === IncrementalSource.Mutation || source === IncrementalSource.Input;
}

export interface PageDomState {
  mirror: DomMirror;
  at_ns: number;
  checkpoint_ns: number;
  events_applied: number;
  /** The last event at or before the instant that changed the DOM, and the first one after it. */
  last_change_ns?: number;
  next_change_ns?: number;
}

/** The page's document at `atNs`; undefined when no retained checkpoint precedes it. */
export function domStateAt(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  atNs: number,
): PageDomState | undefined {
  const window = domEvents(db, sessionId, pageId, atNs, atNs + NEXT_CHANGE_LOOKAHEAD_NS);
  if (!window) return undefined;
  const mirror = new DomMirror();
  let applied = 0;
  let last: number | undefined;
  let next: number | undefined;
  for (const e of window.events) {
    if (e.at_ns > atNs) {
      if (changesDom(e)) {
        next = e.at_ns;
        break;
      }
      continue;
    }
    mirror.apply(e.event);
    applied++;
    if (changesDom(e)) last = e.at_ns;
  }
  return {
    mirror,
    at_ns: atNs,
    checkpoint_ns: window.checkpoint_ns,
    events_applied: applied,
    ...(last !== undefined ? { last_change_ns: last } : {}),
    ...(next !== undefined ? { next_change_ns: next } : {}),
  };
}

export interface DomWindow {
  /** Positioned at the checkpoint the events start from (nothing applied yet). */
  mirror: DomMirror;
  /** Every event from that checkpoint through the window's end. */
  events: TimedDomEvent[];
  checkpoint_ns: number;
}

/** What a scan over [fromNs, toNs] needs: a fresh mirror and the events from the checkpoint before fromNs. */
export function domWindow(
  db: DatabaseSync,
  sessionId: string,
  pageId: string,
  fromNs: number,
  toNs: number,
): DomWindow | undefined {
  const window = domEvents(db, sessionId, pageId, fromNs, toNs);
  if (!window) return undefined;
  return {
    mirror: new DomMirror(),
    events: window.events.filter((e) => e.at_ns <= toNs),
    checkpoint_ns: window.checkpoint_ns,
  };
}
