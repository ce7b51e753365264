import type { DatabaseSync } from "node:sqlite";
import { insertRow, openIndex } from "../../../src/store/index_db.ts";

/** A real capture index in a temp dir holding session s1 (a launch, temporary profile). */
export async function indexWithSession(
  endedAt: string | null,
): Promise<{ dir: string; db: DatabaseSync; close: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "krometrail-viewer-unit-" });
  const { db } = openIndex(dir);
  insertRow(db, "sessions", {
    id: "s1",
    ordinal: 1,
    mode: "launch",
    profile: "temporary",
    started_at: "2026-12-02T10:00:00.000Z",
    ended_at: endedAt,
    every_nth_frame: 1,
    focus: "{}",
    capabilities: "{}",
  });
  return {
    dir,
    db,
    close: async () => {
      db.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
