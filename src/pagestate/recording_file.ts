/**
 * Reads and validates an rrweb recording file for load_recording: a local JSON file of at most 64 MiB
 * holding rrweb events (a bare array, or `{ "events": [...] }` as rrweb's tools export). Every way a file
 * can be wrong is one structured error naming what and where (a JSON path such as `[12].timestamp`, or a
 * line and column for broken JSON), so nothing downstream ever sees a half-valid recording. Validation goes
 * as deep as the replay needs: event envelopes, Meta sizes, full-snapshot node trees and mutation lists.
 */
import { basename, resolve } from "node:path";
import { EventType, type eventWithTime, IncrementalSource, NodeType } from "@rrweb/types";
import { ToolError } from "../errors.ts";
import { jsonSyntaxProblem } from "./json_syntax.ts";

export const RECORDING_MAX_BYTES = 64 * 1024 * 1024;
/** The longest span a recording may cover: the page-state tools' largest instant (1e9 ms, ~11.6 days). */
export const RECORDING_MAX_SPAN_MS = 1e9;
/** Largest timestamp a Date can hold (ms since the epoch). */
const MAX_EPOCH_MS = 8.64e15;

const EVENT_TYPES = new Set(Object.values(EventType).filter((v): v is number => typeof v === "number"));
const SOURCES = new Set(Object.values(IncrementalSource).filter((v): v is number => typeof v === "number"));
const NODE_TYPES = new Set(Object.values(NodeType).filter((v): v is number => typeof v === "number"));

export type RecordingErrorCode =
  | "recording_not_found"
  | "recording_too_large"
  | "recording_truncated"
  | "recording_malformed"
  | "recording_out_of_order"
  | "recording_incomplete";

export interface RecordingMeta {
  href: string;
  width: number;
  height: number;
}

export interface RecordingFile {
  /** The resolved absolute path that was read. */
  path: string;
  /** The file name alone (what the session's profile records). */
  name: string;
  bytes: number;
  /** True when the file was `{ "events": [...] }` rather than a bare array. */
  wrapped: boolean;
  events: eventWithTime[];
  first_timestamp: number;
  last_timestamp: number;
  duration_ms: number;
  /** The first Meta event: the page and viewport the recording starts on. */
  meta: RecordingMeta;
  /** Full snapshots in the file (rebuild points). */
  checkpoints: number;
}

function fail(
  code: RecordingErrorCode,
  message: string,
  recovery: string,
  details?: Record<string, unknown>,
) {
  return new ToolError({
    code,
    message,
    retry: "never",
    recovery,
    affected: { argument: "path" },
    ...(details ? { details } : {}),
  });
}

const RECOVERY_SHAPE =
  'Load a file rrweb produced: a JSON array of its events (or { "events": [...] }), each { type, timestamp, data } as record() emitted it; re-export it rather than editing it by hand.';

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What a wrong value is, for messages: `a string ("abc")`, `null`, `an array`. */
export function describeValue(v: unknown): string {
  if (v === null) return "null";
  if (v === undefined) return "missing";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `a string (${JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v)})`;
  if (typeof v === "number") return Number.isFinite(v) ? `the number ${v}` : `${v}`;
  if (typeof v === "object") return "an object";
  return `a ${typeof v} (${String(v)})`;
}

function wrongType(path: string, v: unknown, expected: string): ToolError {
  return fail(
    "recording_malformed",
    `${path} is ${describeValue(v)}; expected ${expected}.`,
    RECOVERY_SHAPE,
    { json_path: path },
  );
}

const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Checks one serialized node tree (rrweb-snapshot's serializedNodeWithId) without recursion. */
function checkNodeTree(root: unknown, rootPath: string): void {
  const stack: Array<[unknown, string]> = [[root, rootPath]];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const [node, path] = item;
    if (!isObject(node)) throw wrongType(path, node, "a serialized node object");
    if (!finite(node.id)) throw wrongType(`${path}.id`, node.id, "a numeric node id");
    if (typeof node.type !== "number" || !NODE_TYPES.has(node.type)) {
      throw wrongType(
        `${path}.type`,
        node.type,
        "a node type 0–5 (Document, DocumentType, Element, Text, CDATA, Comment)",
      );
    }
    if (node.type === NodeType.Element) {
      if (typeof node.tagName !== "string" || node.tagName === "") {
        throw wrongType(`${path}.tagName`, node.tagName, "a tag name");
      }
      if (!isObject(node.attributes)) throw wrongType(`${path}.attributes`, node.attributes, "an object");
    } else if (
      node.type === NodeType.Text || node.type === NodeType.Comment || node.type === NodeType.CDATA
    ) {
      if (typeof node.textContent !== "string") {
        throw wrongType(`${path}.textContent`, node.textContent, "a string");
      }
    }
    if (node.type === NodeType.Element || node.type === NodeType.Document) {
      const children = node.childNodes;
      if (!Array.isArray(children)) throw wrongType(`${path}.childNodes`, children, "an array");
      for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], `${path}.childNodes[${i}]`]);
    }
  }
}

