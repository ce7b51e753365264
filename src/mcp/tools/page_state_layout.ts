/**
 * measure_layout: real layout of a recorded instant, so a covered button or a zero-size element is found
 * without pixels. The recorded document is replayed in the private replay target (rrweb's Replayer in a
 * sandboxed iframe: recorded scripts never run, nothing is fetched) and measured there.
 */
import { ms } from "../../temporal/range.ts";
import { z } from "zod";
import type { eventWithTime } from "@rrweb/types";
import { domEvents } from "../../capture/dom_query.ts";
import { replayTarget } from "../../pagestate/replay.ts";
import type { MeasuredElement, Overlap } from "../../pagestate/replay_layout.ts";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import {
  assertRecordedInstant,
  instantFields,
  instantOf,
  type RecordedPage,
  recordedPage,
  type ResolvedInstant,
} from "./page_state_args.ts";
import { cssSelector, selectorArg } from "./page_state.ts";

/** A stretch of a page's recording loaded in the replay target, and its clock. */
export interface ReplayWindow {
  key: string;
  /** An instant of the session clock on the page clock rrweb replays by. */
  timestampOf(atNs: number): number;
}

/**
 * Loads (or tops up) the replay of [fromNs, toNs] of a page: the events from the checkpoint before fromNs.
 * One key per window start, so the probes of one bisect share a loaded Replayer and a point read loads
 * only its checkpoint's stretch.
 */
export async function replayWindow(
  app: AppContext,
  rec: RecordedPage,
  fromNs: number,
  toNs: number,
): Promise<ReplayWindow> {
  assertRecordedInstant(rec, fromNs);
  const window = domEvents(app.recorder.reader(), rec.session_id, rec.page_id, fromNs, toNs);
  if (!window || window.events.length === 0) assertRecordedInstant({ ...rec, end_ns: -1 }, fromNs);
  const timed = window?.events ?? [];
  const events = timed.map((e) => e.event as eventWithTime);
  const key = `${rec.session_id}/${rec.page_id}/${window?.checkpoint_ns ?? 0}`;
  const target = replayTarget();
  const loaded = target.loadedEvents(key);
  if (loaded === undefined || loaded > events.length) await target.load(key, events);
  else if (loaded < events.length) await target.append(key, events.slice(loaded));
  return {
    key,
    // The last event at or before the instant maps it: chunks carry their own clock offsets (sampled per
    // batch), so an instant at an event's time maps to that event's own timestamp and the event is applied.
    timestampOf(atNs: number): number {
      let ref = timed[0];
      for (const e of timed) {
        if (e.at_ns > atNs) break;
        ref = e;
      }
      return ref ? ref.event.timestamp + (atNs - ref.at_ns) / 1e6 : 0;
    },
  };
}

/** The replay of the checkpoint an instant belongs to, and the instant on the events' clock. */
export async function replayAt(
  app: AppContext,
  at: ResolvedInstant,
): Promise<{ key: string; timestampMs: number }> {
  const rec = recordedPage(app, at.session_id, at.page_id);
  const w = await replayWindow(app, rec, at.at_ns, at.at_ns);
  return { key: w.key, timestampMs: w.timestampOf(at.at_ns) };
}

function elementLine(e: MeasuredElement): string {
  if (!e.found) return `${e.selector}: not found`;
  const b = e.box;
  const box = b
    ? `${Math.round(b.x)},${Math.round(b.y)} ${Math.round(b.width)}×${Math.round(b.height)}`
    : "no box";
  const states = [
    e.visible ? "visible" : "not visible",
    ...(e.in_viewport ? [] : ["off-viewport"]),
    ...(e.display && e.display !== "block" && e.display !== "inline" ? [`display:${e.display}`] : []),
    ...(e.z_index && e.z_index !== "auto" ? [`z-index:${e.z_index}`] : []),
    ...(e.covered_by
      ? [`COVERED by ${e.covered_by.selector_hint} (${Math.round(e.covered_by.coverage * 100)}%)`]
      : []),
  ];
  return `${e.selector}${e.count > 1 ? ` (1st of ${e.count})` : ""}: ${box} [${states.join(", ")}]`;
}

function overlapLine(o: Overlap): string {
  const top = o.on_top ?? o.on_top_other ?? "neither";
  return `${o.a} ∩ ${o.b}: ${Math.round(o.area)} px²${o.nested ? " (nested)" : `, on top: ${top}`}`;
}

export const pageStateLayoutTools = [
  defineTool({
    name: "measure_layout",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.measure_layout,
    description:
      "Boxes, visibility, display, z-index, what covers each element, and pairwise overlaps at a recorded instant (real layout, replayed without scripts).",
    input: z.strictObject({ ...instantFields, selectors: z.array(cssSelector).min(1).max(8) }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      for (const [i, s] of args.selectors.entries()) selectorArg(s, `selectors[${i}]`);
      const at = await instantOf(app, args, "instant", true);
      const { key, timestampMs } = await replayAt(app, at);
      const layout = await replayTarget().measureLayout(key, timestampMs, args.selectors);
      const lines = [
        `Layout of page ${at.page_id} at ${
          ms(at.at_ns)
        } ms (viewport ${layout.viewport.width}×${layout.viewport.height}, replayed in ${layout.elapsed_ms} ms)`,
        ...layout.results.map(elementLine),
        ...layout.overlaps.filter((o) => !o.nested).map(overlapLine),
      ];
      return output(lines.join("\n"), {
        session_id: at.session_id,
        page_id: at.page_id,
        at_ms: ms(at.at_ns),
        viewport: layout.viewport,
        elements: layout.results,
        overlaps: layout.overlaps,
        elapsed_ms: layout.elapsed_ms,
      });
    },
  }),
];
