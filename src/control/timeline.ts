import type { InteractionRecord } from "./observation.ts";

/** Where finished interaction records go (the capture index); absent in tools run without capture. */
export type InteractionSink = (row: Record<string, string | number | null>) => void;

const ns = (ms: number | undefined) => (ms === undefined ? null : Math.round(ms * 1e6));

/** The index row of an interaction: session-clock nanoseconds, JSON for structured fields. */
export function interactionRow(
  record: InteractionRecord,
  batchId?: string,
): Record<string, string | number | null> {
  return {
    id: record.interaction_id,
    session_id: record.session_id,
    page_id: record.page_id,
    operation: record.operation,
    params: JSON.stringify(record.params),
    started_ns: ns(record.started_ms),
    dispatched_ns: ns(record.dispatched_ms),
    completed_ns: ns(record.completed_ms),
    observed_ns: ns(record.observed_ms),
    outcome: record.outcome,
    navigation: record.navigation ? JSON.stringify(record.navigation) : null,
    warnings: record.warnings.length > 0 ? JSON.stringify(record.warnings) : null,
    batch_id: batchId ?? null,
    error_code: record.error_code ?? null,
  };
}
