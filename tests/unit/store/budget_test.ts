import { join } from "node:path";
import { assert, assertEquals } from "../../assert.ts";
import {
  ASSUMED_INSTANCES,
  InstanceCounter,
  planReclaim,
  type ReclaimCandidate,
  reclaimIfAbandoned,
  segmentBytesFor,
  shareOf,
} from "../../../src/store/budget.ts";

const seg = (id: number, bytes: number, sealedAt: number): ReclaimCandidate => ({
  kind: "segment",
  id,
  session_id: "s",
  bytes,
  sealed_at_ms: sealedAt,
});

Deno.test("the share is the total divided by N; no total means no limit", () => {
  assertEquals(shareOf(10_000, 1), 10_000);
  assertEquals(shareOf(10_000, 3), 3_333);
  assertEquals(shareOf(0, 2), Number.POSITIVE_INFINITY);
  assertEquals(segmentBytesFor(8_000_000, 16_000_000), 1_000_000);
  assertEquals(
    segmentBytesFor(100_000, 16_000_000),
    64 * 1024,
    "a floor keeps segments from being one frame",
  );
});

Deno.test("reclaim: inside the high-water mark nothing goes", () => {
  const plan = planReclaim({
    used: 500,
    incoming: 10,
    share: 1_000,
    candidates: [seg(1, 100, 0)],
    nowMs: 1,
    maxAgeMs: 0,
  });
  assertEquals(plan.evict, []);
  assertEquals(plan.blocked, false);
});

Deno.test("reclaim: past high water the oldest segments go until usage is at low water", () => {
  const plan = planReclaim({
    used: 950,
    incoming: 10,
    share: 1_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 1), seg(3, 100, 2), seg(4, 100, 3)],
    nowMs: 10,
    maxAgeMs: 0,
  });
  assertEquals(plan.evict.map((c) => c.id), [1, 2, 3]);
  assertEquals(plan.used_after, 650);
  assertEquals(plan.blocked, false);
});

Deno.test("reclaim: age-out removes expired segments even well inside the budget", () => {
  const plan = planReclaim({
    used: 300,
    incoming: 10,
    share: 1_000_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 5_000), seg(3, 100, 9_000)],
    nowMs: 10_000,
    maxAgeMs: 4_000,
  });
  assertEquals(plan.evict.map((c) => c.id), [1, 2]);
  assertEquals(plan.expired, 2);
});

Deno.test("reclaim: pinned segments are stepped over; with nothing left the write is blocked", () => {
  const plan = planReclaim({
    used: 990,
    incoming: 50,
    share: 1_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 1)],
    nowMs: 10,
    maxAgeMs: 0,
    isPinned: (c) => c.id === 1,
  });
  assertEquals(plan.evict.map((c) => c.id), [2]);
  const pinnedFull = planReclaim({
    used: 990,
    incoming: 50,
    share: 1_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 1)],
    nowMs: 10,
    maxAgeMs: 0,
    isPinned: () => true,
  });
  assertEquals([pinnedFull.evict, pinnedFull.blocked], [[], true], "all pinned: nothing protected goes");
  const full = planReclaim({ used: 990, incoming: 50, share: 1_000, candidates: [], nowMs: 0, maxAgeMs: 0 });
  assertEquals(full.blocked, true);
});

Deno.test("reclaim: pins hold against age-out too", () => {
  const plan = planReclaim({
    used: 300,
    incoming: 10,
    share: 1_000_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 0), seg(3, 100, 9_000)],
    nowMs: 10_000,
    maxAgeMs: 4_000,
    isPinned: (c) => c.id === 2,
  });
  assertEquals(plan.evict.map((c) => c.id), [1]);
  assertEquals(plan.expired, 1);
});

