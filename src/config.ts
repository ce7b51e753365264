import { join } from "node:path";
import { homedir } from "node:os";

/** Everything the process reads from its environment, read once and frozen. */
export interface Config {
  readonly dataDir: string;
  readonly diskBudgetBytes: number;
  readonly retentionMaxAgeSecs: number;
  readonly chromePath?: string;
  readonly chromeSource?: "KROMETRAIL_CHROME" | "CHROME_BIN";
  readonly headless: boolean;
  readonly logLevel: "debug" | "info" | "warning" | "error";
}

const DEFAULT_BUDGET = 10_000_000_000;
const DEFAULT_MAX_AGE = 7 * 24 * 3600;

function defaultDataDir(env: (k: string) => string | undefined): string {
  const home = env("HOME") ?? homedir();
  if (Deno.build.os === "darwin") return join(home, "Library", "Application Support", "krometrail");
  const xdg = env("XDG_DATA_HOME");
  return join(xdg && xdg.length > 0 ? xdg : join(home, ".local", "share"), "krometrail");
}

function nonNegativeInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  }
  return value;
}

export function loadConfig(env: (k: string) => string | undefined = (k) => Deno.env.get(k)): Config {
  const kromeChrome = env("KROMETRAIL_CHROME");
  const chromeBin = env("CHROME_BIN");
  const level = env("KROMETRAIL_LOG_LEVEL");
  return Object.freeze({
    dataDir: env("KROMETRAIL_DATA_DIR") || defaultDataDir(env),
    diskBudgetBytes: nonNegativeInt(
      "KROMETRAIL_DISK_BUDGET_BYTES",
      env("KROMETRAIL_DISK_BUDGET_BYTES"),
      DEFAULT_BUDGET,
    ),
    retentionMaxAgeSecs: nonNegativeInt(
      "KROMETRAIL_RETENTION_MAX_AGE_SECS",
      env("KROMETRAIL_RETENTION_MAX_AGE_SECS"),
      DEFAULT_MAX_AGE,
    ),
    chromePath: kromeChrome || chromeBin || undefined,
    chromeSource: kromeChrome ? "KROMETRAIL_CHROME" : chromeBin ? "CHROME_BIN" : undefined,
    headless: env("KROMETRAIL_HEADLESS") === "1" || env("KROMETRAIL_HEADLESS") === "true",
    logLevel: level === "debug" || level === "warning" || level === "error" ? level : "info",
  });
}
