import type { BrowserSession } from "../browser/session.ts";
import type { InteractionRecord } from "./observation.ts";

/** In-memory interaction records per session until the capture index persists them. */
const RECORD_LIMIT = 5_000;
const records = new WeakMap<BrowserSession, InteractionRecord[]>();

export function recordInteraction(session: BrowserSession, record: InteractionRecord): void {
  let list = records.get(session);
  if (!list) {
    list = [];
    records.set(session, list);
  }
  list.push(record);
  if (list.length > RECORD_LIMIT) list.shift();
}

export function interactionsOf(session: BrowserSession): readonly InteractionRecord[] {
  return records.get(session) ?? [];
}
