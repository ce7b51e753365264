import { assert, assertEquals } from "../assert.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { e2e, REPO_ROOT } from "./harness.ts";

/**
 * Raw JSON-RPC over the real server's stdio: a client library would rebuild the arguments object
 * and lose an own `__proto__` key before it is sent, so the bytes are written by hand here.
 */
class RawServer {
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: AsyncIterator<string>;
  #buffer = "";
  #reader: ReadableStreamDefaultReader<string>;

  constructor(dataDir: string) {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "mcp"],
      cwd: REPO_ROOT,
      env: { ...Deno.env.toObject(), KROMETRAIL_DATA_DIR: dataDir, NO_COLOR: "1" },
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reader = this.#child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    this.#lines = this.#read();
  }

  async *#read(): AsyncGenerator<string> {
    while (true) {
      const newline = this.#buffer.indexOf("\n");
      if (newline >= 0) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        yield line;
        continue;
      }
      const { value, done } = await this.#reader.read();
      if (done) return;
      this.#buffer += value;
    }
  }

  async write(text: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(text + "\n"));
  }

  /** Sends a raw request line and returns the response with its id. */
  async request(id: number, text: string): Promise<Record<string, unknown>> {
    await this.write(text);
    while (true) {
      const next = await this.#lines.next();
      if (next.done) throw new Error(`server closed before answering request ${id}`);
      const message = JSON.parse(next.value);
      if (message.id === id) return message;
    }
  }

  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    const exited = await Promise.race([
      this.#child.status.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
    ]);
    if (!exited) this.#child.kill("SIGKILL");
    await this.#reader.cancel().catch(() => {});
    await this.#child.status;
  }
}

Deno.test(
  "an own __proto__ argument is refused as unknown by every tool, at the top and nested",
  e2e,
  async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-test-data-" });
    const server = new RawServer(dataDir);
    try {
      const init = await server.request(
        1,
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw", version: "1" },
          },
        }),
      );
      assert(init.result, JSON.stringify(init).slice(0, 300));
      await server.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      const listed = await server.request(2, JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }));
      const tools = (listed.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
      assert(tools.length > 30, `${tools.length} tools listed`);
      let id = 10;
      const accepted: string[] = [];
      const cases = [
        ...tools.map((name) => ({ name, args: '{"__proto__": 1}', path: "(arguments)" })),
        ...tools.map((name) => ({ name, args: '{"__proto__": {"page_id": "p1"}}', path: "(arguments)" })),
        { name: "click", args: '{"locator": {"text": "Go", "__proto__": {}}}', path: "locator" },
        {
          name: "batch",
          args: '{"steps": [{"tool": "list_pages", "args": {"__proto__": 1}}]}',
          path: "steps.0.args",
        },
      ];
      for (const c of cases) {
        id++;
        // Written by hand: JSON.stringify of a parsed object would keep the key too, but this is the wire form.
        const response = await server.request(
          id,
          `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${c.name}","arguments":${c.args}}}`,
        );
        const result = response.result as {
          isError?: boolean;
          structuredContent?: { error?: Record<string, unknown> };
        };
        const error = result?.structuredContent?.error as
          | { code: string; message: string; affected?: { argument?: string } }
          | undefined;
        if (!result?.isError || error?.code !== "invalid_arguments" || !error.message.includes("__proto__")) {
          accepted.push(`${c.name} ${c.args}: ${JSON.stringify(response).slice(0, 200)}`);
          continue;
        }
        assertEquals(error.affected?.argument, c.path, `${c.name} ${c.args}`);
      }
      assertEquals(accepted, [], `${accepted.length} calls accepted an own __proto__ key`);
    } finally {
      await server.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
);
