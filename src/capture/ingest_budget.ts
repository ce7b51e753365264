/**
 * The ingest worker's side of the shared budget: what this instance holds, the share it may hold at
 * this moment, pins and artifact grace, and the reclaim walk run inside the write that needs room
 * (no timer).
 */
import { join, sep as SEP } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import {
  type InstanceCount,
  type InstanceCounter,
  planReclaim,
  type ReclaimCandidate,
  reclaimIfAbandoned,
  segmentBytesFor,
  shareOf,
} from "../store/budget.ts";
import { INDEX_FILE, SEGMENT_MAX_AGE_NS, SEGMENT_MAX_BYTES } from "../store/format.ts";
import {
  ARTIFACT_GRACE_MS,
  type GraceSpan,
  inGrace,
  keptEventSpans,
  type PageSpan,
  type PinView,
} from "../store/protection.ts";
import type { SealedSegment } from "../store/segments.ts";
import { indexLimitsFor, newestRetained, retainedExtent } from "./ingest_index.ts";
import { type OpenSegments, PinBook } from "./ingest_pins.ts";
import type { Admission, GraceOverride, RetentionStatus } from "./retention_types.ts";

export type { Admission, GraceOverride, RetentionStatus } from "./retention_types.ts";
export type { OpenSegments } from "./ingest_pins.ts";

/** A lock file this young may belong to a peer that has created it but not yet locked it. */
const ABANDONED_MIN_AGE_MS = 30_000;

/** Something reclaim may delete, with where it lives. */
interface Held extends ReclaimCandidate {
  path: string;
  /** A generated artifact (regenerable), as opposed to recorded evidence. */
  generated?: boolean;
}

