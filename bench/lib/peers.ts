/**
 * bench/peers: the pinned npm packages the benchmarks compare against (not krometrail dependencies),
 * installed into bench/peers/node_modules on demand.
 */
import { fileURLToPath } from "node:url";

export const PEERS_DIR = fileURLToPath(new URL("../peers/", import.meta.url));

/**
 * Runs `npm ci` for bench/peers with npm's output shown. Returns why it failed, or undefined; either way the
 * caller checks for the files it needs, so a failed install is reported as a missing peer, not a crash.
 */
export async function installPeers(): Promise<string | undefined> {
  console.error("Installing peers from bench/peers/package-lock.json (npm ci) …");
  try {
    const npm = new Deno.Command("npm", {
      args: ["ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund"],
      stdout: "inherit",
      stderr: "inherit",
    });
    return (await npm.output()).success ? undefined : "npm ci failed";
  } catch (err) {
    return `npm could not run (${err instanceof Error ? err.message : err})`;
  }
}
