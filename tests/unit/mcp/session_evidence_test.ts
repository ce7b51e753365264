import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { assertEquals } from "../../assert.ts";
import { removeFiles, sessionEvidenceFiles } from "../../../src/mcp/session_evidence.ts";

const A = "aaaaaaaa-0000-4000-8000-000000000001";
const B = "bbbbbbbb-0000-4000-8000-000000000002";

/** A file name as reserveEvidence writes it: the write time in base 36, then a sequence number. */
const named = (ms: number, seq: number, ext: string) => `${ms.toString(36)}-${seq.toString(36)}.${ext}`;

Deno.test("session evidence: screenshots by session start, artifacts and videos by their manifest", async () => {
  const root = await Deno.makeTempDir({ prefix: "krometrail-session-evidence-" });
  try {
    const t0 = Date.parse("2026-12-01T10:00:00.000Z");
    const t1 = t0 + 60_000;
    const db = new DatabaseSync(":memory:");
    db.exec("CREATE TABLE sessions(id TEXT PRIMARY KEY, started_at TEXT NOT NULL)");
    db.prepare("INSERT INTO sessions VALUES (?, ?), (?, ?)").run(
      A,
      new Date(t0).toISOString(),
      B,
      new Date(t1).toISOString(),
    );
    const ev = (kind: string) => join(root, "evidence", kind);
    for (const kind of ["screenshots", "artifacts", "videos"]) {
      await Deno.mkdir(ev(kind), { recursive: true });
    }
    const write = (kind: string, name: string, text: string) =>
      Deno.writeTextFile(join(ev(kind), name), text);
    await write("screenshots", named(t0 + 5, 1, "jpg"), "a-shot");
    await write("screenshots", named(t1 + 5, 2, "jpg"), "b-shot");
    // A's video, made while B was recording: attributed by its manifest, not by time.
    const video = named(t1 + 10, 3, "mp4");
    await write("videos", video, "a-video");
    await write(
      "artifacts",
      named(t1 + 11, 4, "json"),
      JSON.stringify({ session_id: A, output_uri: `krometrail://evidence/videos/${video}` }),
    );
    const png = named(t1 + 12, 5, "png");
    await write("artifacts", png, "b-png");
    await write(
      "artifacts",
      named(t1 + 13, 6, "json"),
      JSON.stringify({ session_id: B, output_uri: `krometrail://evidence/artifacts/${png}` }),
    );

    const files = await sessionEvidenceFiles(db, root, A);
    assertEquals([files.screenshots, files.artifacts, files.videos], [1, 0, 1]);
    assertEquals(files.paths.length, 3, "shot, manifest, video");
    assertEquals(await removeFiles(files), files.bytes);
    const left = await sessionEvidenceFiles(db, root, B);
    assertEquals([left.screenshots, left.artifacts, left.videos, left.paths.length], [1, 1, 0, 3]);
    assertEquals((await sessionEvidenceFiles(db, root, A)).paths, []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
