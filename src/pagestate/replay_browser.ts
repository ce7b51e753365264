/**
 * The replay target's browser: one private headless Chromium with a temporary profile (launch.ts: its own
 * process group, and a watchdog that kills it and removes the profile if the server dies), one page on
 * about:blank holding REPLAYER_BUNDLE and the page half (replay_page_source.ts), and no network: every
 * request the page issues pauses in the Fetch domain and is failed, and the launch flags refuse whatever
 * Fetch never sees.
 */
import { CdpConnection } from "../browser/cdp.ts";
import { discoverChrome } from "../browser/discovery.ts";
import { launchChrome, type LaunchedChrome, type LaunchOptions } from "../browser/launch.ts";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import { removeProfileDir, TEMP_PROFILE_PREFIX } from "../store/browser_record.ts";
import { REPLAYER_BUNDLE } from "./bundles_generated.ts";
import { REPLAY_PAGE_SOURCE } from "./replay_page_source.ts";

const log = logger("pagestate", "replay");

const PAGE_CALL_TIMEOUT_MS = 20_000;
/** The replay page starts at least this large; it grows to the largest recorded viewport. */
const MIN_VIEWPORT = { width: 1280, height: 720 };

/**
 * Network lockdown below the Fetch domain, for what it never sees (a preconnect's connection, a DNS
 * prefetch): no host name resolves, and every connection, loopback included, goes to a proxy on the
 * discard port, which refuses it. The DevTools endpoint is inbound and unaffected.
 */
export const REPLAY_CHROME_FLAGS: readonly string[] = [
  "--host-resolver-rules=MAP * ~NOTFOUND",
  "--proxy-server=http://127.0.0.1:9",
  "--proxy-bypass-list=<-loopback>",
];

/** What a page call answers: `ok` and fields, or a reason it could not. */
export type PageReply =
  | { ok: true } & Record<string, unknown>
  | { ok: false; reason: string } & Record<string, unknown>;

export function replayFailed(message: string, details?: Record<string, unknown>): ToolError {
  return new ToolError({
    code: "replay_failed",
    message,
    retry: "safe",
    recovery: "Retry; if it persists the recording may be malformed.",
    ...(details ? { details } : {}),
  });
}

export interface ReplayBrowser {
  conn: CdpConnection;
  sessionId: string;
  /** The replay page's global object, the `this` of every page call. */
  globalId: string;
  viewport: { width: number; height: number };
  chrome: LaunchedChrome;
  profileDir: string;
}

/**
 * Launches the browser and prepares its page. `onBlocked` hears each URL the page asked for (and was
 * refused); `onGone` is called once if the browser goes away without shutdownReplayBrowser.
 */
