/**
 * emulate's network conditions on a page the scenario guard holds, in real Chromium: both live in the
 * page's one Network.emulateNetworkConditionsByRule list (browser/network_rules.ts), so throttling the
 * app under test keeps another origin's WebSocket blocked, and either can leave without undoing the other.
 */
import { assert, assertEquals } from "../assert.ts";
import { applyEmulation } from "../../src/devtools/emulation.ts";
import { installGuard } from "../../src/scenario/guard.ts";
import { evaluate, serveGuardSite, withScenarioBrowser } from "./scenario_guard_util.ts";

type Probe = { outcome: string; message?: string; ms: number };

Deno.test("emulate + scenario guard: Slow 3G throttles the allowed origin while another origin's WebSocket stays blocked", async () => {
  const a = serveGuardSite();
  const b = serveGuardSite();
  try {
    let uninstall = () => {};
    await withScenarioBrowser((session) => {
      uninstall = installGuard(session, {
        allowedOrigins: [a.origin],
        blockServiceWorkers: false,
        replay: { mode: "disabled" },
      }, () => {});
    }, async (session, page) => {
      await session.navigate(page, `${a.origin}/index.html`, "load", 10_000);
      const timed = (expr: string) =>
        evaluate(
          page,
          `(async () => { const t = performance.now(); const r = await ${expr};
          return { ...r, ms: performance.now() - t }; })()`,
        ) as Promise<Probe>;
      const fetchA = () => timed(`probeFetch(${JSON.stringify(`${a.origin}/api/plain`)})`);
      const wsB = () => timed(`probeWs(${JSON.stringify(`ws://127.0.0.1:${b.port}/ws`)})`);

      await applyEmulation(session, page, { network: "slow_3g" });
      const slow = await fetchA();
      assertEquals(slow.outcome, "response");
      assert(slow.ms >= 2_000, `the allowed origin is throttled: ${slow.ms} ms`);
      const blocked = await wsB();
      assert(
        blocked.outcome !== "open",
        `B's WebSocket stays blocked under throttling: ${JSON.stringify(blocked)}`,
      );

      // emulate leaves: the guard's boundary is still there, and the app is fast again.
      await applyEmulation(session, page, { clear: true });
      assert((await fetchA()).ms < 2_000, "unthrottled after clear");
      assert((await wsB()).outcome !== "open", "B's WebSocket still blocked after clear");

      // The guard leaves: emulate's throttling stays, and B is reachable again.
      await applyEmulation(session, page, { network: "slow_3g" });
      uninstall();
      const after = await fetchA();
      assert(after.ms >= 2_000, `still throttled without the guard: ${after.ms} ms`);
      assertEquals((await wsB()).outcome, "open", "B's WebSocket opens once the guard is gone");
      assertEquals(b.hits.filter((h) => h === "/ws").length, 1, "B was reached once, after the guard left");
    });
  } finally {
    await a.close();
    await b.close();
  }
});
