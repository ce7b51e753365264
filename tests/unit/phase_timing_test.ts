import { assert, assertEquals } from "../assert.ts";
import { configurePhaseTimings, markPhase, phase, timedCall } from "../../src/phase_timing.ts";
import { breakdownTables, type PhaseLine, PhaseLog } from "../../bench/lib/breakdown.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("phase timings: off by default, one line per call with overlapping phases when on", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/phases.jsonl`;
  try {
    // Off: the work runs, nothing is written.
    configurePhaseTimings(undefined);
    assertEquals(await timedCall("click", () => phase("dispatch", () => Promise.resolve(7))), 7);
    assertEquals(await Deno.stat(path).then(() => true, () => false), false);

    configurePhaseTimings(path);
    await timedCall("click", async () => {
      const t = performance.now();
      await Promise.all([phase("shot", () => sleep(30)), phase("snapshot", () => sleep(10))]);
      markPhase("sync_step", t);
    });
    // A phase outside any timed call is not recorded anywhere.
    await phase("stray", () => sleep(1));
    await timedCall("fill", () => phase("dispatch", () => Promise.reject(new Error("x")))).catch(() => {});
    const lines = new PhaseLog(path).read();
    assertEquals(lines.map((l) => l.tool), ["click", "fill"]);
    const click = lines[0];
    const byName = Object.fromEntries(click.phases.map((p) => [p.name, p]));
    assert(byName.shot.ms >= 25 && byName.snapshot.ms >= 5, JSON.stringify(click));
    assert(byName.snapshot.start < byName.shot.start + byName.shot.ms, "side by side phases overlap");
    assert(click.total_ms >= byName.shot.ms, "the total covers its phases");
    // A failing phase is still timed, and so is its call.
    assertEquals(lines[1].phases.map((p) => p.name), ["dispatch"]);
  } finally {
    configurePhaseTimings(undefined);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("breakdown: medians per phase, repeated phases summed within a call, the client overhead", () => {
  const line = (total: number, rendezvous: number[]): PhaseLine => ({
    tool: "click",
    total_ms: total,
    phases: [
      { name: "dispatch", start: 1, ms: 10 },
      ...rendezvous.map((ms, i) => ({ name: "rendezvous", start: 20 + i * 40, ms })),
    ],
  });
  const out = breakdownTables(
    [line(100, [30]), line(120, [30, 20]), line(110, [40])],
    { click: "click", fill: "fill" },
    { click: [115, 125, 130] },
  );
  assert(out.includes("click (click), medians over 3 calls; round trip 125.0 ms"), out);
  const row = (name: string) => out.split("\n").find((l) => l.startsWith(name))?.split(/\s{2,}/);
  assertEquals(row("rendezvous"), ["rendezvous", "20.0", "40.0", "3/3"]);
  assertEquals(row("dispatch"), ["dispatch", "1.0", "10.0", "3/3"]);
  assertEquals(row("server total"), ["server total", "0.0", "110.0", "3"]);
  assertEquals(row("client ↔ server (round trip − server total)")?.filter(Boolean).at(-1), "15.0");
  assert(!out.includes("fill"), "an action with no calls prints nothing");
});
