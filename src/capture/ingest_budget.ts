/**
 * The ingest worker's side of the shared budget: what this instance holds, the share it may hold
 * at this moment, and the reclaim walk run inside the write that needs room (no timer).
 */
import { join, sep as SEP } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import {
  HIGH_WATER,
  type InstanceCount,
  type InstanceCounter,
  LOW_WATER,
  planReclaim,
  type ReclaimCandidate,
  reclaimIfAbandoned,
  segmentBytesFor,
  shareOf,
} from "../store/budget.ts";
import { INDEX_FILE, SEGMENT_MAX_AGE_NS, SEGMENT_MAX_BYTES } from "../store/format.ts";
import type { SealedSegment } from "../store/segments.ts";

/** A lock file this young may belong to a peer that has created it but not yet locked it. */
const ABANDONED_MIN_AGE_MS = 30_000;

export interface Admission {
  admitted: boolean;
  used: number;
  share: number;
  count: InstanceCount;
}

export interface RetentionStatus {
  budget_bytes: number | null;
  share_bytes: number | null;
  instances: number;
  instances_source: InstanceCount["source"];
  used_bytes: number;
  max_age_secs: number;
  oldest_retained_at?: string;
  newest_retained_at?: string;
  reclaimed: {
    segments: number;
    bytes: number;
    expired_segments: number;
    abandoned_roots: number;
    artifacts: number;
  };
  recording_blocked: boolean;
  eviction_blocked: boolean;
}

export class StoreBudget {
  /** Bytes of segment records this instance holds (open and sealed). */
  #segmentBytes = 0;
  #bySession = new Map<string, number>();
  /** Screenshots and artifacts written through the instance store, oldest first. */
  #evidence: Array<{ path: string; bytes: number }> = [];
  #evidenceBytes = 0;
  #videoBytes = 0;
  /** Sealed segments in retention order (oldest first). */
  #sealed: Array<ReclaimCandidate & { path: string; end_ns: number }> = [];
  #indexBaseline: number;
  #count: InstanceCount = { instances: 1, source: "counted" };
  #reclaimed = { segments: 0, bytes: 0, expired_segments: 0, abandoned_roots: 0, artifacts: 0 };
  #blocked = false;
  #evictionBlocked = false;

  constructor(
    private readonly db: DatabaseSync,
    private readonly root: string,
    private readonly totalBytes: number,
    private readonly maxAgeMs: number,
    private readonly counter: InstanceCounter,
  ) {
    // The empty index is the store's fixed cost; what counts against the share is its growth.
    this.#indexBaseline = this.#indexBytes();
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
    return this.#segmentBytes + this.#evidenceBytes + this.#videoBytes +
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
   * expired and oldest segments. `commit` flushes pending index rows before any row is deleted.
   */
  admit(size: number, commit: () => void): Admission {
    const decision = this.#walk(size, commit);
    this.#blocked = !decision.admitted;
    return decision;
  }

  /** An enforcement pass with no write: a status poll trims toward a share that N has lowered. */
  enforce(commit: () => void): void {
    this.#adoptVideos();
    this.#walk(0, commit);
  }

  /**
   * ffmpeg writes videos itself, so nobody reports their size: they are re-measured on each
   * enforcement pass (a handful of files, listed only then, never per frame).
   */
  #adoptVideos(): void {
    let n = 0;
    try {
      for (const entry of Deno.readDirSync(join(this.root, "evidence", "videos"))) {
        try {
          if (entry.isFile) n += Deno.statSync(join(this.root, "evidence", "videos", entry.name)).size;
        } catch { /* removed while listing */ }
      }
    } catch { /* no videos yet */ }
    this.#videoBytes = n;
  }

  #walk(size: number, commit: () => void): Admission {
    this.#count = this.counter.count();
    for (const root of this.#count.unheld ?? []) {
      if (reclaimIfAbandoned(root, ABANDONED_MIN_AGE_MS)) this.#reclaimed.abandoned_roots++;
    }
    const share = this.share();
    if (size > share) {
      return { admitted: false, used: this.usage(), share, count: this.#count };
    }
    this.#evictArtifacts(size, share);
    const plan = planReclaim({
      used: this.usage(),
      incoming: size,
      share,
      candidates: this.#sealed,
      nowMs: Date.now(),
      maxAgeMs: this.maxAgeMs,
    });
    if (plan.evict.length > 0) {
      commit();
      this.#evict(plan.evict.length, plan.expired);
    }
    const used = this.usage();
    const admitted = used + size <= share;
    this.#evictionBlocked = !admitted && this.#sealed.length === 0;
    return { admitted, used, share, count: this.#count };
  }

  /**
   * Generated artifacts go before recorded evidence: they can be regenerated from the frames.
   * Screenshots are not generated (they are what an action observed) and stay with the segments'
   * fate. Artifact grace (a later step) belongs in `isProtected`.
   */
  #evictArtifacts(size: number, share: number, isProtected: (path: string) => boolean = () => false): void {
    if (this.usage() + size <= share * HIGH_WATER) return;
    const target = share * LOW_WATER;
    const marker = `${SEP}evidence${SEP}artifacts${SEP}`;
    const kept: Array<{ path: string; bytes: number }> = [];
    for (const e of this.#evidence) {
      if (this.usage() + size > target && e.path.includes(marker) && !isProtected(e.path)) {
        try {
          Deno.removeSync(e.path);
        } catch { /* already gone */ }
        this.#evidenceBytes -= e.bytes;
        this.#reclaimed.artifacts++;
      } else kept.push(e);
    }
    this.#evidence = kept;
  }

