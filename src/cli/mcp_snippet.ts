/**
 * The MCP client configuration for one installation of krometrail: how this copy is started, as the
 * `mcpServers` JSON Claude Code and Cursor read, and as `claude mcp add` / `codex mcp add` one-liners.
 * Pure: the caller says what the installation is (doctor detects it; the README and the npm helper
 * render the same forms).
 */

/** The server's name in every client config. */
export const SERVER_NAME = "krometrail";

/**
 * The permissions a checkout runs the server with: the same as the compiled binary's (build.ts
 * SERVER_PERMISSIONS; a unit test keeps the two equal). Held here so the CLI need not import build.ts.
 */
export const CHECKOUT_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net=127.0.0.1,localhost,[::1]",
  "--allow-run",
  "--allow-sys",
];

export type Installation =
  /** A `deno compile` single binary: it is its own command. */
  | { kind: "binary"; execPath: string }
  /** The npm package (its bin wrapper sets KROMETRAIL_NPM=1). */
  | { kind: "npm" }
  /** A source checkout run by a deno runtime. */
  | { kind: "checkout"; denoPath: string; repoDir: string; mainPath: string };

export interface McpLaunch {
  command: string;
  args: string[];
}

export interface McpSnippet {
  installation: Installation["kind"];
  /** One line saying which form this is. */
  description: string;
  launch: McpLaunch;
  /** `{"mcpServers": {"krometrail": {command, args}}}`, pretty-printed (Claude Code .mcp.json, Cursor mcp.json). */
  mcp_servers_json: string;
  claude_add: string;
  codex_add: string;
  /** Another way to start the same installation (a checkout: `deno task start` in the repo). */
  alternative?: { description: string; launch: McpLaunch };
}

/** What doctor reads about the running process to tell the installations apart. */
export interface InstallationProbe {
  /** Deno.build.standalone: true inside a compiled binary. */
  standalone: boolean;
  execPath: string;
  /** KROMETRAIL_NPM=1 in the environment. */
  npm: boolean;
  repoDir: string;
  mainPath: string;
}

/** A deno runtime is named deno (deno.exe); a compiled binary carries its own name. */
function isDenoRuntime(execPath: string): boolean {
  const base = execPath.split(/[\\/]/).pop() ?? "";
  return /^deno(\.exe)?$/i.test(base);
}

export function detectInstallation(p: InstallationProbe): Installation {
  if (p.npm) return { kind: "npm" };
  if (p.standalone || !isDenoRuntime(p.execPath)) return { kind: "binary", execPath: p.execPath };
  return { kind: "checkout", denoPath: p.execPath, repoDir: p.repoDir, mainPath: p.mainPath };
}

export function mcpLaunch(inst: Installation): McpLaunch {
  switch (inst.kind) {
    case "binary":
      return { command: inst.execPath, args: ["mcp"] };
    case "npm":
      return { command: "npx", args: ["-y", "krometrail", "mcp"] };
    case "checkout":
      // --frozen: the lockfile pins every dependency; the server never rewrites it at start.
      return {
        command: inst.denoPath,
        args: ["run", "--quiet", "--frozen", ...CHECKOUT_PERMISSIONS, inst.mainPath, "mcp"],
      };
  }
}

const SHELL_SAFE = /^[A-Za-z0-9_\/.,:=@%+-]+$/;

/** POSIX shell quoting: bare when safe (no globbing, no expansion), else single-quoted. */
export function shellQuote(arg: string): string {
  if (arg.length > 0 && SHELL_SAFE.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

export function commandLine(launch: McpLaunch): string {
  return [launch.command, ...launch.args].map(shellQuote).join(" ");
}

export function mcpServersJson(launch: McpLaunch): string {
  return JSON.stringify(
    { mcpServers: { [SERVER_NAME]: { command: launch.command, args: launch.args } } },
    null,
    2,
  );
}

function describe(inst: Installation): string {
  switch (inst.kind) {
    case "binary":
      return `compiled binary ${inst.execPath}`;
    case "npm":
      return "npm package (npx -y krometrail)";
    case "checkout":
      return `source checkout ${inst.repoDir} run by ${inst.denoPath}`;
  }
}

export function mcpSnippet(inst: Installation): McpSnippet {
  const launch = mcpLaunch(inst);
  const line = commandLine(launch);
  const snippet: McpSnippet = {
    installation: inst.kind,
    description: describe(inst),
    launch,
    mcp_servers_json: mcpServersJson(launch),
    claude_add: `claude mcp add ${SERVER_NAME} -- ${line}`,
    codex_add: `codex mcp add ${SERVER_NAME} -- ${line}`,
  };
  if (inst.kind === "checkout") {
    snippet.alternative = {
      description: "the repository's start task (same flags, from deno.json)",
      launch: { command: inst.denoPath, args: ["task", "--quiet", "--cwd", inst.repoDir, "start"] },
    };
  }
  return snippet;
}
