import { assert, assertEquals, assertMatch, assertRejects } from "../assert.ts";
import { e2e, errorCode, fixtures, REPO_ROOT, startServer, structured, textOf } from "./harness.ts";

interface Row {
  download_id: string;
  page_id?: string;
  suggested_filename: string;
  url: string;
  state: string;
  bytes: number;
  started_ms: number;
  finished_ms?: number;
  uri?: string;
  mime_type?: string;
}

function bytesOf(blob: string | undefined): Uint8Array {
  const bin = atob(blob ?? "");
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

Deno.test({
  name:
    "downloads: observed from session start, the cursor anchors waits, completed files are session-scoped resources",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const server = await startServer();
    try {
      // The start URL loads the page, so the click below is the session's first interaction.
      const started = await server.call("start_browser", {
        temporary: true,
        headless: true,
        url: `${site.origin}/download.html`,
      });
      assert(!started.isError, textOf(started));

      const empty = structured(await server.call("list_downloads"));
      assertEquals(empty.downloads, []);
      assertEquals(empty.cursor, 0, "an empty inventory still has a cursor");
      assertEquals(empty.observation, "active");
      assertEquals(empty.files, "session_resources");

      const ahead = await server.call("wait_for_download", { after: 5, timeout_ms: 200 });
      assertEquals(errorCode(ahead), "invalid_cursor");
      const idle = await server.call("wait_for_download", { after: 0, timeout_ms: 300 });
      assertEquals(errorCode(idle), "download_timeout");
      assertMatch(textOf(idle), /trigger the download/);

      const clicked = structured(await server.call("click", { selector: "#report" }));
      assertEquals(clicked.status, "ok");
      assertMatch(String(clicked.interaction_id), /-i1$/, "the download came from the first interaction");
      const waited = structured(await server.call("wait_for_download", { after: 0, timeout_ms: 10_000 }));
      const first = waited.download as Row;
      const expected = await Deno.readFile(`${REPO_ROOT}fixtures/site/files/report.csv`);
      assertEquals(first.state, "completed");
      assertEquals(first.download_id, "d1");
      assertEquals(first.page_id, "p1");
      assertEquals(first.suggested_filename, "quarterly report.csv");
      assertEquals(first.bytes, expected.byteLength);
      assert(first.finished_ms !== undefined && first.finished_ms >= first.started_ms, "session times");
      // Privacy-bounded: origin kept, path hashed, query values dropped.
      assertMatch(first.url, /^http:\/\/127\.0\.0\.1:\d+\/~[0-9a-f]{8}\?token=$/);
      assert(!JSON.stringify(waited).includes("s3cret"), "no query value anywhere");
      assertMatch(String(first.uri), /^krometrail:\/\/evidence\/downloads\/s\d+-d1\.csv$/);
      const cursorAfterFirst = waited.cursor as number;
      assert(cursorAfterFirst >= 2, "begin and completion both advanced the cursor");

      const resource = await server.client.readResource({ uri: String(first.uri) });
      const content = resource.contents[0] as { blob?: string; mimeType?: string };
      assertEquals(content.mimeType, "text/csv");
      assertEquals(new TextDecoder().decode(bytesOf(content.blob)), new TextDecoder().decode(expected));

      // A page-generated (blob:) download, anchored at the cursor the first wait returned.
      await server.call("click", { selector: "#blob" });
      const second = structured(
        await server.call("wait_for_download", { after: cursorAfterFirst, timeout_ms: 10_000 }),
      ).download as Row;
      assertEquals(second.download_id, "d2");
      assertEquals(second.suggested_filename, "generated.csv");
      assertEquals(second.url, "blob:<redacted>");
      const generated = await server.client.readResource({ uri: String(second.uri) });
      assertEquals(
        new TextDecoder().decode(bytesOf((generated.contents[0] as { blob?: string }).blob)),
        "generated,1\n",
      );

      const listed = structured(await server.call("list_downloads"));
      assertEquals((listed.downloads as Row[]).map((d) => d.download_id), ["d1", "d2"]);
      assertEquals((listed.downloads as Row[]).map((d) => d.state), ["completed", "completed"]);
      assert((listed.cursor as number) > cursorAfterFirst, "the cursor only grows");

      // Download resources end with their managed session.
      await server.call("stop_browser");
      await assertRejects(
        () => server.client.readResource({ uri: String(first.uri) }),
        Error,
        "live managed browser session",
      );
      await assertRejects(
        () => server.client.readResource({ uri: "krometrail://evidence/downloads/..%2F..%2Fowner.json" }),
        Error,
      );
    } finally {
      await server.close();
      await site.close();
    }
  },
});
