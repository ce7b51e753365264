import { z } from "zod";
import { assert, assertEquals } from "../../assert.ts";
import { withDeadline } from "../../../src/mcp/deadlines.ts";
import { defineTool } from "../../../src/mcp/define_tool.ts";
import { CallAdmission } from "../../../src/mcp/admission.ts";
import type { AppContext } from "../../../src/mcp/context.ts";
import { output, type ToolOutput } from "../../../src/mcp/response.ts";
import { ToolError } from "../../../src/errors.ts";
import {
  currentCallSignal,
  runInCall,
  sleepInCall,
  throwIfCancelled,
} from "../../../src/browser/call_signal.ts";
import { runStepsYielding, type Steps } from "../../../src/temporal/steps.ts";

/** An app with no browser; `latest` stands in for the session's latest interaction id. */
function fakeApp(calls = new CallAdmission(), latest?: { id?: string }) {
  const session = latest
    ? {
      id: "s1",
      ended: false,
      selectedPageId: undefined,
      pages: new Map(),
      get latestInteractionId() {
        return latest.id;
      },
    }
    : undefined;
  return { browsers: { current: session }, calls } as unknown as AppContext;
}

/** Work that sleeps inside its call and reports how it ended. */
function sleeper(ms: number) {
  const seen: { reason?: unknown; settledAfterMs?: number } = {};
  const started = performance.now();
  const work = async (): Promise<ToolOutput> => {
    try {
      await sleepInCall(ms);
      return output("slept", {});
    } catch (err) {
      seen.reason = err;
      throw err;
    } finally {
      seen.settledAfterMs = performance.now() - started;
    }
  };
  return { work, seen };
}

Deno.test("a client's cancellation answers call_cancelled at once and stops the call's sleep", async () => {
  const client = new AbortController();
  const { work, seen } = sleeper(20_000);
  const started = performance.now();
  const pending = withDeadline("wait", { time_ms: 20_000 }, fakeApp(), false, work, {
    cancel: client.signal,
    readOnly: true,
  });
  setTimeout(() => client.abort("user pressed stop"), 50);
  const out = await pending;
  const elapsed = performance.now() - started;
  assert(out instanceof ToolError, "a ToolError");
  assertEquals(out.code, "call_cancelled");
  assert(elapsed < 1_000, `answered after ${elapsed} ms`);
  assert(
    /cancelled by the client/.test(out.message) && /nothing was rolled back/.test(out.message),
    out.message,
  );
  assertEquals(out.details?.cause, "client");
  // The work ended with the same reason, well before its 20 s sleep.
  await new Promise((r) => setTimeout(r, 20));
  assert(seen.reason === out, "the sleep was rejected with the call's cancellation");
  assert((seen.settledAfterMs ?? Infinity) < 1_000, `work settled after ${seen.settledAfterMs} ms`);
});

Deno.test("a call cancelled before it starts runs nothing", async () => {
  const client = new AbortController();
  client.abort();
  let ran = false;
  const out = await withDeadline("click", {}, fakeApp(), false, () => {
    ran = true;
    return Promise.resolve(output("clicked", {}));
  }, { cancel: client.signal });
  assert(out instanceof ToolError);
  assertEquals(out.code, "call_cancelled");
  assert(!ran, "the work never ran");
  assert(/before it started; nothing was run/.test(out.message), out.message);
});

Deno.test("a cancelled call whose interaction began names it and never calls a replay safe", async () => {
  const client = new AbortController();
  const latest: { id?: string } = { id: "i1" };
  setTimeout(() => client.abort(), 20);
  const out = await withDeadline("click", {}, fakeApp(new CallAdmission(), latest), false, async () => {
    latest.id = "i2";
    await sleepInCall(10_000);
    return output("clicked", { interaction_id: "i2" });
  }, { cancel: client.signal, readOnly: false });
  assert(out instanceof ToolError);
  assertEquals(out.code, "call_cancelled");
  assertEquals(out.retry, "after_recovery");
  assertEquals(out.affected?.interaction_id, "i2");
  assert(/interaction i2 had begun and may have acted/.test(out.message), out.message);
  assert(/snapshot_page/.test(out.recovery ?? ""), out.recovery);
  assert(!/safe/.test(out.recovery ?? ""), out.recovery);
});

