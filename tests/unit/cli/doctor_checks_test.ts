import { assert, assertEquals, assertMatch } from "../../assert.ts";
import { join } from "node:path";
import { hostname } from "node:os";
import {
  checkConfig,
  checkDataDirWritable,
  checkInstances,
  checkProfiles,
  dataDirOf,
  folderUsage,
} from "../../../src/cli/doctor_checks.ts";
import { checkBrowserCandidates } from "../../../src/cli/doctor_browser.ts";

type Env = Record<string, string>;
const envOf = (vars: Env) => (k: string) => vars[k];

/** A pid that is surely not running: far above any pid_max. */
const DEAD_PID = 2 ** 30 + 12345;

async function withDir(fn: (dir: string) => Promise<void> | void): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-doctor-unit-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function fakeBrowser(dir: string, name: string, mode = 0o755): Promise<string> {
  const path = join(dir, name);
  await Deno.writeTextFile(path, "#!/bin/sh\necho fake\n");
  await Deno.chmod(path, mode);
  return path;
}

Deno.test("browser: a missing KROMETRAIL_CHROME fails with a fix naming it, its path and the fallback", async () => {
  await withDir(async (dir) => {
    const fallback = await fakeBrowser(dir, "chromium");
    const { checks, chosen } = checkBrowserCandidates(
      undefined,
      envOf({ KROMETRAIL_CHROME: "/nope/chrome", PATH: dir }),
    );
    assertEquals(chosen, undefined);
    const row = checks.find((c) => c.name === "KROMETRAIL_CHROME");
    assertEquals(row?.status, "fail");
    assertEquals(row?.detail, "/nope/chrome does not exist");
    assertMatch(
      row?.fix ?? "",
      /^KROMETRAIL_CHROME points at \/nope\/chrome, which does not exist: unset it/,
    );
    assert(row?.fix?.includes(fallback), row?.fix);
  });
});

Deno.test("browser: CHROME_BIN naming a non-executable file, and no fallback, suggests an install", async () => {
  await withDir(async (dir) => {
    const plain = await fakeBrowser(dir, "chrome", 0o644);
    const { checks } = checkBrowserCandidates(
      undefined,
      envOf({ CHROME_BIN: plain, PATH: join(dir, "empty") }),
    );
    const row = checks.find((c) => c.name === "CHROME_BIN");
    assertEquals(row?.status, "fail");
    assertMatch(
      row?.fix ?? "",
      /CHROME_BIN points at .* which is not an executable file: unset it or point it/,
    );
    assert(/install|brew/.test(row?.fix ?? ""), row?.fix);
  });
});

Deno.test("browser: nothing anywhere is one failure with the install hint", () => {
  const { checks, chosen } = checkBrowserCandidates(undefined, envOf({ PATH: "/nonexistent-dir" }));
  assertEquals(chosen, undefined);
  const row = checks.find((c) => c.name === "discovery");
  assertEquals(row?.status, "fail");
  assertMatch(row?.fix ?? "", /KROMETRAIL_CHROME/);
});

Deno.test("browser: a platform default is chosen and the unset variables are shown as knobs", async () => {
  await withDir(async (dir) => {
    const path = await fakeBrowser(dir, "google-chrome");
    const { checks, chosen } = checkBrowserCandidates(undefined, envOf({ PATH: dir }));
    assertEquals(chosen?.path, path);
    assertEquals(checks.map((c) => [c.name, c.status, c.detail]), [
      ["KROMETRAIL_CHROME", "ok", "not set"],
      ["CHROME_BIN", "ok", "not set"],
      ["platform default", "ok", `${path} found (chosen)`],
    ]);
  });
});

Deno.test("config: a refused setting is a needed failure naming the variable", () => {
  const { check, budget } = checkConfig(envOf({ KROMETRAIL_DISK_BUDGET_BYTES: "lots" }));
  assertEquals(check.status, "fail");
  assertEquals(check.needed, true);
  assertEquals(budget, undefined);
  assertMatch(check.fix ?? "", /KROMETRAIL_DISK_BUDGET_BYTES .*fix KROMETRAIL_DISK_BUDGET_BYTES or unset it/);
  const good = checkConfig(envOf({ KROMETRAIL_DISK_BUDGET_BYTES: "5000" }));
  assertEquals(good.check.status, "ok");
  assertEquals(good.budget, 5000);
});

