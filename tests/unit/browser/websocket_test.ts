import { assert, assertEquals, assertRejects, assertThrows } from "../../assert.ts";
import { LoopbackWebSocket } from "../../../src/browser/websocket.ts";

/**
 * A hand-written RFC 6455 server on a real loopback socket, so the client is checked against frames
 * Deno's own server never sends: fragments, pings, 64-bit lengths, and a server close.
 */
const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

async function accept(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID));
  return btoa(String.fromCharCode(...new Uint8Array(digest)));
}

function serverFrame(opcode: number, payload: Uint8Array, fin = true): Uint8Array {
  const n = payload.length;
  const header = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const out = new Uint8Array(header + n);
  out[0] = (fin ? 0x80 : 0) | opcode;
  if (n < 126) out[1] = n;
  else if (n < 65_536) {
    out[1] = 126;
    out[2] = n >> 8;
    out[3] = n & 0xff;
  } else {
    out[1] = 127;
    new DataView(out.buffer).setUint32(6, n);
  }
  out.set(payload, header);
  return out;
}

/** Reads one masked client frame; returns opcode and unmasked payload. */
async function readClientFrame(conn: Deno.Conn, pending: { bytes: Uint8Array }) {
  const need = async (n: number) => {
    while (pending.bytes.length < n) {
      const chunk = new Uint8Array(65_536);
      const got = await conn.read(chunk);
      if (got === null) throw new Error("client closed");
      const next = new Uint8Array(pending.bytes.length + got);
      next.set(pending.bytes);
      next.set(chunk.subarray(0, got), pending.bytes.length);
      pending.bytes = next;
    }
  };
  await need(2);
  const b = pending.bytes;
  assert((b[1] & 0x80) !== 0, "client frames are masked");
  let len = b[1] & 0x7f;
  let at = 2;
  if (len === 126) {
    await need(4);
    len = (pending.bytes[2] << 8) | pending.bytes[3];
    at = 4;
  } else if (len === 127) {
    await need(10);
    len = new DataView(pending.bytes.buffer).getUint32(6);
    at = 10;
  }
  await need(at + 4 + len);
  const mask = pending.bytes.slice(at, at + 4);
  const payload = pending.bytes.slice(at + 4, at + 4 + len).map((v, i) => v ^ mask[i & 3]);
  const opcode = pending.bytes[0] & 0x0f;
  pending.bytes = pending.bytes.slice(at + 4 + len);
  return { opcode, payload };
}

function withServer(script: (conn: Deno.Conn, pending: { bytes: Uint8Array }) => Promise<void>) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const served = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(4096);
    let head = "";
    let rest = new Uint8Array(0);
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf);
      if (n === null) return;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    const [request, tail] = head.split("\r\n\r\n");
    rest = new TextEncoder().encode(tail);
    const keyLine = request.split("\r\n").find((l) => /^sec-websocket-key:/i.test(l)) ?? "";
    const key = keyLine.split(":")[1]?.trim() ?? "";
    await conn.write(new TextEncoder().encode(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Accept: ${await accept(key)}\r\n\r\n`,
    ));
    try {
      await script(conn, { bytes: rest });
    } finally {
      try {
        conn.close();
      } catch { /* closed by the client */ }
    }
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  return {
    url: `ws://127.0.0.1:${port}/devtools/browser/test`,
    async done() {
      await served;
      listener.close();
    },
  };
}

Deno.test("text both ways, fragments joined, pings answered, 64-bit lengths, server close", async () => {
  const big = "x".repeat(70_000) + "é";
  const server = withServer(async (conn, pending) => {
    const echoed = await readClientFrame(conn, pending);
    assertEquals(echoed.opcode, 1);
    const text = new TextDecoder().decode(echoed.payload);
    const enc = new TextEncoder();
    await conn.write(serverFrame(0x1, enc.encode(text.slice(0, 3)), false));
    await conn.write(serverFrame(0x9, enc.encode("hi")));
    await conn.write(serverFrame(0x0, enc.encode(text.slice(3)), true));
    const pong = await readClientFrame(conn, pending);
    assertEquals(pong.opcode, 0xa);
    assertEquals(new TextDecoder().decode(pong.payload), "hi");
    await conn.write(serverFrame(0x1, enc.encode(big)));
    await conn.write(serverFrame(0x8, new Uint8Array([0x03, 0xe8])));
  });
  const socket = await LoopbackWebSocket.connect(server.url, 2_000);
  const received: string[] = [];
  const closed = new Promise<void>((resolve) => (socket.onclose = resolve));
  socket.onmessage = (text) => received.push(text);
  socket.send("hello, fragmented world");
  await closed;
  await server.done();
  assertEquals(received, ["hello, fragmented world", big]);
  assertEquals(socket.open, false);
  assertThrows(() => socket.send("late"), "closed");
});

Deno.test("code awaiting a reply resumes before the next message is delivered", async () => {
  const server = withServer(async (conn) => {
    const enc = new TextEncoder();
    // Two messages in one write: the reply and an event right behind it.
    const a = serverFrame(0x1, enc.encode("reply"));
    const b = serverFrame(0x1, enc.encode("event"));
    const both = new Uint8Array(a.length + b.length);
    both.set(a);
    both.set(b, a.length);
    await conn.write(both);
    await new Promise((r) => setTimeout(r, 50));
  });
  const socket = await LoopbackWebSocket.connect(server.url, 2_000);
  const order: string[] = [];
  let replied: (v: string) => void = () => {};
  const reply = new Promise<string>((r) => (replied = r));
  socket.onmessage = (text) => {
    order.push(`delivered ${text}`);
    if (text === "reply") replied(text);
  };
  (async () => {
    const text = await reply.then((t) => t).then((t) => t);
    order.push(`resumed after ${text}`);
  })();
  await new Promise((r) => setTimeout(r, 100));
  await socket.close();
  await server.done();
  assertEquals(order, ["delivered reply", "resumed after reply", "delivered event"]);
});

Deno.test("a refused handshake and a closed port are errors, not hangs", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const refusing = (async () => {
    const conn = await listener.accept();
    await conn.read(new Uint8Array(4096));
    await conn.write(new TextEncoder().encode("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"));
    conn.close();
  })();
  await assertRejects(() => LoopbackWebSocket.connect(`ws://127.0.0.1:${port}/x`, 2_000), Error, "404");
  await refusing;
  listener.close();
  await assertRejects(() => LoopbackWebSocket.connect(`ws://127.0.0.1:${port}/x`, 2_000));
});
