/**
 * Runs a command (by default the whole suite, `deno task test`) while busy neighbours compete for the
 * CPU: a headless Chromium repainting fixtures/site/animation.html on every frame and busy loops, one
 * per core by default. Timing assumptions that hold on an idle machine break here first.
 *
 *   deno task test:pressure [--repeat N] [--keep-going] [--loops N] [--no-chromium] [--minutes N] [-- cmd ...]
 *
 * Runs stop at the first failure unless --keep-going (to count failures over N runs).
 *
 * Every neighbour is bounded: the loops stop themselves at the deadline, Chromium runs under
 * `timeout -s KILL` where coreutils has it, and all are killed when the runs end, on Ctrl-C or on SIGTERM.
 * The report (stderr) gives each run's exit code, duration and test summary, and the pressure measured.
 */
import { fileURLToPath } from "node:url";
import { chromeArgs } from "../src/browser/launch.ts";
import { discoverChrome } from "../src/browser/discovery.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const BUSY_PAGE = new URL("../fixtures/site/animation.html", import.meta.url).href;

interface Options {
  repeat: number;
  keepGoing: boolean;
  loops: number;
  chromium: boolean;
  /** Bound on the neighbours' life; by default 45 minutes per run. */
  minutes: number;
  command: string[];
}

function parseArgs(args: string[]): Options {
  const o: Options = {
    repeat: 1,
    keepGoing: false,
    loops: navigator.hardwareConcurrency,
    chromium: true,
    minutes: 0,
    command: [Deno.execPath(), "task", "test"],
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const int = (min: number) => {
      const v = Number(args[++i]);
      if (!Number.isInteger(v) || v < min) throw new Error(`${a} takes an integer >= ${min}`);
      return v;
    };
    if (a === "--repeat") o.repeat = int(1);
    else if (a === "--loops") o.loops = int(0);
    else if (a === "--minutes") o.minutes = int(1);
    else if (a === "--keep-going") o.keepGoing = true;
    else if (a === "--no-chromium") o.chromium = false;
    else if (a === "--") {
      o.command = args.slice(i + 1);
      break;
    } else throw new Error(`unknown argument ${a}; see the header of tests/pressure.ts`);
  }
  if (o.command.length === 0) throw new Error("-- needs a command");
  if (o.minutes === 0) o.minutes = 45 * o.repeat;
  return o;
}

/** A started neighbour: its process and how to read the CPU time of it and its descendants. */
interface Neighbour {
  name: string;
  child: Deno.ChildProcess;
  /** Substring of /proc/<pid>/cmdline that marks this neighbour's processes (and only them). */
  marker: string;
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** pid → CPU seconds of every live process whose command line contains marker. */
function cpuSeconds(marker: string): Map<number, number> {
  const out = new Map<number, number>();
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return out; // not Linux: no measurement, the pressure still runs
  }
  for (const e of entries) {
    const pid = Number(e.name);
    if (!Number.isInteger(pid)) continue;
    try {
      if (!Deno.readTextFileSync(`/proc/${pid}/cmdline`).includes(marker)) continue;
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(pid, (Number(fields[11]) + Number(fields[12])) / TICKS); // utime + stime
    } catch { /* gone meanwhile */ }
  }
  return out;
}

