/**
 * An own `__proto__` key (JSON `{"__proto__": 1}` parses to one) is an unknown argument like any
 * other. Zod's strict objects reject it, but it never reaches them: the SDK's message schemas
 * rebuild every object by assignment, and assigning `__proto__` sets a prototype (or nothing)
 * instead of a key, so the argument vanished and 31 tools ran as if it had not been sent.
 *
 * The transport therefore renames such keys in tools/call arguments, before the SDK parses the
 * message, to a plain key that survives; `ownProtoPath` finds it (or a real own `__proto__`, for
 * arguments that arrive some other way) and the tool refuses the call with invalid_arguments.
 */
import { type JSONRPCMessage, parseJSONRPCMessage } from "@modelcontextprotocol/server";

/** The stand-in an own `__proto__` key travels under; a strict schema rejects it as unknown, too. */
export const OWN_PROTO_MARK = "own:__proto__";
const PROTO = "__proto__";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** Visits every object and array under `root` without recursion (a deep message cannot overflow). */
function* objectsUnder(root: unknown): Generator<[Record<string, unknown>, string[]]> {
  const stack: Array<[unknown, string[]]> = [[root, []]];
  while (stack.length > 0) {
    const [value, path] = stack.pop() as [unknown, string[]];
    if (!isRecord(value)) continue;
    yield [value, path];
    for (const key of Object.keys(value)) stack.push([value[key], [...path, key]]);
  }
}

/** Renames own `__proto__` keys in a tools/call request's arguments; other messages are untouched. */
export function markOwnProtoKeys(message: unknown): unknown {
  if (!isRecord(message) || message.method !== "tools/call" || !isRecord(message.params)) return message;
  const args = message.params.arguments;
  for (const [obj] of objectsUnder(args)) {
    if (!Object.hasOwn(obj, PROTO)) continue;
    const value = obj[PROTO];
    delete obj[PROTO];
    obj[OWN_PROTO_MARK] = value;
  }
  return message;
}

/** What the stdio transport parses each inbound line with: the SDK's parse, own `__proto__` kept. */
export function deserializeInbound(line: string): JSONRPCMessage {
  return parseJSONRPCMessage(markOwnProtoKeys(JSON.parse(line)));
}

/** The dotted path of the first own `__proto__` key (marked or real) in tool arguments, if any. */
export function ownProtoPath(args: unknown): string | undefined {
  for (const [obj, path] of objectsUnder(args)) {
    if (Object.hasOwn(obj, PROTO) || Object.hasOwn(obj, OWN_PROTO_MARK)) {
      return path.length > 0 ? path.join(".") : "(arguments)";
    }
  }
  return undefined;
}
