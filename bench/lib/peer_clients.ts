/**
 * Connecting to the peer MCP servers the benchmarks compare against (installed in bench/peers), each as a
 * Node child process on stdio, with its own temp directory and the shared Chromium switches.
 */
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { join } from "node:path";
import { CHROME_ARGS, CHROMIUM } from "./chromium.ts";
import { PEERS_DIR } from "./peers.ts";

export const PLAYWRIGHT_BIN = join(PEERS_DIR, "node_modules/@playwright/mcp/cli.js");
export const DEVTOOLS_BIN = join(
  PEERS_DIR,
  "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js",
);
export const CALL_TIMEOUT_MS = 30_000;

export interface PeerConnection {
  client: Client;
  version: string;
  /** The Node server process's id (for its memory), or null when the transport does not know it. */
  pid: number | null;
}

/** Spawns a peer's Node MCP server on stdio; its stderr is kept to explain a failed start. */
export async function connectPeer(
  pkg: string,
  bin: string,
  args: string[],
  tmp: string,
): Promise<PeerConnection> {
  let version: string;
  try {
    version =
      JSON.parse(await Deno.readTextFile(join(PEERS_DIR, "node_modules", pkg, "package.json"))).version;
    await Deno.stat(bin);
  } catch {
    throw new Error(`${pkg} is not installed in bench/peers (run: npm ci --prefix bench/peers)`);
  }
  const transport = new StdioClientTransport({
    command: "node",
    args: [bin, ...args],
    cwd: tmp, // Playwright MCP writes .playwright-mcp/ into its workspace root (the cwd).
    env: { ...Deno.env.toObject(), TMPDIR: tmp, CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: "1" },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array | string) => {
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  const client = new Client({ name: "krometrail-bench", version: "1.0.0" });
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  } catch (err) {
    await transport.close().catch(() => {});
    throw new Error(`${err instanceof Error ? err.message : err}${stderr ? `\n${stderr.trim()}` : ""}`);
  }
  return { client, version, pid: transport.pid };
}

/** @playwright/mcp, headless and isolated, with the shared Chromium switches in its config file. */
export async function connectPlaywright(
  tmp: string,
  extraArgs: string[] = [],
): Promise<PeerConnection> {
  // Extra Chromium switches have no CLI flag; they go in a config file next to the CLI flags.
  const config = join(tmp, "playwright-mcp.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({ browser: { browserName: "chromium", launchOptions: { args: CHROME_ARGS } } }),
  );
  return await connectPeer("@playwright/mcp", PLAYWRIGHT_BIN, [
    "--config",
    config,
    "--executable-path",
    CHROMIUM,
    "--headless",
    "--isolated",
    "--no-sandbox",
    "--output-dir",
    join(tmp, "playwright-out"),
    ...extraArgs,
  ], tmp);
}

/** chrome-devtools-mcp, headless and isolated, with the shared Chromium switches and no telemetry. */
export async function connectDevtools(tmp: string): Promise<PeerConnection> {
  return await connectPeer("chrome-devtools-mcp", DEVTOOLS_BIN, [
    "--executablePath",
    CHROMIUM,
    "--headless",
    "--isolated",
    ...CHROME_ARGS.map((a) => `--chromeArg=${a}`),
    "--no-usage-statistics",
    "--no-performance-crux",
  ], tmp);
}
