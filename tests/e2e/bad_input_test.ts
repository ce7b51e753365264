import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, refOf, structured, type ToolResult, withServer } from "./harness.ts";
import {
  closedPagesAndConflicts,
  type ListedTool,
  malformedUris,
  protoCases,
  recordOutgoing,
  runCases,
  unknownPageCases,
  unknownRangePageCases,
} from "./bad_input_boundaries.ts";

type Schema = {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: Schema[];
  minimum?: number;
  maximum?: number;
  properties?: Record<string, Schema>;
  required?: string[];
};

const MEGABYTE = "x".repeat(1024 * 1024);

/** A value of none of the JSON types a type list allows (compact schemas fold `anyOf` into one). */
function outsideTypes(types: string[]): unknown {
  if (!types.includes("number") && !types.includes("integer")) return 12345;
  if (!types.includes("string")) return "text";
  if (!types.includes("boolean")) return true;
  return Symbol.for("unreachable");
}

function wrongTypeFor(s: Schema): unknown {
  if (s.enum) return "definitely-not-an-enum-value";
  if (s.anyOf) return true;
  if (Array.isArray(s.type)) return outsideTypes(s.type);
  switch (s.type) {
    case "string":
      return 12345;
    case "integer":
    case "number":
      return "not a number";
    case "boolean":
      return "yes";
    case "array":
      return "not an array";
    case "object":
      return "not an object";
    default:
      return Symbol.for("unreachable");
  }
}

interface Case {
  tool: string;
  label: string;
  args: Record<string, unknown>;
  expectCode?: string;
}

function casesFor(tool: { name: string; inputSchema: Schema }, required: Record<string, unknown>): Case[] {
  const props = tool.inputSchema.properties ?? {};
  const cases: Case[] = [
    {
      tool: tool.name,
      label: "unknown field",
      args: { ...required, bogus_field: 1 },
      expectCode: "invalid_arguments",
    },
    { tool: tool.name, label: "arguments not an object", args: [] as unknown as Record<string, unknown> },
  ];
  if ((tool.inputSchema.required ?? []).length > 0) {
    cases.push({ tool: tool.name, label: "missing required", args: {}, expectCode: "invalid_arguments" });
  }
  for (const [name, schema] of Object.entries(props)) {
    cases.push({
      tool: tool.name,
      label: `wrong type for ${name}`,
      args: { ...required, [name]: wrongTypeFor(schema) },
      expectCode: "invalid_arguments",
    });
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.includes("string") || schema.anyOf) {
      cases.push({
        tool: tool.name,
        label: `1 MB string for ${name}`,
        args: { ...required, [name]: MEGABYTE },
        expectCode: "invalid_arguments",
      });
    }
    if (schema.type === "integer" || schema.type === "number") {
      if (schema.maximum !== undefined) {
        cases.push({
          tool: tool.name,
          label: `${name} above maximum`,
          args: { ...required, [name]: schema.maximum + 1 },
          expectCode: "invalid_arguments",
        });
      }
      if (schema.minimum !== undefined) {
        cases.push({
          tool: tool.name,
          label: `${name} below minimum`,
          args: { ...required, [name]: schema.minimum - 1 },
          expectCode: "invalid_arguments",
        });
      }
    }
  }
  return cases;
}

/** Minimal valid values for required arguments, so one bad field is the only fault. */
const REQUIRED_VALUES: Record<string, unknown> = {
  endpoint: "http://127.0.0.1:9",
  page_id: "p1",
  url: "about:blank",
  value: "v",
  keys: "Shift",
  expression: "1",
};

function assertStructuredError(c: Case, result: ToolResult): void {
  const where = `${c.tool} / ${c.label}`;
  assertEquals(result.isError, true, `${where} must fail`);
  const error = result.structuredContent?.error as Record<string, unknown> | undefined;
  assert(error, `${where}: structured error present`);
  assert(typeof error.code === "string" && error.code.length > 0, `${where}: code`);
  assert(typeof error.message === "string" && error.message.length > 0, `${where}: message`);
  assert(["safe", "never", "after_recovery"].includes(String(error.retry)), `${where}: retry`);
  if (c.expectCode) assertEquals(error.code, c.expectCode, where);
  const text = result.content.find((p) => p.type === "text")?.text ?? "";
  assert(text.length < 4_000, `${where}: error text stays bounded (${text.length})`);
}

