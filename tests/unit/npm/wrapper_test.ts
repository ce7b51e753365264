// The npm bin under Node against a stand-in deno (a shell script in a fake node_modules/deno): what reaches
// deno, what comes back (stdout bytes, exit code), and a forwarded SIGTERM. Needs node, not npm or a browser.
import { assert, assertEquals } from "../../assert.ts";
import { join } from "node:path";
import { SERVER_PERMISSIONS } from "../../../build.ts";

const NPM_DIR = new URL("../../../npm/", import.meta.url);

const FAKE_DENO = `#!/bin/sh
out="$FAKE_OUT"
printf '%s\\n' "$@" > "$out/args"
printf '%s|%s|%s' "$KROMETRAIL_NPM" "$INIT_CWD" "$(pwd)" > "$out/env"
for last in "$@"; do :; done
if [ "$last" = "wait" ]; then
  trap 'printf term > "$out/signal"; exit 42' TERM
  : > "$out/ready"
  while :; do sleep 0.05; done
fi
if [ "$last" = "die" ]; then kill -KILL $$; fi
printf 'stdout \\001 bytes\\n'
exit 7
`;

/** A package root like the installed one: bin/, lib/, package.json, and node_modules/deno with the stand-in. */
async function fakeInstall(): Promise<{ root: string; bin: string; out: string; cwd: string }> {
  const root = await Deno.makeTempDir({ prefix: "krometrail-npm-wrapper-" });
  const pkg = join(root, "node_modules", "krometrail");
  for (const file of ["package.json", "bin/krometrail.mjs", "lib/launch.mjs"]) {
    await Deno.mkdir(join(pkg, file, ".."), { recursive: true });
    await Deno.copyFile(new URL(file, NPM_DIR), join(pkg, file));
  }
  const deno = join(root, "node_modules", "deno");
  await Deno.mkdir(deno, { recursive: true });
  await Deno.writeTextFile(join(deno, "package.json"), '{"name":"deno","version":"0.0.0"}');
  await Deno.writeTextFile(join(deno, "deno"), FAKE_DENO, { mode: 0o755 });
  const out = join(root, "out");
  const cwd = join(root, "project");
  await Deno.mkdir(out);
  await Deno.mkdir(cwd);
  return { root, bin: join(pkg, "bin", "krometrail.mjs"), out, cwd };
}

function node(bin: string, args: string[], cwd: string, out: string): Deno.ChildProcess {
  const { INIT_CWD: _, ...env } = Deno.env.toObject();
  try {
    return new Deno.Command("node", {
      args: [bin, ...args],
      cwd,
      env: { ...env, FAKE_OUT: out },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new Error("node is not on PATH: the npm bin needs Node.js");
    }
    throw err;
  }
}

Deno.test("npm bin: deno gets the plan, stdout passes through untouched, the exit code comes back", async () => {
  const { root, bin, out, cwd } = await fakeInstall();
  try {
    const result = await node(bin, ["doctor", "--flag"], cwd, out).output();
    assertEquals(result.code, 7, new TextDecoder().decode(result.stderr));
    assertEquals(new TextDecoder().decode(result.stdout), "stdout \u0001 bytes\n");
    const app = join(root, "node_modules", "krometrail", "app");
    assertEquals((await Deno.readTextFile(join(out, "args"))).trimEnd().split("\n"), [
      "run",
      "--frozen",
      "--config",
      join(app, "deno.json"),
      ...SERVER_PERMISSIONS,
      join(app, "main.ts"),
      "doctor",
      "--flag",
    ]);
    const realCwd = await Deno.realPath(cwd);
    assertEquals(await Deno.readTextFile(join(out, "env")), `1|${realCwd}|${realCwd}`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("npm bin: SIGTERM reaches deno and deno's exit code is the bin's", async () => {
  const { root, bin, out, cwd } = await fakeInstall();
  const child = node(bin, ["mcp", "wait"], cwd, out);
  try {
    const deadline = Date.now() + 10_000;
    while (!(await exists(join(out, "ready")))) {
      assert(Date.now() < deadline, "the stand-in deno never started");
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill("SIGTERM");
    const result = await child.output();
    assertEquals(await Deno.readTextFile(join(out, "signal")), "term");
    assertEquals(result.code, 42);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("npm bin: a deno killed by a signal ends the bin by the same signal", async () => {
  const { root, bin, out, cwd } = await fakeInstall();
  try {
    const result = await node(bin, ["mcp", "die"], cwd, out).output();
    assertEquals(result.signal, "SIGKILL", `exit ${result.code}: ${new TextDecoder().decode(result.stderr)}`);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