function hasTimeout(): boolean {
  try {
    return new Deno.Command("timeout", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

function startLoops(count: number, deadline: number): Neighbour[] {
  const marker = `krometrail-pressure-loop-${Deno.pid}`;
  // The marker is a no-op string literal in the loop's own source, so /proc finds exactly these.
  const code = `"${marker}"; const end = ${deadline}; while (Date.now() < end) {}`;
  return Array.from({ length: count }, (_, i) => ({
    name: `loop ${i + 1}`,
    marker,
    child: new Deno.Command(Deno.execPath(), {
      args: ["eval", code],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn(),
  }));
}

async function startChromium(deadline: number): Promise<{ neighbour: Neighbour; profile: string }> {
  const profile = await Deno.makeTempDir({ prefix: "krometrail-pressure-chromium-" });
  const executable = discoverChrome({}).path;
  const args = chromeArgs({ executable, userDataDir: profile, profileLabel: "pressure", headless: true });
  args[args.length - 1] = BUSY_PAGE; // instead of about:blank
  const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
  const [cmd, cmdArgs] = hasTimeout()
    ? ["timeout", ["-s", "KILL", String(seconds), executable, ...args]]
    : [executable, args];
  const child = new Deno.Command(cmd, { args: cmdArgs, stdin: "null", stdout: "null", stderr: "null" })
    .spawn();
  return { neighbour: { name: "chromium", child, marker: profile }, profile };
}

/** Kills every process of every neighbour by pid (descendants found through their marker). */
async function stopAll(neighbours: Neighbour[]): Promise<void> {
  for (const n of neighbours) {
    for (const pid of cpuSeconds(n.marker).keys()) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
    try {
      n.child.kill("SIGKILL");
    } catch { /* already exited */ }
  }
  await Promise.allSettled(neighbours.map((n) => n.child.status));
}

interface RunReport {
  code: number;
  seconds: number;
  summary: string;
}

/** Runs the command with stdout teed, keeping deno test's last summary line ("ok | 3 passed | ..."). */
/** The command run now, so a signal can end it too. */
let running: Deno.ChildProcess | undefined;

async function runOnce(command: string[]): Promise<RunReport> {
  const started = performance.now();
  const child = running = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: ROOT,
    env: { NO_COLOR: "1" }, // so the summary line is plain text
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let summary = "";
  let tail = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    await Deno.stdout.write(chunk);
    tail += decoder.decode(chunk, { stream: true });
    const lines = tail.split("\n");
    tail = lines.pop() ?? "";
    for (const line of lines) {
      if (/^(ok|FAILED) \| \d+ passed/.test(line.trim())) summary = line.trim();
    }
  }
  const { code } = await child.status;
  running = undefined;
  return { code, seconds: (performance.now() - started) / 1000, summary };
}

function loadAverage(): number | undefined {
  try {
    return Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  const opts = parseArgs(Deno.args);
  const deadline = Date.now() + opts.minutes * 60_000;
  const neighbours: Neighbour[] = [];
  let profile: string | undefined;
  const cleanUp = async () => {
    await stopAll(neighbours);
    if (profile) await Deno.remove(profile, { recursive: true }).catch(() => {});
  };
  const onSignal = () => {
    try {
      running?.kill("SIGTERM");
    } catch { /* already exited */ }
    cleanUp().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  if (Deno.build.os !== "windows") Deno.addSignalListener("SIGTERM", onSignal);

  const reports: RunReport[] = [];
  let maxLoad = 0;
  const sampler = setInterval(() => maxLoad = Math.max(maxLoad, loadAverage() ?? 0), 5_000);
  try {
    neighbours.push(...startLoops(opts.loops, deadline));
    if (opts.chromium) {
      const started = await startChromium(deadline);
      neighbours.push(started.neighbour);
      profile = started.profile;
    }
    console.error(
      `pressure: ${opts.loops} busy loop(s)${
        opts.chromium ? " + headless Chromium on animation.html" : ""
      }, ` +
        `bounded to ${opts.minutes} min; running ${opts.command.join(" ")} ×${opts.repeat}`,
    );
    const wall = performance.now();
    for (let i = 0; i < opts.repeat && Date.now() < deadline; i++) {
      const r = await runOnce(opts.command);
      reports.push(r);
      console.error(
        `pressure run ${i + 1}/${opts.repeat}: exit ${r.code} in ${r.seconds.toFixed(0)} s; ${r.summary}`,
      );
      if (r.code !== 0 && !opts.keepGoing) break;
    }
    // CPU the neighbours took, as a share of the runs' wall time (1.0 = one core kept busy all along).
    const wallSeconds = (performance.now() - wall) / 1000;
    maxLoad = Math.max(maxLoad, loadAverage() ?? 0);
    const share = (marker: string) =>
      ([...cpuSeconds(marker).values()].reduce((a, b) => a + b, 0) / wallSeconds).toFixed(2);
    const shares = [...new Map(neighbours.map((n) => [n.marker, n])).values()].map((n) =>
      `${n.name === "chromium" ? "chromium" : `${opts.loops} loop(s)`} ${share(n.marker)} cores`
    );
    if (Date.now() >= deadline) console.error("pressure: the deadline passed before the runs ended");
    console.error(
      `pressure: neighbours used ${shares.join(", ")}; max 1-min load average ${maxLoad.toFixed(1)}`,
    );
  } finally {
    clearInterval(sampler);
    await cleanUp();
  }
  const passed = reports.filter((r) => r.code === 0).length;
  const ok = passed === opts.repeat;
  console.error(`pressure: ${ok ? "PASSED" : "FAILED"} (${passed}/${opts.repeat} runs passed)`);
  return ok ? 0 : 1;
}

Deno.exit(await main());
