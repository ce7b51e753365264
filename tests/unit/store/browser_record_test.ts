import { join } from "node:path";
import { assert, assertEquals } from "../../assert.ts";
import {
  readBrowserRecord,
  reapBrowser,
  TEMP_PROFILE_PREFIX,
  writeBrowserRecord,
} from "../../../src/store/browser_record.ts";
import { usesProfileDir } from "../../../src/store/pid.ts";

const posix = Deno.build.os !== "windows";

/** A stand-in browser: a shell leading its own group, with a forked helper, both naming the profile. */
function fakeBrowser(profileDir: string): Deno.ChildProcess {
  return new Deno.Command("setsid", {
    args: ["sh", "-c", "sleep 30 & sleep 30", "fake-chrome", `--user-data-dir=${profileDir}`],
    stdout: "null",
    stderr: "null",
  }).spawn();
}

function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

Deno.test({
  name: "reaping a crashed instance's browser kills its verified processes and removes its temporary profile",
  ignore: !posix || Deno.build.os !== "linux",
  fn: async () => {
    const tmp = await Deno.makeTempDir();
    const profile = await Deno.makeTempDir({ dir: tmp, prefix: TEMP_PROFILE_PREFIX });
    await Deno.writeTextFile(join(profile, "Local State"), "{}");
    const browser = fakeBrowser(profile);
    try {
      await new Promise((r) => setTimeout(r, 200));
      await writeBrowserRecord(tmp, {
        pid: browser.pid,
        group: true,
        profile_dir: profile,
        temporary: true,
        started_at: "x",
      });
      const record = await readBrowserRecord(tmp);
      assert(record, "the record reads back");
      const reap = await reapBrowser(record);
      assertEquals(reap.processes_remaining, 0);
      assert(reap.processes_killed >= 1, `killed ${reap.processes_killed}`);
      assertEquals(reap.temporary_profile_removed, true);
      assert(!alive(browser.pid), "the browser process is gone");
      await browser.status;
    } finally {
      try {
        browser.kill("SIGKILL");
      } catch { /* gone */ }
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name: "a recorded pid now used by another program is never killed, and a managed profile is never removed",
  ignore: !posix,
  fn: async () => {
    const tmp = await Deno.makeTempDir();
    const profile = join(tmp, "profiles", "default");
    await Deno.mkdir(profile, { recursive: true });
    // The pid is alive but its command line does not name the profile: a reused pid.
    const other = new Deno.Command("sleep", { args: ["30"], stdout: "null", stderr: "null" }).spawn();
    try {
      const reap = await reapBrowser({
        pid: other.pid,
        group: true,
        profile_dir: profile,
        temporary: true,
        started_at: "x",
      }, 300);
      assertEquals(reap.processes_killed, 0);
      assertEquals(reap.temporary_profile_removed, false, "only krometrail-profile-* dirs are removed");
      assert(alive(other.pid) || Deno.build.os !== "linux", "the unrelated process still runs");
      Deno.statSync(profile);
    } finally {
      other.kill("SIGKILL");
      await other.status;
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test("a --user-data-dir match needs the whole path, not a prefix of a longer one", () => {
  assert(usesProfileDir("chrome --user-data-dir=/d/profiles/default --headless", "/d/profiles/default"));
  assert(usesProfileDir("chrome --user-data-dir=/d/profiles/default", "/d/profiles/default"));
  assert(!usesProfileDir("chrome --user-data-dir=/d/profiles/default2 --x", "/d/profiles/default"));
  assert(!usesProfileDir("sh -c x krometrail-watchdog 1 /d/profiles/default", "/d/profiles/default"));
});
