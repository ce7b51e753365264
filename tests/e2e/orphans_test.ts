/**
 * A launched Chromium never outlives its server: SIGKILL of the server ends it (watchdog), a
 * restarted server reaps a crashed instance's browser when the watchdog could not, and a failed
 * temporary launch leaves no profile behind. Processes are counted from /proc by profile dir.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  e2e,
  errorCode,
  fixtures,
  type ServerHandle,
  startDebugChrome,
  startServer,
  structured,
  textOf,
} from "./harness.ts";
import {
  chromiumProcessesOf,
  exists,
  killHard,
  tempProfileIn,
  waitUntil,
  watchdogsOf,
} from "./orphans_util.ts";

/** The bound: every Chromium process of a killed server gone within 5 s. */
const ORPHAN_BOUND_MS = 5_000;

async function scratchDirs(): Promise<{ dataDir: string; tmpDir: string; remove: () => Promise<void> }> {
  const dataDir = await Deno.makeTempDir({ prefix: "krometrail-orphans-data-" });
  // A private TMPDIR for the server, so its temporary profiles are the only ones counted.
  const tmpDir = await Deno.makeTempDir({ prefix: "krometrail-orphans-tmp-" });
  return {
    dataDir,
    tmpDir,
    remove: async () => {
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      await Deno.remove(tmpDir, { recursive: true }).catch(() => {});
    },
  };
}

async function recording(server: ServerHandle): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    const capture = structured(await server.call("browser_status")).capture as
      | { frames_stored?: number }
      | undefined;
    if ((capture?.frames_stored ?? 0) > 0) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

Deno.test({
  name:
    "kill -9 of the server while recording: its Chromium processes are gone within 5 s, and its temporary profile",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dirs = await scratchDirs();
    const server = await startServer({ dataDir: dirs.dataDir, env: { TMPDIR: dirs.tmpDir } });
    try {
      const started = await server.call("start_browser", {
        temporary: true,
        url: `${site.origin}/flash.html`,
      });
      assert(!started.isError, textOf(started));
      const profile = tempProfileIn(dirs.tmpDir);
      assert(profile, "the temporary profile is under the server's TMPDIR");
      // Recording: frames are being stored when the server dies.
      assert(await recording(server), "frames were being stored before the kill");
      const before = chromiumProcessesOf(profile).length;
      assert(before >= 2, `Chromium runs several processes before the kill (saw ${before})`);
      assert(server.pid, "server pid known");
      killHard(server.pid);
      const elapsed = await waitUntil(
        () => chromiumProcessesOf(profile).length === 0,
        ORPHAN_BOUND_MS + 5_000,
      );
      const left = chromiumProcessesOf(profile).length;
      console.error(
        `orphans: ${before} Chromium processes before kill -9, ${left} after; 0 reached in ${elapsed} ms`,
      );
      assert(
        elapsed !== undefined && elapsed <= ORPHAN_BOUND_MS,
        `0 orphans within 5 s (took ${elapsed} ms)`,
      );
      const removed = await waitUntil(() => !exists(profile), 10_000);
      console.error(`orphans: temporary profile gone ${removed} ms after the processes`);
      assert(removed !== undefined, "the temporary profile is removed");
      assert(
        await waitUntil(() => watchdogsOf(profile).length === 0, 5_000) !== undefined,
        "the watchdog exits",
      );
    } finally {
      await server.close();
      await site.close();
      await dirs.remove();
    }
  },
});

/** Starts a browser, kills its watchdog (the first line of defence) and then the server itself. */
async function crashLeavingBrowser(
  server: ServerHandle,
  args: Record<string, unknown>,
  profileOf: () => string | undefined,
): Promise<string> {
  const started = await server.call("start_browser", args);
  assert(!started.isError, textOf(started));
  const profile = profileOf();
  assert(profile, "profile dir known");
  watchdogsOf(profile).forEach(killHard);
  assert(server.pid, "server pid known");
  killHard(server.pid);
  await server.close();
  // Without its watchdog the browser survives the server: the defect the restart must repair.
  await new Promise((r) => setTimeout(r, 500));
  assert(chromiumProcessesOf(profile).length > 0, "the crashed server's browser is still running");
  return profile;
}

