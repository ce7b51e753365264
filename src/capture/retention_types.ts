/** What the ingest worker's budget decides and reports (spec: the retention status surface). */
import type { InstanceCount } from "../store/budget.ts";
import type { RetainedPoint } from "./ingest_index.ts";

export interface Admission {
  admitted: boolean;
  /** Why a write was refused: larger than the whole share, or nothing unprotected left to reclaim. */
  refused?: "over_share" | "pinned" | "unreclaimable";
  used: number;
  share: number;
  count: InstanceCount;
  /** On a refusal only: measuring it walks every retained segment, too dear for each stored frame. */
  pinned_bytes?: number;
  /** This decision dropped artifact grace to make room. */
  grace_overridden: boolean;
}

/** The sticky fact that artifact grace was dropped, anchored at the newest point retained after it. */
export interface GraceOverride extends Partial<RetainedPoint> {
  /** When grace was last dropped. */
  at: string;
  /** How many decisions dropped it in this process. */
  count: number;
}

export interface RetentionStatus {
  budget_bytes: number | null;
  share_bytes: number | null;
  instances: number;
  instances_source: InstanceCount["source"];
  used_bytes: number;
  pinned_bytes: number;
  pins: number;
  max_age_secs: number;
  oldest_retained_at?: string;
  newest_retained_at?: string;
  grace_window_ms: number;
  /** Bytes under artifact grace right now: skipped by budget pressure while anything else is left. */
  grace_protected_bytes: number;
  grace_overridden_through?: GraceOverride;
  reclaimed: {
    segments: number;
    bytes: number;
    expired_segments: number;
    abandoned_roots: number;
    artifacts: number;
    screenshots: number;
  };
  recording_blocked: boolean;
  eviction_blocked: boolean;
  blocked_reason?: Admission["refused"];
}
