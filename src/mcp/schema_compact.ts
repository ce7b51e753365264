/**
 * The advertised input schema is a guide for the model; the strict zod schema behind each tool is the
 * authority, and its errors name the exact limit that was crossed. Every tools/list byte is paid on every
 * conversation, so the advertised form keeps what changes how an agent calls a tool (names, types, enums,
 * meaningful ranges, required fields, descriptions) and drops what only guards resources or says nothing
 * an agent would get wrong:
 *
 * - string length caps (`maxLength`: they keep 1 MB inputs out, no real argument comes near them) and
 *   `minLength` 1 (no argument is meant empty);
 * - `pattern` and `format` (header-injection and syntax guards; the name or description says the form);
 * - numeric safety bounds: a maximum of at least SAFETY_BOUND, a minimum of at most -SAFETY_BOUND, and
 *   a minimum of 0 or 1 with no maximum (counts, durations, ids);
 * - array guards: `maxItems` of at least GUARD_ITEMS or not below its enum's size, `minItems` 1, `items: {}`;
 * - `type` beside `enum` or `const` (the values already say it);
 * - `additionalProperties` below the top level (the top level keeps `false`: unknown arguments fail);
 * - `propertyNames` (JSON object keys are strings whatever it says), empty nested `properties`;
 * - an `anyOf` of bare types becomes one `type` list (nested `anyOf` flattened, `null` folded into an enum).
 *
 * docs/tools.md shows the full schema, limits included.
 */
const SAFETY_BOUND = 100_000;
const GUARD_ITEMS = 32;

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
    if (dropped(src, key, value, top)) continue;
    if (key === "properties" && value && typeof value === "object") {
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, prop]) => [name, compactNode(prop, false)]),
      );
      continue;
    }
    out[key] = typeof value === "object" ? compactNode(value, false) : value;
  }
  return mergeAnyOf(out);
}

function dropped(src: Json, key: string, value: unknown, top: boolean): boolean {
  const n = typeof value === "number" ? value : undefined;
  switch (key) {
    case "maxLength":
    case "pattern":
    case "format":
    case "propertyNames": // JSON object keys are strings already
      return true;
    case "minLength":
    case "minItems":
      return n !== undefined && n <= 1;
    case "maxItems": {
      const values = (src.items as Json | undefined)?.enum;
      return n !== undefined && (n >= GUARD_ITEMS || (Array.isArray(values) && values.length <= n));
    }
    case "items":
      return isEmptyObject(value);
    case "maximum":
      return n !== undefined && n >= SAFETY_BOUND;
    case "minimum": // a lone 0 or 1 (counts, durations, ids) says nothing an agent would get wrong
      return n !== undefined && (n <= -SAFETY_BOUND || ((n === 0 || n === 1) && !keptMaximum(src)));
    case "type":
      return "enum" in src || "const" in src;
    case "additionalProperties":
      return !top;
    case "properties":
      return !top && isEmptyObject(value);
    default:
      return false;
  }
}

function keptMaximum(src: Json): boolean {
  return typeof src.maximum === "number" && src.maximum < SAFETY_BOUND;
}

function isEmptyObject(value: unknown): boolean {
  return !!value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0;
}

/** `anyOf: [{type: a}, {anyOf: [{type: b}, ...]}]` → `type: [a, b, ...]`; `[{enum}, {type: "null"}]` → one enum. */
function mergeAnyOf(out: Json): Json {
  if (!Array.isArray(out.anyOf)) return out;
  const members = (out.anyOf as Json[]).flatMap((m) =>
    Object.keys(m).length === 1 && Array.isArray(m.anyOf) ? (m.anyOf as Json[]) : [m]
  );
  const { anyOf: _anyOf, ...rest } = out;
  const only = (m: Json, key: string) => Object.keys(m).length === 1 && key in m;
  if (members.every((m) => only(m, "type"))) {
    const types = [...new Set(members.flatMap((m) => m.type as string | string[]))];
    return { ...rest, type: types.length === 1 ? types[0] : types };
  }
  const isNull = (m: Json) => only(m, "type") && m.type === "null";
  if (members.every((m) => only(m, "enum") || isNull(m))) {
    return { ...rest, enum: members.flatMap((m) => (isNull(m) ? [null] : (m.enum as unknown[]))) };
  }
  return { ...rest, anyOf: members };
}

/**
 * The advertised outputSchema: `{type: "object"}`. It declares that every non-error result carries
 * structuredContent, and the client validates that against it, so it stays this loose; the fields are
 * told by the result itself (and its text). The zod schema behind it (field names, types, required fields)
 * is checked on the server, and docs/tools.md shows it. Naming the top-level fields cost 79 characters
 * per tool in every tools/list, more than any argument's description.
 */
export function compactOutputSchema(_schema: Json): Json {
  return { type: "object" };
}
