/**
 * A real headless Chromium behind a BrowserSession made here, without the server: for tests of the
 * browser-side pieces (page setups, recorders, guards, evidence) and for fixture generators. `prepare`
 * runs before the session adopts its first page, as start_browser's does.
 */
import { CdpConnection } from "../../src/browser/cdp.ts";
import { discoverChrome } from "../../src/browser/discovery.ts";
import { launchChrome } from "../../src/browser/launch.ts";
import { BrowserSession, nextSessionOrdinal } from "../../src/browser/session.ts";
import { removeProfileDir } from "../../src/store/browser_record.ts";

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

/**
 * A real headless Chromium with its first page attached over a bare CDP connection, no BrowserSession:
 * for tests that act as an app recording itself (rrweb in the page's main world), not as krometrail.
 */
export async function withRawPage<T>(
  prefix: string,
  body: (conn: CdpConnection, sessionId: string) => Promise<T>,
): Promise<T> {
  const profile = await Deno.makeTempDir({ prefix });
  const chrome = await launchChrome({
    executable: discoverChrome({}).path,
    userDataDir: profile,
    profileLabel: "temporary",
    headless: true,
    temporary: true,
  });
  const conn = await CdpConnection.connect(chrome.browserWsUrl);
  try {
    const { targetInfos } = await conn.send("Target.getTargets");
    const page = targetInfos.find((t) => t.type === "page");
    if (!page) throw new Error("no page target");
    const { sessionId } = await conn.send("Target.attachToTarget", {
      targetId: page.targetId,
      flatten: true,
    });
    return await body(conn, sessionId);
  } finally {
    await conn.close().catch(() => {});
    await chrome.terminate();
    await removeProfileDir(profile);
  }
}