/** The open segment of each page: not reclaimable, but what a pin of the live tail holds. */
export class StoreBudget {
  /** Bytes of segment records this instance holds (open and sealed). */
  #segmentBytes = 0;
  #bySession = new Map<string, number>();
  /** Screenshots, artifacts and videos written through the instance store. */
  #fileBytes = 0;
  /** Downloads are written by Chrome itself, so they are measured on each enforcement pass. */
  #downloadBytes = 0;
  /** Sealed segments and screenshots in retention order (oldest first). */
  #retained: Held[] = [];
  /** Generated artifacts, oldest first. */
  #artifacts: Held[] = [];
  #nextFileId = -1;
  readonly #pins: PinBook;
  #grace: GraceSpan[] = [];
  #graceOverride?: GraceOverride;
  #indexBaseline: number;
  #indexLimitFor = 0;
  #count: InstanceCount = { instances: 1, source: "counted" };
  #reclaimed = {
    segments: 0,
    bytes: 0,
    expired_segments: 0,
    abandoned_roots: 0,
    artifacts: 0,
    screenshots: 0,
  };
  #blocked = false;
  #refused?: Admission["refused"];

  constructor(
    private readonly db: DatabaseSync,
    private readonly root: string,
    private readonly totalBytes: number,
    private readonly maxAgeMs: number,
    private readonly counter: InstanceCounter,
    private readonly openSegments: OpenSegments = () => [],
  ) {
    // The empty index is the store's fixed cost; what counts against the share is its growth.
    this.#indexBaseline = this.#indexBytes();
    this.#pins = new PinBook(db, () => this.#retained, openSegments);
  }

  #indexBytes(): number {
    let n = 0;
    for (const f of [INDEX_FILE, `${INDEX_FILE}-wal`]) {
      try {
        n += Deno.statSync(join(this.root, f)).size;
      } catch { /* absent */ }
    }
    return n;
  }

  usage(): number {
    return this.#segmentBytes + this.#fileBytes + this.#downloadBytes +
      Math.max(0, this.#indexBytes() - this.#indexBaseline);
  }

  share(): number {
    return shareOf(this.totalBytes, this.#count.instances);
  }

  /** A quarter of the maximum age, so evidence expires within ~1.25× the configured age. */
  segmentAgeNs(): number {
    return this.maxAgeMs > 0 ? Math.min(SEGMENT_MAX_AGE_NS, this.maxAgeMs * 1e6 / 4) : SEGMENT_MAX_AGE_NS;
  }

  segmentBytes(): number {
    return segmentBytesFor(this.share(), SEGMENT_MAX_BYTES);
  }

  /**
   * One budget decision: N counted afresh, abandoned roots reclaimed first, then this instance's
   * artifacts, expired and oldest evidence. `commit` flushes pending index rows before any row goes.
   */
  admit(size: number, commit: () => void): Admission {
    const decision = this.#walk(size, commit);
    this.#blocked = !decision.admitted;
    this.#refused = decision.refused;
    return decision;
  }

  /**
   * An artifact about to be published: its source span is under grace from now, and its bytes are
   * judged against the share before it is written.
   */
  admitArtifact(size: number, span: PageSpan | undefined, commit: () => void): Admission {
    if (span) this.grace(span);
    return this.#walk(size, commit);
  }

  /** An artifact is being made from the span: it is under grace from now (renewed if it already is). */
  grace(span: PageSpan): void {
    this.#grace.push({ ...span, until_ms: Date.now() + ARTIFACT_GRACE_MS });
  }

  /**
   * An enforcement pass with no write: a status poll trims toward a share that N has lowered, and a
   * file just counted is made room for. It may drop artifact grace like any other decision.
   */
  enforce(commit: () => void): Admission {
    this.#measureDownloads();
    return this.#walk(0, commit);
  }

  #measureDownloads(): void {
    let n = 0;
    const dir = join(this.root, "downloads");
    try {
      for (const session of Deno.readDirSync(dir)) {
        if (!session.isDirectory) continue;
        for (const file of Deno.readDirSync(join(dir, session.name))) {
          try {
            if (file.isFile) n += Deno.statSync(join(dir, session.name, file.name)).size;
          } catch { /* removed while listing */ }
        }
      }
    } catch { /* no downloads */ }
    this.#downloadBytes = n;
  }

  #isPinned = (c: ReclaimCandidate) => this.#pins.protects(c);

  #inGrace(c: Held, nowMs: number): boolean {
    if (c.generated) return nowMs - c.sealed_at_ms < ARTIFACT_GRACE_MS;
    return inGrace(c, this.#grace, nowMs);
  }

  #walk(size: number, commit: () => void): Admission {
    this.#count = this.counter.count();
    for (const root of this.#count.unheld ?? []) {
      if (reclaimIfAbandoned(root, ABANDONED_MIN_AGE_MS)) this.#reclaimed.abandoned_roots++;
    }
    const share = this.share();
    this.#limitIndex(share);
    const nowMs = Date.now();
    if (this.#grace.length > 0) this.#grace = this.#grace.filter((g) => g.until_ms > nowMs);
    const base = { share, count: this.#count, grace_overridden: false };
    if (size > share) {
      return {
        ...base,
        admitted: false,
        refused: "over_share",
        used: this.usage(),
        pinned_bytes: this.pinnedBytes(),
      };
    }
    const plan = planReclaim({
      used: this.usage(),
      incoming: size,
      share,
      artifacts: this.#artifacts,
      candidates: this.#retained,
      nowMs,
      maxAgeMs: this.maxAgeMs,
      isPinned: this.#isPinned,
      inGrace: (c) => this.#inGrace(c as Held, nowMs),
    });
    if (plan.evict.length > 0) {
      commit();
      this.#evict(new Set(plan.evict as Held[]), plan.expired, nowMs);
    }
    if (plan.grace_overridden > 0) {
      this.#graceOverride = {
        at: new Date(nowMs).toISOString(),
        count: (this.#graceOverride?.count ?? 0) + 1,
        ...newestRetained(this.db),
      };
    }
    const used = this.usage();
    const admitted = used + size <= share;
    const grace_overridden = plan.grace_overridden > 0;
    if (admitted) return { ...base, admitted, used, grace_overridden };
    const pinned = this.pinnedBytes();
    return {
      ...base,
      admitted,
      // Pins are the cause when they hold most of what is in use; otherwise unpinning would not help.
      refused: pinned * 2 >= used ? "pinned" : "unreclaimable",
      used,
      pinned_bytes: pinned,
      grace_overridden,
    };
  }

  /** The index's write-ahead log is checkpointed and truncated relative to the share, so a small share is not its hostage. */
  #limitIndex(share: number): void {
    if (share === this.#indexLimitFor) return;
    this.#indexLimitFor = share;
    const limits = indexLimitsFor(share);
    this.db.exec(
      `PRAGMA journal_size_limit = ${limits.journal_bytes}; PRAGMA wal_autocheckpoint = ${limits.checkpoint_pages};`,
    );
  }

  /** Deletes what the plan chose: segments with their frame rows and the events they outlived, then files. */
  #evict(gone: Set<Held>, expired: number, nowMs: number): void {
    const segments = this.#retained.filter((c) => gone.has(c) && c.kind === "segment");
    this.db.exec("BEGIN");
    try {
      for (const seg of segments) {
        this.db.prepare("DELETE FROM frames WHERE segment_id = ?").run(seg.id);
        this.db.prepare("DELETE FROM dom_chunks WHERE segment_id = ?").run(seg.id);
        this.db.prepare("DELETE FROM segments WHERE id = ?").run(seg.id);
        const kept = keptEventSpans(seg.session_id ?? "", this.#pins.values(), this.#grace, nowMs);
        this.db.prepare(
          `DELETE FROM events WHERE session_id = ? AND at_ns <= ?${
            kept.map(() => " AND NOT (at_ns BETWEEN ? AND ?)").join("")
          }`,
        ).run(seg.session_id ?? "", seg.end_ns ?? 0, ...kept.flatMap((k) => [k.from_ns, k.to_ns]));
      }
      this.db.exec("COMMIT");
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
    for (const c of gone) {
      try {
        Deno.removeSync(c.path);
      } catch { /* already gone */ }
      if (c.kind === "segment") {
        this.#segmentBytes -= c.bytes;
        const sid = c.session_id ?? "";
        this.#bySession.set(sid, (this.#bySession.get(sid) ?? 0) - c.bytes);
        this.#reclaimed.segments++;
        this.#reclaimed.bytes += c.bytes;
      } else {
        this.#fileBytes -= c.bytes;
        if (c.generated) this.#reclaimed.artifacts++;
        else this.#reclaimed.screenshots++;
      }
    }
    this.#reclaimed.expired_segments += expired;
    this.#retained = this.#retained.filter((c) => !gone.has(c));
    this.#artifacts = this.#artifacts.filter((c) => !gone.has(c));
  }

  /** A file the instance store wrote (or ffmpeg wrote for it); its bytes count from now. */
  evidence(path: string, bytes: number): void {
    const generated = ["artifacts", "videos"].some((k) => path.includes(`${SEP}evidence${SEP}${k}${SEP}`));
    const held: Held = {
      kind: "file",
      id: this.#nextFileId--,
      bytes,
      sealed_at_ms: Date.now(),
      path,
      generated,
    };
    (generated ? this.#artifacts : this.#retained).push(held);
    this.#fileBytes += bytes;
  }

  /** Files another path removed (delete_session) stop counting; checked lazily, on status. */
  #dropVanishedFiles(): void {
    const present = (c: Held) => {
      if (c.kind === "segment") return true;
      try {
        Deno.statSync(c.path);
        return true;
      } catch {
        this.#fileBytes -= c.bytes;
        return false;
      }
    };
    this.#retained = this.#retained.filter(present);
    this.#artifacts = this.#artifacts.filter(present);
  }

  stored(sessionId: string, size: number): void {
    this.#segmentBytes += size;
    this.#bySession.set(sessionId, (this.#bySession.get(sessionId) ?? 0) + size);
  }

  sealed(sessionId: string, pageId: string, seg: SealedSegment): void {
    this.#retained.push({
      kind: "segment",
      id: seg.id,
      session_id: sessionId,
      page_id: pageId,
      start_ns: seg.startNs,
      last_ns: seg.lastNs,
      end_ns: seg.endNs,
      bytes: seg.bytes,
      sealed_at_ms: Date.now(),
      path: seg.path,
    });
  }

  /** The sticky grace override, if any (status reports the same). */
  get graceOverride(): GraceOverride | undefined {
    return this.#graceOverride;
  }

  /** Protects every segment needed to rebuild the span (see PinBook). */
  pin(span: PageSpan, label: string | undefined, commit: () => void): PinView {
    commit();
    return this.#pins.add(span, label);
  }

  get pins(): PinBook {
    return this.#pins;
  }

  pinnedBytes(): number {
    return this.#pins.pinnedBytes();
  }

  /** delete_session removed the session's files and rows; its bytes return to the share at once. */
  forgetSession(sessionId: string): void {
    this.#segmentBytes -= this.#bySession.get(sessionId) ?? 0;
    this.#bySession.delete(sessionId);
    this.#retained = this.#retained.filter((s) => s.kind !== "segment" || s.session_id !== sessionId);
    this.#pins.forgetSession(sessionId);
    this.#grace = this.#grace.filter((g) => g.session_id !== sessionId);
  }

  status(sessionIds: string[]): RetentionStatus {
    this.#dropVanishedFiles();
    const share = this.share();
    const extent = retainedExtent(this.db, sessionIds);
    const nowMs = Date.now();
    const grace = [...this.#artifacts, ...this.#retained].filter((c) =>
      this.#inGrace(c, nowMs) && !this.#isPinned(c)
    );
    const pinned = this.pinnedBytes();
    return {
      budget_bytes: Number.isFinite(share) ? this.totalBytes : null,
      share_bytes: Number.isFinite(share) ? share : null,
      instances: this.#count.instances,
      instances_source: this.#count.source,
      used_bytes: this.usage(),
      pinned_bytes: pinned,
      pins: this.#pins.size,
      max_age_secs: Math.round(this.maxAgeMs / 1000),
      ...extent,
      grace_window_ms: ARTIFACT_GRACE_MS,
      grace_protected_bytes: grace.reduce((a, c) => a + c.bytes, 0),
      ...(this.#graceOverride ? { grace_overridden_through: { ...this.#graceOverride } } : {}),
      reclaimed: { ...this.#reclaimed },
      recording_blocked: this.#blocked,
      // Over-share frames are refused before the walk, so they say nothing about what eviction can do.
      eviction_blocked: this.#blocked && this.#refused !== "over_share",
      ...(this.#blocked && this.#refused ? { blocked_reason: this.#refused } : {}),
    };
  }
}
