/**
 * What get_network_request says about a response body: a shape for JSON (keys and counts, never
 * values), a sanitized head for text, a byte count for binary, or the body itself up to a cap when
 * asked. Pure, so it is tested without a browser; the body only ever lives in this call's memory.
 */

import { sanitizeText } from "../browser/privacy.ts";

/** `body: "full"` returns at most this many characters of text (or base64 for binary). */
export const BODY_FULL_CAP_CHARS = 64 * 1024;
/** Text head shown in a summary, before sanitizing. */
const HEAD_CHARS = 200;
/** JSON past this is not parsed for its shape (Chrome buffers at most 2 MiB per resource anyway). */
const PARSE_CAP_CHARS = 4 * 1024 * 1024;
const KEYS_SHOWN = 12;

export type BodyKind = "json" | "text" | "binary" | "empty";

export interface BodySummary {
  mode: "summary";
  kind: BodyKind;
  mime_type: string;
  /** Decoded body size in bytes. */
  bytes: number;
  /** Characters of text (text and JSON only). */
  chars?: number;
  /** One line: the JSON shape, the text's length and head, or the binary's mime and size. */
  summary: string;
}

export interface BodyFull {
  mode: "full";
  kind: BodyKind;
  mime_type: string;
  bytes: number;
  encoding: "text" | "base64";
  content: string;
  truncated: boolean;
  /** The cap applied, so a truncated body says what it was cut to. */
  cap_chars: number;
}

/** A response body as Network.getResponseBody returns it. */
export interface RawBody {
  body: string;
  base64Encoded: boolean;
}

const TEXTUAL =
  /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|javascript|ecmascript|x-www-form-urlencoded|graphql)\b)|\+(?:json|xml)\b/i;
const JSONISH = /\bjson\b|\+json\b/i;

function isTextual(mime: string): boolean {
  return TEXTUAL.test(mime) || mime === "image/svg+xml";
}

interface Decoded {
  kind: BodyKind;
  bytes: number;
  text?: string;
  base64?: string;
}

function decode(raw: RawBody, mime: string): Decoded {
  if (!raw.base64Encoded) {
    const bytes = new TextEncoder().encode(raw.body).length;
    if (bytes === 0) return { kind: "empty", bytes };
    return { kind: JSONISH.test(mime) ? "json" : "text", bytes, text: raw.body };
  }
  const data = Uint8Array.fromBase64(raw.body);
  if (data.length === 0) return { kind: "empty", bytes: 0 };
  if (!isTextual(mime)) return { kind: "binary", bytes: data.length, base64: raw.body };
  const text = new TextDecoder().decode(data);
  return { kind: JSONISH.test(mime) ? "json" : "text", bytes: data.length, text };
}

/** `array, 3 items` / `object, 2 keys` / `string`: a value's kind with its size, no content. */
function kindOf(v: unknown): string {
  if (Array.isArray(v)) return `array, ${v.length} item${v.length === 1 ? "" : "s"}`;
  if (v === null) return "null";
  if (typeof v === "object") {
    const n = Object.keys(v).length;
    return `object, ${n} key${n === 1 ? "" : "s"}`;
  }
  return typeof v;
}

function keyList(obj: Record<string, unknown>, nested: boolean): string {
  const keys = Object.keys(obj);
  const shown = keys.slice(0, KEYS_SHOWN).map((k) => {
    const name = JSON.stringify(k).slice(1, -1).slice(0, 40);
    return nested ? `${name} (${kindOf(obj[k])})` : name;
  });
  const more = keys.length > KEYS_SHOWN ? `, … ${keys.length - KEYS_SHOWN} more` : "";
  return `${shown.join(", ")}${more} (${keys.length} key${keys.length === 1 ? "" : "s"})`;
}

/** The JSON's shape nested one level: top-level keys with each one's kind, or an array's first item. */
export function jsonShape(value: unknown): string {
  if (Array.isArray(value)) {
    const head = kindOf(value);
    const first = value[0];
    if (value.length === 0) return head;
    if (first !== null && typeof first === "object" && !Array.isArray(first)) {
      return `${head}; first: object with keys ${keyList(first as Record<string, unknown>, false)}`;
    }
    return `${head}; first: ${kindOf(first)}`;
  }
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    if (Object.keys(obj).length === 0) return "object, 0 keys";
    return `object with keys ${keyList(obj, true)}`;
  }
  return kindOf(value);
}

function textSummary(text: string): string {
  const head = sanitizeText(text.slice(0, HEAD_CHARS).replace(/\s+/g, " "), HEAD_CHARS * 2).text;
  const more = text.length > HEAD_CHARS ? "…" : "";
  return `text, ${text.length} chars: ${JSON.stringify(head)}${more}`;
}

export function summarizeBody(raw: RawBody, mimeType: string): BodySummary {
  const mime = mimeType || "application/octet-stream";
  const d = decode(raw, mime);
  const base = { mode: "summary" as const, kind: d.kind, mime_type: mime, bytes: d.bytes };
  if (d.kind === "empty") return { ...base, summary: "empty body" };
  if (d.text === undefined) return { ...base, summary: `${mime}, ${d.bytes} bytes` };
  const chars = d.text.length;
  if (d.kind === "json" && chars <= PARSE_CAP_CHARS) {
    try {
      return { ...base, chars, summary: `JSON ${jsonShape(JSON.parse(d.text))}` };
    } catch {
      // A JSON mime over text that does not parse: say so, and summarize it as text.
      return { ...base, kind: "text", chars, summary: `not valid JSON; ${textSummary(d.text)}` };
    }
  }
  return { ...base, chars, summary: textSummary(d.text) };
}

/** The body itself up to the cap; binary as base64 (the cap counts base64 characters). */
export function fullBody(raw: RawBody, mimeType: string, cap = BODY_FULL_CAP_CHARS): BodyFull {
  const mime = mimeType || "application/octet-stream";
  const d = decode(raw, mime);
  const encoding = d.base64 !== undefined ? "base64" : "text";
  const all = d.base64 ?? d.text ?? "";
  const cut = all.length > cap;
  // Never split a surrogate pair at the cap.
  let end = cut ? cap : all.length;
  if (cut && encoding === "text" && /[\uD800-\uDBFF]/.test(all[end - 1] ?? "")) end--;
  return {
    mode: "full",
    kind: d.kind,
    mime_type: mime,
    bytes: d.bytes,
    encoding,
    content: all.slice(0, end),
    truncated: cut,
    cap_chars: cap,
  };
}