Deno.test({
  name: "every tool answers malformed arguments with a structured error; server and browser survive",
  ...e2e,
  fn: () =>
    withServer(async (server, site) => {
      await server.call("navigate_page", { url: `${site.origin}/index.html` });
      const tools = (await server.client.listTools()).tools as unknown as Array<
        { name: string; inputSchema: Schema }
      >;
      let checked = 0;
      for (const tool of tools) {
        const required: Record<string, unknown> = {};
        for (const name of tool.inputSchema.required ?? []) required[name] = REQUIRED_VALUES[name];
        for (const c of casesFor(tool, required)) {
          const result = await server.client.callTool({ name: c.tool, arguments: c.args }).catch((err) => ({
            content: [{ type: "text", text: String(err) }],
            isError: true,
            structuredContent: { error: { code: "protocol_error", message: String(err), retry: "never" } },
          })) as ToolResult;
          assertStructuredError(c, result);
          checked++;
        }
      }
      assert(checked > 150, `checked ${checked} malformed calls`);

      // Refs from another session: well-formed, but never ours.
      const foreign = "s1p1g1n42";
      for (
        const [tool, args] of [
          ["click", { ref: foreign }],
          ["fill", { ref: foreign, value: "x" }],
          ["press_keys", { ref: foreign, keys: "a" }],
          ["take_screenshot", { ref: foreign }],
        ] as const
      ) {
        const result = await server.call(tool, args);
        assertStructuredError({ tool, label: "foreign ref", args, expectCode: "stale_ref" }, result);
      }
      for (const bad of ["not-a-ref", "s1p1", "", "s99999999999p1g1n1"]) {
        assertStructuredError(
          { tool: "click", label: `bad ref ${bad}`, args: {} },
          await server.call("click", { ref: bad }),
        );
      }
      assertStructuredError(
        { tool: "click", label: "two target forms", args: {}, expectCode: "invalid_target" },
        await server.call("click", { selector: "#reveal", x: 1, y: 1 }),
      );
      assertStructuredError(
        { tool: "press_keys", label: "unknown key", args: {}, expectCode: "invalid_argument" },
        await server.call("press_keys", { keys: "Hyper+Q" }),
      );

      // Exact boundaries: page ids that never existed, pages that closed, conflicts, broken URIs.
      const listed = tools as unknown as ListedTool[];
      const pageCases = [...unknownPageCases(listed), ...unknownRangePageCases(listed)];
      assert(
        pageCases.length >= 30,
        `unknown-page cases for every page_id and range tool (${pageCases.length})`,
      );
      await runCases(server, pageCases, assertStructuredError);
      await closedPagesAndConflicts(server, assertStructuredError, site.origin);
      assertEquals(await malformedUris(server), 5);

      // An own __proto__ key is an unknown argument like any other; the client must send it as built.
      const outgoing = recordOutgoing(server);
      const requiredOf = (t: ListedTool) =>
        Object.fromEntries((t.inputSchema.required ?? []).map((name) => [name, REQUIRED_VALUES[name]]));
      for (const c of protoCases(listed, requiredOf)) {
        const result = await server.call(c.tool, c.args);
        const sent = outgoing.findLast((m) => m.includes('"tools/call"')) ?? "";
        assert(sent.includes('"__proto__":1'), `${c.tool}: the client sent the __proto__ key`);
        assertStructuredError(c, result);
        assertMatch(
          String((result.structuredContent?.error as { message?: string }).message),
          /__proto__/,
          `${c.tool}: names the key`,
        );
      }

      // Nothing was lost: the same session still runs and acts.
      const status = structured(await server.call("browser_status"));
      assertEquals(status.running, true);
      const snap = structured(await server.call("snapshot_page"));
      const clicked = structured(
        await server.call("click", { ref: refOf(snap, "button", /^(Show|Hide) details$/) }),
      );
      assertEquals(clicked.status, "ok");
    }, { browser: {} }),
});
