// The npm package as a user gets it (issue 16: "CI installs the packed npm package into a temp dir and runs
// `npx krometrail doctor` and an MCP `tools/list` through it"): `npm pack` of npm/, installed into a temp
// project, run through npx with no deno on PATH (the bin must use the `deno` npm package it depends on) and an
// empty DENO_DIR, as on a machine with only Node: the first run fills deno's cache from nothing. It is
// packed from a temp copy of npm/ (KROMETRAIL_REPO_ROOT names this checkout), so nothing is staged here.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { delimiter, join } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { e2e, REPO_ROOT } from "./harness.ts";
import denoJson from "../../deno.json" with { type: "json" };

const NPM_DIR = join(REPO_ROOT, "npm");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<Run> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(command, { args, cwd, env, clearEnv: true, stdin: "null" }).output();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new Error(`${command} is not on PATH: this test needs Node.js and npm (CI installs them)`);
    }
    throw err;
  }
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

function expectSuccess(what: string, result: Run): void {
  assert(result.code === 0, `${what} exited ${result.code}:\n${result.stdout}\n${result.stderr}`);
}

/** The caller's environment minus every PATH entry that holds a deno: only Node and a browser remain. */
function nodeOnlyEnv(extra: Record<string, string>): Record<string, string> {
  const env = Deno.env.toObject();
  const path = (env.PATH ?? "").split(delimiter).filter((dir) => {
    try {
      Deno.statSync(join(dir, "deno"));
      return false;
    } catch {
      return true;
    }
  });
  return { ...env, PATH: path.join(delimiter), NO_COLOR: "1", ...extra };
}

/** Processes whose command line runs the installed package's main.ts (Linux /proc; elsewhere none). */
function serversUnder(installDir: string): number[] {
  const found: number[] = [];
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(join(installDir, "node_modules", "krometrail", "app", "main.ts"))) {
        found.push(Number(entry.name));
      }
    } catch { /* gone meanwhile */ }
  }
  return found;
}

Deno.test({
  name:
    "npm package: npm pack, install into a temp dir, npx krometrail doctor exits 0 and the server lists its tools",
  ...e2e,
  async fn() {
    const packDir = await Deno.makeTempDir({ prefix: "krometrail-npm-pack-" });
    const npmCopy = await Deno.makeTempDir({ prefix: "krometrail-npm-src-" });
    const denoDir = await Deno.makeTempDir({ prefix: "krometrail-npm-deno-dir-" });
    const installDir = await Deno.makeTempDir({ prefix: "krometrail-npm-install-" });
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-npm-data-" });
    const env = nodeOnlyEnv({ KROMETRAIL_DATA_DIR: dataDir, KROMETRAIL_HEADLESS: "1", DENO_DIR: denoDir });
    const timings: Record<string, number> = {};
    const timed = async <T>(label: string, body: () => Promise<T>): Promise<T> => {
      const t0 = performance.now();
      try {
        return await body();
      } finally {
        timings[label] = Math.round(performance.now() - t0);
      }
    };
    let client: Client | undefined;
    try {
      expectSuccess("npm --version", await run("npm", ["--version"], installDir, env));

      // The package's own files, without a staged app/ or a tarball a release run left there.
      for (const name of ["package.json", "pack.mjs", "README.md", "bin", "lib"]) {
        await copyTree(join(NPM_DIR, name), join(npmCopy, name));
      }
      const packed = await timed(
        "pack",
        () =>
          run("npm", ["pack", "--pack-destination", packDir], npmCopy, {
            ...env,
            KROMETRAIL_REPO_ROOT: REPO_ROOT,
          }),
      );
      expectSuccess("npm pack", packed);
      const tarball = join(packDir, `krometrail-${denoJson.version}.tgz`);
      const size = (await Deno.stat(tarball)).size;
      await assertAbsent(join(npmCopy, "app"), "postpack left the staged app/ behind");

      expectSuccess(
        "npm install",
        await timed(
          "install",
          () =>
            run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball], installDir, env),
        ),
      );

      // The installed package's first run: deno reads the shipped lock (--frozen) and fills its cache.
      const doctor = await timed(
        "first run: doctor",
        () => run("npx", ["--no-install", "krometrail", "doctor"], installDir, env),
      );
      expectSuccess("npx krometrail doctor", doctor);
      assert(
        doctor.stdout.includes(`krometrail ${denoJson.version}`),
        `doctor names another version:\n${doctor.stdout}`,
      );
      // The wrapper tells doctor it runs from npm, so the snippet it prints is the npx form.
      assert(
        doctor.stdout.includes("npx -y krometrail mcp"),
        `doctor's snippet is not the npx form:\n${doctor.stdout}`,
      );

      const transport = new StdioClientTransport({
        command: "npx",
        args: ["--no-install", "krometrail", "mcp"],
        cwd: installDir,
        env,
        stderr: "inherit",
      });
      client = new Client({ name: "krometrail-npm-test", version: "1.0.0" });
      const connected = client;
      await timed("mcp connect", () => connected.connect(transport));
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const name of ["start_browser", "navigate_page", "open_viewer", "ask_human"]) {
        assert(names.includes(name), `tools/list through npx lacks ${name}: ${names.join(", ")}`);
      }

      await client.close();
      client = undefined;
      // The client's close ends npx; the server behind the wrapper must not outlive it.
      const deadline = Date.now() + 30_000;
      while (serversUnder(installDir).length > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
      }
      assertEquals(serversUnder(installDir), [], "the deno server outlived its npx wrapper");
      console.error(`npm package: ${size} bytes packed; ms ${JSON.stringify(timings)}`);
    } finally {
      await client?.close().catch(() => {});
      for (const dir of [packDir, npmCopy, denoDir, installDir, dataDir]) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    }
  },
});

/** `path` does not exist (postpack removed what prepack staged). */
async function assertAbsent(path: string, message: string): Promise<void> {
  try {
    await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  throw new Error(`${message}: ${path}`);
}

async function copyTree(from: string, to: string): Promise<void> {
  const info = await Deno.stat(from);
  if (!info.isDirectory) return await Deno.copyFile(from, to);
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) await copyTree(join(from, entry.name), join(to, entry.name));
}
