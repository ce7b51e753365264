import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, type ServerHandle, structured, textOf, withServer } from "./harness.ts";

const headless = { browser: { headless: true } };

interface EvalError {
  code: string;
  message: string;
  retry: string;
  recovery?: string;
  details?: Record<string, unknown>;
}

function errorOf(result: { structuredContent?: Record<string, unknown> }): EvalError {
  return (result.structuredContent?.error ?? {}) as EvalError;
}

async function timed(server: ServerHandle, args: Record<string, unknown>) {
  const started = performance.now();
  const result = await server.call("evaluate_page", args);
  return { result, ms: Math.round(performance.now() - started) };
}

/** The page answers a plain expression promptly: nothing is still running in it. */
async function answers(server: ServerHandle, what: string): Promise<void> {
  const { result, ms } = await timed(server, { expression: "6 * 7", timeout_ms: 3_000 });
  assert(!result.isError, `${what}: the page should answer again: ${textOf(result)}`);
  assertEquals(structured(result).value, 42, what);
  assert(ms < 3_000, `${what}: the follow-up took ${ms} ms`);
}

Deno.test({
  name: "evaluate_page: an unserializable result is result_not_serializable with a preview, never retry-safe",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/noop.html` });
      const cases: Array<[string, string, RegExp, string]> = [
        ["window", "Window", /Window/, ""],
        ["document", "DOM node", /#document/, ""],
        ["[document.body]", "DOM node", /body/, "[0]"],
        ["(() => { const a = { b: {} }; a.b.a = a; return a; })()", "cycle", /circular|circle/i, ""],
        ["() => 1", "function", /=> 1/, ""],
        ["Symbol('tag')", "Symbol", /Symbol\(tag\)/, ""],
        ["({ n: 12n })", "BigInt", /12n/, ".n"],
      ];
      for (const [expression, kind, preview, path] of cases) {
        const result = await server.call("evaluate_page", { expression });
        assertEquals(errorCode(result), "result_not_serializable", `${expression}: ${textOf(result)}`);
        const e = errorOf(result);
        assertEquals(e.retry, "never", expression);
        assertMatch(e.recovery ?? "", /\(\{|String\(|projection/, expression);
        assertEquals(e.details?.kind, kind, expression);
        assertEquals(e.details?.path, `result${path}`, expression);
        assertMatch(String(e.details?.preview ?? ""), preview, expression);
        assert(String(e.details?.preview).length <= 200, `${expression}: preview is bounded`);
        assertMatch(e.message, new RegExp(`result${path.replace(/[[\].]/g, "\\$&")}`), expression);
      }

      // What JSON can say is returned as JSON would say it; dropped functions are named.
      const plain = structured(
        await server.call("evaluate_page", {
          expression: "({ a: [1, 'x', null], d: new Date(0), f() {}, nested: { g: () => 2, k: true } })",
        }),
      );
      assertEquals(plain.value, { a: [1, "x", null], d: "1970-01-01T00:00:00.000Z", nested: { k: true } });
      assertEquals(plain.dropped, { count: 2, paths: ["result.f", "result.nested.g"] });
      // Top-level values JSON has no word for keep their description, as before.
      assertEquals(structured(await server.call("evaluate_page", { expression: "1n" })).value, "1n");
      assertEquals(structured(await server.call("evaluate_page", { expression: "undefined" })).value, null);
      assertEquals(
        structured(await server.call("evaluate_page", { expression: "'s'.repeat(3)" })).value,
        "sss",
      );

      const big = await server.call("evaluate_page", { expression: "({ s: 'x'.repeat(70000) })" });
      assertEquals(errorCode(big), "resource_limit_exceeded", textOf(big));
      await answers(server, "after the unserializable results");
    }, headless),
});

Deno.test({
  name:
    "evaluate_page: a loop is terminated at timeout_ms and says so; a pending promise is not blamed on the page",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/noop.html` });
      // Synchronous, after an await, and in a timer the expression waits on: each is stopped.
      const loops = [
        "while (true) {}",
        "(async () => { await null; for (;;) {} })()",
        "new Promise((r) => setTimeout(() => { for (;;) {} r(1); }, 20))",
      ];
      for (const expression of loops) {
        const { result, ms } = await timed(server, { expression, timeout_ms: 300 });
        console.error(`evaluate_page ${JSON.stringify(expression)} timeout_ms 300: ${ms} ms`);
        assertEquals(errorCode(result), "evaluation_timeout", `${expression}: ${textOf(result)}`);
        const e = errorOf(result);
        assertEquals(e.details?.outcome, "terminated", `${expression}: ${e.message}`);
        assertMatch(e.message, /terminated after \d+ ms/, expression);
        assert(ms <= 300 + 2_000, `${expression}: returned after ${ms} ms`);
        await answers(server, expression);
      }

      const { result, ms } = await timed(server, { expression: "new Promise(() => {})", timeout_ms: 100 });
      console.error(`evaluate_page never-settling promise, timeout_ms 100: ${ms} ms`);
      assertEquals(errorCode(result), "evaluation_timeout", textOf(result));
      const e = errorOf(result);
      assertEquals(e.details?.outcome, "promise_pending", e.message);
      assertMatch(e.message, /did not settle within 100 ms/);
      assertMatch(e.message, /responsive/);
      assert(!/hung|unresponsive|terminated|long-running/i.test(e.message), e.message);
      assert(ms <= 100 + 1_000, `a 100 ms timeout returned after ${ms} ms`);

      // A promise that settles in time is simply its value.
      const settled = structured(
        await server.call("evaluate_page", {
          expression: "new Promise((r) => setTimeout(() => r({ ok: true }), 50))",
          timeout_ms: 2_000,
        }),
      );
      assertEquals(settled.value, { ok: true });
      await answers(server, "after the pending promise");

      // A page stuck in its own script (from an earlier call's timer) never gets to the expression:
      // page_unresponsive, and that script is not the expression's to terminate, so it stays stuck.
      const freeze = await server.call("evaluate_page", {
        expression: "setTimeout(() => { for (;;) {} }, 0); 1",
      });
      assertEquals(structured(freeze).value, 1);
      await new Promise((r) => setTimeout(r, 200));
      for (const attempt of ["first", "second"]) {
        const { result, ms } = await timed(server, { expression: "6 * 7", timeout_ms: 300 });
        assertEquals(errorCode(result), "page_unresponsive", `${attempt}: ${textOf(result)}`);
        assertEquals(errorOf(result).details?.outcome, "page_busy", attempt);
        assertMatch(errorOf(result).recovery ?? "", /close_page|navigate_page/);
        assert(ms <= 300 + 2_000, `${attempt}: returned after ${ms} ms`);
      }
    }, headless),
});
