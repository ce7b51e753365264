/**
 * Reversal benchmark: how often the debug bundle's storyboard shows a motion that reverses (forward to
 * an extreme, back for a while, forward again to rest) on fixtures/site/reversal.html with different
 * timings and distances. Per configuration it counts runs whose source frames show the extreme before
 * the reversal (what any selection could show) and runs whose storyboard tiles do. Never asserts.
 *
 *   deno run --frozen -A bench/reversal.ts [--runs 5] [--only "back 40"] [--verbose]
 */
import { startServer } from "../tests/e2e/harness.ts";
import {
  outOfPaintOrder,
  type ReversalParams,
  runReversal,
  showsReversal,
} from "../tests/e2e/reversal_flow.ts";
import { serveStatic } from "../src/demo/static_server.ts";
import { formatTable } from "./lib/table.ts";

const CONFIGS: Array<{ name: string; p: ReversalParams }> = [
  { name: "480 px, hold 60, back 120 for 100", p: { dist: 480, hold: 60, back: 120, away: 100 } },
  { name: "480 px, hold 100, back 120 for 100", p: { dist: 480, hold: 100, back: 120, away: 100 } },
  { name: "480 px, hold 150, back 120 for 100", p: { dist: 480, hold: 150, back: 120, away: 100 } },
  { name: "240 px, hold 60, back 60 for 100", p: { dist: 240, hold: 60, back: 60, away: 100 } },
  { name: "240 px, hold 100, back 60 for 60", p: { dist: 240, hold: 100, back: 60, away: 60 } },
  { name: "240 px, hold 150, back 60 for 150", p: { dist: 240, hold: 150, back: 60, away: 150 } },
  { name: "480 px, hold 150, back 40 for 150", p: { dist: 480, hold: 150, back: 40, away: 150 } },
  { name: "480 px, hold 60, back 40 for 100", p: { dist: 480, hold: 60, back: 40, away: 100 } },
  {
    name: "overshoot 480 px, hold 100, rest 400",
    p: { dist: 480, hold: 100, back: 80, away: 100, rest: 400 },
  },
];

const runsArg = Deno.args.indexOf("--runs");
const runs = runsArg >= 0 ? Number(Deno.args[runsArg + 1]) : 5;
if (!Number.isInteger(runs) || runs < 1) throw new Error("--runs must be a positive integer");

const site = serveStatic();
const server = await startServer();
const rows = [[
  "configuration",
  "runs",
  "in source frames",
  "in storyboard",
  "storyboard | source",
  "tiles out of paint order",
]];
let [totalSource, totalBoard, totalBoth, totalMisordered] = [0, 0, 0, 0];
try {
  const started = await server.call("start_browser", { temporary: true, headless: true });
  if (started.isError) throw new Error("start_browser failed");
  const only = Deno.args.indexOf("--only");
  const chosen = only >= 0 ? CONFIGS.filter((c) => c.name.includes(Deno.args[only + 1])) : CONFIGS;
  for (const c of chosen) {
    let [source, board, both, misordered] = [0, 0, 0, 0];
    for (let i = 0; i < runs; i++) {
      const r = await runReversal(server, site.origin, c.p);
      const s = showsReversal(r.source, c.p);
      const b = showsReversal(r.tiles, c.p);
      source += s ? 1 : 0;
      board += b ? 1 : 0;
      both += s && b ? 1 : 0;
      misordered += outOfPaintOrder(r.tiles) ? 1 : 0;
      if (Deno.args.includes("--verbose")) {
        const xs = (fs: typeof r.tiles) => fs.map((f) => f.x ?? "?").join(",");
        console.error(`${c.name} #${i + 1}: source ${xs(r.source)} | tiles ${xs(r.tiles)}`);
      }
    }
    rows.push([
      c.name,
      String(runs),
      `${source}/${runs}`,
      `${board}/${runs}`,
      `${both}/${source}`,
      `${misordered}/${runs}`,
    ]);
    totalSource += source;
    totalBoard += board;
    totalBoth += both;
    totalMisordered += misordered;
  }
  const n = runs * chosen.length;
  rows.push([
    "all",
    String(n),
    `${totalSource}/${n}`,
    `${totalBoard}/${n}`,
    `${totalBoth}/${totalSource}`,
    `${totalMisordered}/${n}`,
  ]);
  console.log(formatTable(rows));
} finally {
  await server.close();
  await site.close();
}
