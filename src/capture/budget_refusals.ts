/** The structured errors a write gets when the shared disk budget refuses it. */
import { ToolError } from "../errors.ts";
import type { Admission } from "./ingest_budget.ts";

const RAISE = "raise KROMETRAIL_DISK_BUDGET_BYTES";

/** A write larger than this instance's whole share is refused however much disk is free (spec). */
export function overShare(
  what: string,
  bytes: number,
  share: number,
  instances: number,
  source: string,
): ToolError {
  return new ToolError({
    code: "evidence_over_share",
    message:
      `The ${what} is ${bytes} bytes, larger than this instance's share of the disk budget: ${share} bytes ` +
      `(the total divided by ${instances} ${
        source === "counted" ? "live" : `${source} (not counted)`
      } instance(s)).`,
    retry: "after_recovery",
    recovery: `Ask for a smaller ${what} (a shorter range, fewer tiles, a lower fps), ${RAISE}, ` +
      "or stop other krometrail processes sharing this data directory.",
    details: { bytes, share_bytes: share, instances, instances_source: source },
  });
}

/** Nothing unprotected is left to reclaim: pins (or fixed costs) fill the share. */
export function budgetFull(what: string, bytes: number, a: Admission): ToolError {
  const pinned = a.refused === "pinned";
  return new ToolError({
    code: "budget_exhausted",
    message: `The ${what} (${bytes} bytes) does not fit: ${a.used} of ${a.share} bytes are in use` +
      (pinned
        ? `, ${a.pinned_bytes ?? 0} of them pinned, and nothing unpinned is left to reclaim.`
        : ", none reclaimable."),
    retry: "after_recovery",
    recovery: pinned
      ? `query_pin_state lists the pins; unpin_resolved_range {pin_id} those you no longer need, or ${RAISE}.`
      : `delete_session a finished session you no longer need, or ${RAISE}.`,
    details: {
      bytes,
      used_bytes: a.used,
      share_bytes: a.share,
      pinned_bytes: a.pinned_bytes ?? 0,
      instances: a.count.instances,
    },
  });
}

/** Why an admission refused a write, as the error the caller returns. */
export function refusal(what: string, bytes: number, a: Admission): ToolError {
  return a.refused === "over_share"
    ? overShare(what, bytes, a.share, a.count.instances, a.count.source)
    : budgetFull(what, bytes, a);
}
