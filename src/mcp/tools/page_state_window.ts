/**
 * Page-state tools over a window: diff_dom (what changed between two instants) and bisect (every moment a
 * condition on an element flipped, exact to the DOM mutation, each with the frame that shows it).
 */
import { ms } from "../../temporal/range.ts";
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import { diffDom } from "../../pagestate/dom_diff.ts";
import type { DomNode } from "../../pagestate/dom_types.ts";
import { isVisualPredicate, predicateSchema } from "../../pagestate/predicates.ts";
import { changesDom, domWindow } from "../../pagestate/states.ts";
import { scanTransitions, scanTransitionsAsync, type TransitionScan } from "../../pagestate/transitions.ts";
import { PredicateError } from "../../pagestate/predicates.ts";
import { replayTarget } from "../../pagestate/replay.ts";
import { replayWindow } from "./page_state_layout.ts";
import { stateFrame } from "../../temporal/state_frame.ts";
import { visualBisect } from "./page_state_visual.ts";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import {
  bisectFields,
  clampedLines,
  type ClampedWindow,
  clampWindow,
  instantObject,
  instantOf,
  type RecordedPage,
  recordedPage,
  valueText,
} from "./page_state_args.ts";
import { cssSelector, scopeOf, selectorArg, stateOf } from "./page_state.ts";
import { sessionId } from "./sessions.ts";
import { rangeFields, rangeOf } from "./temporal_args.ts";
import { advertiseAs } from "../schema_compact.ts";

/** diff_dom's from and to, advertised as their forms (the same as the flat instant arguments'). */
const instantArg = advertiseAs(instantObject.describe("An instant"), {
  type: "object",
  description: "{at_ms} | {interaction_id | marker_id, offset_ms?} | {frame_id}",
});

/** The predicate's advertised form: its kinds and fields in one line (docs/tools.md has the full union). */
const PREDICATE_HELP = "{kind, ...}. DOM: exists {equals?} | visible {equals?} | textContains {text} | " +
  "propertyEquals {property: disabled|checked|readOnly|value, equals} | attributeExists {name} | " +
  "attributeEquals {name, equals} | optionCount {equals}; equals? defaults to true. Visual (no selector; " +
  "region {x, y, width, height}): regionChanged {region, threshold? (share of pixels differing from the " +
  "window's first frame, default 0.01)} | regionColor {region, color: #rrggbb, tolerance? (max channel " +
  "distance of the mean colour, default 24)}";

interface PageWindow {
  rec: RecordedPage;
  window: ClampedWindow;
}

/** The window a bisect scans: a range form, else the page's whole recording. */
async function windowOf(
  app: AppContext,
  args: {
    session_id?: string;
    page_id?: string;
    range?: unknown;
    range_handle?: string;
    interaction_id?: string;
  },
): Promise<PageWindow> {
  const ranged = args.range !== undefined || args.range_handle !== undefined ||
    args.interaction_id !== undefined;
  if (ranged) {
    const range = await rangeOf(app, args as Parameters<typeof rangeOf>[1], { instant: "reject" });
    const pageId = args.page_id ?? range.page_id;
    const rec = recordedPage(app, range.session_id, pageId);
    // The window asked for, not its intersection with frame coverage: the DOM has its own.
    return { rec, window: clampWindow(rec, range.requested.start_ns, range.requested.end_ns) };
  }
  const at = await instantOf(app, { session_id: args.session_id, page_id: args.page_id, at_ms: 0 });
  const rec = recordedPage(app, at.session_id, at.page_id);
  return { rec, window: { from_ns: rec.extent.first_ns, to_ns: rec.end_ns } };
}

/** A predicate that cannot apply to its element (optionCount on a non-select) is the caller's to fix. */
async function scanOrExplain(scan: () => Promise<TransitionScan>): Promise<TransitionScan> {
  try {
    return await scan();
  } catch (err) {
    if (!(err instanceof PredicateError)) throw err;
    throw new ToolError({
      code: err.code,
      message: err.message,
      retry: "never",
      recovery:
        "Choose a predicate that fits the element (optionCount is for a select), or a selector for one.",
      affected: { argument: "predicate" },
    });
  }
}

