import { assert, assertEquals, assertMatch } from "../../assert.ts";
import { IdScanner, LineLimitedStdioTransport } from "../../../src/mcp/stdio_limits.ts";

function scan(text: string, chunk = 7): IdScanner {
  const scanner = new IdScanner();
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += chunk) scanner.feed(bytes.subarray(i, i + chunk));
  return scanner;
}

Deno.test("IdScanner recovers the top-level id wherever it sits, ignoring nested ids", () => {
  assertEquals(scan(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{}}`).id, 42);
  assertEquals(scan(`{"method":"x","params":{"id":7,"a":[{"id":8}]},"id":"r-\\"9"}`).id, 'r-"9');
  assertEquals(scan(`{ "params" : { "s": "\\"id\\": 5" } , "id" : -3 }`).id, -3);
  assertEquals(scan(`{"id":{"x":1},"method":"m"}`).id, undefined, "an object is not an id");
  const notification = scan(`{"jsonrpc":"2.0","method":"notifications/x","params":{"id":1}}`);
  assertEquals(notification.id, undefined);
  assert(notification.sawMethod && notification.complete, "a complete notification is recognisable");
  assert(!scan(`{"method":"m","params":{"a":"`).complete, "a truncated line is not complete");
});

interface Wire {
  transport: LineLimitedStdioTransport;
  feed(text: string): void;
  end(): void;
  written(): unknown[];
  messages: unknown[];
  closed: Promise<void>;
}

function wire(limit: number): Wire {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const input = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  let out = "";
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => void (out += new TextDecoder().decode(chunk)),
  });
  const transport = new LineLimitedStdioTransport(input, output, limit);
  const messages: unknown[] = [];
  transport.onmessage = (m) => messages.push(m);
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  return {
    transport,
    feed: (text) => controller.enqueue(new TextEncoder().encode(text)),
    end: () => controller.close(),
    written: () => out.split("\n").filter(Boolean).map((l) => JSON.parse(l)),
    messages,
    closed,
  };
}

const tick = () => new Promise((r) => setTimeout(r, 10));

Deno.test("an oversized line is answered with its size and the limit, and the next line is served", async () => {
  const w = wire(100);
  await w.transport.start();
  const big = `{"jsonrpc":"2.0","method":"tools/call","params":{"x":"${"a".repeat(300)}"},"id":5}`;
  // Split across reads, including a read that ends exactly at the newline.
  w.feed(big.slice(0, 60));
  w.feed(big.slice(60, 250));
  w.feed(big.slice(250) + "\n");
  w.feed(`{"jsonrpc":"2.0","id":6,"method":"ping"}\r\n`);
  await tick();
  const [reply] = w.written() as Array<
    { id: unknown; error: { code: number; message: string; data: never } }
  >;
  assertEquals(reply.id, 5);
  assertEquals(reply.error.code, -32600);
  const size = new TextEncoder().encode(big).length;
  assertMatch(reply.error.message, new RegExp(`${size}.*limit of 100`));
  const data = reply.error.data as {
    code: string;
    retry: string;
    details: { actual: number; limit: number };
  };
  assertEquals([data.code, data.retry, data.details.actual, data.details.limit], [
    "resource_limit_exceeded",
    "never",
    size,
    100,
  ]);
  assertEquals(w.messages, [{ jsonrpc: "2.0", id: 6, method: "ping" }]);
  w.end();
  await w.closed;
});

Deno.test("oversized notifications get no reply; unrecoverable ids get null; bad JSON is a parse error", async () => {
  const w = wire(50);
  await w.transport.start();
  w.feed(`{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"${"b".repeat(80)}"}}\n`);
  w.feed(`[${"1,".repeat(60)}1]\n`);
  w.feed(`{not json}\n\n`);
  w.feed(`{"jsonrpc":"2.0","id":1,"method":"ping"}\n`);
  await tick();
  const replies = w.written() as Array<{ id: unknown; error: { code: number } }>;
  assertEquals(replies.map((r) => [r.id, r.error.code]), [[null, -32600], [null, -32700]]);
  assertEquals(w.messages.length, 1);
  w.end();
  await w.closed;
});
