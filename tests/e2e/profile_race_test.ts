/**
 * Two real servers on one data dir race `start_browser {}` on the default managed profile: one
 * wins, the other gets profile_in_use at once (as the sequential case does), never "Started."
 * followed by session_ended.
 */
import { assert, assertEquals } from "../assert.ts";
import { e2e, errorCode, startServer, structured, textOf, type ToolResult } from "./harness.ts";

const ROUNDS = 3;

Deno.test({
  name:
    "two servers racing start_browser {} on one managed profile: exactly one wins, the other is profile_in_use",
  ...e2e,
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-race-" });
    const servers = await Promise.all([startServer({ dataDir }), startServer({ dataDir })]);
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const results: ToolResult[] = await Promise.all(servers.map((s) => s.call("start_browser", {})));
        const winners = results.flatMap((r, i) => (r.isError ? [] : [i]));
        const losers = results.flatMap((r, i) => (r.isError ? [i] : []));
        assertEquals(
          winners.length,
          1,
          `round ${round}: exactly one start wins: ${
            results.map((r) => textOf(r).slice(0, 120)).join(" | ")
          }`,
        );
        assertEquals(errorCode(results[losers[0]]), "profile_in_use", textOf(results[losers[0]]));
        // The winner's browser is really running and recording: no late session_ended.
        const winner = servers[winners[0]];
        const status = structured(await winner.call("browser_status"));
        assert(
          status.running === true,
          `round ${round}: the winner's browser runs: ${JSON.stringify(status)}`,
        );
        const listed = structured(await servers[losers[0]].call("list_managed_profiles")).profiles as Array<
          { name: string; in_use: boolean }
        >;
        assert(listed.some((p) => p.name === "default" && p.in_use), "the loser sees the profile in use");
        const stopped = await winner.call("stop_browser");
        assert(!stopped.isError, textOf(stopped));
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});
