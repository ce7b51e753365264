import { Client } from "@modelcontextprotocol/client";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { LineLimitedStdioTransport } from "../../src/mcp/stdio_limits.ts";
import { e2e, fixtures, REPO_ROOT, startServer, textOf } from "./harness.ts";
import { allProcs, descendants, procInfo, survivors, waitFor } from "./process_util.ts";

function serverEnv(dataDir: string): Record<string, string> {
  return { ...Deno.env.toObject(), KROMETRAIL_DATA_DIR: dataDir, KROMETRAIL_HEADLESS: "1", NO_COLOR: "1" };
}

/** Newline-delimited JSON-RPC over a raw child process: what any client's bytes look like on the wire. */
class RawWire {
  #reader: ReadableStreamDefaultReader<string>;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #buffered = "";

  constructor(readonly child: Deno.ChildProcess) {
    this.#reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    this.#writer = child.stdin.getWriter();
  }

  async send(line: string): Promise<void> {
    await this.#writer.write(new TextEncoder().encode(line + "\n"));
  }

  /** The next response carrying `id` (notifications and other ids are skipped). */
  async response(id: unknown, timeoutMs = 20_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const newline = this.#buffered.indexOf("\n");
      if (newline >= 0) {
        const line = this.#buffered.slice(0, newline);
        this.#buffered = this.#buffered.slice(newline + 1);
        const message = JSON.parse(line) as Record<string, unknown>;
        if ("id" in message && message.id === id && !("method" in message)) return message;
        continue;
      }
      const read = await Promise.race([
        this.#reader.read(),
        new Promise<null>((r) => setTimeout(() => r(null), Math.max(1, deadline - Date.now()))),
      ]);
      if (read === null) break;
      if (read.done) throw new Error(`server stdout ended while waiting for response ${id}`);
      this.#buffered += read.value;
    }
    throw new Error(`no response ${id} within ${timeoutMs} ms`);
  }

  async close(): Promise<void> {
    await this.#writer.close().catch(() => {});
    await this.child.status;
  }
}

Deno.test({
  name: "an 11 MB tools/call gets a JSON-RPC error naming its size and the limit; the server keeps serving",
  ...e2e,
  fn: async () => {
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-oversize-" });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "mcp"],
      cwd: REPO_ROOT,
      env: serverEnv(dataDir),
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const wire = new RawWire(child);
    try {
      await wire.send(JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      }));
      assert((await wire.response(1)).result, "initialize answered");
      await wire.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      // The id comes last, after 11 MB of arguments: it must be recovered from the stream's tail.
      const huge = JSON.stringify({
        jsonrpc: "2.0",
        method: "tools/call",
        params: { name: "evaluate_page", arguments: { expression: `"${"x".repeat(11 * 1024 * 1024)}"` } },
        id: "big-1",
      });
      const size = new TextEncoder().encode(huge).byteLength;
      await wire.send(huge);
      const rejected = await wire.response("big-1") as {
        error: {
          code: number;
          message: string;
          data: { code: string; retry: string; details: Record<string, number> };
        };
      };
      assertEquals(rejected.error.code, -32600);
      assertMatch(rejected.error.message, new RegExp(`${size}.*${10 * 1024 * 1024}`));
      assertEquals(rejected.error.data.code, "resource_limit_exceeded");
      assertEquals(rejected.error.data.retry, "never");
      assertEquals([rejected.error.data.details.actual, rejected.error.data.details.limit], [size, 10485760]);
      // The same connection still serves.
      await wire.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }));
      assertEquals((await wire.response(2)).result, {});
      await wire.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }));
      const listed = (await wire.response(3)).result as { tools: unknown[] };
      assert(listed.tools.length > 10, "tools/list answers after the oversized request");
    } finally {
      await wire.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "resources/read with malformed percent-encoding is invalid_uri with a recovery about the URI",
  ...e2e,
  fn: async () => {
    const server = await startServer();
    try {
      for (const uri of ["krometrail://evidence/%E0%A4%A", "krometrail://evidence/screenshots/%ZZ.png"]) {
        const error = await server.client.readResource({ uri }).then(
          () => null,
          (e: unknown) => e as { message: string; data?: Record<string, unknown> },
        );
        assert(error, `${uri} is rejected`);
        assertEquals(error.data?.code, "invalid_uri", JSON.stringify(error.data));
        assertEquals(error.data?.retry, "never");
        assertMatch(String(error.data?.recovery), /URI .*percent|% must start/);
        assertMatch(error.message, /malformed percent-encoding/);
      }
      // A well-formed URI that names nothing is still evidence_not_found.
      const missing = await server.client.readResource({ uri: "krometrail://evidence/screenshots/none.png" })
        .then(() => null, (e: unknown) => e as { data?: Record<string, unknown> });
      assertEquals(missing?.data?.code, "evidence_not_found");
    } finally {
      await server.close();
    }
  },
});