Deno.test("data dir: found from the same variables the server reads", () => {
  assertEquals(dataDirOf(envOf({ KROMETRAIL_DATA_DIR: "/d", HOME: "/h" })), "/d");
  if (Deno.build.os === "linux") {
    assertEquals(dataDirOf(envOf({ HOME: "/h" })), "/h/.local/share/krometrail");
    assertEquals(dataDirOf(envOf({ HOME: "/h", XDG_DATA_HOME: "/x" })), "/x/krometrail");
  }
});

Deno.test("data dir: created when missing, probed and left clean; a file in its place fails", async () => {
  await withDir(async (dir) => {
    const target = join(dir, "a", "b");
    const made = await checkDataDirWritable(target, envOf({ KROMETRAIL_DATA_DIR: target }));
    assertEquals(made.status, "ok");
    assertEquals(made.data?.created, true);
    assertEquals([...Deno.readDirSync(target)], []);
    const file = join(dir, "file");
    await Deno.writeTextFile(file, "x");
    const bad = await checkDataDirWritable(file, envOf({ KROMETRAIL_DATA_DIR: file }));
    assertEquals(bad.status, "fail");
    assertMatch(bad.fix ?? "", /point KROMETRAIL_DATA_DIR at a folder you can write/);
  });
});

Deno.test("usage: bytes under the folder, recursively", async () => {
  await withDir(async (dir) => {
    await Deno.mkdir(join(dir, "x", "y"), { recursive: true });
    await Deno.writeFile(join(dir, "one"), new Uint8Array(100));
    await Deno.writeFile(join(dir, "x", "y", "two"), new Uint8Array(250));
    assertEquals(await folderUsage(dir), { bytes: 350, complete: true });
  });
});

Deno.test("instances: a live owner counts, a dead one is abandoned", async () => {
  await withDir(async (dir) => {
    const owner = async (id: string, pid: number) => {
      await Deno.mkdir(join(dir, "instances", id), { recursive: true });
      await Deno.writeTextFile(
        join(dir, "instances", id, "owner.json"),
        JSON.stringify({ pid, host: hostname(), started_at: new Date().toISOString() }),
      );
    };
    await owner("live", Deno.pid);
    await owner("dead", DEAD_PID);
    const check = await checkInstances(dir, 8_000);
    assertEquals(check.data, { live: 1, abandoned: 1 });
    assert(check.detail.includes(`pid ${Deno.pid}`), check.detail);
    assert(check.detail.includes("1 abandoned"), check.detail);
  });
});

Deno.test("profiles: free, held by a live Chrome, and a stale lock", async () => {
  await withDir(async (dir) => {
    const profile = async (name: string, lockPid?: number) => {
      const p = join(dir, "profiles", name);
      await Deno.mkdir(p, { recursive: true });
      if (lockPid !== undefined) await Deno.symlink(`${hostname()}-${lockPid}`, join(p, "SingletonLock"));
    };
    await profile("default");
    await profile("held", Deno.pid);
    await profile("stale", DEAD_PID);
    const rows = checkProfiles(dir);
    assertEquals(rows.map((r) => [r.name, r.status, r.data?.state]), [
      ["default", "ok", "free"],
      ["held", "warn", "held"],
      ["stale", "ok", "stale"],
    ]);
    assert(rows[1].detail.includes(`pid ${Deno.pid}`), rows[1].detail);
    assert(rows.every((r) => !r.needed));
  });
});

Deno.test("profiles: none yet is said plainly", async () => {
  await withDir((dir) => {
    const rows = checkProfiles(dir);
    assertEquals(rows.length, 1);
    assertEquals(rows[0].status, "ok");
  });
});
