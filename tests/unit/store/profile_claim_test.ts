import { assert, assertEquals } from "../../assert.ts";
import { claimManagedProfile, listManagedProfiles } from "../../../src/store/profiles.ts";

Deno.test("a managed profile has one claimant at a time; release frees it; the loser learns the holder's pid", () => {
  const dataDir = Deno.makeTempDirSync();
  try {
    Deno.mkdirSync(`${dataDir}/profiles/default`, { recursive: true });
    const first = claimManagedProfile(dataDir, "default");
    assert(first.ok, "the first claim wins");
    const second = claimManagedProfile(dataDir, "default");
    assert(!second.ok, "a second claim, even from the same process, loses");
    assertEquals(second.holderPid, Deno.pid);
    assertEquals(listManagedProfiles(dataDir).find((p) => p.name === "default")?.in_use, true);
    assert(claimManagedProfile(dataDir, "other").ok, "claims are per profile");
    first.release();
    assertEquals(listManagedProfiles(dataDir).find((p) => p.name === "default")?.in_use, false);
    const third = claimManagedProfile(dataDir, "default");
    assert(third.ok, "released claims can be taken again");
    third.release();
  } finally {
    Deno.removeSync(dataDir, { recursive: true });
  }
});

Deno.test("a claim dies with its holder: SIGKILL of the claiming process frees the profile", async () => {
  const dataDir = Deno.makeTempDirSync();
  const module = new URL("../../../src/store/profiles.ts", import.meta.url).href;
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { claimManagedProfile } from ${JSON.stringify(module)};
       console.log(claimManagedProfile(${JSON.stringify(dataDir)}, "default").ok);
       setInterval(() => {}, 1000);`,
    ],
    stdout: "piped",
    stderr: "null",
  }).spawn();
  try {
    const reader = holder.stdout.getReader();
    const { value } = await reader.read();
    assertEquals(new TextDecoder().decode(value).trim(), "true");
    const lost = claimManagedProfile(dataDir, "default");
    assert(!lost.ok && lost.holderPid === holder.pid, "held by the other process, named by its pid");
    holder.kill("SIGKILL");
    await holder.status;
    reader.releaseLock();
    const won = claimManagedProfile(dataDir, "default");
    assert(won.ok, "no stale claim survives its holder");
    won.release();
  } finally {
    try {
      holder.kill("SIGKILL");
    } catch { /* gone */ }
    await holder.stdout.cancel().catch(() => {});
    Deno.removeSync(dataDir, { recursive: true });
  }
});
