// The npm package's launcher: runs the krometrail server (app/main.ts) on the Deno that the `deno` npm
// package installed, under the exact permissions the compiled binary gets (build.ts SERVER_PERMISSIONS;
// tests/unit/npm/launch_test.ts holds the two lists equal). Plain Node, no dependencies beyond `deno`.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { constants } from "node:os";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

/** Same list, same order as SERVER_PERMISSIONS in build.ts. */
export const SERVER_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net=127.0.0.1,localhost,[::1]",
  "--allow-run",
  "--allow-sys",
];

/** The installed package's root (the folder holding package.json, bin/, lib/ and app/). */
export const PACKAGE_ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * The deno command line and environment for `krometrail <args>`. `--config` and an absolute main module
 * make it independent of the user's cwd, which stays theirs: demo and record write folders there.
 * @param {string} packageRoot
 * @param {readonly string[]} args
 * @param {Record<string, string | undefined>} env
 * @returns {{ args: string[], env: Record<string, string | undefined> }}
 */
export function launchPlan(packageRoot, args, env) {
  const app = join(packageRoot, "app");
  return {
    args: [
      "run",
      "--frozen",
      "--config",
      join(app, "deno.json"),
      ...SERVER_PERMISSIONS,
      join(app, "main.ts"),
      ...args,
    ],
    env: {
      ...env,
      // doctor prints the npx form of the MCP configuration snippet.
      KROMETRAIL_NPM: "1",
      // deno.json and the shipped deno.lock are the whole graph (so --frozen holds), whatever
      // package.json surrounds the install (this package's own, the user's project).
      DENO_NO_PACKAGE_JSON: "1",
      // An update notice is noise on an MCP server's stderr; the version is pinned by this package.
      DENO_NO_UPDATE_CHECK: "1",
      // npx sets INIT_CWD to where it was typed; a direct run of the bin falls back to the cwd.
      INIT_CWD: env.INIT_CWD || process.cwd(),
    },
  };
}

/**
 * The deno executable from the `deno` npm package, or an Error that says what to do.
 * @param {string} packageRoot
 * @returns {string | Error}
 */
export function resolveDeno(packageRoot) {
  const require = createRequire(join(packageRoot, "package.json"));
  let denoDir;
  try {
    denoDir = dirname(require.resolve("deno/package.json"));
  } catch {
    return new Error(
      "the `deno` npm package is not installed next to krometrail; reinstall krometrail with npm " +
        "(it depends on deno), or run it from a checkout with `deno task start`",
    );
  }
  const exe = join(denoDir, process.platform === "win32" ? "deno.exe" : "deno");
  if (existsSync(exe)) return exe;
  // Installed with --ignore-scripts: deno's postinstall did not link the platform binary; its own
  // installer finds the @deno/<platform> package.
  try {
    return require(join(denoDir, "install_api.cjs")).runInstall();
  } catch (err) {
    return new Error(
      `the deno runtime for ${process.platform}-${process.arch} is missing (${
        err instanceof Error ? err.message : String(err)
      }); reinstall krometrail without --ignore-scripts and with optional dependencies enabled`,
    );
  }
}

const FORWARDED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Runs krometrail with stdio inherited (stdout is MCP's), signals forwarded and the exit code propagated.
 * @param {readonly string[]} args
 */
export function run(args) {
  const deno = resolveDeno(PACKAGE_ROOT);
  if (deno instanceof Error) {
    process.stderr.write(`krometrail: ${deno.message}\n`);
    process.exit(1);
  }
  const plan = launchPlan(PACKAGE_ROOT, args, process.env);
  const child = spawn(deno, plan.args, { stdio: "inherit", env: plan.env });
  /** @param {"SIGINT" | "SIGTERM" | "SIGHUP"} signal */
  const forward = (signal) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  };
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  child.on("error", (err) => {
    process.stderr.write(
      `krometrail: could not start deno at ${deno}: ${err.message}\n`,
    );
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // Die of the same signal, so the caller sees how the server ended.
      for (const s of FORWARDED_SIGNALS) process.removeListener(s, forward);
      process.exitCode = 128 + (constants.signals[signal] ?? 0);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code ?? 1);
  });
}
