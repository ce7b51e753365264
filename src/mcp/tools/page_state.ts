/**
 * Page state across time (Traces' read_dom_at, diff_dom, find_element) on krometrail's own recording: the
 * agent-legible DOM of any recorded instant with the frame that shows it, what changed between two
 * instants, and where an element is and how long it lived.
 */
import { ms } from "../../temporal/range.ts";
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import type { DomNode } from "../../pagestate/dom_types.ts";
import { legibleDom } from "../../pagestate/legible.ts";
import {
  type ParsedSelector,
  parseSelector,
  querySelector,
  SelectorError,
} from "../../pagestate/selector.ts";
import { domStateAt, type PageDomState } from "../../pagestate/states.ts";
import { findElements } from "../../pagestate/find.ts";
import { domEvents } from "../../capture/dom_query.ts";
import { stateFrame } from "../../temporal/state_frame.ts";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import {
  assertRecordedInstant,
  instantFields,
  instantOf,
  recordedPage,
  type ResolvedInstant,
} from "./page_state_args.ts";

export const cssSelector = z.string().min(1).max(500);

/** Parses an agent's selector up front; a selector outside the supported set is a structured error. */
export function selectorArg(text: string, argument: string): ParsedSelector {
  try {
    return parseSelector(text);
  } catch (err) {
    if (!(err instanceof SelectorError)) throw err;
    throw new ToolError({
      code: "invalid_selector",
      message: `${argument} ${JSON.stringify(text.slice(0, 80))}: ${err.message}`,
      retry: "never",
      recovery:
        "Use CSS: type, #id, .class, [attr], [attr=value] (^= $= *= ~= |=), :not() :is() :has(), :checked, :disabled, :nth-child(), combinators (space, >, +, ~).",
      affected: { argument },
    });
  }
}

/** The recorded document of an instant, checked against the recording. */
export function stateOf(app: AppContext, at: ResolvedInstant, argument = "instant"): PageDomState {
  const rec = recordedPage(app, at.session_id, at.page_id);
  assertRecordedInstant(rec, at.at_ns, argument);
  const state = domStateAt(app.recorder.reader(), at.session_id, at.page_id, at.at_ns);
  if (!state || !state.mirror.document) {
    throw new ToolError({
      code: "instant_outside_recording",
      message: `The DOM of page ${at.page_id} cannot be rebuilt at ${
        ms(at.at_ns)
      } ms: no checkpoint precedes it.`,
      retry: "never",
      recovery: `Ask for a later instant (the recording is rebuildable from ${ms(rec.extent.first_ns)} ms).`,
      affected: { session_id: at.session_id, page_id: at.page_id, argument },
    });
  }
  return state;
}

/** The node a `scope` selector names in a document (the body by default). */
export function scopeOf(doc: DomNode, scope: string | undefined, atMs: number): DomNode {
  if (scope === undefined) {
    const html = doc.children.find((c) => c.kind === "element" && c.tag === "html");
    return html?.children.find((c) => c.kind === "element" && c.tag === "body") ?? html ?? doc;
  }
  const node = querySelector(doc, selectorArg(scope, "scope"));
  if (!node) {
    throw new ToolError({
      code: "scope_not_found",
      message: `Nothing matched scope ${JSON.stringify(scope.slice(0, 80))} at ${atMs} ms.`,
      retry: "never",
      recovery:
        "Read the page without scope first (read_dom_at), or use find_element to see when the element existed.",
      affected: { argument: "scope" },
    });
  }
  return node;
}

function anchorText(at: ResolvedInstant): string {
  const a = at.anchor;
  if (a.kind === "session_time") return `${ms(at.at_ns)} ms`;
  const off = a.offset_ms ? ` ${a.offset_ms > 0 ? "+" : ""}${a.offset_ms} ms` : "";
  return `${ms(at.at_ns)} ms (${a.kind} ${a.id}${off})`;
}

