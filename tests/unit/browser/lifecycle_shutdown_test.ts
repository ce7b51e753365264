/**
 * A stop or shutdown that meets a start in flight (real Chromium): the start's browser never outlives
 * the stop, and once shutdown began nothing new is launched.
 */
import { assert, assertEquals } from "../../assert.ts";
import { loadConfig } from "../../../src/config.ts";
import { BrowserManager, type StartOptions } from "../../../src/browser/lifecycle.ts";
import { managedProfileDir } from "../../../src/store/profiles.ts";
import { ToolError } from "../../../src/errors.ts";
import { profileProcesses, until } from "../../e2e/chromium_process.ts";

const CHROME = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";

function codeOf(err: unknown): string | undefined {
  return err instanceof ToolError ? err.code : undefined;
}

async function withManager(
  run: (
    m: BrowserManager,
    shutdown: AbortController,
    profileDir: string,
    opts: StartOptions,
  ) => Promise<void>,
): Promise<void> {
  const dataDir = await Deno.makeTempDir({ prefix: "krometrail-lifecycle-" });
  const shutdown = new AbortController();
  const config = { ...loadConfig(() => undefined), dataDir };
  const m = new BrowserManager(config, undefined, shutdown.signal);
  const opts: StartOptions = {
    profile: "lifecycle",
    headless: true,
    executable: CHROME,
    every_nth_frame: 1,
    focus: "foreground",
    record_dom: false,
  };
  try {
    await run(m, shutdown, managedProfileDir(dataDir, "lifecycle"), opts);
  } finally {
    await m.stop().catch(() => {});
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
}

const shuttingDown = () =>
  new ToolError({ code: "shutting_down", message: "shutting down", retry: "never", recovery: "restart" });

Deno.test("shutdown during a start: the start tears its browser down and stop waits for it", async () => {
  await withManager(async (m, shutdown, dir, opts) => {
    const starting = m.start(opts).then(() => undefined, (err) => err);
    await until("Chromium to spawn", () => Promise.resolve(profileProcesses(dir).length > 0 || undefined));
    shutdown.abort(shuttingDown());
    // Before the fix stop saw no session yet and returned at once, leaving the launch to finish.
    const stopped = await m.stop();
    assertEquals(codeOf(await starting), "shutting_down", "the start gave up at its next step");
    assertEquals(stopped.stopped, false, "nothing was left to stop");
    assertEquals(m.current, undefined);
    await until(
      "no process of the profile",
      () => Promise.resolve(profileProcesses(dir).length === 0 || undefined),
      5_000,
    );
  });
});

Deno.test("once shutdown began, start and attach refuse without spawning anything", async () => {
  await withManager(async (m, shutdown, dir, opts) => {
    shutdown.abort(shuttingDown());
    let err: unknown;
    try {
      await m.start(opts);
    } catch (e) {
      err = e;
    }
    assertEquals(codeOf(err), "shutting_down");
    err = undefined;
    try {
      await m.attach({ endpoint: "http://127.0.0.1:9", every_nth_frame: 1 });
    } catch (e) {
      err = e;
    }
    assertEquals(codeOf(err), "shutting_down");
    assertEquals(profileProcesses(dir), []);
  });
});

Deno.test("stop_browser during a start waits for it and stops the browser it launched", async () => {
  await withManager(async (m, _shutdown, dir, opts) => {
    const starting = m.start(opts);
    await until("Chromium to spawn", () => Promise.resolve(profileProcesses(dir).length > 0 || undefined));
    const [session, stopped] = await Promise.all([starting, m.stop()]);
    assertEquals(stopped.stopped, true, "the started session was stopped");
    assertEquals(stopped.session_id, session.id);
    assertEquals(stopped.closed_browser, true);
    assert(session.ended, "the session ended");
    assertEquals(m.current, undefined);
    await until(
      "no process of the profile",
      () => Promise.resolve(profileProcesses(dir).length === 0 || undefined),
      5_000,
    );
    // A second stop has nothing left.
    assertEquals((await m.stop()).stopped, false);
  });
});