export const pageStateWindowTools = [
  defineTool({
    name: "diff_dom",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.diff_dom,
    description:
      "What changed in a page's DOM between two instants: added, removed, attribute and text changes; ≤ 30 shown, exact counts.",
    input: z.strictObject({
      session_id: sessionId.optional(),
      page_id: z.string().max(16).optional(),
      from: instantArg,
      to: instantArg,
      scope: cssSelector.optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const base = { session_id: args.session_id, page_id: args.page_id };
      const from = await instantOf(app, { ...base, ...args.from }, "from");
      const to = await instantOf(app, { ...base, page_id: args.page_id ?? from.page_id, ...args.to }, "to");
      if (from.page_id !== to.page_id || from.session_id !== to.session_id) {
        throw new ToolError({
          code: "invalid_instant",
          message: `from is on page ${from.page_id} and to on page ${to.page_id}; a diff compares one page.`,
          retry: "never",
          recovery: "Anchor both instants on the same page (page_id, or interactions of that page).",
          affected: { argument: "to" },
        });
      }
      // Windows are clamped to the recording (and say so); only instants wholly outside it fail.
      const rec = recordedPage(app, from.session_id, from.page_id);
      const window = clampWindow(rec, Math.min(from.at_ns, to.at_ns), Math.max(from.at_ns, to.at_ns));
      const [a, b] = from.at_ns <= to.at_ns ? [window.from_ns, window.to_ns] : [window.to_ns, window.from_ns];
      const before = stateOf(app, { ...from, at_ns: a }, "from");
      const after = stateOf(app, { ...to, at_ns: b }, "to");
      const beforeDoc = before.mirror.document;
      const afterDoc = after.mirror.document;
      const scopeBefore = beforeDoc && args.scope
        ? tryScope(beforeDoc, args.scope, ms(a))
        : beforeDoc && scopeOf(beforeDoc, undefined, ms(a));
      const scopeAfter = afterDoc && args.scope
        ? tryScope(afterDoc, args.scope, ms(b))
        : afterDoc && scopeOf(afterDoc, undefined, ms(b));
      if (args.scope && !scopeBefore && !scopeAfter) {
        scopeOf(afterDoc ?? beforeDoc ?? emptyDoc(), args.scope, ms(b));
      }
      const diff = diffDom(scopeBefore, scopeAfter);
      const c = diff.counts;
      const lines = [
        `DOM of page ${from.page_id} from ${ms(a)} to ${
          ms(b)
        } ms: ${c.added} added, ${c.removed} removed, ${c.attribute_changed} attribute and ${c.text_changed} text changes${
          diff.truncated ? ` (first ${diff.changes.length} of ${diff.changes_total})` : ""
        }`,
        ...clampedLines(window),
        ...diff.changes.map((ch) => ch.summary),
      ];
      return output(lines.join("\n"), {
        session_id: from.session_id,
        page_id: from.page_id,
        from_ms: ms(a),
        to_ms: ms(b),
        // Each change's one-line summary is the text above; the fields stay for programs.
        changes: diff.changes.map(({ summary: _summary, ...change }) => change),
        counts: { ...c, changes_total: diff.changes_total, truncated: diff.truncated },
        ...(window.clamped ? { clamped: window.clamped } : {}),
      });
    },
  }),
  defineTool({
    name: "bisect",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.bisect,
    description:
      "Every moment a predicate flipped in a window (default: the page's whole recording), each with the frame showing the new state: DOM predicates on selector's first match, exact to the mutation; visual ones on a region, over frames.",
    input: z.strictObject({
      ...rangeFields,
      page_id: z.string().max(16).optional(),
      selector: cssSelector.optional().describe("The element, for DOM predicates"),
      predicate: advertiseAs(predicateSchema, { type: "object", description: PREDICATE_HELP }),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const started = performance.now();
      if (isVisualPredicate(args.predicate)) return await visualBisect(app, args, args.predicate, started);
      const selectorText = args.selector;
      if (selectorText === undefined) {
        throw new ToolError({
          code: "invalid_arguments",
          message: `predicate ${args.predicate.kind} needs a selector (the element it is about).`,
          retry: "never",
          recovery: "Give selector, or use a visual predicate (regionChanged, regionColor) over a region.",
          affected: { argument: "selector" },
        });
      }
      const selector = selectorArg(selectorText, "selector");
      const { rec, window } = await windowOf(app, args);
      const db = app.recorder.reader();
      const scanWindow = domWindow(db, rec.session_id, rec.page_id, window.from_ns, window.to_ns);
      if (!scanWindow) {
        throw new ToolError({
          code: "instant_outside_recording",
          message: `No DOM checkpoint of page ${rec.page_id} precedes ${ms(window.from_ns)} ms.`,
          retry: "never",
          recovery: `Start the window at or after ${ms(rec.extent.first_ns)} ms.`,
          affected: { session_id: rec.session_id, page_id: rec.page_id, argument: "range" },
        });
      }
      const visible = args.predicate.kind === "visible"
        ? await replayWindow(app, rec, window.from_ns, window.to_ns)
        : undefined;
      const scan = await scanOrExplain(() =>
        visible
          // Visibility is measured in the replay target at each instant that could change it (real layout).
          ? scanTransitionsAsync(
            scanWindow.mirror,
            scanWindow.events,
            window.from_ns,
            window.to_ns,
            selector,
            args.predicate,
            async (_nodeId, atNs) => {
              const seen = await replayTarget().isVisible(
                visible.key,
                visible.timestampOf(atNs),
                selectorText,
              );
              return seen === "elementMissing" ? undefined : seen;
            },
          )
          : Promise.resolve(
            scanTransitions(
              scanWindow.mirror,
              scanWindow.events,
              window.from_ns,
              window.to_ns,
              selector,
              args.predicate,
            ),
          )
      );
      // The frame of each new state: its first paint unless the page changed again before that paint.
      const changeTimes = scanWindow.events.filter(changesDom).map((e) => e.at_ns);
      const transitions = scan.transitions.map((t) => {
        const next = changeTimes.find((at) => at > t.at_ns);
        const frame = stateFrame(db, rec.session_id, rec.page_id, t.at_ns, next);
        return { at_ms: ms(t.at_ns), from: t.from, to: t.to, frame: frame ?? null };
      });
      const elapsed = Math.round(performance.now() - started);
      const lines = [
        `${selectorText} ${JSON.stringify(args.predicate)} on page ${rec.page_id}, ${ms(window.from_ns)}–${
          ms(window.to_ns)
        } ms: ${valueText(scan.initial)} at the start, ${transitions.length} transition(s)` +
        ` (${scan.probes} probes over ${scan.events_scanned} events, ${elapsed} ms)`,
        ...clampedLines(window),
        ...transitions.map((t) =>
          `${t.at_ms} ms: ${valueText(t.from)} → ${valueText(t.to)}${
            t.frame ? ` (frame #${t.frame.frame_id})` : ""
          }`
        ),
        ...(scan.basis === "dom_approximation"
          ? ["visible was judged from the markup (hidden, display:none, aria-hidden…), not from layout"]
          : []),
      ];
      return output(lines.join("\n"), {
        ...bisectFields(rec, window, scan, transitions),
        probes: scan.probes,
        events_scanned: scan.events_scanned,
        elapsed_ms: elapsed,
        basis: scan.basis,
      });
    },
  }),
];

/** The scope node, or undefined when it did not exist at that instant (a diff may span its creation). */
function tryScope(doc: DomNode, scope: string, atMs: number): DomNode | undefined {
  try {
    return scopeOf(doc, scope, atMs);
  } catch (err) {
    if (err instanceof ToolError && err.code === "scope_not_found") return undefined;
    throw err;
  }
}

function emptyDoc(): DomNode {
  return { id: 0, kind: "document", tag: "", attrs: new Map(), text: "", parent: undefined, children: [] };
}