Deno.test("a read-only call cancelled mid-way says nothing acted; a mutating one says it may have", async () => {
  for (const readOnly of [true, false]) {
    const client = new AbortController();
    const pending = withDeadline("some_tool", {}, fakeApp(), false, sleeper(10_000).work, {
      cancel: client.signal,
      readOnly,
    });
    queueMicrotask(() => client.abort());
    const out = await pending;
    assert(out instanceof ToolError);
    assertEquals(out.retry, readOnly ? "safe" : "after_recovery", `readOnly ${readOnly}`);
    assertEquals(/may have changed the page/.test(out.message), !readOnly, out.message);
  }
});

Deno.test("shutdown refuses new calls and cancels running ones; settled() waits for their work", async () => {
  const calls = new CallAdmission();
  const app = fakeApp(calls);
  const { work, seen } = sleeper(10_000);
  const running = withDeadline("wait", { time_ms: 10_000 }, app, false, work);
  await new Promise((r) => setTimeout(r, 20));
  assertEquals(calls.inFlight, 1);
  calls.close();
  const out = await running;
  assert(out instanceof ToolError);
  assertEquals(out.code, "shutting_down");
  assertEquals(out.retry, "never");
  await calls.settled();
  assertEquals(calls.inFlight, 0);
  assert(seen.reason instanceof ToolError, "the work saw the cancellation");
  // A new call is refused before its arguments are even read.
  let ran = false;
  const tool = defineTool({
    name: "probe_tool",
    capability: "control",
    description: "test",
    input: z.strictObject({}),
    output: z.looseObject({}),
    handler: () => {
      ran = true;
      return Promise.resolve(output("ran", {}));
    },
  });
  const refused = await tool.run({ not: "checked" }, app);
  assert(refused.isError);
  assertEquals((refused.structured.error as { code: string }).code, "shutting_down");
  assert(/start a new krometrail process/i.test(refused.text), refused.text);
  assert(!ran);
});

Deno.test("a tool's run passes the client's signal: the handler's call signal aborts with it", async () => {
  const client = new AbortController();
  let inner: AbortSignal | undefined;
  const tool = defineTool({
    name: "probe_tool",
    capability: "control",
    description: "test",
    input: z.strictObject({}),
    output: z.looseObject({}),
    annotations: { readOnlyHint: true },
    handler: async () => {
      inner = currentCallSignal();
      await sleepInCall(10_000);
      return output("ran", {});
    },
  });
  const call = { signal: client.signal } as Parameters<typeof tool.run>[2];
  const pending = tool.run({}, fakeApp(), call);
  await new Promise((r) => setTimeout(r, 10));
  client.abort();
  const out = await pending;
  assert(out.isError);
  assertEquals((out.structured.error as { code: string }).code, "call_cancelled");
  assert(inner?.aborted, "the handler's signal was aborted");
});

Deno.test("long temporal work stops at its next yield once its call is cancelled", async () => {
  const controller = new AbortController();
  let steps = 0;
  function* forever(): Steps<number> {
    for (;;) {
      const until = performance.now() + 2;
      while (performance.now() < until) { /* a frame's worth of work */ }
      steps++;
      yield;
    }
  }
  const reason = new ToolError({ code: "call_cancelled", message: "cancelled", retry: "safe" });
  const run = runInCall(controller.signal, () => runStepsYielding(forever(), 5));
  setTimeout(() => controller.abort(reason), 50);
  const err = await run.then(() => undefined, (e) => e);
  assert(err === reason, "rejected with the call's reason");
  const at = steps;
  await new Promise((r) => setTimeout(r, 50));
  assertEquals(steps, at, "no step ran after the abort");
  // Outside a call the safe point is a no-op.
  throwIfCancelled();
});
