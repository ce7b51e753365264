/**
 * The advertised input schema is a guide for the model; the strict zod schema behind each tool is the
 * authority, and its errors name the exact limit that was crossed. Every tools/list byte is paid on every
 * conversation, so the advertised form keeps what changes how an agent calls a tool (names, types, enums,
 * meaningful ranges, required fields, descriptions) and drops what only guards resources:
 *
 * - string length caps (`maxLength`: they keep 1 MB inputs out, no real argument comes near them);
 * - numeric safety bounds: a maximum of at least SAFETY_BOUND, a minimum of at most -SAFETY_BOUND;
 * - `type` beside `enum` or `const` (the values already say it);
 * - `additionalProperties` below the top level (the top level keeps `false`: unknown arguments fail);
 * - `propertyNames` (JSON object keys are strings whatever it says).
 *
 * docs/tools.md shows the full schema, limits included.
 */
const SAFETY_BOUND = 100_000;

type Json = Record<string, unknown>;

const advertisedForms = new WeakMap<object, Json>();

/**
 * Registers the compact form a schema advertises in place of its generated one, for values an agent
 * copies rather than composes (a resolved range echoed back). Returns the schema for chaining.
 */
export function advertiseAs<T extends object>(schema: T, form: Json): T {
  advertisedForms.set(schema, form);
  return schema;
}

/** zod's toJSONSchema override: swaps in registered compact forms. */
export function advertisedFormOverride(ctx: { zodSchema: object; jsonSchema: Json }): void {
  const form = advertisedForms.get(ctx.zodSchema);
  if (!form) return;
  for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
  Object.assign(ctx.jsonSchema, structuredClone(form));
}

export function compactInputSchema(schema: Json): Json {
  return compactNode(schema, true) as Json;
}

function compactNode(node: unknown, top: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => compactNode(n, false));
  if (!node || typeof node !== "object") return node;
  const src = node as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(src)) {
    if (key === "maxLength") continue;
    if (key === "maximum" && typeof value === "number" && value >= SAFETY_BOUND) continue;
    if (key === "minimum" && typeof value === "number" && value <= -SAFETY_BOUND) continue;
    if (key === "type" && ("enum" in src || "const" in src)) continue;
    if (key === "additionalProperties" && !top) continue;
    if (key === "propertyNames") continue; // JSON object keys are strings already
    if (key === "properties" && value && typeof value === "object") {
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, prop]) => [name, compactNode(prop, false)]),
      );
      continue;
    }
    out[key] = typeof value === "object" ? compactNode(value, false) : value;
  }
  return out;
}

/**
 * The advertised outputSchema: the top level's field names and types, nothing required. The client
 * rejects a whole result that breaks it, so it stays this loose: nested objects and arrays are named by
 * type alone and every object is open. The zod schema behind it (required fields, nested key fields) is
 * checked on the server, and docs/tools.md shows it.
 */
export function compactOutputSchema(schema: Json): Json {
  const props = (schema.properties ?? {}) as Record<string, Json>;
  return {
    type: "object",
    properties: Object.fromEntries(Object.entries(props).map(([name, p]) => [name, typeOnly(p)])),
  };
}

function typeOnly(p: Json): Json {
  if (Array.isArray(p.enum)) return { enum: p.enum };
  if (Array.isArray(p.anyOf)) {
    const types = (p.anyOf as Json[]).map((a) => a.type);
    return types.every((t) => typeof t === "string") ? { type: types } : {};
  }
  return typeof p.type === "string" || Array.isArray(p.type) ? { type: p.type } : {};
}
