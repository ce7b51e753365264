import type { Protocol } from "devtools-protocol";

/** Pure pieces of the scenario's event records (unit-tested without a browser). */

/** Stack frames written out per exception: enough to place it, never the whole trace of a deep recursion. */
const STACK_FRAMES = 32;

function previewText(p: Protocol.Runtime.ObjectPreview): string {
  const props = p.properties.map((q) =>
    p.subtype === "array"
      ? q.value ?? q.type
      : `${q.name}: ${q.type === "string" ? JSON.stringify(q.value ?? "") : q.value ?? q.type}`
  );
  const more = p.overflow ? ", …" : "";
  return p.subtype === "array" ? `[${props.join(", ")}${more}]` : `{${props.join(", ")}${more}}`;
}

/** One console argument as DevTools would print it in a line: strings bare, objects by their preview. */
export function argText(arg: Protocol.Runtime.RemoteObject): string {
  if (arg.type === "string") return String(arg.value ?? "");
  if (arg.type === "undefined") return "undefined";
  if (arg.unserializableValue !== undefined) return arg.unserializableValue;
  if (arg.subtype === "null") return "null";
  if (arg.type === "number" || arg.type === "boolean") return String(arg.value);
  if (arg.preview && (arg.subtype === undefined || arg.subtype === "array")) return previewText(arg.preview);
  return arg.description ?? arg.type;
}

export function consoleText(args: readonly Protocol.Runtime.RemoteObject[]): string {
  return args.map(argText).join(" ");
}

/** The exception's first line, and its stack as `at fn (url:line:col)` lines with durable URLs. */
export function exceptionParts(
  d: Protocol.Runtime.ExceptionDetails,
  url: (raw: string) => string,
): { message: string; stack: string | null } {
  const message = d.exception?.description?.split("\n")[0] ?? d.exception?.value?.toString() ?? d.text;
  const frames = d.stackTrace?.callFrames ?? [];
  if (frames.length === 0) return { message, stack: null };
  const lines = frames.slice(0, STACK_FRAMES).map((f) =>
    `at ${f.functionName || "(anonymous)"} (${f.url ? url(f.url) : "<anonymous>"}:${f.lineNumber + 1}:${
      f.columnNumber + 1
    })`
  );
  if (frames.length > STACK_FRAMES) lines.push(`… ${frames.length - STACK_FRAMES} more frames`);
  return { message, stack: lines.join("\n") };
}

/** Header names only (values are never kept), lower-cased, unique, sorted. */
export function headerNames(headers: Protocol.Network.Headers | undefined): string[] {
  return [...new Set(Object.keys(headers ?? {}).map((h) => h.toLowerCase()))].sort();
}

/** A WebSocket frame's payload: text frames keep their (bounded, redacted) text, others only their size. */
export function wsPayload(
  frame: Protocol.Network.WebSocketFrame,
  boundText: (s: string) => { text: string; truncated: boolean },
): {
  payload_type: "text" | "binary";
  payload_bytes: number;
  payload_text: string | null;
  truncated: boolean;
} {
  if (frame.opcode === 1) {
    const bounded = boundText(frame.payloadData);
    return {
      payload_type: "text",
      payload_bytes: new TextEncoder().encode(frame.payloadData).byteLength,
      payload_text: bounded.text,
      truncated: bounded.truncated,
    };
  }
  // Binary payloads arrive base64: their size is what is kept.
  const b64 = frame.payloadData.replace(/=+$/, "");
  return {
    payload_type: "binary",
    payload_bytes: Math.floor(b64.length * 3 / 4),
    payload_text: null,
    truncated: false,
  };
}
