/**
 * DOM chunks against a real index and real segment files, without a browser: batches as a page sends
 * them become checkpointed, compressed chunks, and the reader rebuilds any instant from the last
 * checkpoint before it. The budget is the real one.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../assert.ts";
import { DomIngest } from "../../../src/capture/ingest_dom.ts";
import { domEvents, domGaps, domPages } from "../../../src/capture/dom_query.ts";
import { StoreBudget } from "../../../src/capture/ingest_budget.ts";
import { InstanceCounter } from "../../../src/store/budget.ts";
import { openIndex } from "../../../src/store/index_db.ts";
import { realIo } from "../../../src/store/segments.ts";
import type { DomBatchMessage } from "../../../src/capture/messages.ts";

const T0 = 1_700_000_000_000;
const OFFSET = T0 - 1_000; // page time T0 is session time 1,000 ms

async function setup(totalBytes = 0) {
  const dataDir = await Deno.makeTempDir();
  const root = join(dataDir, "instances", "self");
  await Deno.mkdir(root, { recursive: true });
  const lock = await Deno.open(join(root, ".lock"), { create: true, write: true });
  await lock.lock(true);
  const { db } = openIndex(root);
  const pending: Array<() => void> = [];
  const commit = () => {
    db.exec("BEGIN");
    for (const w of pending.splice(0)) w();
    db.exec("COMMIT");
  };
  const budget = totalBytes > 0
    ? new StoreBudget(db, root, totalBytes, 0, new InstanceCounter(join(dataDir, "instances"), "self"))
    : undefined;
  const dom = new DomIngest({
    db: () => db,
    root: () => root,
    io: () => realIo,
    budget: () => budget,
    enqueue: (w) => pending.push(w),
    commit,
    terminal: () => false,
  });
  const send = (events: unknown[]) => {
    const m: DomBatchMessage = {
      type: "dom",
      session_id: "s",
      page_id: "p1",
      recv_ns: 0,
      clock_offset_ms: OFFSET,
      payload: JSON.stringify(events),
    };
    dom.accept(m);
  };
  return {
    db,
    dom,
    send,
    done: () => {
      dom.flush();
      commit();
    },
    cleanup: async () => {
      db.close();
      lock.close();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

const meta = (t: number, href = "http://127.0.0.1/a") => ({
  type: 4,
  timestamp: t,
  data: { href, width: 800, height: 600 },
});
const full = (t: number, marker: string) => ({
  type: 2,
  timestamp: t,
  data: { node: { type: 0, id: 1, childNodes: [], marker }, initialOffset: { top: 0, left: 0 } },
});
const mutation = (t: number, n: number) => ({
  type: 3,
  timestamp: t,
  data: {
    source: 0,
    texts: [],
    attributes: [{ id: 1, attributes: { "data-n": String(n) } }],
    removes: [],
    adds: [],
  },
});

Deno.test("DOM batches become checkpointed chunks; an instant is rebuilt from the last checkpoint before it", async () => {
  const t = await setup();
  try {
    t.send([meta(T0), full(T0, "first")]);
    for (let i = 1; i <= 30; i++) t.send([mutation(T0 + i * 100, i)]);
    t.send([meta(T0 + 3_050), full(T0 + 3_050, "second")]);
    t.send([mutation(T0 + 3_200, 31)]);
    t.done();

    const pages = domPages(t.db, "s");
    assertEquals(pages.length, 1);
    assertEquals(pages[0].events, 2 + 30 + 2 + 1);
    assertEquals(pages[0].first_checkpoint_ns, 1_000 * 1e6, "page time mapped onto the session clock");

    // 2.5 s after T0: the first checkpoint, and the mutations up to the window's end.
    const at = 3_500e6;
    const w = domEvents(t.db, "s", "p1", at, at);
    assert(w, "the instant is covered");
    assertEquals(w.checkpoint_ns, 1_000e6);
    assertEquals(w.events[0].event.type, 4);
    assertEquals(w.events[1].event.type, 2);
    assert(w.events.some((e) => e.at_ns === 3_500e6), "the mutation at the instant is there");

    // After the second checkpoint, reading starts there, not at the first.
    const later = domEvents(t.db, "s", "p1", 4_100e6, 4_300e6);
    assert(later);
    assertEquals(later.checkpoint_ns, 4_050e6);
    assertEquals(JSON.stringify(later.events[1].event).includes("second"), true);
    assertEquals(later.events.at(-1)?.at_ns, 4_200e6);

    // Before the first checkpoint there is nothing to rebuild from.
    assertEquals(domEvents(t.db, "s", "p1", 500e6, 600e6), undefined);

    // Stored compressed: the chunk bytes are less than the JSON they hold.
    const raw = t.db.prepare("SELECT sum(raw_bytes) AS raw, sum(length) AS packed FROM dom_chunks").get() as {
      raw: number;
      packed: number;
    };
    assert(raw.packed < raw.raw, `compressed ${raw.packed} < raw ${raw.raw}`);
    const kinds = t.db.prepare("SELECT DISTINCT kind FROM segments").all() as Array<{ kind: string }>;
    assertEquals(kinds.map((k) => k.kind), ["dom"]);
  } finally {
    await t.cleanup();
  }
});

Deno.test("a malformed batch is counted and stored nothing; the next good batch is stored", async () => {
  const t = await setup();
  try {
    t.dom.accept({
      type: "dom",
      session_id: "s",
      page_id: "p1",
      recv_ns: 0,
      clock_offset_ms: 0,
      payload: "{oops",
    });
    t.send([{ type: 3 }]);
    t.send([meta(T0), full(T0, "ok")]);
    t.done();
    assertEquals(t.dom.storage.get("s")?.malformed_batches, 2);
    assertEquals(domPages(t.db, "s")[0].events, 2);
  } finally {
    await t.cleanup();
  }
});

Deno.test("a chunk refused by the budget opens a DOM gap; later chunks wait for the next checkpoint", async () => {
  // A share too small for a big checkpoint: the snapshot is refused, its mutations are unusable without it.
  const t = await setup(40_000);
  try {
    // Incompressible, so it stays large after deflate.
    const big = Array.from(crypto.getRandomValues(new Uint8Array(60_000)), (b) => b.toString(36)).join("");
    t.send([meta(T0), full(T0, big)]);
    t.send([mutation(T0 + 1_100, 1)]);
    t.send([mutation(T0 + 2_200, 2)]);
    t.send([meta(T0 + 3_000), full(T0 + 3_000, "small")]);
    t.send([mutation(T0 + 3_100, 3)]);
    t.done();
    const stats = t.dom.storage.get("s");
    assert(stats && stats.dropped_chunks >= 3, JSON.stringify(stats));
    const gaps = domGaps(t.db, "s", "p1");
    assertEquals(gaps.length, 1, JSON.stringify(gaps));
    assertEquals(gaps[0].start_ns, 1_000e6);
    assertEquals(gaps[0].end_ns, 4_000e6, "the gap ends at the next checkpoint that was stored");
    assert(gaps[0].cause.includes("disk budget"), gaps[0].cause);
    assertEquals(domEvents(t.db, "s", "p1", 2_500e6, 2_500e6), undefined, "not rebuildable inside the gap");
    assert(domEvents(t.db, "s", "p1", 4_100e6, 4_100e6), "rebuildable after it");
  } finally {
    await t.cleanup();
  }
});
