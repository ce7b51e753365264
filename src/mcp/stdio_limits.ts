import { type JSONRPCMessage, serializeMessage, type Transport } from "@modelcontextprotocol/server";
import { limitExceeded } from "../errors.ts";
import { deserializeInbound } from "./own_proto.ts";

/** One inbound JSON-RPC message (one stdio line, newline excluded) may be at most 10 MiB. */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

type RequestId = string | number;

/**
 * The MCP stdio transport for our server, in place of the SDK's StdioServerTransport.
 *
 * Why our own: the SDK's ReadBuffer throws "ReadBuffer exceeded maximum size" when one line
 * passes 10 MB and the transport then closes itself, so a single oversized request ended the
 * server with no reply. Here an oversized line is skipped as it streams (never held past the
 * limit), answered with a JSON-RPC error naming its size and the limit (under the request's id
 * when one can be recovered from the stream), and the next line is served normally.
 * Everything else matches the SDK transport: newline-delimited JSON, onclose at end of input.
 */
export class LineLimitedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #input: ReadableStream<Uint8Array>;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #limit: number;
  #reader?: ReadableStreamDefaultReader<Uint8Array>;
  #started = false;
  #closed = false;
  #pending: Uint8Array[] = [];
  #lineBytes = 0;
  #skipping: IdScanner | null = null;

  constructor(
    input: ReadableStream<Uint8Array> = Deno.stdin.readable,
    output: WritableStream<Uint8Array> = Deno.stdout.writable,
    limit = MAX_MESSAGE_BYTES,
  ) {
    this.#input = input;
    this.#writer = output.getWriter();
    this.#limit = limit;
  }

  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error("LineLimitedStdioTransport already started"));
    this.#started = true;
    this.#reader = this.#input.getReader();
    void this.#pump(this.#reader);
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error("LineLimitedStdioTransport is closed");
    try {
      await this.#writer.write(new TextEncoder().encode(serializeMessage(message)));
    } catch (err) {
      // The client's end of stdout is gone: nothing more can be answered.
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      await this.close();
      throw err;
    }
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    this.#reader?.cancel().catch(() => {});
    this.#pending = [];
    this.#skipping = null;
    this.onclose?.();
    return Promise.resolve();
  }

  async #pump(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
    try {
      while (!this.#closed) {
        const { value, done } = await reader.read();
        if (done) break;
        this.#onChunk(value);
      }
    } catch (err) {
      if (!this.#closed) this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    } finally {
      await this.close();
    }
  }

  #onChunk(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length && !this.#closed) {
      const newline = chunk.indexOf(0x0a, start);
      this.#take(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return;
      this.#endLine();
      start = newline + 1;
    }
  }

  #take(piece: Uint8Array): void {
    this.#lineBytes += piece.length;
    if (this.#skipping) {
      this.#skipping.feed(piece);
      return;
    }
    if (this.#lineBytes <= this.#limit) {
      // Copied: a reader may hand out views of a buffer it reuses for the next read.
      this.#pending.push(piece.slice());
      return;
    }
    // Over the limit: stop buffering, keep only what is needed to find the request id.
    this.#skipping = new IdScanner();
    for (const held of this.#pending) this.#skipping.feed(held);
    this.#skipping.feed(piece);
    this.#pending = [];
  }

  #endLine(): void {
    const size = this.#lineBytes;
    const skipped = this.#skipping;
    const pieces = this.#pending;
    this.#lineBytes = 0;
    this.#skipping = null;
    this.#pending = [];
    if (skipped) return this.#rejectOversized(skipped, size);
    const line = new TextDecoder().decode(concat(pieces, size)).replace(/\r$/, "");
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeInbound(line);
    } catch (err) {
      if (err instanceof SyntaxError) {
        this.#reply(null, -32700, `Parse error: the line is not valid JSON (${err.message.slice(0, 120)}).`);
      } else {
        this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      }
      return;
    }
    this.onmessage?.(message);
  }

  #rejectOversized(scan: IdScanner, size: number): void {
    const error = limitExceeded(
      "JSON-RPC message size in bytes",
      size,
      this.#limit,
      "Send less in one request: split the work across calls or pass large content by reference " +
        "(a file path or URL) instead of inline.",
    );
    this.onerror?.(new Error(error.message));
    // A notification gets no response (JSON-RPC 2.0); an unrecoverable id is answered with null.
    if (scan.id === undefined && scan.sawMethod && scan.complete) return;
    this.#reply(scan.id ?? null, -32600, `Message not processed: ${error.message}`, error.toJSON());
  }

  #reply(id: RequestId | null, code: number, message: string, data?: Record<string, unknown>): void {
    if (this.#closed) return;
    const response = { jsonrpc: "2.0", id, error: { code, message, ...(data ? { data } : {}) } };
    this.send(response as unknown as JSONRPCMessage).catch(() => {});
  }
}

