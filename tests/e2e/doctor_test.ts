/**
 * `krometrail doctor` as a person runs it: the real CLI under the compiled binary's permissions, with
 * its own data dir and temp dir, against this machine's Chromium.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { REPO_ROOT } from "./harness.ts";
import { TEMP_PROFILE_PREFIX } from "../../src/store/browser_record.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

async function doctor(args: string[], env: Record<string, string>): Promise<Run> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "doctor", ...args],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    stdout: dec.decode(out.stdout),
    stderr: dec.decode(out.stderr),
    ms: Math.round(performance.now() - t0),
  };
}

function lastLine(text: string): string {
  return text.trimEnd().split("\n").at(-1) ?? "";
}

/** Doctor's temporary profiles (Chromium's own temp files are its business). */
function profilesLeftIn(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith(TEMP_PROFILE_PREFIX));
}

/** Processes whose command line names `dir`: a browser (or its watchdog) doctor left behind. */
function processesUnder(dir: string): number[] {
  const found: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmd = new TextDecoder().decode(Deno.readFileSync(`/proc/${entry.name}/cmdline`));
      if (cmd.includes(dir)) found.push(Number(entry.name));
    } catch { /* exited while listing */ }
  }
  return found;
}

Deno.test("doctor: ready on this machine, a named fix for a missing KROMETRAIL_CHROME, --json parses", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "krometrail-doctor-data-" });
  const tmpA = await Deno.makeTempDir({ prefix: "krometrail-doctor-tmp-" });
  const tmpB = await Deno.makeTempDir({ prefix: "krometrail-doctor-tmp-" });
  const missing = `${tmpA}/no-such-chrome`;
  const base = { ...Deno.env.toObject(), KROMETRAIL_DATA_DIR: dataDir };
  try {
    // One after another: two doctors each launching Chromium at once, beside the suite's load, could
    // push one past its own launch bounds and fail a machine that works.
    const text = await doctor([], { ...base, TMPDIR: tmpA });
    const json = await doctor(["--json"], { ...base, TMPDIR: tmpB });
    const broken = await doctor([], { ...base, KROMETRAIL_CHROME: missing });

    // A person's report: exit 0, the browser's version, the launch with its frame, the snippet.
    assertEquals(text.code, 0, `${text.stdout}\n${text.stderr}`);
    assertMatch(text.stdout, /^ {2}ok {4}version +(Chromium|Google Chrome)[^\n]* \d+\.\d+/m);
    assertMatch(text.stdout, /^ {2}ok {4}launch \+ frame +first screencast frame \(\d+×\d+ JPEG/m);
    assertMatch(text.stdout, /^ {2}ok {4}data dir +\S+ \(KROMETRAIL_DATA_DIR\) is writable/m);
    assert(text.stdout.includes(`"mcpServers"`), text.stdout);
    assert(text.stdout.includes("claude mcp add krometrail -- "), text.stdout);
    assert(text.stdout.includes("codex mcp add krometrail -- "), text.stdout);
    assertMatch(lastLine(text.stdout), /^ready: /);
    assert(!/^fix:/m.test(text.stdout), text.stdout);
    assert(text.stderr.includes("krometrail doctor: "), "progress on stderr");

    // The launch cleaned up: no temporary profile left in its temp dir, no process naming it.
    assertEquals(profilesLeftIn(tmpA), []);
    assertEquals(processesUnder(tmpA), []);
    // The write probe left nothing in the data dir.
    assertEquals([...Deno.readDirSync(dataDir)].filter((e) => e.name.startsWith(".doctor-probe")).length, 0);

    // The same verdict for a program, as one JSON object.
    assertEquals(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assertEquals(report.ready, true);
    assertEquals(report.exit_code, 0);
    const launch = report.checks.find((c: { name: string }) => c.name === "launch + frame");
    assertEquals(launch.status, "ok");
    assert(launch.data.total_ms > 0 && launch.data.frame_width > 0, JSON.stringify(launch));
    const version = report.checks.find((c: { name: string }) => c.name === "version");
    assertEquals(version.status, "ok");
    assertEquals(report.mcp.installation, "checkout");
    assertEquals(report.mcp.launch.args.slice(-1), ["mcp"]);
    for (const flag of SERVER_PERMISSIONS) assert(report.mcp.launch.args.includes(flag), flag);
    assertEquals(profilesLeftIn(tmpB), []);
    assertEquals(processesUnder(tmpB), []);

    // A missing KROMETRAIL_CHROME: exit 1, and the first fix names the variable and the path.
    assertEquals(broken.code, 1, `${broken.stdout}\n${broken.stderr}`);
    const fix = lastLine(broken.stderr);
    assertMatch(fix, /^fix: KROMETRAIL_CHROME points at /);
    assert(fix.includes(missing), fix);
    assertEquals(lastLine(broken.stdout), fix, "the report's fix line is the stderr's last line");
    assertMatch(broken.stdout, /^ {2}FAIL {2}KROMETRAIL_CHROME +\S+ does not exist$/m);

    console.error(`doctor runs: ok ${text.ms} ms, --json ${json.ms} ms, missing chrome ${broken.ms} ms`);
  } finally {
    for (const dir of [dataDir, tmpA, tmpB]) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