function checkMutation(data: Json, path: string): void {
  for (const key of ["adds", "removes", "texts", "attributes"] as const) {
    if (!Array.isArray(data[key])) throw wrongType(`${path}.data.${key}`, data[key], "an array");
  }
  const adds = data.adds as unknown[];
  for (let i = 0; i < adds.length; i++) {
    const p = `${path}.data.adds[${i}]`;
    const add = adds[i];
    if (!isObject(add)) throw wrongType(p, add, "an object");
    if (!finite(add.parentId)) throw wrongType(`${p}.parentId`, add.parentId, "a numeric node id");
    checkNodeTree(add.node, `${p}.node`);
  }
  const removes = data.removes as unknown[];
  for (let i = 0; i < removes.length; i++) {
    const p = `${path}.data.removes[${i}]`;
    const r = removes[i];
    if (!isObject(r)) throw wrongType(p, r, "an object");
    if (!finite(r.id)) throw wrongType(`${p}.id`, r.id, "a numeric node id");
    if (!finite(r.parentId)) throw wrongType(`${p}.parentId`, r.parentId, "a numeric node id");
  }
  const texts = data.texts as unknown[];
  for (let i = 0; i < texts.length; i++) {
    const p = `${path}.data.texts[${i}]`;
    const t = texts[i];
    if (!isObject(t)) throw wrongType(p, t, "an object");
    if (!finite(t.id)) throw wrongType(`${p}.id`, t.id, "a numeric node id");
    if (t.value !== null && typeof t.value !== "string") {
      throw wrongType(`${p}.value`, t.value, "a string or null");
    }
  }
  const attributes = data.attributes as unknown[];
  for (let i = 0; i < attributes.length; i++) {
    const p = `${path}.data.attributes[${i}]`;
    const a = attributes[i];
    if (!isObject(a)) throw wrongType(p, a, "an object");
    if (!finite(a.id)) throw wrongType(`${p}.id`, a.id, "a numeric node id");
    if (!isObject(a.attributes)) throw wrongType(`${p}.attributes`, a.attributes, "an object");
  }
}

/** Checks one event's envelope and the parts of its data the replay relies on. */
function checkEvent(e: unknown, path: string): asserts e is eventWithTime {
  if (!isObject(e)) throw wrongType(path, e, "an rrweb event object { type, timestamp, data }");
  if (typeof e.type !== "number" || !EVENT_TYPES.has(e.type)) {
    throw wrongType(
      `${path}.type`,
      e.type,
      `one of rrweb's event types ${
        [...EVENT_TYPES].join(", ")
      } (2 FullSnapshot, 3 IncrementalSnapshot, 4 Meta)`,
    );
  }
  if (!finite(e.timestamp) || e.timestamp < 0 || e.timestamp > MAX_EPOCH_MS) {
    throw wrongType(`${path}.timestamp`, e.timestamp, "a time in ms since the epoch");
  }
  const data = e.data;
  if (!isObject(data)) throw wrongType(`${path}.data`, data, "an object");
  if (e.type === EventType.Meta) {
    if (typeof data.href !== "string") throw wrongType(`${path}.data.href`, data.href, "the page URL string");
    for (const k of ["width", "height"] as const) {
      if (!finite(data[k]) || (data[k] as number) < 0) {
        throw wrongType(`${path}.data.${k}`, data[k], "a viewport size in CSS pixels");
      }
    }
  } else if (e.type === EventType.FullSnapshot) {
    checkNodeTree(data.node, `${path}.data.node`);
    const offset = data.initialOffset;
    if (!isObject(offset) || !finite(offset.top) || !finite(offset.left)) {
      throw wrongType(`${path}.data.initialOffset`, offset, "{ top, left } scroll offsets");
    }
  } else if (e.type === EventType.IncrementalSnapshot) {
    if (typeof data.source !== "number" || !SOURCES.has(data.source)) {
      throw wrongType(`${path}.data.source`, data.source, `an incremental source 0–${Math.max(...SOURCES)}`);
    }
    if (data.source === IncrementalSource.Mutation) checkMutation(data, path);
  }
}

