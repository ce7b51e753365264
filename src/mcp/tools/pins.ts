/**
 * Pins (spec: "Reclaim"): a pinned range keeps every segment needed to rebuild it through budget
 * pressure and age-out until it is unpinned. Pins live in this process, like the evidence they hold.
 */
import { z } from "zod";
import { ToolError } from "../../errors.ts";
import type { RetentionStatus } from "../../capture/ingest_budget.ts";
import type { PageSpan, PinView } from "../../store/protection.ts";
import type { ResolvedRange } from "../../temporal/range.ts";
import { formatBytes } from "../../bytes.ts";
import type { AppContext } from "../context.ts";
import { defineTool } from "../define_tool.ts";
import { OUTPUT_SCHEMAS } from "../output_schemas.ts";
import { output } from "../response.ts";
import { conflictingArguments } from "./arg_conflicts.ts";
import { sessionId } from "./sessions.ts";
import { rangeFields, rangeOf, spanOf } from "./temporal_args.ts";

const pinId = z.string().max(24);

/** The budget figures beside a pin answer: what pins hold against what the instance may hold. */
function budgetOf(r: RetentionStatus) {
  return {
    pinned_bytes: r.pinned_bytes,
    used_bytes: r.used_bytes,
    share_bytes: r.share_bytes,
    ...(r.recording_blocked ? { recording_blocked: true, blocked_reason: r.blocked_reason } : {}),
  };
}

/**
 * The span a range pins: what it resolved to, and, for a range reaching into a live recording's
 * future (resolved up to now), the end that was asked for, so the tail is held as it is recorded.
 */
function pinSpan(range: ResolvedRange): PageSpan {
  const future = range.warnings.some((w) => w.code === "requested_end_not_yet_elapsed");
  const span = spanOf(range);
  return future ? { ...span, end_ns: Math.max(range.end_ns, range.requested.end_ns) } : span;
}

function pinLine(p: PinView): string {
  return `${p.pin_id}${
    p.label ? ` "${p.label}"` : ""
  }: ${p.start_ms}–${p.end_ms} ms of page ${p.page_id}, session ${p.session_id}; ${p.segments} segment(s), ${
    formatBytes(p.bytes)
  }`;
}

function shareLine(r: RetentionStatus): string {
  const share = r.share_bytes === null ? "no budget limit" : `the ${formatBytes(r.share_bytes)} share`;
  return `Pinned in total: ${formatBytes(r.pinned_bytes)} of ${share} (${formatBytes(r.used_bytes)} in use).${
    r.recording_blocked && r.blocked_reason === "pinned"
      ? " Capture is paused: pins fill the share. Unpin what you no longer need."
      : ""
  }`;
}

/** Pins fill most of the share: capture will pause rather than delete them. */
function crowdingWarning(r: RetentionStatus): string | undefined {
  if (r.share_bytes === null || r.pinned_bytes < r.share_bytes * 0.8) return undefined;
  return `pins hold ${formatBytes(r.pinned_bytes)} of the ${
    formatBytes(r.share_bytes)
  } share; when they fill it, capture pauses (a budget gap) instead of deleting pinned evidence`;
}

function pinNotFound(asked: string, pins: PinView[]): ToolError {
  return new ToolError({
    code: "pin_not_found",
    message: `No pin ${asked} in this server process.`,
    retry: "never",
    recovery: pins.length > 0
      ? `Current pins: ${pins.slice(0, 10).map((p) => p.pin_id).join(", ")} (query_pin_state lists them).`
      : "Nothing is pinned; pins end with the server process and with delete_session.",
    affected: { argument: "pin_id" },
  });
}

