import type { IndexClassification } from "../store/index_db.ts";
import type { PersistenceCause } from "../store/segments.ts";
import type { Admission, GraceOverride, RetentionStatus } from "./ingest_budget.ts";
import type { PageSpan, PinView } from "../store/protection.ts";
import type { DomStorage } from "./ingest_dom.ts";

/** Faults the tests can inject into a real server process (KROMETRAIL_TEST_FAULTS, JSON). */
export interface FaultPlan {
  /** Ingestion queue capacity in frames; 0 forces every handoff to fail. */
  queue_capacity?: number;
  /** Screencast acknowledgement deadline in ms. */
  ack_deadline_ms?: number;
  /** Make the Nth segment operation of this kind fail (1-based). */
  segment_fault?: { operation: "write" | "dir_sync"; after: number };
  /**
   * Every enumeration of instances/ fails, as when the directory is unreadable to this process (the
   * suite runs as root, which no chmod can blind), so the count falls back as the spec says.
   */
  instances_unreadable?: boolean;
}

export interface SessionRow {
  id: string;
  ordinal: number;
  mode: string;
  profile: string;
  browser: string;
  protocol: string;
  started_at: string;
  every_nth_frame: number;
  focus: string;
  capabilities: string;
  /** 1 when the session records the DOM (start_browser's record_dom), 0 when it does not. */
  record_dom: number;
}

export interface FrameMessage {
  type: "frame";
  session_id: string;
  page_id: string;
  ordinal: number;
  recv_ns: number;
  chrome_ts: number | null;
  /** Base64 JPEG as CDP delivered it; decoded in the worker, off the acknowledging thread. */
  data: string;
  viewport_width: number;
  viewport_height: number;
  device_scale: number;
}

/**
 * One batch of rrweb events from a page's DOM recorder (src/pagestate/recorder.ts), as the page sent it.
 * The worker parses, splits at checkpoints, compresses and stores it (DOM segments beside the frames).
 */
export interface DomBatchMessage {
  type: "dom";
  session_id: string;
  page_id: string;
  /** Session-clock ns when the batch arrived. */
  recv_ns: number;
  /** The page's wall clock onto the session clock: session ms = event.timestamp - clock_offset_ms. */
  clock_offset_ms: number;
  /** A JSON array of rrweb events (`eventWithTime`), masked in the page before it left. */
  payload: string;
}

export interface GapRow {
  session_id: string;
  page_id: string;
  /**
   * `disconnected`: the browser connection dropped (every page, until re-adopted, dropped or the session
   * ends); `crashed`: the page's renderer died (until it paints again after a reload or navigation).
   */
  kind:
    | "queue_full"
    | "persistence"
    | "ack_deadline"
    | "visibility"
    | "decode"
    | "stream_error"
    | "budget"
    | "disconnected"
    | "crashed";
  start_ns: number;
  end_ns?: number | null;
  ordinal?: number | null;
  cause?: string | null;
}

export type RowMessage =
  | { type: "session"; row: SessionRow }
  | { type: "session_end"; id: string; ended_at: string; end_reason: string; stats: string }
  | { type: "target"; row: Record<string, string | number | null> }
  | { type: "target_closed"; session_id: string; page_id: string; closed_ns: number }
  | { type: "gap"; row: GapRow }
  | { type: "gap_end"; session_id: string; page_id: string; kind: GapRow["kind"]; end_ns: number }
  | { type: "interaction"; row: Record<string, string | number | null> }
  | { type: "event"; row: Record<string, string | number | null> }
  /** A timeline marker (annotate); its id is derived from label and instant, so a repeat replaces itself. */
  | { type: "marker"; row: Record<string, string | number | null> };

export type ToWorker =
  | { type: "open"; root: string; faults: FaultPlan; budget_bytes: number; max_age_secs: number }
  | FrameMessage
  | DomBatchMessage
  | RowMessage
  | { type: "flush"; id: number; seal_session?: string; end_ns?: number }
  | { type: "delete_session"; id: number; session_id: string }
  | { type: "evidence"; path: string; bytes: number }
  | { type: "admit_artifact"; id: number; bytes: number; span?: PageSpan }
  | { type: "grace"; span: PageSpan }
  | { type: "pin"; id: number; span: PageSpan; label?: string }
  | { type: "unpin"; id: number; pin_ids?: string[]; span?: PageSpan }
  | { type: "pin_state"; id: number; session_id?: string }
  | { type: "close"; id: number };

export interface FlushStats {
  frames_stored: number;
  bytes_stored: number;
  rows_committed: number;
}

export type FromWorker =
  | { type: "ready"; found: IndexClassification }
  | { type: "ingested"; count: number }
  | {
    type: "frame_rejected";
    session_id: string;
    page_id: string;
    ordinal: number;
    recv_ns: number;
    cause: PersistenceCause;
  }
  | {
    type: "over_budget";
    session_id: string;
    page_id: string;
    ordinal: number;
    recv_ns: number;
    used_bytes: number;
    /** This instance's share: the configured total divided by the live instance count. */
    budget_bytes: number;
    instances: number;
    instances_source: RetentionStatus["instances_source"];
    frame_bytes: number;
    refused?: Admission["refused"];
    pinned_bytes: number;
  }
  | { type: "budget_resumed"; session_id: string; page_id: string; recv_ns: number }
  | {
    type: "flushed";
    id: number;
    stats: FlushStats;
    sessions: Record<string, SessionStorage>;
    /** DOM recording per session: chunks, events, compressed and raw bytes, what was dropped. */
    dom: Record<string, DomStorage>;
    used_bytes: number;
    retention?: RetentionStatus;
  }
  | { type: "deleted"; id: number; frames: number; segments: number; events: number }
  | { type: "admitted"; id: number; admission: Admission }
  | {
    type: "pin_state";
    id: number;
    pins: PinView[];
    pin?: PinView;
    removed?: string[];
    retention: RetentionStatus;
  }
  | { type: "grace_overridden"; override: GraceOverride }
  | { type: "closed"; id: number }
  | { type: "failure"; stage: string; message: string };

/** What the worker has durably accepted for one session. */
export interface SessionStorage {
  frames: number;
  bytes: number;
  persistence_failure?: PersistenceCause;
}
