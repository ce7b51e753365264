import { assert, assertEquals } from "../../assert.ts";
import { drain } from "../../../src/mcp/shutdown_drain.ts";

Deno.test("the drain runs its steps in order and reports complete when all end in time", async () => {
  const order: string[] = [];
  const report = await drain([
    { name: "requests", run: () => order.push("requests") },
    { name: "browser", run: () => new Promise((r) => setTimeout(() => r(order.push("browser")), 10)) },
    {
      name: "recorder",
      run: () => {
        order.push("recorder");
        throw new Error("disk gone");
      },
    },
    { name: "store", run: () => order.push("store") },
  ], 2_000);
  assertEquals(order, ["requests", "browser", "recorder", "store"]);
  assert(report.complete);
  assertEquals(report.incomplete, []);
  // A failing step ends (and is named with its reason); the steps after it still run.
  assertEquals(report.failed, [{ step: "recorder", error: "disk gone" }]);
  assertEquals(report.finished, ["requests", "browser", "recorder", "store"]);
});

Deno.test("a step that never finishes exhausts the deadline: it and the steps after it are incomplete", async () => {
  let laterRan = false;
  const started = performance.now();
  const report = await drain([
    { name: "requests", run: () => Promise.resolve() },
    { name: "browser", run: () => new Promise(() => {}) },
    { name: "recorder", run: () => (laterRan = true) },
  ], 150);
  const elapsed = performance.now() - started;
  assert(!report.complete);
  assertEquals(report.finished, ["requests"]);
  assertEquals(report.incomplete, ["browser", "recorder"]);
  assert(!laterRan, "no step starts after the deadline");
  assert(elapsed >= 140 && elapsed < 2_000, `returned after ${elapsed} ms`);
});

Deno.test("a step past its own budget is left behind as incomplete; the steps after it still run", async () => {
  const report = await drain([
    { name: "requests", run: () => new Promise(() => {}), budgetMs: 50 },
    { name: "browser", run: () => Promise.resolve() },
  ], 2_000);
  assert(!report.complete);
  assertEquals(report.incomplete, ["requests"]);
  assertEquals(report.finished, ["browser"]);
});
