/**
 * Markers on a session's timeline (Traces' annotate / read_markers): who put them there, a short label,
 * a severity. A marker is an anchor every temporal and page-state tool accepts (`marker_id`), and is
 * drawn on storyboards whose range holds it. Annotating the same label at the same instant again
 * returns the same marker instead of a second one.
 */
import { z } from "zod";
import { createHash } from "node:crypto";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { instantFields, instantOf } from "./page_state_args.ts";
import { optionalRange, rangeFields } from "./temporal_args.ts";
import { assertSessionPage } from "./sessions.ts";

const SEVERITIES = ["info", "warn", "error"] as const;
const AUTHORS = ["agent", "human"] as const;
const READ_LIMIT = 100;

export interface MarkerView {
  marker_id: string;
  session_id: string;
  page_id: string | null;
  at_ms: number;
  label: string;
  severity: string;
  author: string;
}

interface MarkerRow {
  id: string;
  session_id: string;
  page_id: string | null;
  at_ns: number;
  label: string | null;
  data: string | null;
}

function view(r: MarkerRow): MarkerView {
  let data: { severity?: string; author?: string } = {};
  try {
    data = r.data ? JSON.parse(r.data) : {};
  } catch { /* a marker without metadata */ }
  return {
    marker_id: r.id,
    session_id: r.session_id,
    page_id: r.page_id,
    at_ms: Math.round(Number(r.at_ns) / 1e3) / 1e3,
    label: r.label ?? r.id,
    severity: data.severity ?? "info",
    author: data.author ?? "agent",
  };
}

function line(m: MarkerView): string {
  return `${m.marker_id} ${m.at_ms.toFixed(1)}ms ${m.page_id ?? "-"} [${m.severity}] ${m.author}: ${m.label}`;
}

/** The same session, page, label and millisecond always name the same marker. */
function markerId(session: string, page: string, label: string, atNs: number): string {
  const key = `${session}\n${page}\n${label}\n${Math.round(atNs / 1e6)}`;
  return `m-${createHash("sha256").update(key).digest("hex").slice(0, 12)}`;
}

function readMarker(app: AppContext, session: string, id: string): MarkerRow | undefined {
  return app.recorder.reader().prepare("SELECT * FROM markers WHERE session_id = ? AND id = ?").get(
    session,
    id,
  ) as MarkerRow | undefined;
}

export const markerTools = [
  defineTool({
    name: "annotate",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.annotate,
    description:
      "Put a marker on the session timeline at an instant; markers anchor every temporal tool (marker_id) and show on storyboards.",
    input: z.strictObject({
      ...instantFields,
      label: z.string().min(1).max(80),
      severity: z.enum(SEVERITIES).optional(),
      author: z.enum(AUTHORS).optional(),
    }),
    handler: async (args, app) => {
      const at = await instantOf(app, args, "instant", true);
      const label = args.label.replace(/\s+/g, " ").trim();
      const id = markerId(at.session_id, at.page_id, label, at.at_ns);
      const existing = readMarker(app, at.session_id, id);
      if (!existing) {
        app.recorder.send({
          type: "marker",
          row: {
            id,
            session_id: at.session_id,
            page_id: at.page_id,
            at_ns: Math.round(at.at_ns / 1e6) * 1e6,
            label,
            data: JSON.stringify({
              severity: args.severity ?? "info",
              author: args.author ?? "agent",
              created_at: new Date().toISOString(),
            }),
          },
        });
        await app.recorder.flush();
      }
      const row = readMarker(app, at.session_id, id);
      if (!row) throw new Error("the marker was not stored");
      const m = view(row);
      return output(`${existing ? "Marker already there" : "Marked"}: ${line(m)}`, {
        marker: m,
        created: !existing,
      });
    },
  }),
  defineTool({
    name: "read_markers",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.read_markers,
    description:
      "Every marker on a session's timeline (the agent's and the human's), in time order; range narrows it.",
    input: z.strictObject({
      ...rangeFields,
      page_id: z.string().max(16).optional(),
      author: z.enum(AUTHORS).optional(),
      severity: z.enum(SEVERITIES).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const { range, session } = await optionalRange(app, args, { instant: "allow" });
      if (args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
      const rows = app.recorder.reader().prepare(
        "SELECT * FROM markers WHERE session_id = ? ORDER BY at_ns, id",
      ).all(session) as unknown as MarkerRow[];
      const all = rows.map(view).filter((m) =>
        (args.page_id === undefined || m.page_id === args.page_id) &&
        (args.author === undefined || m.author === args.author) &&
        (args.severity === undefined || m.severity === args.severity) &&
        (!range || (m.at_ms * 1e6 >= range.start_ns && m.at_ms * 1e6 <= range.end_ns))
      );
      const shown = all.slice(0, READ_LIMIT);
      return output(
        [
          `${all.length} marker(s) in session ${session}${
            all.length > shown.length ? ` (first ${shown.length})` : ""
          }`,
          ...shown.map(line),
        ].join("\n"),
        { session_id: session, markers: shown, total: all.length, ...(range ? { range } : {}) },
      );
    },
  }),
];
