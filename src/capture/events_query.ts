import type { DatabaseSync } from "node:sqlite";

export interface EventView {
  event_id: number;
  page_id: string | null;
  kind: string;
  session_time_ns: number;
  session_time_ms: number;
  interaction_id: string | null;
  level: string | null;
  text: string | null;
  data: Record<string, unknown> | null;
}

export interface EventQuery {
  sessionId: string;
  kinds?: string[];
  pageId?: string;
  interactionId?: string;
  startNs?: number;
  endNs?: number;
  levels?: string[];
  offset: number;
  limit: number;
}

/** Events in time order with the total, so callers can report exact omissions. */
export function queryEvents(
  db: DatabaseSync,
  q: EventQuery,
): { events: EventView[]; total: number; by_kind: Record<string, number> } {
  const where = ["session_id = ?"];
  const args: Array<string | number> = [q.sessionId];
  const inList = (column: string, values: string[] | undefined) => {
    if (!values || values.length === 0) return;
    where.push(`${column} IN (${values.map(() => "?").join(",")})`);
    args.push(...values);
  };
  inList("kind", q.kinds);
  inList("level", q.levels);
  if (q.pageId) {
    where.push("page_id = ?");
    args.push(q.pageId);
  }
  if (q.interactionId) {
    where.push("interaction_id = ?");
    args.push(q.interactionId);
  }
  if (q.startNs !== undefined) {
    where.push("at_ns >= ?");
    args.push(Math.round(q.startNs));
  }
  if (q.endNs !== undefined) {
    where.push("at_ns <= ?");
    args.push(Math.round(q.endNs));
  }
  const clause = where.join(" AND ");
  const byKind = db.prepare(`SELECT kind, count(*) AS n FROM events WHERE ${clause} GROUP BY kind`).all(
    ...args,
  ) as Array<
    { kind: string; n: number }
  >;
  const total = byKind.reduce((a, r) => a + r.n, 0);
  const rows = db.prepare(`SELECT * FROM events WHERE ${clause} ORDER BY at_ns, id LIMIT ? OFFSET ?`).all(
    ...args,
    q.limit,
    q.offset,
  ) as Array<Record<string, string | number | null>>;
  return {
    total,
    by_kind: Object.fromEntries(byKind.map((r) => [r.kind, r.n])),
    events: rows.map((r) => ({
      event_id: Number(r.id),
      page_id: r.page_id as string | null,
      kind: String(r.kind),
      session_time_ns: Number(r.at_ns),
      session_time_ms: Math.round(Number(r.at_ns) / 1e3) / 1e3,
      interaction_id: r.interaction_id as string | null,
      level: r.level as string | null,
      text: r.text as string | null,
      data: r.data ? JSON.parse(String(r.data)) : null,
    })),
  };
}
