/**
 * Cooperative cancellation through the official client's abort signal (issue 18): a 20 s wait, a
 * temporal_debug_bundle over a long range and a generate_temporal_video each stop within 1 s on the
 * SERVER, not only in the client (whose promise rejects at once anyway). The server logs when a cancelled
 * call's work settled; the video's ffmpeg child is gone and no partial file is left; the process serves on.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { e2e, errorCode, fixtures, REPO_ROOT, structured, textOf, type ToolResult } from "./harness.ts";
import { until } from "./chromium_process.ts";
import { ffmpegEncoders as encoderChildren } from "../proc_children.ts";

/** The bound: each cancelled call's work ends within 1 s of the abort. */
const STOP_BOUND_MS = 1_000;

/** What the server's stderr said, with a way to wait for a line. */
class StderrLog {
  text = "";
  #waiters: Array<() => void> = [];

  feed(chunk: string): void {
    this.text += chunk;
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** The first match of `pattern` after `from` (an offset into the text), waiting up to `ms`. */
  async waitFor(pattern: RegExp, from: number, ms: number): Promise<RegExpExecArray> {
    const end = performance.now() + ms;
    for (;;) {
      const hit = pattern.exec(this.text.slice(from));
      if (hit) return hit;
      const left = end - performance.now();
      if (left <= 0) {
        throw new Error(`no ${pattern} on stderr within ${ms} ms: ${this.text.slice(from, from + 2000)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }
}

/** The harness's server, with stderr piped so the test can read the server's own account. */
async function startPipedServer(dataDir: string) {
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "mcp"],
    cwd: REPO_ROOT,
    env: { ...Deno.env.toObject(), KROMETRAIL_DATA_DIR: dataDir, KROMETRAIL_HEADLESS: "1", NO_COLOR: "1" },
    stderr: "pipe",
  });
  const log = new StderrLog();
  const decoder = new TextDecoder();
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    const text = typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    Deno.stderr.writeSync(new TextEncoder().encode(text));
    log.feed(text);
  });
  const client = new Client({ name: "krometrail-tests", version: "1.0.0" }, {
    versionNegotiation: { mode: { pin: "2026-07-28" } },
  });
  await client.connect(transport);
  // A response the server sent for a request the client cancelled would surface here.
  const protocolErrors: string[] = [];
  client.onerror = (err: Error) => protocolErrors.push(err.message);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    await client.callTool({ name, arguments: args }) as ToolResult;
  return { client, log, pid: transport.pid, call, protocolErrors };
}

type Piped = Awaited<ReturnType<typeof startPipedServer>>;

/** Every file under the data dir's videos/ folders (finished and partial). */
async function videoFiles(dir: string, inVideos = false): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) out.push(...await videoFiles(path, inVideos || entry.name === "videos"));
    else if (inVideos) out.push(path);
  }
  return out;
}

/**
 * Calls `tool`, aborts the client's signal once `ready` says the work is under way, and checks that
 * the server's work settled within the bound. Returns the settle time the server measured.
 */
async function cancelAndMeasure(
  server: Piped,
  tool: string,
  args: Record<string, unknown>,
  ready: () => Promise<void>,
): Promise<number> {
  const controller = new AbortController();
  const from = server.log.text.length;
  const pending = server.client.callTool({ name: tool, arguments: args }, { signal: controller.signal }).then(
    () => "answered" as const,
    () => "rejected" as const,
  );
  await ready();
  controller.abort("the test cancels it");
  assertEquals(await pending, "rejected", `${tool}: the client's call ends with the abort, not an answer`);
  // The server logs when the cancelled call's work really settled; nothing else is sent for the request.
  const line = await server.log.waitFor(
    new RegExp(`"?${tool}"? cancelled \\("?client"?\\): its work settled (\\d+) ms after the abort`),
    from,
    STOP_BOUND_MS + 4_000,
  );
  const settledMs = Number(line[1]);
  assert(settledMs <= STOP_BOUND_MS, `${tool}: its work settled ${settledMs} ms after the abort`);
  // The process still serves.
  const status = structured(await server.call("browser_status"));
  assertEquals(status.state, "running");
  console.log(`${tool}: cancelled work settled ${settledMs} ms after the abort`);
  return settledMs;
}

Deno.test({
  name:
    "cancellation: a 20 s wait, a long bundle and a long video stop on the server within 1 s of the abort",
  ...e2e,
  fn: async (t) => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-test-data-" });
    const server = await startPipedServer(dataDir);
    try {
      const started = await server.call("start_browser", { temporary: true });
      assert(!started.isError, "start_browser");
      const nav = await server.call("navigate_page", { url: `${site.origin}/cancellation/busy.html` });
      assert(!nav.isError, "navigate_page");
      const recordFrom = performance.now();

      await t.step({
        name: "a 20 s wait ends at once; the next call answers promptly",
        ...e2e,
        fn: async () => {
          const before = performance.now();
          await cancelAndMeasure(
            server,
            "wait",
            { time_ms: 20_000 },
            () => new Promise((r) => setTimeout(r, 300)),
          );
          // Far inside the 20 s the wait would have slept.
          assert(performance.now() - before < 15_000, "the wait did not run out its 20 s");
        },
      });

      // Several seconds of a page that repaints everything each frame: analysing or encoding it takes seconds.
      const recorded = performance.now() - recordFrom;
      if (recorded < 5_000) await new Promise((r) => setTimeout(r, 5_000 - recorded));
      const listed = await server.call("list_source_frames", {
        range: { start_ms: 0, end_ms: 600_000 },
        max_frames: 1,
      });
      assert(!listed.isError, `list_source_frames: ${textOf(listed).slice(0, 300)}`);
      const range = structured(listed).range as { start_ms: number; end_ms: number };
      const long = { start_ms: range.start_ms, end_ms: range.end_ms };
      assert(long.end_ms - long.start_ms >= 4_000, `a long range: ${JSON.stringify(long)}`);

      await t.step({
        name: "temporal_debug_bundle over a long range stops at its next safe point",
        ...e2e,
        fn: async () => {
          await cancelAndMeasure(
            server,
            "temporal_debug_bundle",
            { range: long },
            () => new Promise((r) => setTimeout(r, 400)),
          );
        },
      });

      await t.step({
        name: "generate_artifacts over a long range stops too",
        ...e2e,
        fn: async () => {
          // Another range than the bundle's, so no analysis of it is cached.
          const other = { start_ms: long.start_ms + 50, end_ms: long.end_ms };
          await cancelAndMeasure(
            server,
            "generate_artifacts",
            { range: other, generators: ["storyboard", "difference_map", "motion_history", "composite"] },
            () => new Promise((r) => setTimeout(r, 400)),
          );
        },
      });

      await t.step({
        name: "generate_temporal_video: ffmpeg is stopped and no partial video file is left",
        ...e2e,
        fn: async () => {
          const pid = server.pid;
          assert(pid, "the server's pid");
          await cancelAndMeasure(
            server,
            "generate_temporal_video",
            { range: long, policy: "real_time", fps: 60 },
            async () => {
              // Cancel while frames are being fed to the encoder.
              await until(
                "an encoding ffmpeg child",
                async () => (await encoderChildren(pid)).length > 0 ? true : undefined,
                60_000,
              );
              await new Promise((r) => setTimeout(r, 300));
            },
          );
          // Settled means the encode's cleanup ran: ffmpeg has exited and the partial file is gone.
          assertEquals(await encoderChildren(pid), [], "no ffmpeg child left");
          assertEquals(await videoFiles(dataDir), [], "no video file, partial or whole, was left");
        },
      });
      assertEquals(server.protocolErrors, [], "nothing further was sent for a cancelled request");

      await t.step({
        name: "shutdown cancels a running 20 s wait (shutting_down) and drains without running out",
        ...e2e,
        fn: async () => {
          const pid = server.pid;
          assert(pid, "the server's pid");
          const from = server.log.text.length;
          const waiting = server.call("wait", { time_ms: 20_000 });
          await new Promise((r) => setTimeout(r, 300));
          const signalled = performance.now();
          Deno.kill(pid, "SIGTERM");
          const answer = await waiting;
          const answeredMs = performance.now() - signalled;
          assert(answer.isError, "the running wait is answered with an error");
          assertEquals(errorCode(answer), "shutting_down");
          assert(answeredMs < 10_000, `answered ${Math.round(answeredMs)} ms after SIGTERM, not after 20 s`);
          // The process exits once the drain is done, well inside the 30 s shutdown deadline.
          await until("the server process exits", async () => {
            try {
              await Deno.stat(`/proc/${pid}`);
              return undefined;
            } catch {
              return true;
            }
          }, 30_000);
          assert(!/cleanup incomplete/.test(server.log.text.slice(from)), "the drain finished every step");
          console.log(`shutdown: the wait was answered ${Math.round(answeredMs)} ms after SIGTERM`);
        },
      });
    } finally {
      await server.client.close().catch(() => {});
      await site.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }
  },
});
