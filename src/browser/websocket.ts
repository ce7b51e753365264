/**
 * A minimal RFC 6455 client for the loopback CDP endpoint, on a TCP connection with Nagle's algorithm
 * off, each frame written whole. Over Deno's WebSocket every command of about 1 KB or more cost a flat
 * ~44 ms, the signature of Nagle's algorithm waiting on Chrome's delayed ACK (measured here: 0.8 ms for
 * an 800-byte Runtime.evaluate, 44 ms from 1,000 to 20,000 bytes; 1 ms for all of them on this socket).
 * Hit tests, snapshot probes and most injected scripts are that size. CDP needs text frames, pings and
 * close only; binary frames are delivered as text too, since Chrome never sends them on this socket.
 */

import { concatBytes } from "../bytes.ts";

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const MAX_HEADER_BYTES = 16 * 1024;
/**
 * Microtask turns given after each delivered message, so code awaiting a reply resumes before the next
 * message is delivered, as it would with one event per message.
 */
const MICROTASK_TURNS = 16;

export class LoopbackWebSocket {
  onmessage: (text: string) => void = () => {};
  onclose: () => void = () => {};
  #conn: Deno.TcpConn;
  #open = true;
  #writes: Promise<void> = Promise.resolve();
  /** Frames queued and not yet written whole; at 0 the next frame's write starts in send() itself. */
  #queued = 0;
  #buf = new Uint8Array(256 * 1024);
  #start = 0;
  #end = 0;
  #fragments: Uint8Array[] = [];
  #decoder = new TextDecoder();
  #encoder = new TextEncoder();
  #closed: Promise<void>;

  private constructor(conn: Deno.TcpConn, leftover: Uint8Array) {
    this.#conn = conn;
    this.#append(leftover);
    this.#closed = this.#readLoop();
  }

