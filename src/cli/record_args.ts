/**
 * `krometrail record` argument parsing: pure, so every refusal is unit-tested without a browser.
 * Steps keep the command line's order, because repeatable flags interleave
 * (`--click "Show details" --wait-ms 500 --fill Name=Ada`).
 */

/** Recording time after the steps: long enough to see a transition, short enough for a terminal. */
export const DEFAULT_RECORD_SECONDS = 3;
export const MAX_RECORD_SECONDS = 120;
/** One `--wait-ms` step. */
export const MAX_WAIT_MS = 60_000;
export const MAX_STEPS = 50;
const MAX_TEXT = 200;
const MAX_VALUE = 10_000;

export type RecordStep =
  | { kind: "click"; text: string }
  | { kind: "fill"; label: string; value: string }
  | { kind: "wait"; ms: number };

export interface RecordArgs {
  url: string;
  seconds: number;
  steps: RecordStep[];
  out?: string;
  /** Set only by `--headless`; otherwise the environment decides (see `resolveHeadless`). */
  headless?: true;
}

export type ParseResult =
  | { ok: true; args: RecordArgs }
  | { ok: false; help: true }
  | { ok: false; help?: false; flag: string; message: string };

export const RECORD_USAGE = [
  "usage: krometrail record URL [--seconds N] [--click TEXT]... [--fill LABEL=VALUE]... [--wait-ms MS]...",
  "                             [--out DIR] [--headless]",
  "",
  "  Opens URL in Chrome, runs the steps in the order given, records for --seconds more, then writes",
  "  storyboard.png, difference-map.png, video.mp4 (when ffmpeg qualifies), events.md and report.html",
  "  into DIR (default krometrail-record-<timestamp>) and prints the folder.",
  "",
  `  --seconds N         recording time after the steps, 1-${MAX_RECORD_SECONDS} (default ${DEFAULT_RECORD_SECONDS})`,
  "  --click TEXT        click the element showing TEXT (a button or link named TEXT otherwise)",
  "  --fill LABEL=VALUE  type VALUE into the field labelled LABEL",
  `  --wait-ms MS        wait MS milliseconds, 0-${MAX_WAIT_MS}`,
  "  --out DIR           output folder (relative to the current directory)",
  "  --headless          no browser window (default when KROMETRAIL_HEADLESS=1 or there is no display)",
  "",
  "  exit codes: 0 ok · 1 a step failed (files still written) · 2 bad arguments · 4 could not run",
].join("\n");

const VALUE_FLAGS = new Set(["--seconds", "--click", "--fill", "--wait-ms", "--out"]);

function bad(flag: string, message: string): ParseResult {
  return { ok: false, flag, message };
}

function integerIn(flag: string, raw: string, min: number, max: number): number | ParseResult {
  if (!/^\d+$/.test(raw.trim())) {
    return bad(flag, `${flag} takes a whole number, got ${JSON.stringify(raw)}.`);
  }
  const n = Number(raw.trim());
  if (n < min || n > max) return bad(flag, `${flag} is ${n}; it must be between ${min} and ${max}.`);
  return n;
}

function checkUrl(raw: string): string | ParseResult {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return bad(
      "URL",
      `URL ${JSON.stringify(raw.slice(0, 200))} is not an absolute URL (e.g. https://example.com/).`,
    );
  }
  if (!["http:", "https:", "file:"].includes(url.protocol)) {
    return bad("URL", `URL scheme ${url.protocol} is not supported; use http:, https: or file:.`);
  }
  return raw;
}

