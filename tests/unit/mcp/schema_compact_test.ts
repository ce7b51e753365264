import { assertEquals } from "../../assert.ts";
import { z } from "zod";
import { buildCatalogue, describeTool } from "../../../src/mcp/registry.ts";
import {
  advertiseAs,
  advertisedFormOverride,
  compactInputSchema,
  compactOutputSchema,
} from "../../../src/mcp/schema_compact.ts";

Deno.test("compaction drops resource guards and keeps meaningful bounds", () => {
  const compact = compactInputSchema({
    type: "object",
    properties: {
      name: { type: "string", maxLength: 1000, minLength: 1, description: "kept" },
      code: { type: "string", minLength: 2, pattern: "^[a-z]+$", format: "starts_with" },
      x: { type: "number", minimum: -100_000, maximum: 100_000 },
      count: { type: "integer", minimum: 1, maximum: 3 },
      at: { type: "number", minimum: 0, maximum: 1e9 },
      floor: { type: "integer", minimum: 100 },
      mode: { type: "string", enum: ["a", "b"] },
      nested: { type: "object", properties: { y: { type: "number" } }, additionalProperties: false },
      map: { type: "object", propertyNames: { type: "string" } },
      empty: { type: "object", properties: {} },
      ids: { type: "array", minItems: 1, maxItems: 1000, items: { type: "integer" } },
      pair: { type: "array", minItems: 2, maxItems: 4, items: { type: "string" } },
      mods: { type: "array", maxItems: 2, items: { enum: ["a", "b"] } },
      any: { type: "array", items: {} },
    },
    required: ["name"],
    additionalProperties: false,
  });
  assertEquals(compact, {
    type: "object",
    properties: {
      name: { type: "string", description: "kept" },
      code: { type: "string", minLength: 2 },
      x: { type: "number" },
      count: { type: "integer", minimum: 1, maximum: 3 },
      at: { type: "number" },
      floor: { type: "integer", minimum: 100 },
      mode: { enum: ["a", "b"] },
      nested: { type: "object", properties: { y: { type: "number" } } },
      map: { type: "object" },
      empty: { type: "object" },
      ids: { type: "array", items: { type: "integer" } },
      pair: { type: "array", minItems: 2, maxItems: 4, items: { type: "string" } },
      mods: { type: "array", items: { enum: ["a", "b"] } },
      any: { type: "array" },
    },
    required: ["name"],
    additionalProperties: false,
  });
});

Deno.test("an anyOf of bare types becomes a type list; null folds into an enum", () => {
  const compact = compactInputSchema({
    type: "object",
    properties: {
      tz: { description: "d", anyOf: [{ type: "string", minLength: 1 }, { type: "null" }] },
      nested: {
        anyOf: [{ anyOf: [{ type: "string" }, { type: "object", properties: {} }] }, { type: "null" }],
      },
      scheme: { anyOf: [{ enum: ["light", "dark"] }, { type: "null" }] },
      mixed: { anyOf: [{ enum: ["a"] }, { type: "boolean" }] },
    },
  });
  assertEquals(compact.properties, {
    tz: { description: "d", type: ["string", "null"] },
    nested: { type: ["string", "object", "null"] },
    scheme: { enum: ["light", "dark", null] },
    mixed: { anyOf: [{ enum: ["a"] }, { type: "boolean" }] },
  });
});

Deno.test("a property named like a keyword is still an argument", () => {
  const compact = compactInputSchema({
    type: "object",
    properties: { maxLength: { type: "integer" }, type: { enum: ["a"] } },
  });
  assertEquals(Object.keys(compact.properties as object), ["maxLength", "type"]);
});

Deno.test("an advertised form replaces the generated schema only in the compact rendering", () => {
  const box = advertiseAs(z.strictObject({ a: z.number(), b: z.number() }), {
    type: "object",
    description: "{a, b}",
  });
  const input = z.strictObject({ box: box.optional() });
  const full = z.toJSONSchema(input) as { properties: Record<string, Record<string, unknown>> };
  assertEquals(Object.keys(full.properties.box.properties as object), ["a", "b"]);
  const compact = z.toJSONSchema(input, { override: advertisedFormOverride }) as typeof full;
  assertEquals(compact.properties.box, { type: "object", description: "{a, b}" });
});

Deno.test("every tool advertises the same arguments and required set in both renderings", () => {
  for (const tool of buildCatalogue({ "temporal-video": { available: true } }).tools) {
    const compact = describeTool(tool).inputSchema;
    const full = describeTool(tool, "full").inputSchema;
    assertEquals(
      Object.keys(compact.properties as object),
      Object.keys(full.properties as object),
      tool.name,
    );
    assertEquals(compact.required, full.required, tool.name);
    assertEquals(compact.additionalProperties, false, tool.name);
    assertEquals(JSON.stringify(compact).length <= JSON.stringify(full).length, true, tool.name);
  }
});

Deno.test("an output schema is advertised as an object, its fields left to the result and the docs", () => {
  const schema = z.looseObject({ id: z.string(), page: z.looseObject({ url: z.string() }) });
  const json = z.toJSONSchema(schema, { io: "output" }) as Record<string, unknown>;
  assertEquals(compactOutputSchema(json), { type: "object" });
});

Deno.test("every output schema is advertised as an object; the full one is open and names its fields", () => {
  for (const tool of buildCatalogue({ "temporal-video": { available: true } }).tools) {
    assertEquals(describeTool(tool).outputSchema, { type: "object" }, tool.name);
    // A field another version adds must not break a client that validates against the schema.
    const full = describeTool(tool, "full").outputSchema;
    assertEquals(Object.keys(full.properties as object), Object.keys(tool.output.shape), tool.name);
    assertEquals(full.additionalProperties, {}, `${tool.name} is open`);
  }
});