/** Line and column (1-based) of a character offset, and a short excerpt around it. */
function locate(text: string, position: number): { line: number; column: number; excerpt: string } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf("\n"); i !== -1 && i < position; i = text.indexOf("\n", i + 1)) {
    line++;
    lineStart = i + 1;
  }
  const excerpt = text.slice(Math.max(0, position - 20), position + 20).replace(/\s+/g, " ");
  return { line, column: position - lineStart + 1, excerpt };
}

function parseJson(text: string, name: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const problem = jsonSyntaxProblem(text);
    if (problem.kind === "truncated") {
      throw fail(
        "recording_truncated",
        text.trim() === ""
          ? `${name} is empty (${text.length} characters of whitespace at most); a recording is a JSON array of events.`
          : `${name} ends before its JSON is complete (${problem.open}) after ${text.length} characters: the file was cut off.`,
        "The recording was cut off while saving or copying: export or copy it again in full, then load it.",
        { characters: text.length, ...(problem.open ? { open: problem.open } : {}) },
      );
    }
    const at = locate(text, problem.position);
    throw fail(
      "recording_malformed",
      `${name} is not valid JSON: ${problem.reason} at line ${at.line}, column ${at.column} (character ${problem.position}, near ${
        JSON.stringify(at.excerpt)
      }).`,
      "Fix the JSON there, or export the recording again; load_recording reads the JSON rrweb's record() produced.",
      { line: at.line, column: at.column, position: problem.position },
    );
  }
}

/** Validates a recording's text; `name` is how messages call the file. Pure. */
export function parseRecording(
  text: string,
  source: { path: string; name: string; bytes: number },
): RecordingFile {
  const name = source.name;
  const top = parseJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, name);
  let list: unknown[];
  let prefix = "";
  if (Array.isArray(top)) list = top;
  else if (isObject(top) && Array.isArray(top.events)) {
    list = top.events;
    prefix = "events";
  } else {
    throw fail(
      "recording_malformed",
      isObject(top)
        ? `${name} holds an object without an "events" array (its keys: ${
          Object.keys(top).slice(0, 8).join(", ") || "none"
        }).`
        : `${name} holds ${describeValue(top)}; expected an array of rrweb events or { "events": [...] }.`,
      RECOVERY_SHAPE,
      { json_path: isObject(top) ? "events" : "$" },
    );
  }
  if (list.length === 0) {
    throw fail(
      "recording_incomplete",
      `${name} has no events (${prefix || "the top-level array"} is empty).`,
      "Record the page for longer (rrweb emits a Meta and a FullSnapshot as soon as it starts), then export again.",
    );
  }
  let firstMeta = -1;
  let firstFullAfterMeta = -1;
  let checkpoints = 0;
  for (let i = 0; i < list.length; i++) {
    const path = `${prefix}[${i}]`;
    const e = list[i];
    checkEvent(e, path);
    if (i > 0) {
      const prev = (list[i - 1] as eventWithTime).timestamp;
      if (e.timestamp < prev) {
        throw fail(
          "recording_out_of_order",
          `${path}.timestamp ${e.timestamp} is before ${prefix}[${i - 1}].timestamp ${prev} (${
            prev - e.timestamp
          } ms earlier): events must be in time order.`,
          "Sort the events by timestamp (a stable sort keeps rrweb's order within one millisecond), then load the file again.",
          { json_path: `${path}.timestamp`, index: i, timestamp: e.timestamp, previous_timestamp: prev },
        );
      }
    }
    if (e.type === EventType.Meta && firstMeta < 0) firstMeta = i;
    if (e.type === EventType.FullSnapshot) {
      checkpoints++;
      if (firstMeta >= 0 && firstFullAfterMeta < 0) firstFullAfterMeta = i;
    }
  }
  const events = list as eventWithTime[];
  if (firstMeta < 0 || firstFullAfterMeta < 0) {
    throw fail(
      "recording_incomplete",
      firstMeta < 0
        ? `${name} has no Meta event (type 4) among its ${events.length} events: the page and its viewport are unknown.`
        : `${name} has no FullSnapshot event (type 2) after its first Meta (${prefix}[${firstMeta}]): there is no document to rebuild.`,
      "Export the whole recording from its start: rrweb begins every recording with a Meta followed by a FullSnapshot.",
      { events: events.length, ...(firstMeta >= 0 ? { meta_index: firstMeta } : {}) },
    );
  }
  const first = events[0].timestamp;
  const last = events[events.length - 1].timestamp;
  if (last - first > RECORDING_MAX_SPAN_MS) {
    throw fail(
      "recording_malformed",
      `${name} spans ${last - first} ms (${prefix}[0] to ${prefix}[${
        events.length - 1
      }]), over the ${RECORDING_MAX_SPAN_MS} ms a session can address.`,
      "Split the recording into shorter files, or check its timestamps are ms since the epoch.",
      { span_ms: last - first, limit_ms: RECORDING_MAX_SPAN_MS },
    );
  }
  const meta = events[firstMeta].data as { href: string; width: number; height: number };
  return {
    path: source.path,
    name,
    bytes: source.bytes,
    wrapped: prefix !== "",
    events,
    first_timestamp: first,
    last_timestamp: last,
    duration_ms: last - first,
    meta: { href: meta.href, width: meta.width, height: meta.height },
    checkpoints,
  };
}