Deno.test({
  name: "kill -9 of the `deno task start` wrapper: the server and its Chromium exit within 5 s",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-orphan-" });
    // Spawned by hand, not by StdioClientTransport: under Deno that transport closes the pipe when the task
    // process exits, which would end the server through stdin. A client such as a desktop app keeps its
    // end open, and that is the case under test.
    const task = new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "start"],
      cwd: REPO_ROOT,
      env: serverEnv(dataDir),
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    // The server's line framing is symmetric, so it also serves as the client's end of the pipe.
    const client = new Client({ name: "krometrail-tests", version: "1.0.0" }, {
      supportedProtocolVersions: ["2025-11-25"],
    });
    let serverPid = 0;
    try {
      await client.connect(new LineLimitedStdioTransport(task.stdout, task.stdin));
      const taskPid = task.pid;
      const call = async (name: string, args: Record<string, unknown> = {}) => {
        const result = await client.callTool({ name, arguments: args }) as { isError?: boolean };
        if (result.isError) throw new Error(`${name} failed: ${textOf(result as never)}`);
      };
      // The managed profile lives under the data dir, so its browser is findable by command line.
      await call("start_browser", {});
      await call("navigate_page", { url: `${site.origin}/index.html` });

      const server = allProcs().find((p) => p.ppid === taskPid && p.cmdline.includes("main.ts mcp"));
      assert(server, `the real server runs as a child of the task process ${taskPid}`);
      serverPid = server.pid;
      const tracked = [...descendants(server.pid), ...allProcs().filter((p) => p.cmdline.includes(dataDir))];
      const browser = [...new Map(tracked.map((p) => [p.pid, p])).values()];
      assert(browser.some((p) => /chrom/i.test(p.cmdline)), "Chromium runs under the server");

      Deno.kill(taskPid, "SIGKILL");
      const killedAt = performance.now();
      const since = (waited: number | null) =>
        waited === null ? null : Math.round(performance.now() - killedAt);
      const serverGone = since(await waitFor(() => procInfo(server.pid)?.start !== server.start, 10_000));
      const browserGone = since(await waitFor(() => survivors(browser).length === 0, 10_000));
      console.error(
        `after kill -9 of the task: server gone at ${serverGone} ms, its ${browser.length} browser processes at ${browserGone} ms`,
      );
      assert(
        serverGone !== null && serverGone <= 5_000,
        `server still running ${serverGone ?? "10000+"} ms after its parent died`,
      );
      const left = survivors(browser);
      assert(
        browserGone !== null && browserGone <= 5_000,
        `${left.length} browser processes left: ${left.map((p) => p.cmdline.slice(0, 80)).join("; ")}`,
      );
    } finally {
      await client.close().catch(() => {});
      // Never leave a server or browser behind if an assertion above failed.
      const leftovers = [
        task.pid,
        serverPid,
        ...allProcs().filter((p) => p.cmdline.includes(dataDir)).map((p) => p.pid),
      ];
      for (const pid of leftovers.filter((pid) => pid > 0)) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* gone */ }
      }
      await task.status;
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      await site.close();
    }
  },
});
