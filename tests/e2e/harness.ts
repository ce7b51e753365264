import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { fileURLToPath } from "node:url";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { serveStatic, type StaticServer } from "../../src/demo/static_server.ts";
import { chromeArgs } from "../../src/browser/launch.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The SDK probes discovery on the session's own connection for subclasses (no sibling process). */
class SessionStdioTransport extends StdioClientTransport {}

export type Protocol = "2026-07-28" | "2025-11-25" | "2025-06-18";

export interface ServerHandle {
  client: Client;
  dataDir: string;
  /** The server process id (for crash tests). */
  pid: number | null;
  /** Calls a tool and returns its result as the SDK parsed it. */
  call(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

export interface ToolResult {
  content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Starts the real server process (same permissions as the compiled binary) and connects a client. */
export async function startServer(
  opts: { protocol?: Protocol; env?: Record<string, string>; dataDir?: string } = {},
): Promise<ServerHandle> {
  const protocol = opts.protocol ?? "2026-07-28";
  const dataDir = opts.dataDir ?? await Deno.makeTempDir({ prefix: "krometrail-test-data-" });
  const transport = new SessionStdioTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "mcp"],
    cwd: REPO_ROOT,
    env: {
      ...Deno.env.toObject(),
      KROMETRAIL_DATA_DIR: dataDir,
      KROMETRAIL_HEADLESS: "1",
      NO_COLOR: "1",
      ...opts.env,
    },
    stderr: "inherit",
  });
  const client = protocol === "2026-07-28"
    ? new Client({ name: "krometrail-tests", version: "1.0.0" }, {
      versionNegotiation: { mode: { pin: protocol } },
    })
    : new Client({ name: "krometrail-tests", version: "1.0.0" }, { supportedProtocolVersions: [protocol] });
  await client.connect(transport);
  return {
    client,
    dataDir,
    pid: transport.pid,
    async call(name, args = {}) {
      return await client.callTool({ name, arguments: args }) as ToolResult;
    },
    async close() {
      await client.close().catch(() => {});
      if (!opts.dataDir) await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}

export function textOf(result: ToolResult): string {
  return result.content.filter((c) => c.type === "text").map((c) => c.text ?? "").join("\n");
}

export function structured(result: ToolResult): Record<string, unknown> {
  if (!result.structuredContent) throw new Error(`no structuredContent in ${textOf(result).slice(0, 300)}`);
  return result.structuredContent;
}

export function errorCode(result: ToolResult): string | undefined {
  return (result.structuredContent?.error as { code?: string } | undefined)?.code;
}

export function fixtures(): StaticServer {
  return serveStatic();
}

/** Finds a ref in a concise snapshot's target index. */
export function refOf(snapshot: Record<string, unknown>, role: string, name: string | RegExp): string {
  const targets = (snapshot.targets ?? []) as Array<{ ref: string; role: string; name: string }>;
  const hit = targets.find((t) =>
    t.role === role && (typeof name === "string" ? t.name === name : name.test(t.name))
  );
  if (!hit) throw new Error(`no ${role} ${name} in snapshot: ${JSON.stringify(targets.slice(0, 20))}`);
  return hit.ref;
}

export const e2e = { sanitizeOps: false, sanitizeResources: false };

/**
 * Runs a test body against a fresh server and the fixture site, closing both however it ends.
 * With `browser`, a temporary-profile browser is started first.
 */
export async function withServer(
  body: (server: ServerHandle, site: StaticServer) => Promise<void>,
  opts: { browser?: Record<string, unknown>; protocol?: Protocol; env?: Record<string, string> } = {},
): Promise<void> {
  const site = fixtures();
  const server = await startServer({ protocol: opts.protocol, env: opts.env });
  try {
    if (opts.browser) {
      const started = await server.call("start_browser", { temporary: true, ...opts.browser });
      if (started.isError) throw new Error(`start_browser failed: ${textOf(started)}`);
    }
    await body(server, site);
  } finally {
    await server.close();
    await site.close();
  }
}

/** A headless Chromium with a CDP endpoint of its own (for attach tests and benchmarks), and its port. */
export async function startDebugChrome(
  userDataDir: string,
  windowSize?: { width: number; height: number },
): Promise<{ child: Deno.ChildProcess; port: number }> {
  const executable = Deno.env.get("KROMETRAIL_CHROME") ?? Deno.env.get("CHROME_BIN") ?? "/usr/bin/chromium";
  const args = chromeArgs({ executable, userDataDir, profileLabel: "test", headless: true, windowSize });
  const child = new Deno.Command(executable, { args, stdout: "null", stderr: "null" }).spawn();
  for (let i = 0; i < 400; i++) {
    try {
      const port = Number((await Deno.readTextFile(`${userDataDir}/DevToolsActivePort`)).split("\n")[0]);
      if (port > 0) return { child, port };
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 25));
  }
  child.kill("SIGKILL");
  throw new Error("debug Chromium did not start");
}

/** Stops the browser and starts another, as withServer's `browser` option does for a fresh server. */
export async function freshBrowser(server: ServerHandle, browser: Record<string, unknown>): Promise<void> {
  const stopped = await server.call("stop_browser", {});
  if (stopped.isError) throw new Error(`stop_browser failed: ${textOf(stopped)}`);
  const started = await server.call("start_browser", { temporary: true, ...browser });
  if (started.isError) throw new Error(`start_browser failed: ${textOf(started)}`);
}

export type SharedCheck = [name: string, check: (server: ServerHandle, site: StaticServer) => Promise<void>];

/**
 * Runs checks as steps of one test on one server process (its start is most of what each would otherwise
 * cost under load); each check gets a browser (and screencast) of its own, as with a server of its own.
 */
export function sharedServerChecks(
  t: Deno.TestContext,
  checks: SharedCheck[],
  browser: Record<string, unknown>,
): Promise<void> {
  return withServer(async (server, site) => {
    for (const [i, [name, check]] of checks.entries()) {
      await t.step({
        name,
        ...e2e,
        fn: async () => {
          if (i > 0) await freshBrowser(server, browser);
          await check(server, site);
        },
      });
    }
  }, { browser });
}