export async function launchReplayBrowser(opts: {
  executable?: string;
  onBlocked: (url: string) => void;
  onGone: () => void;
}): Promise<ReplayBrowser> {
  const executable = discoverChrome({ explicit: opts.executable }).path;
  const profileDir = await Deno.makeTempDir({ prefix: `${TEMP_PROFILE_PREFIX}replay-` });
  let chrome: LaunchedChrome | undefined;
  let conn: CdpConnection | undefined;
  try {
    // extraArgs takes effect with LaunchOptions.extraArgs (launch.ts); until then it is ignored.
    const options: LaunchOptions & { extraArgs?: readonly string[] } = {
      executable,
      userDataDir: profileDir,
      profileLabel: "replay",
      headless: true,
      temporary: true,
      windowSize: MIN_VIEWPORT,
      extraArgs: REPLAY_CHROME_FLAGS,
    };
    chrome = await launchChrome(options);
    const launched = chrome;
    conn = await CdpConnection.connect(chrome.browserWsUrl);
    const { targetInfos } = await conn.send("Target.getTargets");
    const page = targetInfos.find((t) => t.type === "page");
    const targetId = page?.targetId ??
      (await conn.send("Target.createTarget", { url: "about:blank" })).targetId;
    const { sessionId } = await conn.send("Target.attachToTarget", { targetId, flatten: true });
    const cdp = conn;
    cdp.on("Fetch.requestPaused", (params, sid) => {
      if (sid !== sessionId) return;
      opts.onBlocked(params.request.url);
      cdp.send(
        "Fetch.failRequest",
        { requestId: params.requestId, errorReason: "BlockedByClient" },
        sessionId,
      )
        .catch(() => {});
    });
    // Every request pauses here and is failed above: nothing leaves the replay page.
    await conn.send("Fetch.enable", { patterns: [{ urlPattern: "*", requestStage: "Request" }] }, sessionId);
    await conn.send("Emulation.setDeviceMetricsOverride", {
      ...MIN_VIEWPORT,
      deviceScaleFactor: 1,
      mobile: false,
    }, sessionId);
    for (const expression of [REPLAYER_BUNDLE, REPLAY_PAGE_SOURCE]) {
      const { exceptionDetails } = await conn.send("Runtime.evaluate", { expression }, sessionId);
      if (exceptionDetails) throw new Error(`replay page setup failed: ${exceptionDetails.text}`);
    }
    const { result } = await conn.send("Runtime.evaluate", { expression: "globalThis" }, sessionId);
    if (!result.objectId) throw new Error("replay page has no global object");
    conn.onDisconnect(() => {
      opts.onGone();
      void launched.terminate().catch(() => {}).then(() => removeProfileDir(profileDir));
    });
    log.debug("replay target ready");
    return {
      chrome,
      conn,
      sessionId,
      globalId: result.objectId,
      profileDir,
      viewport: { ...MIN_VIEWPORT },
    };
  } catch (err) {
    await conn?.close().catch(() => {});
    await chrome?.terminate().catch(() => {});
    await removeProfileDir(profileDir);
    if (err instanceof ToolError) throw err;
    throw replayFailed(`The replay browser could not start: ${err instanceof Error ? err.message : err}`);
  }
}

/** Kills the browser and deletes its temporary profile. */
export async function shutdownReplayBrowser(b: ReplayBrowser): Promise<void> {
  await b.conn.send("Browser.close", {}, undefined, 2_000).catch(() => {});
  await b.conn.close().catch(() => {});
  await b.chrome.terminate().catch(() => {});
  await removeProfileDir(b.profileDir);
}

/** Calls `__krometrailReplay[method](...args)`; args go as JSON values, never into source text. */
export async function pageCall(b: ReplayBrowser, method: string, args: unknown[]): Promise<PageReply> {
  const { result, exceptionDetails } = await b.conn.send(
    "Runtime.callFunctionOn",
    {
      objectId: b.globalId,
      functionDeclaration: "function(method, args) { return this.__krometrailReplay[method](...args); }",
      arguments: [{ value: method }, { value: args }],
      returnByValue: true,
      awaitPromise: true,
    },
    b.sessionId,
    PAGE_CALL_TIMEOUT_MS,
  );
  if (exceptionDetails) {
    const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw replayFailed(`The replay page failed in ${method}: ${String(text).slice(0, 300)}`);
  }
  const value = result.value as PageReply | undefined;
  if (!value || typeof value !== "object") throw replayFailed(`The replay page gave no answer to ${method}.`);
  return value;
}

/** Grows the replay page so the largest recorded viewport fits (the iframe takes the recorded size). */
export async function growViewport(
  b: ReplayBrowser,
  wanted: { width: number; height: number },
): Promise<void> {
  const width = Math.max(b.viewport.width, wanted.width);
  const height = Math.max(b.viewport.height, wanted.height);
  if (width === b.viewport.width && height === b.viewport.height) return;
  await b.conn.send("Emulation.setDeviceMetricsOverride", {
    width,
    height,
    deviceScaleFactor: 1,
    mobile: false,
  }, b.sessionId);
  b.viewport = { width, height };
}
