import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { assertEquals } from "../../assert.ts";
import { classifyIndex, openIndex } from "../../../src/store/index_db.ts";
import { INDEX_FILE } from "../../../src/store/format.ts";

Deno.test("an empty store initializes to the current format and reopens untouched", () => {
  const r = Deno.makeTempDirSync();
  const first = openIndex(r);
  assertEquals(first.found, "empty");
  first.db.prepare("INSERT INTO markers(id, session_id, at_ns) VALUES ('m', 's', 1)").run();
  first.db.close();
  const again = openIndex(r);
  assertEquals(again.found, "current");
  assertEquals((again.db.prepare("SELECT count(*) AS n FROM markers").get() as { n: number }).n, 1);
  again.db.close();
  Deno.removeSync(r, { recursive: true });
});

// user_version is a signed 32-bit value: -1 is older than any current format, 99 newer.
for (const [label, version] of [["unversioned", 0], ["older", -1], ["newer", 99]] as const) {
  Deno.test(`a ${label} non-empty index clears only the recording cache and reinitializes`, () => {
    const r = Deno.makeTempDirSync();
    const db = new DatabaseSync(join(r, INDEX_FILE));
    db.exec("CREATE TABLE old_stuff(x)");
    if (version !== 0) db.exec(`PRAGMA user_version = ${version}`);
    assertEquals(classifyIndex(db), label);
    db.close();
    Deno.mkdirSync(join(r, "segments", "s"), { recursive: true });
    Deno.writeTextFileSync(join(r, "segments", "s", "x.seg"), "old");
    Deno.mkdirSync(join(r, "profiles", "default"), { recursive: true });
    Deno.writeTextFileSync(join(r, "config.json"), "{}");

    const opened = openIndex(r);
    assertEquals(opened.found, label);
    assertEquals(classifyIndex(opened.db), "current");
    let segmentsGone = false;
    try {
      Deno.statSync(join(r, "segments"));
    } catch {
      segmentsGone = true;
    }
    assertEquals(segmentsGone, true, "segments are recording cache");
    assertEquals(Deno.statSync(join(r, "profiles", "default")).isDirectory, true, "profiles untouched");
    assertEquals(Deno.readTextFileSync(join(r, "config.json")), "{}", "config untouched");
    opened.db.close();
    Deno.removeSync(r, { recursive: true });
  });
}