export const pinTools = [
  defineTool({
    name: "pin_resolved_range",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.pin_resolved_range,
    description:
      "Protect a range's evidence from budget reclaim and age-out until unpinned; returns pin_id and the bytes it holds.",
    input: z.strictObject({
      ...rangeFields,
      label: z.string().max(80).optional(),
    }),
    handler: async (args, app) => {
      const range = await rangeOf(app, args, { instant: "allow" });
      const state = await app.recorder.pin(pinSpan(range), args.label);
      const pin = state.pin;
      if (!pin) throw new Error("the ingest worker did not return the pin");
      const warning = crowdingWarning(state.retention);
      return output(
        [
          `Pinned ${pinLine(pin)}.`,
          shareLine(state.retention),
          ...(warning ? [`warning: ${warning}`] : []),
          ...range.warnings.map((w) => `warning ${w.code}: ${w.message}`),
          `Release it with unpin_resolved_range {pin_id: "${pin.pin_id}"}.`,
        ].join("\n"),
        {
          pin,
          ...budgetOf(state.retention),
          ...(range.warnings.length > 0 ? { range_warnings: range.warnings.map((w) => w.code) } : {}),
          ...(warning ? { warning } : {}),
        },
      );
    },
  }),
  defineTool({
    name: "unpin_resolved_range",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.unpin_resolved_range,
    description:
      "Release a pin by pin_id, or every pin of exactly the range given; its evidence is reclaimable again.",
    input: z.strictObject({ pin_id: pinId.optional(), ...rangeFields }),
    annotations: { idempotentHint: true },
    handler: async (args, app) => {
      const ranged = args.range !== undefined || args.range_handle !== undefined ||
        args.interaction_id !== undefined;
      if (args.pin_id !== undefined && ranged) {
        throw conflictingArguments(
          "pin_id",
          args.range_handle !== undefined
            ? "range_handle"
            : args.range !== undefined
            ? "range"
            : "interaction_id",
          "pin_id names one pin and a range names the pins of that range.",
          "Keep pin_id (query_pin_state lists them) or the range you pinned, not both.",
        );
      }
      let state;
      if (args.pin_id !== undefined) {
        state = await app.recorder.unpin([args.pin_id]);
        if (state.removed?.length === 0) throw pinNotFound(JSON.stringify(args.pin_id), state.pins);
      } else if (ranged) {
        const range = await rangeOf(app, args, { instant: "allow" });
        // The same span the pin was made of, so a range into the live future finds its pin later on.
        const span = pinSpan(range);
        state = await app.recorder.unpin([], span);
        if (state.removed?.length === 0) {
          throw pinNotFound(
            `of exactly ${range.start_ms}–${Math.round(span.end_ns / 1e4) / 100} ms on page ${range.page_id}`,
            state.pins,
          );
        }
      } else {
        throw new ToolError({
          code: "invalid_arguments",
          message: "unpin_resolved_range needs pin_id or the range that was pinned.",
          retry: "never",
          recovery: "Pass pin_id from pin_resolved_range or query_pin_state.",
          affected: { argument: "pin_id" },
        });
      }
      const removed = state.removed ?? [];
      return output(
        [`Unpinned ${removed.join(", ")}; ${state.pins.length} pin(s) left.`, shareLine(state.retention)]
          .join("\n"),
        { unpinned: removed, pins_left: state.pins.length, ...budgetOf(state.retention) },
      );
    },
  }),
  defineTool({
    name: "query_pin_state",
    capability: "temporal-vision",
    output: OUTPUT_SCHEMAS.query_pin_state,
    description:
      "List pins (optionally one session's) with the bytes each holds, and pinned usage against the share.",
    input: z.strictObject({ session_id: sessionId.optional() }),
    annotations: { readOnlyHint: true },
    handler: async (args, app: AppContext) => {
      const state = await app.recorder.pinState(args.session_id);
      const r = state.retention;
      return output(
        [
          state.pins.length > 0 ? `${state.pins.length} pin(s):` : "Nothing is pinned.",
          ...state.pins.map((p) => `- ${pinLine(p)}`),
          shareLine(r),
        ].join("\n"),
        { pins: state.pins, ...budgetOf(r), instances: r.instances },
      );
    },
  }),
];
