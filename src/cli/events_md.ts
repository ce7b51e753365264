/**
 * What `krometrail record` saw, as data the report and events.md share, and events.md itself: the
 * steps with their timings, then one timeline of interactions and browser events on the session clock.
 */

export interface StepRecord {
  /** 1-based, in command-line order; the navigation is step 1. */
  index: number;
  description: string;
  /** Session ms when the step began. */
  started_ms: number;
  duration_ms: number;
  status: "ok" | "failed" | "skipped";
  interaction_id?: string;
  /** The tool's first line, or the error. */
  message?: string;
}

export interface InteractionRecord {
  interaction_id: string;
  operation: string;
  page_id: string;
  /** Session ms of dispatch (or start when it never dispatched). */
  at_ms: number;
  outcome: string;
  /** What it acted on, in words. */
  target?: string;
  error_code?: string;
}

export interface EventRecord {
  at_ms: number;
  kind: string;
  level?: string;
  page_id?: string;
  text: string;
  interaction_id?: string;
}

export interface RecordSummary {
  url: string;
  session_id?: string;
  started_at: string;
  /** Session ms covered by the recording's artifacts. */
  range?: { start_ms: number; end_ms: number; page_id: string };
  frames: number;
  bytes: number;
  steps: StepRecord[];
  interactions: InteractionRecord[];
  events: EventRecord[];
  /** Events in the session; more than `events.length` when the list was capped. */
  events_total: number;
  /** Why a promised file is missing (e.g. the video without ffmpeg). */
  notes: string[];
}

/** One row of the merged timeline. */
export interface TimelineRow {
  at_ms: number;
  what: string;
  level?: string;
  text: string;
}

const MAX_CELL = 240;

/** Session ms as seconds with millisecond precision: `1.234 s`. */
export function sessionTime(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

/** Interactions and events in time order; an interaction sorts before an event at the same instant. */
export function timeline(summary: Pick<RecordSummary, "interactions" | "events">): TimelineRow[] {
  const rows: Array<TimelineRow & { order: number }> = [
    ...summary.interactions.map((i) => ({
      at_ms: i.at_ms,
      what: `interaction: ${i.operation}`,
      text: [
        i.target,
        i.outcome === "ok" || i.outcome === "completed" ? "" : i.outcome,
        i.error_code ? `(${i.error_code})` : "",
      ].filter((s) => s).join(" "),
      order: 0,
    })),
    ...summary.events.map((e) => ({
      at_ms: e.at_ms,
      what: e.kind,
      ...(e.level ? { level: e.level } : {}),
      text: e.text,
      order: 1,
    })),
  ];
  rows.sort((a, b) => a.at_ms - b.at_ms || a.order - b.order);
  return rows.map(({ order: _order, ...row }) => row);
}

/** A markdown table cell: one line, pipes and angle brackets escaped, bounded length. */
export function mdCell(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  const cut = one.length > MAX_CELL ? `${one.slice(0, MAX_CELL - 1)}…` : one;
  return cut.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export function buildEventsMd(summary: RecordSummary): string {
  const lines: string[] = [
    "# krometrail record: events",
    "",
    `- URL: ${mdCell(summary.url)}`,
    `- Started: ${summary.started_at}${summary.session_id ? ` (session ${summary.session_id})` : ""}`,
  ];
  if (summary.range) {
    lines.push(
      `- Recorded: ${sessionTime(summary.range.start_ms)} to ${sessionTime(summary.range.end_ms)} on page ${
        mdCell(summary.range.page_id)
      }, ${summary.frames} frames`,
    );
  }
  for (const note of summary.notes) lines.push(`- Note: ${mdCell(note)}`);
  lines.push("", "## Steps", "", "| # | step | at | took | result |", "|---|---|---|---|---|");
  for (const s of summary.steps) {
    const result = s.status === "ok" ? "ok" : `**${s.status}**`;
    lines.push(
      `| ${s.index} | ${mdCell(s.description)} | ${sessionTime(s.started_ms)} | ${
        Math.round(s.duration_ms)
      } ms | ${result}${s.message ? ` ${mdCell(s.message)}` : ""} |`,
    );
  }
  const rows = timeline(summary);
  const capped = summary.events_total > summary.events.length
    ? ` (the first ${summary.events.length} of ${summary.events_total} browser events)`
    : "";
  lines.push(
    "",
    "## Timeline",
    "",
    `${summary.interactions.length} interactions and ${summary.events.length} browser events${capped}, on the session clock.`,
    "Recorded URLs keep their origin; paths show as a hash (~…) and query values are dropped, as everywhere krometrail stores a URL.",
    "",
  );
  if (rows.length === 0) {
    lines.push("Nothing was recorded.");
  } else {
    lines.push("| time | what | level | detail |", "|---|---|---|---|");
    for (const r of rows) {
      lines.push(
        `| ${sessionTime(r.at_ms)} | ${mdCell(r.what)} | ${mdCell(r.level ?? "")} | ${mdCell(r.text)} |`,
      );
    }
  }
  return lines.join("\n") + "\n";
}