const URL_LIKE = /^[a-z][a-z0-9+.-]+:/i;

/** Reads and validates a local recording file (stat first: an oversized file is never read). */
export async function readRecordingFile(
  path: string,
  maxBytes = RECORDING_MAX_BYTES,
): Promise<RecordingFile> {
  const shown = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
  if (URL_LIKE.test(path)) {
    throw fail(
      "recording_not_found",
      `path ${shown} is a URL; load_recording reads a local file only and fetches nothing.`,
      "Download the recording yourself and pass its local path (absolute, or relative to the server's working directory).",
    );
  }
  if (path.trim() === "") {
    throw fail("recording_not_found", "path is empty.", "Pass the local path of an rrweb JSON file.");
  }
  const full = resolve(path);
  const name = basename(full);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(full);
  } catch (err) {
    const missing = err instanceof Deno.errors.NotFound;
    throw fail(
      "recording_not_found",
      missing
        ? `No file at ${JSON.stringify(full)}.`
        : `${JSON.stringify(full)} cannot be read: ${
          err instanceof Error ? err.message.slice(0, 160) : err
        }.`,
      missing
        ? "Check the path (relative paths resolve against the server's working directory) and pass an existing rrweb JSON file."
        : "Make the file readable by the server process, or copy it somewhere it can read.",
      { path: full },
    );
  }
  if (!info.isFile) {
    throw fail(
      "recording_not_found",
      `${JSON.stringify(full)} is ${info.isDirectory ? "a directory" : "not a regular file"}.`,
      "Pass the path of the rrweb JSON file itself.",
      { path: full },
    );
  }
  const tooLarge = (bytes: number) =>
    fail(
      "recording_too_large",
      `${name} is ${bytes} bytes (${(bytes / 1048576).toFixed(1)} MiB), over the ${maxBytes}-byte (${
        maxBytes / 1048576
      } MiB) limit for a recording.`,
      "Trim the recording (export a shorter span) or split it into files of at most 64 MiB.",
      { bytes, limit_bytes: maxBytes, path: full },
    );
  if (info.size > maxBytes) throw tooLarge(info.size);
  let raw: Uint8Array;
  try {
    raw = await Deno.readFile(full);
  } catch (err) {
    throw fail(
      "recording_not_found",
      `${JSON.stringify(full)} cannot be read: ${err instanceof Error ? err.message.slice(0, 160) : err}.`,
      "Make the file readable by the server process.",
      { path: full },
    );
  }
  // It may have grown between stat and read.
  if (raw.length > maxBytes) throw tooLarge(raw.length);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw fail(
      "recording_malformed",
      `${name} is not UTF-8 text (${raw.length} bytes); an rrweb recording is a JSON file.`,
      "Pass the JSON file rrweb produced (not a compressed or binary export); decompress it first if it is gzipped.",
      { path: full },
    );
  }
  return parseRecording(text, { path: full, name, bytes: raw.length });
}
