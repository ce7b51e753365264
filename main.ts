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
import { recordCommand } from "./src/cli/record.ts";
import { doctorCommand } from "./src/cli/doctor.ts";
import { viewCommand } from "./src/cli/view.ts";
import { ViewerSlot } from "./src/viewer/slot.ts";
import { HumanQuestions } from "./src/viewer/questions.ts";
import { startViewer } from "./src/viewer/server.ts";
import { CallAdmission } from "./src/mcp/admission.ts";
import { drain } from "./src/mcp/shutdown_drain.ts";
import { configurePhaseTimings } from "./src/phase_timing.ts";

export const VERSION: string = denoJson.version;

async function createApp(): Promise<AppContext> {
  const config = loadConfig();
  await setupLogging(config.logLevel);
  configurePhaseTimings(config.phaseTimingsFile);
  // Bounded (5 s); a missing or unqualified ffmpeg only removes the temporal-video tools. Its test encode
  // runs while the store and the ingest worker open (measured 0.9-1.5 s of every start under load).
  const qualifying = qualifyFfmpeg();
  const store = await InstanceStore.open(config.dataDir).catch(async (err) => {
    await qualifying.catch(() => {});
    throw err;
  });
  const recorder = await Recorder.open(store.root, config.diskBudgetBytes, testFaults());
  const video = await qualifying;
  if (!video.available) logger("main").info("temporal-video unavailable: {reason}", { reason: video.reason });
  // The viewer serves this app; it starts on first use, after the app exists.
  const holder: { app?: AppContext } = {};
  const viewer = new ViewerSlot(() => {
    if (!holder.app) return Promise.reject(new Error("the viewer started before the app"));
    return startViewer(holder.app);
  });
  const calls = new CallAdmission();
  const app: AppContext = {
    config,
    // Shutdown (calls.close) also stops launches: a start in flight must not leave a browser behind.
    browsers: new BrowserManager(config, join(store.root, "downloads"), calls.signal),
    store,
    recorder,
    temporal: new TemporalState(video),
    viewer,
    humans: new HumanQuestions(),
    calls,
    startedAt: new Date(),
    version: VERSION,
  };
  holder.app = app;
  return app;
}

/** A startup failure already explained on stderr: the process exits 1 without a stack trace. */
class StartupFailed extends Error {}

/** Startup failed before anything could be served: name the failure and the command that diagnoses it. */
async function createAppOrExplain(): Promise<AppContext> {
  try {
    return await createApp();
  } catch (err) {
    console.error(
      `krometrail: startup failed: ${
        (err as Error).message
      }\n  Run \`krometrail doctor\` to see what is missing and the fix.`,
    );
    throw new StartupFailed((err as Error).message, { cause: err });
  }
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

/**
 * Stops admission (new calls fail with shutting_down), cancels running calls, then drains their
 * work and the browser and recorder cleanup against the one shutdown deadline (shutdown_drain.ts).
 */
async function shutdown(app: AppContext): Promise<void> {
  app.calls.close();
  await drain([
    // Cancelled work settles at its next safe point, and the recorder must outlive what it still writes;
    // work that is never cancelled (a launch) does not hold the browser's own cleanup back for long.
    { name: "requests", run: () => app.calls.settled(), budgetMs: 5_000 },
    {
      name: "capture",
      run: () => {
        const current = app.browsers.current;
        return current ? app.recorder.captures.get(current.id)?.stop() : undefined;
      },
    },
    { name: "viewer", run: () => app.viewer.close() },
    { name: "browser", run: () => app.browsers.stop() },
    // The private replay browser (page-state layout) goes with the server.
    { name: "replay browser", run: () => closeReplayTarget() },
    { name: "recorder", run: () => app.recorder.close() },
    { name: "store", run: () => app.store.close() },
  ]);
}

async function main(args: string[]): Promise<number> {
  const command = args[0] ?? "mcp";
  if (command === "--version" || command === "version") {
    console.log(VERSION);
    return 0;
  }
  if (command === "doctor") return await doctorCommand(args.slice(1));
  if (command === "mcp") {
    const app = await createAppOrExplain();
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
  if (command === "demo" || command === "record" || command === "view") {
    const app = await createAppOrExplain();
    try {
      const run = command === "demo" ? runDemo : command === "record" ? recordCommand : viewCommand;
      return await run(app, args.slice(1));
    } finally {
      await shutdown(app);
    }
  }
  if (command === "capture-browser-scenario" || command === "compare-web-captures") {
    const app = await createAppOrExplain();
    try {
      return command === "capture-browser-scenario"
        ? await captureScenarioCommand(app, args.slice(1))
        : await compareCapturesCommand(app, args.slice(1));
    } finally {
      await shutdown(app);
    }
  }
  console.error(
    "usage: krometrail [mcp | demo [URL] | record URL | doctor | view [URL] | " +
      "capture-browser-scenario INPUT_JSON | compare-web-captures A B | --version]",
  );
  return 2;
}

if (import.meta.main) {
  Deno.exit(
    await main(Deno.args).catch((err) => {
      if (err instanceof StartupFailed) return 1;
      throw err;
    }),
  );
}