Deno.test("reclaim: generated artifacts go before recorded evidence", () => {
  const artifact = { ...seg(9, 150, 5), kind: "file" as const };
  const plan = planReclaim({
    used: 950,
    incoming: 10,
    share: 1_000,
    artifacts: [artifact],
    candidates: [seg(1, 100, 0), seg(2, 100, 1), seg(3, 100, 2)],
    nowMs: 10,
    maxAgeMs: 0,
  });
  assertEquals(plan.evict.map((c) => c.id), [9, 1, 2]);
  assertEquals(plan.used_after, 600);
});

Deno.test("reclaim: artifact grace is stepped over under pressure while anything else is left", () => {
  const plan = planReclaim({
    used: 950,
    incoming: 10,
    share: 1_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 1), seg(3, 100, 2), seg(4, 100, 3)],
    nowMs: 10,
    maxAgeMs: 0,
    inGrace: (c) => c.id <= 2,
  });
  assertEquals(plan.evict.map((c) => c.id), [3, 4], "the newer, unprotected segments went instead");
  assertEquals(plan.grace_overridden, 0);
  assertEquals(plan.blocked, false);
});

Deno.test("reclaim: when only grace stands between the write and a stall, the grace is dropped", () => {
  const plan = planReclaim({
    used: 990,
    incoming: 50,
    share: 1_000,
    candidates: [seg(1, 100, 0), seg(2, 100, 1), seg(3, 100, 2)],
    nowMs: 10,
    maxAgeMs: 0,
    isPinned: (c) => c.id === 1,
    inGrace: (c) => c.id === 2 || c.id === 3,
  });
  // Unprotected: nothing. Grace goes oldest first, only as far as the high-water mark; the pin stays.
  assertEquals(plan.evict.map((c) => c.id), [2, 3]);
  assertEquals(plan.grace_overridden, 2);
  assertEquals(plan.used_after, 790);
  assertEquals(plan.blocked, false);
});

async function root(dir: string, name: string, lock: boolean): Promise<Deno.FsFile | undefined> {
  await Deno.mkdir(join(dir, name), { recursive: true });
  const file = await Deno.open(join(dir, name, ".lock"), { create: true, write: true });
  if (!lock) {
    file.close();
    return undefined;
  }
  await file.lock(true);
  return file;
}

Deno.test("N counts roots held under lock, falls back to the last proven count, else assumes four", async () => {
  const dir = await Deno.makeTempDir();
  const self = await root(dir, "self", true);
  const peer = await root(dir, "peer", true);
  await root(dir, "abandoned", false);
  const counter = new InstanceCounter(dir, "self");
  const first = counter.count();
  assertEquals([first.instances, first.source], [2, "counted"]);
  assertEquals(first.unheld, [join(dir, "abandoned")]);
  peer?.close();
  assertEquals(counter.count().instances, 1, "a departed peer lowers the count at once");
  self?.close();
  await Deno.remove(dir, { recursive: true });
  const lost = counter.count();
  assertEquals([lost.instances, lost.source], [1, "last_counted"]);
  const blind = new InstanceCounter(dir, "self").count();
  assertEquals([blind.instances, blind.source], [ASSUMED_INSTANCES, "assumed"]);
});

Deno.test("an abandoned root is removed only under its lock and only once its lock file is not brand new", async () => {
  const dir = await Deno.makeTempDir();
  const held = await root(dir, "held", true);
  await root(dir, "old", false);
  await root(dir, "young", false);
  const past = new Date(Date.now() - 120_000);
  await Deno.utime(join(dir, "old", ".lock"), past, past);
  await Deno.utime(join(dir, "held", ".lock"), past, past);
  assert(!reclaimIfAbandoned(join(dir, "held"), 30_000), "a live owner's root stays");
  assert(!reclaimIfAbandoned(join(dir, "young"), 30_000), "a peer may be between creating and locking");
  assert(reclaimIfAbandoned(join(dir, "old"), 30_000));
  const left = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  assertEquals(left, ["held", "young"]);
  held?.close();
  await Deno.remove(dir, { recursive: true });
});