  /** Deletes the oldest `n` sealed segments, their frame rows and the events they outlived. */
  #evict(n: number, expired: number): void {
    const gone = this.#sealed.splice(0, n);
    this.db.exec("BEGIN");
    try {
      for (const seg of gone) {
        this.db.prepare("DELETE FROM frames WHERE segment_id = ?").run(seg.id);
        this.db.prepare("DELETE FROM segments WHERE id = ?").run(seg.id);
        this.db.prepare("DELETE FROM events WHERE session_id = ? AND at_ns <= ?").run(
          seg.session_id,
          seg.end_ns,
        );
      }
      this.db.exec("COMMIT");
    } catch (err) {
      this.db.exec("ROLLBACK");
      this.#sealed.unshift(...gone);
      throw err;
    }
    for (const seg of gone) {
      try {
        Deno.removeSync(seg.path);
      } catch { /* already gone */ }
      this.#segmentBytes -= seg.bytes;
      this.#bySession.set(seg.session_id, (this.#bySession.get(seg.session_id) ?? 0) - seg.bytes);
      this.#reclaimed.segments++;
      this.#reclaimed.bytes += seg.bytes;
    }
    this.#reclaimed.expired_segments += expired;
  }

  evidence(path: string, bytes: number): void {
    this.#evidence.push({ path, bytes });
    this.#evidenceBytes += bytes;
  }

  /** Files another path removed (delete_session) stop counting; checked lazily, on status. */
  #dropVanishedEvidence(): void {
    this.#evidence = this.#evidence.filter((e) => {
      try {
        Deno.statSync(e.path);
        return true;
      } catch {
        this.#evidenceBytes -= e.bytes;
        return false;
      }
    });
  }

  stored(sessionId: string, size: number): void {
    this.#segmentBytes += size;
    this.#bySession.set(sessionId, (this.#bySession.get(sessionId) ?? 0) + size);
  }

  sealed(sessionId: string, seg: SealedSegment): void {
    this.#sealed.push({
      id: seg.id,
      session_id: sessionId,
      bytes: seg.bytes,
      sealed_at_ms: Date.now(),
      path: seg.path,
      end_ns: seg.endNs,
    });
  }

  /** delete_session removed the session's files and rows; its bytes return to the share at once. */
  forgetSession(sessionId: string): void {
    this.#segmentBytes -= this.#bySession.get(sessionId) ?? 0;
    this.#bySession.delete(sessionId);
    this.#sealed = this.#sealed.filter((s) => s.session_id !== sessionId);
  }

  status(sessionIds: string[]): RetentionStatus {
    this.#dropVanishedEvidence();
    const share = this.share();
    let oldest: number | undefined;
    let newest: number | undefined;
    for (const id of sessionIds) {
      const row = this.db.prepare(
        `SELECT s.started_at AS started, min(f.recv_ns) AS lo, max(f.recv_ns) AS hi
         FROM frames f JOIN sessions s ON s.id = f.session_id WHERE f.session_id = ?`,
      ).get(id) as { started: string | null; lo: number | null; hi: number | null } | undefined;
      if (!row?.started || row.lo === null || row.hi === null) continue;
      const base = Date.parse(row.started);
      oldest = Math.min(oldest ?? Infinity, base + row.lo / 1e6);
      newest = Math.max(newest ?? -Infinity, base + row.hi / 1e6);
    }
    return {
      budget_bytes: Number.isFinite(share) ? this.totalBytes : null,
      share_bytes: Number.isFinite(share) ? share : null,
      instances: this.#count.instances,
      instances_source: this.#count.source,
      used_bytes: this.usage(),
      max_age_secs: Math.round(this.maxAgeMs / 1000),
      ...(oldest !== undefined ? { oldest_retained_at: new Date(oldest).toISOString() } : {}),
      ...(newest !== undefined ? { newest_retained_at: new Date(newest).toISOString() } : {}),
      reclaimed: { ...this.#reclaimed },
      recording_blocked: this.#blocked,
      eviction_blocked: this.#evictionBlocked,
    };
  }
}
