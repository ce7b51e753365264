import { z } from "zod";
import { assert, assertEquals } from "../../assert.ts";
import {
  DEADLINE_ENV,
  deadlineExceeded,
  deadlineFor,
  DEFAULT_TOOL_DEADLINE_MS,
  defaultDeadlineMs,
  EVIDENCE_DEADLINE_MS,
  WAIT_MARGIN_MS,
  withDeadline,
} from "../../../src/mcp/deadlines.ts";
import { defineTool } from "../../../src/mcp/define_tool.ts";
import {
  deserializeInbound,
  markOwnProtoKeys,
  OWN_PROTO_MARK,
  ownProtoPath,
} from "../../../src/mcp/own_proto.ts";
import type { AppContext } from "../../../src/mcp/context.ts";
import { output, type ToolOutput } from "../../../src/mcp/response.ts";
import { asToolError, ToolError } from "../../../src/errors.ts";
import { buildCatalogue, inputJsonSchema } from "../../../src/mcp/registry.ts";

const noBrowserApp = { browsers: { current: undefined } } as unknown as AppContext;

Deno.test("the default deadline comes from the environment when it is a whole number in range", () => {
  assertEquals(defaultDeadlineMs(() => undefined), DEFAULT_TOOL_DEADLINE_MS);
  assertEquals(defaultDeadlineMs(() => "2500"), 2_500);
  for (const bad of ["0", "999", "1.5", "abc", "600001", "-5"]) {
    assertEquals(defaultDeadlineMs(() => bad), DEFAULT_TOOL_DEADLINE_MS, bad);
  }
});

Deno.test("tools with their own bound get it plus the margin; others the default", () => {
  assertEquals(deadlineFor("snapshot_page", {}, 7_000), 7_000);
  assertEquals(deadlineFor("click", {}, 7_000), 7_000);
  assertEquals(deadlineFor("navigate_page", {}, 7_000), 30_000 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("navigate_page", { timeout_ms: 2_000 }, 7_000), 2_000 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("evaluate_page", { timeout_ms: 100 }, 7_000), 100 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("evaluate_page", {}, 7_000), 10_000 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("wait", { time_ms: 20_000 }, 7_000), 20_000 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("wait", { timeout_ms: 500 }, 7_000), 500 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("batch", { deadline_ms: 1_000 }, 7_000), 1_000 + 3_000 + WAIT_MARGIN_MS);
  assertEquals(deadlineFor("create_page", {}, 7_000), 7_000);
  assertEquals(deadlineFor("create_page", { url: "http://127.0.0.1/" }, 7_000), 37_000);
  assertEquals(deadlineFor("generate_artifacts", {}, 7_000), EVIDENCE_DEADLINE_MS);
});

Deno.test("every tool that advertises timeout_ms or deadline_ms has a rule that reads it", () => {
  for (const tool of buildCatalogue({ "temporal-video": { available: true } }).tools) {
    const props = (inputJsonSchema(tool, "full").properties ?? {}) as Record<string, unknown>;
    const key = "timeout_ms" in props ? "timeout_ms" : "deadline_ms" in props ? "deadline_ms" : undefined;
    if (!key) continue;
    const a = deadlineFor(tool.name, { [key]: 1_000 }, 7_000);
    const b = deadlineFor(tool.name, { [key]: 2_000 }, 7_000);
    assertEquals(b - a, 1_000, `${tool.name}: its deadline follows ${key}`);
    const recovery = deadlineExceeded({ tool: tool.name, deadlineMs: a }).recovery ?? "";
    assert(recovery.includes(`raise ${key}`), `${tool.name}: ${recovery}`);
  }
});

Deno.test("a call past its deadline answers deadline_exceeded naming the tool and the deadline", async () => {
  Deno.env.set(DEADLINE_ENV, "1000");
  try {
    let release: (() => void) | undefined;
    const started = performance.now();
    const out = await withDeadline(
      "snapshot_page",
      {},
      noBrowserApp,
      true,
      () =>
        new Promise<ToolOutput>((resolve) => {
          release = () => resolve(output("late", {}));
        }),
    );
    const elapsed = performance.now() - started;
    assert(out instanceof ToolError);
    assertEquals(out.code, "deadline_exceeded");
    assertEquals(out.details, { tool: "snapshot_page", deadline_ms: 1_000 });
    assert(out.message.includes("snapshot_page") && out.message.includes("1000 ms"), out.message);
    assert(elapsed >= 990 && elapsed < 5_000, `returned after ${elapsed} ms`);
    release?.();
    // A call that finishes in time is untouched.
    const quick = await withDeadline(
      "snapshot_page",
      {},
      noBrowserApp,
      true,
      () => Promise.resolve(output("ok", {})),
    );
    assert(!(quick instanceof ToolError));
    assertEquals(quick.text, "ok");
  } finally {
    Deno.env.delete(DEADLINE_ENV);
  }
});

const probeTool = defineTool({
  name: "probe_tool",
  capability: "control",
  description: "test",
  input: z.strictObject({ locator: z.strictObject({ text: z.string() }).optional() }),
  output: z.looseObject({}),
  handler: () => Promise.resolve(output("ran", {})),
});

Deno.test("an own __proto__ key is an unknown argument, at the top or nested, marked or real", async () => {
  for (
    const [raw, path] of [
      ['{"__proto__": 1}', "(arguments)"],
      ['{"__proto__": {"locator": {"text": "x"}}}', "(arguments)"],
      ['{"locator": {"text": "x", "__proto__": null}}', "locator"],
    ] as const
  ) {
    const real = JSON.parse(raw);
    assertEquals(ownProtoPath(real), path);
    const out = await probeTool.run(real, noBrowserApp);
    assert(out.isError, raw);
    const error = out.structured.error as { code: string; message: string; affected: { argument: string } };
    assertEquals(error.code, "invalid_arguments");
    assertEquals(error.affected.argument, path);
    assert(error.message.includes('Unrecognized key: "__proto__"'), error.message);
    // The same key as the transport hands it on (see deserializeInbound).
    const message = deserializeInbound(JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "probe_tool", arguments: JSON.parse(raw) },
    })) as unknown as { params: { arguments: Record<string, unknown> } };
    assertEquals(ownProtoPath(message.params.arguments), path);
    assertEquals((await probeTool.run(message.params.arguments, noBrowserApp)).isError, true);
  }
  assertEquals((await probeTool.run({ locator: { text: "x" } }, noBrowserApp)).text, "ran");
  assertEquals(ownProtoPath({ locator: { text: "__proto__" } }), undefined);
});

Deno.test("only tools/call arguments are rewritten", () => {
  const other = JSON.parse('{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"__proto__":1}}');
  markOwnProtoKeys(other);
  assert(Object.hasOwn(other.params, "__proto__"));
  const call = JSON.parse(
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[{"__proto__":2}]}}}',
  );
  markOwnProtoKeys(call);
  assertEquals(call.params.arguments.a[0], { [OWN_PROTO_MARK]: 2 });
});

Deno.test("a command Chrome cannot run for want of an active page is not an internal error", () => {
  const error = asToolError(new Error("Page.getNavigationHistory: Not attached to an active page"));
  assertEquals(error.code, "page_not_active");
  assertEquals(error.retry, "after_recovery");
  assert(error.recovery?.includes("close_page"));
});
