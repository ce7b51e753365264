/**
 * `krometrail doctor [--json] [--executable PATH]`: what this machine has and lacks for the server,
 * checked for real (a headless launch that must deliver a screencast frame), with the MCP client
 * configuration for this installation. Runs without an AppContext: it must diagnose what stops one
 * opening. Exit 0 when everything needed is there, else 1 with the first fix as the last stderr line.
 */
import { fileURLToPath } from "node:url";
import denoJson from "../../deno.json" with { type: "json" };
import { checkBrowserCandidates, checkBrowserVersion } from "./doctor_browser.ts";
import { checkHeadlessLaunch } from "./doctor_launch.ts";
import {
  checkBudgetAndUsage,
  checkConfig,
  checkDataDirWritable,
  checkFfmpeg,
  checkInstances,
  checkProfiles,
  dataDirOf,
} from "./doctor_checks.ts";
import { type CheckResult, renderJson, renderText, summarize } from "./doctor_report.ts";
import { detectInstallation, mcpSnippet } from "./mcp_snippet.ts";
import { formatSeconds, Progress } from "./progress.ts";

const USAGE = "usage: krometrail doctor [--json] [--executable PATH]\n" +
  "  Checks the browser (discovery, version, a headless launch with one screencast frame), ffmpeg,\n" +
  "  the data dir and the managed profiles, and prints the MCP configuration for this installation.\n" +
  "  --json             one JSON object on stdout instead of the report\n" +
  "  --executable PATH  check this browser, as start_browser's executable argument would use it";

/** The server gives ffmpeg 5 s at startup; beside doctor's launch (≤ 24 s) a loaded machine gets more. */
const FFMPEG_QUALIFY_MS = 10_000;

interface DoctorArgs {
  json: boolean;
  executable?: string;
}

function parseArgs(args: string[]): DoctorArgs | string {
  const out: DoctorArgs = { json: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--json") out.json = true;
    else if (a === "--executable" || a.startsWith("--executable=")) {
      const value = a.includes("=") ? a.slice(a.indexOf("=") + 1) : args[++i];
      if (!value) return "--executable needs a path";
      out.executable = value;
    } else return `unknown argument ${JSON.stringify(a)}`;
  }
  return out;
}

/** Names the steps under way on one stderr line, so a slow launch never looks like a hang. */
class Steps {
  #running = new Set<string>();
  #started = performance.now();
  readonly progress = new Progress(
    () =>
      `krometrail doctor: ${[...this.#running].join(", ") || "finishing"} · ${
        formatSeconds(performance.now() - this.#started)
      }`,
    Deno.stderr,
  );

  async run<T>(label: string, work: () => Promise<T>): Promise<T> {
    this.#running.add(label);
    try {
      return await work();
    } finally {
      this.#running.delete(label);
    }
  }
}

export async function doctorCommand(args: string[]): Promise<number> {
  const parsed = parseArgs(args);
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  if (typeof parsed === "string") {
    console.error(`krometrail doctor: ${parsed}\n${USAGE}`);
    return 2;
  }
  const started = performance.now();
  const env = (k: string) => Deno.env.get(k);
  const steps = new Steps();
  const checks: CheckResult[] = [];
  try {
    const browser = checkBrowserCandidates(parsed.executable, env);
    checks.push(...browser.checks);
    // ffmpeg's qualification runs beside the browser's checks, so it may take as long as they do.
    const video = steps.run("qualifying ffmpeg", () => checkFfmpeg(FFMPEG_QUALIFY_MS));
    const launch = (async () => {
      const chosen = browser.chosen;
      if (!chosen) {
        return [
          {
            section: "launch",
            name: "launch + frame",
            status: "fail",
            detail: "not run: no usable browser (see above)",
            needed: true,
          } satisfies CheckResult,
        ];
      }
      // Side by side: each is bounded on its own, and together they take the longer one's time.
      return await Promise.all([
        steps.run("reading the browser version", () => checkBrowserVersion(chosen.path)),
        steps.run(`launching ${chosen.path} headless`, () => checkHeadlessLaunch(chosen.path, chosen.source)),
      ]);
    })();
    const data = steps.run("checking the data dir", async () => {
      const config = checkConfig(env);
      const dataDir = dataDirOf(env);
      const writable = await checkDataDirWritable(dataDir, env);
      const [disk, instances] = await Promise.all([
        checkBudgetAndUsage(dataDir, config.budget, env),
        checkInstances(dataDir, config.budget),
      ]);
      return [config.check, writable, disk, instances, ...checkProfiles(dataDir)];
    });
    steps.progress.start();
    checks.push(...await launch, await video, ...await data);
  } finally {
    await steps.progress.stop();
  }
  const mcp = mcpSnippet(detectInstallation({
    standalone: Deno.build.standalone === true,
    execPath: Deno.execPath(),
    npm: Deno.env.get("KROMETRAIL_NPM") === "1",
    repoDir: fileURLToPath(new URL("../../", import.meta.url)).replace(/[\\/]$/, ""),
    mainPath: fileURLToPath(new URL("../../main.ts", import.meta.url)),
  }));
  const report = summarize(checks, mcp, {
    krometrail: denoJson.version,
    platform: `${Deno.build.os} ${Deno.build.arch}, deno ${Deno.version.deno}`,
    elapsed_ms: performance.now() - started,
  });
  console.log(parsed.json ? renderJson(report) : renderText(report));
  // The last stderr line names the first fix, for whoever only sees the tail of a failed run.
  if (report.fix) console.error(`fix: ${report.fix}`);
  else console.error(`krometrail doctor: ready (${formatSeconds(report.elapsed_ms)})`);
  return report.exit_code;
}