/** Parses the arguments after `record`. `--flag value` and `--flag=value` are both accepted. */
export function parseRecordArgs(argv: readonly string[]): ParseResult {
  let url: string | undefined;
  let seconds: number | undefined;
  let out: string | undefined;
  let headless: true | undefined;
  const steps: RecordStep[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--help" || arg === "-h") return { ok: false, help: true };
    if (arg === "--headless") {
      headless = true;
      continue;
    }
    if (arg === "--") {
      if (i + 1 < argv.length && url === undefined) url = argv[++i];
      continue;
    }
    if (arg.startsWith("-")) {
      const eq = arg.indexOf("=");
      const flag = eq > 0 ? arg.slice(0, eq) : arg;
      if (!VALUE_FLAGS.has(flag)) {
        return bad(flag, `unknown option ${flag}.`);
      }
      let value: string;
      if (eq > 0) value = arg.slice(eq + 1);
      else if (i + 1 < argv.length) value = argv[++i];
      else return bad(flag, `${flag} needs a value.`);
      if (flag === "--seconds") {
        if (seconds !== undefined) return bad(flag, "--seconds is given more than once.");
        const n = integerIn(flag, value, 1, MAX_RECORD_SECONDS);
        if (typeof n !== "number") return n;
        seconds = n;
      } else if (flag === "--out") {
        if (out !== undefined) return bad(flag, "--out is given more than once.");
        if (value.trim() === "") return bad(flag, "--out needs a folder name.");
        out = value;
      } else {
        if (steps.length >= MAX_STEPS) return bad(flag, `more than ${MAX_STEPS} steps; split the recording.`);
        if (flag === "--wait-ms") {
          const n = integerIn(flag, value, 0, MAX_WAIT_MS);
          if (typeof n !== "number") return n;
          steps.push({ kind: "wait", ms: n });
        } else if (flag === "--click") {
          const text = value.trim();
          if (text === "") return bad(flag, "--click needs the visible text of what to click.");
          if (text.length > MAX_TEXT) return bad(flag, `--click text is over ${MAX_TEXT} characters.`);
          steps.push({ kind: "click", text });
        } else {
          const at = value.indexOf("=");
          const label = at < 0 ? "" : value.slice(0, at).trim();
          if (label === "") {
            return bad(flag, `--fill takes LABEL=VALUE, got ${JSON.stringify(value.slice(0, 80))}.`);
          }
          if (label.length > MAX_TEXT) return bad(flag, `--fill label is over ${MAX_TEXT} characters.`);
          const fillValue = value.slice(at + 1);
          if (fillValue.length > MAX_VALUE) return bad(flag, `--fill value is over ${MAX_VALUE} characters.`);
          steps.push({ kind: "fill", label, value: fillValue });
        }
      }
      continue;
    }
    if (url !== undefined) return bad("URL", `one URL only; also got ${JSON.stringify(arg.slice(0, 200))}.`);
    url = arg;
  }
  if (url === undefined) return bad("URL", "the URL to record is missing.");
  const checked = checkUrl(url);
  if (typeof checked !== "string") return checked;
  return {
    ok: true,
    args: {
      url: checked,
      seconds: seconds ?? DEFAULT_RECORD_SECONDS,
      steps,
      ...(out !== undefined ? { out } : {}),
      ...(headless ? { headless } : {}),
    },
  };
}

/** Headless when asked, when KROMETRAIL_HEADLESS is set, or when Linux has no display to show a window on. */
export function resolveHeadless(
  flag: boolean | undefined,
  env: (name: string) => string | undefined,
  os: string,
): boolean {
  if (flag) return true;
  const setting = env("KROMETRAIL_HEADLESS");
  if (setting === "1" || setting === "true") return true;
  if (os === "linux" && !env("DISPLAY") && !env("WAYLAND_DISPLAY")) return true;
  return false;
}

/** Labels whose value a shared report should not show (the page's own field masking cannot reach our text). */
const SECRET_LABEL = /pass(word|code|phrase)?|secret|token|api.?key|\bpin\b|otp|cvc|cvv/i;

/** One line per step for the terminal and the report; a secret-looking field's value is masked. */
export function describeStep(step: RecordStep): string {
  switch (step.kind) {
    case "click":
      return `click ${JSON.stringify(step.text)}`;
    case "fill":
      return SECRET_LABEL.test(step.label)
        ? `fill ${JSON.stringify(step.label)} with ${step.value.length} characters (masked)`
        : `fill ${JSON.stringify(step.label)} with ${JSON.stringify(step.value)}`;
    case "wait":
      return `wait ${step.ms} ms`;
  }
}
