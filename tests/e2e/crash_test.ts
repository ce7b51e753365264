import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, fixtures, startServer, structured, textOf } from "./harness.ts";

interface Recovered {
  index: string;
  sessions: number;
  frames_complete: number;
  frames_dropped_torn: number;
  frames_dropped_uncommitted: number;
}

Deno.test({
  name:
    "kill -9 mid-recording, then restart: the index opens, complete records survive, the tail is dropped and reported",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const dataDir = await Deno.makeTempDir({ prefix: "krometrail-crash-" });
    const first = await startServer({ dataDir });
    let sessionId = "";
    try {
      sessionId = String(structured(await first.call("start_browser", { temporary: true })).session_id);
      await first.call("navigate_page", { url: `${site.origin}/flash.html` });
      await new Promise((r) => setTimeout(r, 2_500));
      const status = structured(await first.call("browser_status")).capture as { frames_stored: number };
      assert(status.frames_stored > 0, "frames were stored before the crash");
      assert(first.pid, "server pid known");
      Deno.kill(first.pid, "SIGKILL");
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await first.close();
    }
    // No cleanup of the killed server's Chrome here: its watchdog ends it (orphans_test measures that).

    const second = await startServer({ dataDir });
    try {
      const status = structured(await second.call("browser_status"));
      const recovered = (status.server as { recovered_instances?: Recovered[] }).recovered_instances;
      assert(
        recovered && recovered.length === 1,
        `one crashed instance reported: ${JSON.stringify(status.server)}`,
      );
      const r = recovered[0];
      assertEquals(r.index, "current", "the crashed index opens in the current format");
      assertEquals(r.sessions, 1);
      assert(r.frames_complete > 0, "complete records survive the crash");
      assert(r.frames_dropped_torn >= 0 && r.frames_dropped_uncommitted >= 0);
      // Evidence belongs to the process that recorded it: the old session is gone with a clear error.
      const gone = await second.call("list_source_frames", { session_id: sessionId });
      assertEquals(errorCode(gone), "session_not_found");
      assertMatch(textOf(gone), /previous process|after a restart/);
      // And the abandoned root was reclaimed.
      const roots = [...Deno.readDirSync(`${dataDir}/instances`)].length;
      assertEquals(roots, 1, "only the new instance root remains");
    } finally {
      await second.close();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      await site.close();
    }
  },
});
