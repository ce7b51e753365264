import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

const headless = { browser: { headless: true } };

interface Step {
  index: number;
  tool: string;
  status: string;
  phase?: string;
  interaction_id?: string;
  error?: { code: string; message: string };
}

interface BatchResult {
  status: string;
  steps: Step[];
  error?: { code: string; message: string; details: Record<string, unknown> };
}

/** Hold the page's main thread (from a timer, so the evaluate itself returns at once). */
const HOLD = (ms: number) =>
  `setTimeout(() => { const until = Date.now() + ${ms}; while (Date.now() < until) {} }, 0); true`;

/** The page's click counter, read once its main thread is free again (evaluate waits for that). */
async function clicks(server: ServerHandle): Promise<number> {
  const r = await server.call("evaluate_page", { expression: "window.clicks", timeout_ms: 8_000 });
  assert(!r.isError, textOf(r));
  return structured(r).value as number;
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test({
  name: "batch deadline before dispatch: the step is reported not dispatched, and it never dispatches later",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/batch_deadline_counter.html` });
      // The click's target lookup waits on the held page past the deadline, so it has not dispatched
      // when the deadline passes; the batch must not let it dispatch once the page frees up.
      const result = await server.call("batch", {
        steps: [
          { tool: "evaluate_page", args: { expression: HOLD(2_500) } },
          { tool: "wait", args: { time_ms: 150 } },
          { tool: "click", args: { selector: "#bump" } },
          { tool: "click", args: { selector: "#bump" } },
        ],
        deadline_ms: 1_000,
      });
      assertEquals(result.isError, true);
      const b = structured(result) as unknown as BatchResult;
      assertEquals(b.status, "timed_out", textOf(result));
      assertEquals(b.steps.map((s) => [s.status, s.phase]), [
        ["ok", "completed"],
        ["ok", "completed"],
        ["failed", "started"],
        ["skipped", "not_started"],
      ], textOf(result));
      assertEquals(b.steps[2].interaction_id, undefined);
      assertEquals(b.error?.code, "batch_deadline_exceeded");
      assertEquals(b.error?.details.step_index, 2);
      assertEquals(b.error?.details.phase, "started");
      assertMatch(b.error?.message ?? "", /before steps\[2\] \(click\) dispatched/);
      assertMatch(b.error?.message ?? "", /stopped/);
      // Once the page is free the stopped click would have run; give it time, then count.
      assertEquals(await clicks(server), 0, "the page froze before the click");
      await settle(1_500);
      assertEquals(await clicks(server), 0, "a step reported as not dispatched must never dispatch");

      // A tool without interactions cannot be stopped part-way: the report says what that means.
      const reader = structured(
        await server.call("batch", { steps: [{ tool: "wait", args: { time_ms: 2_000 } }], deadline_ms: 200 }),
      ) as unknown as BatchResult;
      assertEquals([reader.steps[0].status, reader.steps[0].phase], ["failed", "started"]);
      assertMatch(reader.error?.message ?? "", /only reads the page/);
      const writer = structured(
        await server.call("batch", {
          steps: [{
            tool: "evaluate_page",
            args: {
              expression: "new Promise((r) => setTimeout(() => r(window.late = 1), 600))",
              timeout_ms: 3_000,
            },
          }],
          deadline_ms: 200,
        }),
      ) as unknown as BatchResult;
      assertEquals([writer.steps[0].status, writer.steps[0].phase], ["failed", "started"]);
      assertMatch(writer.error?.message ?? "", /may have taken effect/);
      await settle(800);
      const late = await server.call("evaluate_page", { expression: "window.late ?? 0" });
      assertEquals(structured(late).value, 1, "as reported, the running step's work did take effect");
    }, headless),
});

Deno.test({
  name:
    "batch deadline after dispatch: the step is reported dispatched with its anchor, its effect happened, the rest did not run",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/batch_deadline_counter.html` });
      // The click's handler holds the page for 2.5 s: the deadline passes during its observation.
      const result = await server.call("batch", {
        steps: [
          { tool: "click", args: { x: 120, y: 104 } },
          { tool: "click", args: { selector: "#bump" } },
        ],
        deadline_ms: 800,
      });
      assertEquals(result.isError, true);
      const b = structured(result) as unknown as BatchResult;
      assertEquals(b.status, "timed_out", textOf(result));
      assertEquals(b.steps.map((s) => s.status), ["timed_out", "skipped"], textOf(result));
      assert(["dispatched", "completed"].includes(b.steps[0].phase ?? ""), `phase ${b.steps[0].phase}`);
      assertEquals(b.steps[1].phase, "not_started");
      assertMatch(b.steps[0].interaction_id ?? "", /^s\d+-i\d+$/);
      assertEquals(b.error?.details.step_index, 0);
      assertEquals(b.error?.details.phase, b.steps[0].phase);
      assertMatch(b.error?.message ?? "", /during steps\[0\] \(click\) after it dispatched/);
      assert(!/before steps\[0\]/.test(b.error?.message ?? ""), b.error?.message);
      await settle(500);
      assertEquals(await clicks(server), 1, "the dispatched click counted once; the skipped one never ran");
    }, headless),
});
