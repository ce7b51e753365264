/**
 * Doctor's browser discovery checks: every candidate with its outcome (the server's own discovery,
 * src/browser/discovery.ts) and the chosen browser's version, bounded.
 */
import {
  type CandidateDiagnostic,
  type CandidateSource,
  discoverChrome,
  type Discovered,
} from "../browser/discovery.ts";
import { ToolError } from "../errors.ts";
import { sanitizeDiagnostics } from "../temporal/ffmpeg.ts";
import { sessionLeaderLauncher } from "../browser/watchdog.ts";
import type { CheckResult } from "./doctor_report.ts";
import { DoctorTimeout, INSTALL_HINT, within } from "./doctor_launch.ts";

type Env = (k: string) => string | undefined;

/** Debian's chromium is a wrapper script that starts the real binary; under load that takes seconds. */
const VERSION_TIMEOUT_MS = 8_000;

function sourceLabel(source: CandidateSource, ordinal: number): string {
  if (source === "argument") return "--executable";
  if (source === "platform_default") return ordinal > 0 ? "platform default" : "discovery";
  return source;
}

function outcomeText(outcome: CandidateDiagnostic["outcome"]): string {
  switch (outcome) {
    case "found":
      return "found";
    case "missing":
      return "does not exist";
    case "not_executable":
      return "is not an executable file";
    case "skipped":
      return "not probed (discovery time budget spent)";
  }
}

export interface BrowserCheck {
  checks: CheckResult[];
  chosen?: Discovered;
}

/**
 * The candidates in the server's order. An explicit or environment choice that fails stops discovery
 * there (the server does not fall back either); the fix then says what unsetting it would give.
 */
export function checkBrowserCandidates(explicit: string | undefined, env: Env): BrowserCheck {
  const pathOf = (source: CandidateSource, found?: Discovered): string | undefined =>
    source === "argument" ? explicit : source === "platform_default" ? found?.path : env(source);
  let found: Discovered;
  try {
    found = discoverChrome({ ...(explicit ? { explicit } : {}), env });
  } catch (err) {
    if (!(err instanceof ToolError)) throw err;
    const diagnostics = (err.details?.diagnostics ?? []) as CandidateDiagnostic[];
    const checks: CheckResult[] = diagnostics.map((d) => {
      const path = pathOf(d.source) ?? "(platform default)";
      return {
        section: "browser",
        name: sourceLabel(d.source, d.ordinal),
        status: d.outcome === "found" ? "ok" : "fail",
        detail: `${path} ${outcomeText(d.outcome)}`,
        needed: true,
      };
    });
    const failed = diagnostics.find((d) => d.outcome !== "found" && d.source !== "platform_default");
    if (failed) {
      const name = failed.source === "argument" ? "--executable" : failed.source;
      const path = pathOf(failed.source) ?? "";
      const without = fallbackWithout(failed.source, env);
      const row = checks.find((c) => c.name === sourceLabel(failed.source, failed.ordinal));
      const instead = without
        ? `unset it (then ${without.path}, ${
          without.source === "platform_default" ? "found on this system" : `named by ${without.source}`
        }, is used)`
        : `unset it`;
      const fix =
        `${name} points at ${path}, which ${outcomeText(failed.outcome)}: ${instead} or point it at a ` +
        `Chrome/Chromium binary${without ? "" : ` (${INSTALL_HINT})`}`;
      if (row) row.fix = fix;
      return { checks };
    }
    checks.push({
      section: "browser",
      name: "discovery",
      status: "fail",
      detail: `no Chrome or Chromium found (${
        err.details?.probed ?? 0
      } locations probed on PATH and the platform defaults)`,
      needed: true,
      fix:
        `no Chrome or Chromium is installed where krometrail looks: ${INSTALL_HINT}, or set KROMETRAIL_CHROME to a ` +
        "Chrome/Chromium binary",
    });
    return { checks };
  }
  const checks: CheckResult[] = [
    ...unsetRows(explicit, env, found.diagnostics),
    ...found.diagnostics.map((d): CheckResult => ({
      section: "browser",
      name: sourceLabel(d.source, d.ordinal),
      status: d.outcome === "found" ? "ok" : "warn",
      detail: `${pathOf(d.source, found) ?? "(platform default)"} ${outcomeText(d.outcome)}${
        d.outcome === "found" ? " (chosen)" : ""
      }`,
      needed: d.outcome === "found",
    })),
  ];
  return { checks, chosen: found };
}

/** The environment choices a person can make, shown when unset so they learn the knobs. */
function unsetRows(explicit: string | undefined, env: Env, seen: CandidateDiagnostic[]): CheckResult[] {
  const rows: CheckResult[] = [];
  // Discovery stops at the explicit argument; the variables after it were not consulted.
  if (explicit) return rows;
  for (const source of ["KROMETRAIL_CHROME", "CHROME_BIN"] as const) {
    if (env(source) || seen.some((d) => d.source === source)) continue;
    rows.push({ section: "browser", name: source, status: "ok", detail: "not set", needed: false });
  }
  return rows;
}

/** What discovery would choose with this source unset (and the explicit argument dropped). */
function fallbackWithout(source: CandidateSource, env: Env): Discovered | undefined {
  try {
    return discoverChrome({ env: (k) => k === source ? undefined : env(k) });
  } catch {
    return undefined;
  }
}

/**
 * Runs `path --version` as the leader of its own process group (setsid, as the launch does), so the
 * deadline kills whatever it forked too: a wrapper script's child would otherwise hold the output
 * pipe open past the kill.
 */
async function versionOutput(path: string): Promise<{ code: number; stdout: string; timedOut: boolean }> {
  const leader = sessionLeaderLauncher();
  const child = new Deno.Command(leader ?? path, {
    args: leader ? [path, "--version"] : ["--version"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      if (leader) Deno.kill(-child.pid, "SIGKILL");
      else child.kill("SIGKILL");
    } catch { /* already gone */ }
  }, VERSION_TIMEOUT_MS);
  try {
    // The pipe may still outlive the kill (a child that left the group): stop waiting for it then.
    const out = await within(child.output(), VERSION_TIMEOUT_MS + 1_000, "version");
    return { code: out.code, stdout: new TextDecoder().decode(out.stdout), timedOut };
  } catch (err) {
    if (err instanceof DoctorTimeout) return { code: -1, stdout: "", timedOut: true };
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** `chrome --version`, bounded; a warning when it says nothing (the launch check decides). */
export async function checkBrowserVersion(path: string): Promise<CheckResult> {
  const base = { section: "browser", name: "version", needed: false } as const;
  try {
    const run = await versionOutput(path);
    const line = (run.stdout.split(/\r?\n/).find((l) => l.trim() !== "") ?? "").trim();
    // Debian's wrapper appends "built on …"; the name and number are what matter.
    const version = sanitizeDiagnostics(line.replace(/\s+built on .*$/i, ""), 120);
    if (run.timedOut) {
      return { ...base, status: "warn", detail: `--version did not answer within ${VERSION_TIMEOUT_MS} ms` };
    }
    if (run.code !== 0 || !version) {
      return {
        ...base,
        status: "warn",
        detail: `--version failed (exit ${run.code}); the launch check decides`,
      };
    }
    return { ...base, status: "ok", detail: version, data: { version } };
  } catch (err) {
    return { ...base, status: "warn", detail: `--version could not be run (${(err as Error).name})` };
  }
}
