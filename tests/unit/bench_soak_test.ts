/**
 * The soak benchmark's readers and report (bench/lib/soak_*.ts): it reports retention figures the
 * server adds in stages, so finding them by name wherever they land, the loss equation and the plot are
 * pinned here rather than discovered broken after a ten-minute run.
 */
import { decode } from "fast-png";
import { plotSoak } from "../../bench/lib/soak_plot.ts";
import { type Sample, soakPanels, soakTargets } from "../../bench/lib/soak_report.ts";
import { dirSize, findInstanceRoot, retentionFigures } from "../../bench/lib/soak_status.ts";
import { ackWindowStart, floorOf } from "../../bench/lib/soak_floor.ts";
import { assert, assertEquals, assertMatch } from "../assert.ts";

Deno.test("retention figures are found by name wherever status puts them", () => {
  const landed = retentionFigures({
    capture: {
      frames_over_budget: 3,
      budget: { used_bytes: 19_981_306, budget_bytes: 20_000_000, paused: true, recovery: "…" },
    },
  });
  assertEquals(landed.usedBytes, 19_981_306);
  assertEquals(landed.budgetBytes, 20_000_000);
  assertEquals(landed.shareBytes, undefined);
  assertEquals(landed.blocked, "capture.budget.paused=true");

  const shared = retentionFigures({
    capture: {
      bytes_stored: 999,
      budget: { used_bytes: 60, budget_bytes: 50, instances: 4, paused: true },
      retention: {
        budget_bytes: 200,
        share_bytes: 50,
        instances: 4,
        used_bytes: 40,
        pinned_bytes: 7,
        reclaimed: { segments: 2, bytes: 30 },
        recording_blocked: false,
      },
    },
  });
  assertEquals(
    [shared.budgetBytes, shared.shareBytes, shared.instances, shared.usedBytes, shared.pinnedBytes],
    [200, 50, 4, 40, 7],
  );
  assertEquals([shared.reclaimedBytes, shared.blocked], [30, "capture.budget.paused=true"]);
  assertEquals(retentionFigures({ retention: { n: 3, recording_blocked: false } }).blocked, undefined);
});

Deno.test("targets: frames lost without a gap, and a sample above share + one segment, are misses", () => {
  const samples: Sample[] = [
    { t: 0, diskBytes: 1e6, rssKb: 100_000, shareBytes: 10e6 },
    { t: 10, diskBytes: 40e6, rssKb: 104_000, shareBytes: 10e6 },
    { t: 20, diskBytes: 9e6, rssKb: 101_000, shareBytes: 10e6 },
  ];
  const ok = soakTargets({
    samples,
    final: { frames_received: 10, frames_stored: 7, frames_dropped: 1, frames_over_budget: 2, gaps: 2 },
    floor: { frames: 100, p50: 2, p99: 10, max: 12, bytesPerFrame: 1 },
    share: 10e6,
    shareSource: "status",
    every: 10,
  });
  assertMatch(ok[0], /^PASS .*unaccounted 0/);
  assertMatch(ok[1], /^MISS .*peak 40\.0 MB at 10 s; 1 of 3 samples over/);
  assertMatch(ok[2], /^PASS /);
  assertMatch(ok[3], /^n\/a /);

  const lost = soakTargets({
    samples,
    final: { frames_received: 10, frames_stored: 9, frames_dropped: 0, gaps: 0 },
    share: 100e6,
    shareSource: "status",
    every: 10,
  });
  assertMatch(lost[0], /^MISS .*unaccounted 1/);
  // Each sample is judged by the share status reported with it, not the fallback.
  assertMatch(lost[1], /^MISS .*1 of 3 samples over/);
});

Deno.test("the plot is a PNG of both panels", () => {
  const samples: Sample[] = [0, 10, 20].map((t) => ({ t, diskBytes: t * 1e6, rssKb: 120_000 + t }));
  const png = decode(plotSoak(soakPanels(samples, 200e6), 20, "time, s"));
  assertEquals([png.width, png.height], [1100, 640]);
  // Some ink of the usage line's blue landed in the picture.
  const px = png.data;
  let blue = 0;
  for (let i = 0; i < px.length; i += png.channels) if (px[i] === 31 && px[i + 1] === 119) blue++;
  assert(blue > 100, `expected the usage line, found ${blue} blue pixels`);
});

Deno.test("the instance root is the one whose owner.json names the pid", async () => {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-soak-unit-" });
  try {
    for (const [id, pid] of [["a", 1], ["b", 2]] as const) {
      await Deno.mkdir(`${dir}/instances/${id}/segments`, { recursive: true });
      await Deno.writeTextFile(`${dir}/instances/${id}/owner.json`, JSON.stringify({ pid }));
    }
    await Deno.writeFile(`${dir}/instances/b/segments/1.seg`, new Uint8Array(1000));
    assertEquals(await findInstanceRoot(dir, 2), `${dir}/instances/b`);
    assertEquals(await findInstanceRoot(dir, 3), undefined);
    const size = await dirSize(`${dir}/instances/b`);
    assertEquals([size.files, size.bytes], [2, 1000 + JSON.stringify({ pid: 2 }).length]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the floor beside krometrail is taken over the span its last acks cover", () => {
  const samples = [{ t: 0, received: 0 }, { t: 10, received: 300 }, { t: 20, received: 600 }, { t: 30 }];
  // The recorder keeps its last 450 of 600 acks: they start where the count passed 150, at 5 s.
  assertEquals(ackWindowStart(samples, 600, 450), 5);
  assertEquals(ackWindowStart(samples, 600, 300), 10);
  // All of them (or nothing known): the whole run.
  assertEquals(ackWindowStart(samples, 600, 600), 0);
  assertEquals(ackWindowStart(samples, undefined, 450), 0);

  const acks = [5, 1, 4, 2, 3].map((ms, i) => ({ at: i, ms, bytes: 100 }));
  assertEquals(floorOf(acks), { frames: 5, p50: 3, p99: 5, max: 5, bytesPerFrame: 100 });
  assertEquals(floorOf([]).frames, 0);
});

Deno.test("the ack target names where its floor was measured", () => {
  const line = soakTargets({
    samples: [],
    final: { ack_latency_ms: { p99: 12, samples: 40 } },
    floor: { frames: 40, p50: 2, p99: 10, max: 12, bytesPerFrame: 1 },
    floorSource: "beside it, same span",
    share: 1,
    shareSource: "status",
    every: 10,
  }).find((t) => t.includes("ack p99"));
  assertMatch(line ?? "", /^PASS .*floor \(beside it, same span\) 10\.00 ms = 1\.20×/);
});
