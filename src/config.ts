import { isAbsolute, join } from "node:path";
import { homedir } from "node:os";
import {
  DEFAULT_RECONNECT_WINDOW_MS,
  MAX_RECONNECT_WINDOW_MS,
  MIN_RECONNECT_WINDOW_MS,
} from "./browser/reconnect_policy.ts";

/** Everything the process reads from its environment, read once and frozen. */
export interface Config {
  readonly dataDir: string;
  readonly diskBudgetBytes: number;
  readonly retentionMaxAgeSecs: number;
  readonly chromePath?: string;
  readonly chromeSource?: "KROMETRAIL_CHROME" | "CHROME_BIN";
  readonly headless: boolean;
  readonly logLevel: "debug" | "info" | "warning" | "error";
  /** KROMETRAIL_ALLOW_FILE_URLS=0 refuses file:// in navigate_page and create_page. */
  readonly allowFileUrls: boolean;
  /** KROMETRAIL_UPLOAD_ROOT: the base relative upload paths resolve against (not a containment root). */
  readonly uploadRoot?: string;
  /** KROMETRAIL_RECONNECT_WINDOW_MS: how long an attached session retries its endpoint after a disconnect. */
  readonly reconnectWindowMs: number;
  /** KROMETRAIL_PHASE_TIMINGS: a JSONL file that gets each tool call's phase timings (benchmarks only). */
  readonly phaseTimingsFile?: string;
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

function boundedInt(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  const value = nonNegativeInt(name, raw, fallback);
  if (value < min || value > max) {
    throw new Error(`${name} must be between ${min} and ${max} ms, got ${value}`);
  }
  return value;
}

function flag(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw.trim() === "") return fallback;
  const v = raw.trim().toLowerCase();
  if (v === "1" || v === "true") return true;
  if (v === "0" || v === "false") return false;
  throw new Error(`${name} must be 0 or 1 (or false/true), got ${JSON.stringify(raw)}`);
}

function absoluteDir(name: string, raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  // A relative base would quietly depend on the cwd the MCP client happened to start us in.
  if (!isAbsolute(raw)) throw new Error(`${name} must be an absolute path, got ${JSON.stringify(raw)}`);
  return raw;
}

let processConfig: Config | undefined;

/**
 * The configuration the process loaded from its own environment (loadConfig with no argument), for
 * the few lower layers that need a setting but are not handed the AppContext.
 */
export function currentConfig(): Config {
  return processConfig ?? loadConfig();
}

export function loadConfig(env?: (k: string) => string | undefined): Config {
  if (env === undefined) return (processConfig = readConfig((k) => Deno.env.get(k)));
  return readConfig(env);
}

function readConfig(env: (k: string) => string | undefined): Config {
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
    allowFileUrls: flag("KROMETRAIL_ALLOW_FILE_URLS", env("KROMETRAIL_ALLOW_FILE_URLS"), true),
    uploadRoot: absoluteDir("KROMETRAIL_UPLOAD_ROOT", env("KROMETRAIL_UPLOAD_ROOT")),
    reconnectWindowMs: boundedInt(
      "KROMETRAIL_RECONNECT_WINDOW_MS",
      env("KROMETRAIL_RECONNECT_WINDOW_MS"),
      DEFAULT_RECONNECT_WINDOW_MS,
      MIN_RECONNECT_WINDOW_MS,
      MAX_RECONNECT_WINDOW_MS,
    ),
    phaseTimingsFile: env("KROMETRAIL_PHASE_TIMINGS") || undefined,
  });
}