export const pageStateTools = [
  defineTool({
    name: "read_dom_at",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.read_dom_at,
    description:
      "The agent-legible DOM of a page at a recorded instant (default: the latest): interactive and state-bearing nodes, ≤ 60 lines, with the frame showing that state; scope: a container selector.",
    input: z.strictObject({ ...instantFields, scope: cssSelector.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      const at = await instantOf(app, args, "instant", true);
      const state = stateOf(app, at);
      const doc = state.mirror.document;
      if (!doc) throw new Error("rebuilt state has no document");
      const atMs = ms(at.at_ns);
      const scope = scopeOf(doc, args.scope, atMs);
      const dom = legibleDom(scope);
      const frame = stateFrame(
        app.recorder.reader(),
        at.session_id,
        at.page_id,
        at.at_ns,
        state.next_change_ns,
      );
      const frameLine = frame
        ? `frame #${frame.frame_id} at ${frame.session_time_ms} ms shows this state (${
          frame.relation === "first_painted_after"
            ? "first paint after the instant"
            : "last paint at or before it"
        }, ${frame.offset_ms >= 0 ? "+" : ""}${frame.offset_ms} ms)`
        : "no frame of this page shows this instant";
      const text = [
        `DOM of page ${at.page_id} at ${anchorText(at)}${state.mirror.href ? ` — ${state.mirror.href}` : ""}`,
        dom.text,
        frameLine,
      ].join("\n");
      return output(text, {
        session_id: at.session_id,
        page_id: at.page_id,
        at_ms: atMs,
        anchor: at.anchor,
        ...(state.mirror.href ? { url: state.mirror.href } : {}),
        dom: dom.text,
        counts: {
          lines: dom.line_count,
          chars: dom.char_count,
          source_html_chars: dom.source_html_chars,
          elements: dom.node_count,
          truncated: dom.truncated,
        },
        ...(dom.advice ? { advice: dom.advice } : {}),
        frame: frame ?? null,
        ...(state.last_change_ns !== undefined ? { last_change_ms: ms(state.last_change_ns) } : {}),
        ...(state.next_change_ns !== undefined ? { next_change_ms: ms(state.next_change_ns) } : {}),
      });
    },
  }),
  defineTool({
    name: "find_element",
    capability: "page-state",
    output: OUTPUT_SCHEMAS.find_element,
    description:
      "Find elements by text, role and/or selector at an instant (default: the latest): up to 5 innermost matches, each with a stable selector and when it was first and last seen.",
    input: z.strictObject({
      ...instantFields,
      text: z.string().min(1).max(200).optional(),
      role: z.string().min(1).max(40).optional(),
      selector: cssSelector.optional(),
      limit: z.number().int().min(1).max(5).optional(),
    }),
    annotations: { readOnlyHint: true },
    handler: async (args, app) => {
      if (args.text === undefined && args.role === undefined && args.selector === undefined) {
        throw new ToolError({
          code: "invalid_arguments",
          message: "find_element needs text, role or selector (or several: all must hold).",
          retry: "never",
          recovery: 'Give e.g. {text: "Pay"}, {role: "button"} or {selector: "form#checkout button"}.',
          affected: { argument: "text" },
        });
      }
      if (args.selector !== undefined) selectorArg(args.selector, "selector");
      const at = await instantOf(app, args, "instant", true);
      const rec = recordedPage(app, at.session_id, at.page_id);
      assertRecordedInstant(rec, at.at_ns);
      // Lifetimes need the whole recording of the page, not only the stretch up to the instant.
      const window = domEvents(
        app.recorder.reader(),
        at.session_id,
        at.page_id,
        rec.extent.first_ns,
        rec.end_ns,
      );
      const found = findElements(window?.events ?? [], at.at_ns, {
        ...(args.text !== undefined ? { text: args.text } : {}),
        ...(args.role !== undefined ? { role: args.role } : {}),
        ...(args.selector !== undefined ? { selector: args.selector } : {}),
      }, args.limit ?? 5);
      const matches = found.matches.map((m) => ({
        node_id: m.node_id,
        tag: m.tag,
        selector: m.selector,
        unique: m.unique,
        text: m.text,
        role: m.role,
        first_seen_ms: ms(m.first_seen_ns),
        last_seen_ms: m.last_seen_ns === null ? null : ms(m.last_seen_ns),
        present_at_end: m.present_at_end,
      }));
      const atMs = ms(at.at_ns);
      const lines = [
        `${found.total} match(es) on page ${at.page_id} at ${anchorText(at)}${
          found.total > matches.length ? ` (first ${matches.length})` : ""
        }`,
        ...matches.map((m) =>
          `${m.selector}${m.unique ? "" : " (not unique)"}${m.text ? ` "${m.text}"` : ""}${
            m.role ? ` [${m.role}]` : ""
          }: seen ${m.first_seen_ms} ms → ${
            m.last_seen_ms === null ? "still present" : `${m.last_seen_ms} ms`
          }`
        ),
        ...(found.total === 0
          ? ["nothing matched then; find_element at another instant, or read_dom_at to see what was there"]
          : []),
      ];
      return output(lines.join("\n"), {
        session_id: at.session_id,
        page_id: at.page_id,
        at_ms: atMs,
        matches,
        total: found.total,
      });
    },
  }),
];
