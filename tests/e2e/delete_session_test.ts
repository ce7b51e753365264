/**
 * delete_session removes one session's frames, segments, screenshots and artifacts with its index rows,
 * reports the bytes it gave back, and leaves every other file in the data dir byte-identical.
 */
import { join, relative } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { e2e, fixtures, type ServerHandle, startServer, structured, textOf } from "./harness.ts";
import { openPanel } from "./transition_flow.ts";

/** The shared index changes by design (the session's rows go); every other file is compared. */
async function indexBytes(dataDir: string): Promise<number> {
  let n = 0;
  for await (const e of Deno.readDir(join(dataDir, "instances"))) {
    for (const f of ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"]) {
      n += await Deno.stat(join(dataDir, "instances", e.name, f)).then((st) => st.size, () => 0);
    }
  }
  return n;
}

const INDEX = /(^|\/)index\.sqlite(-wal|-shm)?$/;

async function hashTree(root: string): Promise<Map<string, { hash: string; size: number }>> {
  const out = new Map<string, { hash: string; size: number }>();
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.isFile) {
        const bytes = await Deno.readFile(path);
        const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
        out.set(relative(root, path), {
          hash: Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join(""),
          size: bytes.byteLength,
        });
      }
    }
  };
  await walk(root);
  return out;
}

/** One recorded session's resource URIs: a click's observation image, a screenshot, an artifact, frames. */
async function record(
  server: ServerHandle,
  origin: string,
): Promise<{ session: string; uris: string[]; usedBytes?: number; indexBytes: number }> {
  const started = await server.call("start_browser", { temporary: true });
  assert(!started.isError, textOf(started));
  const session = String(structured(started).session_id);
  const interaction = await openPanel(server, origin);
  const shot = structured(await server.call("take_screenshot", { inline_images: false }));
  const art = await server.call("generate_artifacts", {
    interaction_id: interaction,
    generators: ["storyboard"],
    inline_images: false,
  });
  assert(!art.isError, textOf(art));
  const artifacts = structured(art).artifacts as Array<{ uri: string; manifest_uri: string }>;
  const frames = structured(await server.call("list_source_frames", { max_frames: 3 })).frames as Array<
    { uri: string }
  >;
  assert(frames.length > 0, "frames were recorded");
  const clicked = structured(await server.call("scroll", { dy: 100 })) as { screenshot?: { uri: string } };
  const status = structured(await server.call("browser_status", {})) as {
    capture: { retention?: { used_bytes: number } };
  };
  const index = await indexBytes(server.dataDir);
  const stopped = await server.call("stop_browser", {});
  assert(!stopped.isError, textOf(stopped));
  return {
    session,
    usedBytes: status.capture.retention?.used_bytes,
    indexBytes: index,
    uris: [
      String(shot.uri),
      ...artifacts.flatMap((a) => [a.uri, a.manifest_uri]),
      ...frames.map((f) => f.uri),
      ...(clicked.screenshot ? [clicked.screenshot.uri] : []),
    ],
  };
}

async function readCode(server: ServerHandle, uri: string): Promise<string | undefined> {
  return await server.client.readResource({ uri }).then(
    () => undefined,
    (err: { data?: { code?: string } }) => err.data?.code ?? "unknown",
  );
}

Deno.test({
  name:
    "delete_session: removes that session's evidence files and rows, frees the bytes, touches nothing else",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const server = await startServer();
    try {
      const first = await record(server, site.origin);
      const second = await record(server, site.origin);
      for (const uri of [...first.uris, ...second.uris]) {
        assertEquals(await readCode(server, uri), undefined, uri);
      }

      const before = await hashTree(server.dataDir);
      const deleted = await server.call("delete_session", { session_id: first.session });
      assert(!deleted.isError, textOf(deleted));
      const d = structured(deleted) as {
        freed_bytes: number;
        deleted: { frames: number; screenshots: number; artifacts: number };
      };
      const after = await hashTree(server.dataDir);

      for (const uri of first.uris) assertEquals(await readCode(server, uri), "evidence_not_found", uri);
      for (const uri of second.uris) assertEquals(await readCode(server, uri), undefined, uri);

      let vanished = 0;
      for (const [path, file] of before) {
        if (INDEX.test(path)) continue;
        const now = after.get(path);
        if (now) assertEquals(now.hash, file.hash, `${path} changed`);
        else vanished += file.size;
      }
      for (const path of after.keys()) assert(before.has(path) || INDEX.test(path), `${path} appeared`);
      assert(d.deleted.frames > 0 && d.deleted.screenshots >= 2 && d.deleted.artifacts >= 1, textOf(deleted));
      assert(vanished > 0, "files were removed");
      assertEquals(d.freed_bytes, vanished, "freed_bytes is what left the disk");
      const segments = [...before.keys()].filter((p) => p.includes(`segments/${first.session}/`));
      assert(segments.length > 0 && segments.every((p) => !after.has(p)), "the session's segments are gone");

      // The share gets the bytes back at once: the next session's status counts what is left.
      assert(second.usedBytes !== undefined, "status reports the instance's usage");
      const third = await server.call("start_browser", { temporary: true });
      assert(!third.isError, textOf(third));
      const now = structured(await server.call("browser_status", {})) as {
        capture: { retention: { used_bytes: number } };
      };
      // Usage counts the index's growth, and deleting rows grows its write-ahead log: that is set apart.
      const indexGrowth = (await indexBytes(server.dataDir)) - second.indexBytes;
      const evidenceNow = now.capture.retention.used_bytes - indexGrowth;
      assert(
        evidenceNow < second.usedBytes - d.freed_bytes / 2,
        `usage ${now.capture.retention.used_bytes} (index +${indexGrowth}) after freeing ${d.freed_bytes} of ${second.usedBytes}`,
      );
      console.error(
        `delete_session freed ${d.freed_bytes} bytes; usage ${second.usedBytes} -> ${evidenceNow} beside the index: ${
          textOf(deleted)
        }`,
      );
    } finally {
      await server.close();
      await site.close();
    }
  },
});