Deno.test({
  name: "a restarted server reaps a crashed instance's browser first, so start_browser {} succeeds",
  ...e2e,
  fn: async () => {
    const dirs = await scratchDirs();
    const env = { TMPDIR: dirs.tmpDir };
    const managed = `${dirs.dataDir}/profiles/default`;
    try {
      await crashLeavingBrowser(await startServer({ dataDir: dirs.dataDir, env }), {}, () => managed);
      const second = await startServer({ dataDir: dirs.dataDir, env });
      try {
        assertEquals(chromiumProcessesOf(managed).length, 0, "the restart killed the orphaned browser");
        const status = structured(await second.call("browser_status"));
        const recovered =
          (status.server as { recovered_instances?: Array<{ browser?: { processes_killed: number } }> })
            .recovered_instances;
        assert(
          (recovered?.[0]?.browser?.processes_killed ?? 0) > 0,
          `reap reported: ${JSON.stringify(recovered)}`,
        );
        const again = await second.call("start_browser", {});
        assert(!again.isError, `the managed profile starts after the reap: ${textOf(again)}`);
      } finally {
        await second.close();
      }
    } finally {
      await dirs.remove();
    }
  },
});

Deno.test({
  name:
    "a failed temporary launch leaves no profile directory, even when a helper outlives the browser process",
  ...e2e,
  fn: async () => {
    const dirs = await scratchDirs();
    // A "browser" that creates its profile, leaves a helper writing into it, and exits failing.
    const fake = `${dirs.dataDir}/fake-chrome.sh`;
    await Deno.writeTextFile(
      fake,
      `#!/bin/sh
for a in "$@"; do case "$a" in --user-data-dir=*) dir="\${a#--user-data-dir=}" ;; esac; done
mkdir -p "$dir/Default"
( i=0; while [ $i -lt 40 ]; do mkdir -p "$dir/Default/Cache"; : > "$dir/Default/Cache/f$i"; sleep 0.05; i=$((i+1)); done ) &
sleep 0.2
echo "fake chrome: failing on purpose" >&2
exit 3
`,
    );
    await Deno.chmod(fake, 0o755);
    const server = await startServer({ dataDir: dirs.dataDir, env: { TMPDIR: dirs.tmpDir } });
    try {
      for (const executable of [fake, "/bin/false"]) {
        const failed = await server.call("start_browser", { temporary: true, executable });
        assertEquals(errorCode(failed), "browser_launch_failed", textOf(failed));
      }
      // Longer than the fake helper would keep writing (2 s), so a leak cannot hide behind timing.
      await new Promise((r) => setTimeout(r, 2_500));
      const left = [...Deno.readDirSync(dirs.tmpDir)].map((e) => e.name);
      assertEquals(left, [], "no temporary profile directory is left behind");
    } finally {
      await server.close();
      await dirs.remove();
    }
  },
});

Deno.test({
  name: "an attached browser is not ours: it survives kill -9 of the server and the restart's reaping",
  ...e2e,
  fn: async () => {
    const dirs = await scratchDirs();
    const profile = await Deno.makeTempDir({ prefix: "krometrail-orphans-attached-" });
    const chrome = await startDebugChrome(profile);
    try {
      const server = await startServer({ dataDir: dirs.dataDir });
      const attached = await server.call("attach_browser", { endpoint: `http://127.0.0.1:${chrome.port}` });
      assert(!attached.isError, textOf(attached));
      assert(server.pid, "server pid known");
      killHard(server.pid);
      await server.close();
      await new Promise((r) => setTimeout(r, 1_000));
      const restarted = await startServer({ dataDir: dirs.dataDir });
      await restarted.close();
      assert(chromiumProcessesOf(profile).length > 0, "the attached Chromium still runs");
      const version = await fetch(`http://127.0.0.1:${chrome.port}/json/version`);
      assert(version.ok, "and still serves its endpoint");
      await version.body?.cancel();
    } finally {
      chrome.child.kill("SIGKILL");
      await chrome.child.status;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      await dirs.remove();
    }
  },
});
