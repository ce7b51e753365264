/**
 * A real headless Chromium behind a BrowserSession made here, without the server: for tests of the
 * browser-side pieces (page setups, recorders, guards, evidence) and for fixture generators. `prepare`
 * runs before the session adopts its first page, as start_browser's does.
 */
import { CdpConnection } from "../../src/browser/cdp.ts";
import { discoverChrome } from "../../src/browser/discovery.ts";
import { launchChrome } from "../../src/browser/launch.ts";
import { BrowserSession, nextSessionOrdinal } from "../../src/browser/session.ts";

export interface ScratchOptions {
  /** The DOM recorder's session flag (default false: the piece under test is the page's only recorder). */
  record_dom?: boolean;
  prepare?: (session: BrowserSession) => void;
  /** The temporary profile's name prefix, so a leftover says which test left it. */
  prefix?: string;
}

export async function withScratchSession(
  opts: ScratchOptions,
  body: (session: BrowserSession, conn: CdpConnection) => Promise<void>,
): Promise<void> {
  const profile = await Deno.makeTempDir({ prefix: opts.prefix ?? "krometrail-scratch-" });
  const launched = await launchChrome({
    executable: discoverChrome({}).path,
    userDataDir: profile,
    profileLabel: "temporary",
    headless: true,
    temporary: true,
  });
  try {
    const conn = await CdpConnection.connect(launched.browserWsUrl);
    const session = new BrowserSession({
      conn,
      ordinal: nextSessionOrdinal(),
      mode: "launched",
      profile: { kind: "temporary" },
      config: {
        every_nth_frame: 1,
        focus: "foreground",
        headless: true,
        record_dom: opts.record_dom ?? false,
      },
      process: launched.process,
    });
    try {
      opts.prepare?.(session);
      await session.start();
      await body(session, conn);
    } finally {
      await session.stop().catch(() => {});
    }
  } finally {
    await launched.terminate().catch(() => {});
    await Deno.remove(profile, { recursive: true }).catch(() => {});
  }
}