  /** Opens the socket; rejects on refusal, a bad handshake or the deadline. */
  static async connect(url: string, timeoutMs: number): Promise<LoopbackWebSocket> {
    const u = new URL(url);
    if (u.protocol !== "ws:") throw new Error(`unsupported WebSocket scheme ${u.protocol}`);
    const hostname = u.hostname.replace(/^\[|\]$/g, "");
    const port = Number(u.port || 80);
    const controller = new AbortController();
    let conn: Deno.TcpConn | undefined;
    const timer = setTimeout(() => {
      controller.abort();
      try {
        conn?.close(); // ends a handshake read that would otherwise wait forever
      } catch { /* already closed */ }
    }, timeoutMs);
    try {
      conn = await Deno.connect({ hostname, port, signal: controller.signal });
      conn.setNoDelay(true);
      const key = crypto.getRandomValues(new Uint8Array(16)).toBase64();
      const request = `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\n` +
        `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
      await writeAll(conn, new TextEncoder().encode(request));
      const { head, rest } = await readHead(conn, controller.signal);
      const [status, ...lines] = head.split("\r\n");
      if (!/^HTTP\/1\.1 101\b/.test(status)) throw new Error(`WebSocket upgrade refused: ${status}`);
      const accept = lines.find((l) => /^sec-websocket-accept:/i.test(l))?.split(":")[1]?.trim();
      if (accept !== await acceptFor(key)) {
        throw new Error("WebSocket upgrade answered with a wrong accept key");
      }
      return new LoopbackWebSocket(conn, rest);
    } catch (err) {
      try {
        conn?.close();
      } catch { /* already closed */ }
      throw controller.signal.aborted ? new Error("WebSocket did not open in time") : err;
    } finally {
      clearTimeout(timer);
    }
  }

  get open(): boolean {
    return this.#open;
  }

  /** Queues one text frame; frames are written whole and in order. */
  send(text: string): void {
    if (!this.#open) throw new Error("WebSocket is closed");
    this.#write(maskedFrame(0x1, this.#encoder.encode(text)), () => this.#shutdown());
  }

  /**
   * Writes one frame after those queued before it. With none queued the write starts here, before the
   * caller's task goes on: Deno starts a socket write when it is called, so the bytes of an ack sent
   * from an event handler leave at once instead of after the rest of the handler and the microtasks
   * queued before it (a .then on the previous write), where a slow handler delayed them by its length.
   */
  #write(frame: Uint8Array, onError: () => void): void {
    this.#queued++;
    const write = this.#queued === 1
      ? writeAll(this.#conn, frame)
      : this.#writes.then(() => writeAll(this.#conn, frame));
    this.#writes = write.catch(onError).finally(() => this.#queued--);
  }

  /** Sends a close frame and resolves once the connection is gone (at most `timeoutMs`). */
  async close(timeoutMs = 1_000): Promise<void> {
    if (this.#open) {
      const frame = maskedFrame(0x8, new Uint8Array([0x03, 0xe8])); // 1000: normal closure
      this.#write(frame, () => {});
      await Promise.race([this.#writes, new Promise((r) => setTimeout(r, timeoutMs))]);
      this.#shutdown();
    }
    await this.#closed;
  }

  #shutdown(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      this.#conn.close();
    } catch { /* already closed */ }
    this.onclose();
  }

  async #readLoop(): Promise<void> {
    const chunk = new Uint8Array(256 * 1024);
    try {
      // Bytes that came with the handshake wait one task, until the caller has set its handlers.
      await new Promise((r) => setTimeout(r, 0));
      await this.#deliver();
      while (this.#open) {
        const n = await this.#conn.read(chunk);
        if (n === null) break;
        this.#append(chunk.subarray(0, n));
        await this.#deliver();
      }
    } catch {
      // A reset or a protocol error ends the connection the same way a close does.
    }
    this.#shutdown();
  }

  #append(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (this.#end + bytes.length > this.#buf.length) {
      const live = this.#end - this.#start;
      const needed = live + bytes.length;
      if (needed > this.#buf.length) {
        const next = new Uint8Array(Math.max(needed, this.#buf.length * 2));
        next.set(this.#buf.subarray(this.#start, this.#end), 0);
        this.#buf = next;
      } else {
        this.#buf.copyWithin(0, this.#start, this.#end);
      }
      this.#start = 0;
      this.#end = live;
    }
    this.#buf.set(bytes, this.#end);
    this.#end += bytes.length;
  }

  /** Parses and delivers every complete frame in the buffer. */
  async #deliver(): Promise<void> {
    while (this.#open) {
      const frame = this.#nextFrame();
      if (!frame) return;
      const { fin, opcode, payload } = frame;
      if (opcode === 0x8) {
        this.#shutdown();
        return;
      }
      if (opcode === 0x9) {
        const pong = maskedFrame(0xa, payload.slice());
        this.#write(pong, () => this.#shutdown());
        continue;
      }
      if (opcode === 0xa) continue;
      if (opcode !== 0x0) this.#fragments = [];
      if (!fin) {
        this.#fragments.push(payload.slice());
        continue;
      }
      const text = this.#fragments.length === 0
        ? this.#decoder.decode(payload)
        : this.#decoder.decode(concatBytes([...this.#fragments, payload]));
      this.#fragments = [];
      try {
        this.onmessage(text);
      } catch {
        // A failing handler loses its message, not the connection.
      }
      for (let i = 0; i < MICROTASK_TURNS; i++) await null;
    }
  }

  #nextFrame(): { fin: boolean; opcode: number; payload: Uint8Array } | undefined {
    const buf = this.#buf;
    const s = this.#start;
    const avail = this.#end - s;
    if (avail < 2) return undefined;
    const fin = (buf[s] & 0x80) !== 0;
    const opcode = buf[s] & 0x0f;
    const masked = (buf[s + 1] & 0x80) !== 0;
    let length = buf[s + 1] & 0x7f;
    let header = 2;
    if (length === 126) {
      if (avail < 4) return undefined;
      length = (buf[s + 2] << 8) | buf[s + 3];
      header = 4;
    } else if (length === 127) {
      if (avail < 10) return undefined;
      const view = new DataView(buf.buffer, buf.byteOffset + s + 2, 8);
      length = view.getUint32(0) * 2 ** 32 + view.getUint32(4);
      header = 10;
    }
    const maskAt = header;
    if (masked) header += 4;
    if (avail < header + length) return undefined;
    const payload = buf.subarray(s + header, s + header + length);
    if (masked) {
      for (let i = 0; i < payload.length; i++) payload[i] ^= buf[s + maskAt + (i & 3)];
    }
    this.#start += header + length;
    if (this.#start === this.#end) this.#start = this.#end = 0;
    return { fin, opcode, payload };
  }
}

/** A client frame: FIN set, masked as RFC 6455 requires of clients. */
function maskedFrame(opcode: number, payload: Uint8Array): Uint8Array {
  const n = payload.length;
  const header = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const frame = new Uint8Array(header + 4 + n);
  frame[0] = 0x80 | opcode;
  if (n < 126) {
    frame[1] = 0x80 | n;
  } else if (n < 65_536) {
    frame[1] = 0x80 | 126;
    frame[2] = n >>> 8;
    frame[3] = n & 0xff;
  } else {
    frame[1] = 0x80 | 127;
    const view = new DataView(frame.buffer);
    view.setUint32(2, Math.floor(n / 2 ** 32));
    view.setUint32(6, n >>> 0);
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  frame.set(mask, header);
  const body = header + 4;
  for (let i = 0; i < n; i++) frame[body + i] = payload[i] ^ mask[i & 3];
  return frame;
}

async function writeAll(conn: Deno.TcpConn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

async function readHead(
  conn: Deno.TcpConn,
  signal: AbortSignal,
): Promise<{ head: string; rest: Uint8Array }> {
  let data: Uint8Array = new Uint8Array(0);
  const chunk = new Uint8Array(4096);
  while (!signal.aborted) {
    const n = await conn.read(chunk);
    if (n === null) break;
    data = concatBytes([data, chunk.subarray(0, n)]);
    for (let i = 3; i < data.length; i++) {
      if (data[i - 3] === 13 && data[i - 2] === 10 && data[i - 1] === 13 && data[i] === 10) {
        return { head: new TextDecoder().decode(data.subarray(0, i - 3)), rest: data.slice(i + 1) };
      }
    }
    if (data.length > MAX_HEADER_BYTES) break;
  }
  throw new Error("WebSocket upgrade got no complete response");
}

async function acceptFor(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(key + GUID));
  return new Uint8Array(digest).toBase64();
}
