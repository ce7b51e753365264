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
      name: { type: "string", maxLength: 1000, description: "kept" },
      x: { type: "number", minimum: -100_000, maximum: 100_000 },
      count: { type: "integer", minimum: 1, maximum: 3 },
      mode: { type: "string", enum: ["a", "b"] },
      nested: { type: "object", properties: { y: { type: "number" } }, additionalProperties: false },
      map: { type: "object", propertyNames: { type: "string" } },
    },
    required: ["name"],
    additionalProperties: false,
  });
  assertEquals(compact, {
    type: "object",
    properties: {
      name: { type: "string", description: "kept" },
      x: { type: "number" },
      count: { type: "integer", minimum: 1, maximum: 3 },
      mode: { enum: ["a", "b"] },
      nested: { type: "object", properties: { y: { type: "number" } } },
      map: { type: "object" },
    },
    required: ["name"],
    additionalProperties: false,
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

Deno.test("an output schema is advertised as its top-level names and types, nothing required", () => {
  const schema = z.looseObject({
    id: z.string(),
    count: z.number().optional(),
    maybe: z.string().nullable(),
    page: z.looseObject({ url: z.string() }),
    rows: z.array(z.looseObject({ ref: z.string() })),
    value: z.unknown(),
    kind: z.enum(["a", "b"]),
  });
  const json = z.toJSONSchema(schema, { io: "output" }) as Record<string, unknown>;
  assertEquals(compactOutputSchema(json), {
    type: "object",
    properties: {
      id: { type: "string" },
      count: { type: "number" },
      maybe: { type: ["string", "null"] },
      page: { type: "object" },
      rows: { type: "array" },
      value: {},
      kind: { enum: ["a", "b"] },
    },
  });
});

Deno.test("every output schema is open and advertises exactly its own top-level fields", () => {
  for (const tool of buildCatalogue({ "temporal-video": { available: true } }).tools) {
    const advertised = describeTool(tool).outputSchema;
    assertEquals(
      Object.keys(advertised.properties as object),
      Object.keys(tool.output.shape),
      tool.name,
    );
    // A field another version adds must not break a client that validates against the schema.
    const full = describeTool(tool, "full").outputSchema;
    assertEquals(full.additionalProperties, {}, `${tool.name} is open`);
  }
});
