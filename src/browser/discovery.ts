import { delimiter, isAbsolute, join } from "node:path";
import { ToolError } from "../errors.ts";

/** Where a candidate came from; diagnostics report only this class, never the path. */
export type CandidateSource = "argument" | "KROMETRAIL_CHROME" | "CHROME_BIN" | "platform_default";

export interface CandidateDiagnostic {
  source: CandidateSource;
  ordinal: number;
  outcome: "found" | "missing" | "not_executable" | "skipped";
  elapsed_ms: number;
}

export interface Discovered {
  path: string;
  source: CandidateSource;
  diagnostics: CandidateDiagnostic[];
}

const LINUX_NAMES = ["google-chrome-stable", "google-chrome", "chromium", "chromium-browser"];
const MAC_BUNDLES = [
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
  "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
];
/** Bounded cold-start budget across all probes; PATH probes are a stat each. */
const PROBE_BUDGET_MS = 2_000;

function platformCandidates(pathEnv: string | undefined): string[] {
  const out: string[] = [];
  if (Deno.build.os === "darwin") out.push(...MAC_BUNDLES);
  const dirs = (pathEnv ?? "/usr/local/bin:/usr/bin:/bin").split(delimiter).filter((d) => d.length > 0);
  for (const name of LINUX_NAMES) {
    for (const dir of dirs) out.push(join(dir, name));
  }
  return out;
}

function probe(path: string): CandidateDiagnostic["outcome"] {
  try {
    const info = Deno.statSync(path);
    if (!info.isFile) return "not_executable";
    if (Deno.build.os !== "windows" && info.mode !== null && (info.mode & 0o111) === 0) {
      return "not_executable";
    }
    return "found";
  } catch {
    return "missing";
  }
}

/**
 * Explicit argument, then KROMETRAIL_CHROME, then CHROME_BIN, then platform defaults.
 * An explicit or environment choice that does not exist is an error rather than a silent fallback,
 * because the user asked for that browser.
 */
export function discoverChrome(opts: {
  explicit?: string;
  env?: (k: string) => string | undefined;
}): Discovered {
  const env = opts.env ?? ((k: string) => Deno.env.get(k));
  const diagnostics: CandidateDiagnostic[] = [];
  const started = performance.now();
  const chosen: Array<[CandidateSource, string | undefined]> = [
    ["argument", opts.explicit],
    ["KROMETRAIL_CHROME", env("KROMETRAIL_CHROME")],
    ["CHROME_BIN", env("CHROME_BIN")],
  ];
  let ordinal = 0;
  for (const [source, value] of chosen) {
    if (!value) continue;
    ordinal++;
    const t0 = performance.now();
    const outcome = probe(value);
    diagnostics.push({ source, ordinal, outcome, elapsed_ms: Math.round(performance.now() - t0) });
    if (outcome === "found") return { path: value, source, diagnostics };
    throw new ToolError({
      code: "browser_not_found",
      message: `The browser named by ${source === "argument" ? "the executable argument" : source} is ${
        outcome === "missing" ? "missing" : "not an executable file"
      }.`,
      retry: "after_recovery",
      recovery: `Point ${
        source === "argument" ? "executable" : source
      } at an installed Chrome or Chromium binary (or unset it); run \`krometrail doctor\` to see every candidate.`,
      details: { diagnostics },
    });
  }
  for (const candidate of platformCandidates(env("PATH"))) {
    ordinal++;
    if (performance.now() - started > PROBE_BUDGET_MS) {
      diagnostics.push({ source: "platform_default", ordinal, outcome: "skipped", elapsed_ms: 0 });
      continue;
    }
    if (!isAbsolute(candidate)) continue;
    const t0 = performance.now();
    const outcome = probe(candidate);
    if (outcome !== "missing") {
      diagnostics.push({
        source: "platform_default",
        ordinal,
        outcome,
        elapsed_ms: Math.round(performance.now() - t0),
      });
    }
    if (outcome === "found") return { path: candidate, source: "platform_default", diagnostics };
  }
  throw new ToolError({
    code: "browser_not_found",
    message: "No Chrome or Chromium installation was found.",
    retry: "after_recovery",
    recovery:
      "Install Chrome or Chromium, or set KROMETRAIL_CHROME to its executable, or pass executable to start_browser; run `krometrail doctor` to see what was probed.",
    details: { probed: ordinal, diagnostics: diagnostics.slice(0, 20) },
  });
}