function concat(pieces: Uint8Array[], size: number): Uint8Array {
  if (pieces.length === 1) return pieces[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

const QUOTE = 0x22, BACKSLASH = 0x5c, COLON = 0x3a, COMMA = 0x2c;
const OPENERS = new Set([0x7b, 0x5b]), CLOSERS = new Set([0x7d, 0x5d]);
const WHITESPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);
/** Longest top-level key or id value worth keeping; real ids are short. */
const CAPTURE_LIMIT = 256;

/**
 * Streams over an oversized JSON line in O(1) memory and recovers its top-level "id" (wherever
 * it appears among the members) and whether it has a "method", so the rejection can be addressed.
 */
export class IdScanner {
  id: RequestId | undefined;
  sawMethod = false;
  /** True once the top-level object closed, i.e. the member list is known in full. */
  complete = false;
  #depth = 0;
  #inString = false;
  #escaped = false;
  #expectKey = false;
  #key: string | null = null;
  /** Bytes of the top-level key or "id" value being captured; null when not capturing. */
  #capture: number[] | null = null;
  #capturingValue = false;
  #afterColon = false;

  feed(bytes: Uint8Array): void {
    // The first top-level id is the one that counts; the rest of a huge line need not be walked.
    if (this.id !== undefined) return;
    for (let i = 0; i < bytes.length; i++) this.#byte(bytes[i]);
  }

  #byte(b: number): void {
    if (this.#inString) {
      if (this.#capture && this.#capture.length < CAPTURE_LIMIT) this.#capture.push(b);
      if (this.#escaped) this.#escaped = false;
      else if (b === BACKSLASH) this.#escaped = true;
      else if (b === QUOTE) {
        this.#inString = false;
        if (!this.#capturingValue) this.#endKey();
        else this.#endValue();
      }
      return;
    }
    const top = this.#depth === 1;
    if (
      top && this.#capturingValue && this.#capture && (b === COMMA || CLOSERS.has(b) || WHITESPACE.has(b))
    ) {
      this.#endValue(); // end of a bare (number) id
    }
    if (b === QUOTE) {
      this.#inString = true;
      if (top && this.#expectKey) this.#startCapture(false);
      else if (top && this.#afterColon && this.#key === "id") this.#startCapture(true);
      return;
    }
    if (OPENERS.has(b)) {
      this.#depth++;
      if (this.#depth === 1) this.#expectKey = b === 0x7b;
      this.#afterColon = false;
      return;
    }
    if (CLOSERS.has(b)) {
      this.#depth--;
      if (this.#depth === 0) this.complete = true;
      return;
    }
    if (!top) return;
    if (b === COLON) {
      this.#expectKey = false;
      this.#afterColon = true;
    } else if (b === COMMA) {
      this.#expectKey = true;
      this.#afterColon = false;
      this.#key = null;
    } else if (!WHITESPACE.has(b) && this.#afterColon && this.#key === "id" && !this.#capture) {
      this.#startCapture(true).push(b);
    } else if (this.#capturingValue && this.#capture && this.#capture.length < CAPTURE_LIMIT) {
      this.#capture.push(b);
    }
  }

  #startCapture(value: boolean): number[] {
    // A string (key or id) is captured with its opening quote so JSON.parse can undo its escapes.
    const capture: number[] = this.#inString ? [QUOTE] : [];
    this.#capture = capture;
    this.#capturingValue = value;
    if (value) this.#afterColon = false;
    return capture;
  }

  #endKey(): void {
    this.#key = this.#parse(this.#capture) as string | null;
    if (this.#key === "method") this.sawMethod = true;
    this.#capture = null;
  }

  #endValue(): void {
    const value = this.#parse(this.#capture);
    if (this.id === undefined && (typeof value === "string" || typeof value === "number")) this.id = value;
    this.#capture = null;
    this.#capturingValue = false;
  }

  #parse(bytes: number[] | null): unknown {
    if (!bytes || bytes.length >= CAPTURE_LIMIT) return null;
    try {
      return JSON.parse(new TextDecoder().decode(new Uint8Array(bytes)));
    } catch {
      return null;
    }
  }
}
