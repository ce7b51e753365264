import { join } from "node:path";
import { loadConfig } from "./src/config.ts";
import { logger, setupLogging } from "./src/log.ts";
import { BrowserManager } from "./src/browser/lifecycle.ts";
import { InstanceStore } from "./src/store/instance.ts";
import { serveMcp } from "./src/mcp/server.ts";
import type { AppContext } from "./src/mcp/context.ts";
import { runDemo } from "./src/demo/run.ts";
import { Recorder } from "./src/capture/recorder.ts";
import type { FaultPlan } from "./src/capture/messages.ts";
import { TemporalState } from "./src/temporal/state.ts";
import { qualifyFfmpeg } from "./src/temporal/ffmpeg.ts";
import { watchParent } from "./src/parent_watch.ts";
import denoJson from "./deno.json" with { type: "json" };
import { closeReplayTarget } from "./src/pagestate/replay.ts";
import { captureScenarioCommand, compareCapturesCommand } from "./src/cli/scenario.ts";

export const VERSION: string = denoJson.version;
/** Shutdown drains browser cleanup against one deadline (spec: 30 s). */
const SHUTDOWN_DEADLINE_MS = 30_000;

async function createApp(): Promise<AppContext> {
  const config = loadConfig();
  await setupLogging(config.logLevel);
  const store = await InstanceStore.open(config.dataDir);
  const recorder = await Recorder.open(store.root, config.diskBudgetBytes, testFaults());
  // Bounded (5 s); a missing or unqualified ffmpeg only removes the temporal-video tools.
  const video = await qualifyFfmpeg();
  if (!video.available) logger("main").info("temporal-video unavailable: {reason}", { reason: video.reason });
  return {
    config,
    browsers: new BrowserManager(config, join(store.root, "downloads")),
    store,
    recorder,
    temporal: new TemporalState(video),
    startedAt: new Date(),
    version: VERSION,
  };
}

/** Fault injection for the test suite only; unset in normal use. */
function testFaults(): FaultPlan {
  const raw = Deno.env.get("KROMETRAIL_TEST_FAULTS");
  if (!raw) return {};
  try {
    return JSON.parse(raw) as FaultPlan;
  } catch {
    return {};
  }
}

async function shutdown(app: AppContext): Promise<void> {
  const cleanup = (async () => {
    const current = app.browsers.current;
    if (current) await app.recorder.captures.get(current.id)?.stop().catch(() => {});
    await app.browsers.stop().catch(() => {});
    // The private replay browser (page-state layout) goes with the server.
    await closeReplayTarget().catch(() => {});
    await app.recorder.close().catch(() => {});
    app.store.close();
  })();
  const finished = await Promise.race([
    cleanup.then(() => true),
    new Promise<boolean>((r) => setTimeout(() => r(false), SHUTDOWN_DEADLINE_MS)),
  ]);
  if (!finished) logger("main").warn("shutdown deadline exhausted; cleanup incomplete");
}

async function main(args: string[]): Promise<number> {
  const command = args[0] ?? "mcp";
  if (command === "--version" || command === "version") {
    console.log(VERSION);
    return 0;
  }
  if (command === "mcp") {
    const app = await createApp();
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await shutdown(app);
      Deno.exit(0);
    };
    for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, stop);
    // The client's launcher died (e.g. kill -9 of `deno task start`): nobody will ever call us again.
    watchParent(({ was, now }) => {
      logger("main").warn("parent process {was} is gone (now {now}); shutting down", { was, now });
      void stop();
    });
    await serveMcp(app);
    await stop();
    return 0;
  }
  if (command === "demo") {
    const app = await createApp();
    try {
      return await runDemo(app, args.slice(1));
    } finally {
      await shutdown(app);
    }
  }
  if (command === "capture-browser-scenario" || command === "compare-web-captures") {
    const app = await createApp();
    try {
      return command === "capture-browser-scenario"
        ? await captureScenarioCommand(app, args.slice(1))
        : await compareCapturesCommand(app, args.slice(1));
    } finally {
      await shutdown(app);
    }
  }
  console.error(
    `usage: krometrail [mcp | demo [URL] | capture-browser-scenario INPUT_JSON | compare-web-captures A B | --version]`,
  );
  return 2;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
