import { assert, assertEquals } from "../../assert.ts";
import { join } from "node:path";
import { SERVER_PERMISSIONS } from "../../../build.ts";
import * as launcher from "../../../npm/lib/launch.mjs";
import denoJson from "../../../deno.json" with { type: "json" };
import npmJson from "../../../npm/package.json" with { type: "json" };

const root = new URL("../../../", import.meta.url);

Deno.test("npm launcher: the server gets exactly the compiled binary's permissions", () => {
  assertEquals(launcher.SERVER_PERMISSIONS, [...SERVER_PERMISSIONS]);
});

Deno.test("npm launcher: deno run --frozen with the shipped config, then the user's arguments", () => {
  const plan = launcher.launchPlan("/opt/pkg", ["mcp", "--x"], {
    PATH: "/bin",
    INIT_CWD: "/home/u/proj",
  });
  assertEquals(plan.args, [
    "run",
    "--frozen",
    "--config",
    join("/opt/pkg", "app", "deno.json"),
    ...SERVER_PERMISSIONS,
    join("/opt/pkg", "app", "main.ts"),
    "mcp",
    "--x",
  ]);
  assertEquals(
    plan.env.PATH,
    "/bin",
    "the caller's environment passes through",
  );
  assertEquals(plan.env.KROMETRAIL_NPM, "1", "doctor prints the npx snippet");
  assertEquals(plan.env.DENO_NO_PACKAGE_JSON, "1");
  assertEquals(
    plan.env.INIT_CWD,
    "/home/u/proj",
    "npx's INIT_CWD (where the user typed) is kept",
  );
});

Deno.test("npm launcher: without INIT_CWD, folders are written under the cwd", () => {
  assertEquals(launcher.launchPlan("/opt/pkg", [], {}).env.INIT_CWD, Deno.cwd());
});

Deno.test("npm launcher: a package with no deno next to it is a message, not a crash", async () => {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-npm-unit-" });
  try {
    await Deno.writeTextFile(
      join(dir, "package.json"),
      '{"name":"krometrail"}',
    );
    const result = launcher.resolveDeno(dir);
    assert(result instanceof Error);
    assert(
      result.message.includes("`deno` npm package is not installed"),
      result.message,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("npm package: version follows deno.json, deno is pinned to the CI's Deno, the bin is shipped", async () => {
  assertEquals(
    npmJson.version,
    denoJson.version,
    "bump npm/package.json with deno.json (docs/release.md)",
  );
  const ci = await Deno.readTextFile(new URL(".ci/run", root));
  const pinned = ci.match(/^DENO_VERSION=(\S+)$/m)?.[1];
  assertEquals(npmJson.dependencies, { deno: pinned });
  assertEquals(npmJson.bin, { krometrail: "bin/krometrail.mjs" });
  for (const entry of ["bin/", "lib/", "app/"]) {
    assert(npmJson.files.includes(entry), entry);
  }
  const bin = await Deno.readTextFile(new URL("npm/bin/krometrail.mjs", root));
  assert(bin.startsWith("#!/usr/bin/env node\n"));
});
