/**
 * The doctor's report: the checks' results summed into a verdict (ready or the first fix to make) and
 * rendered for a person (aligned text) or a program (one JSON object). Pure.
 */
import type { McpSnippet } from "./mcp_snippet.ts";

export type CheckStatus = "ok" | "warn" | "fail";

export type CheckSection = "browser" | "launch" | "video" | "data" | "profiles";

export interface CheckResult {
  section: CheckSection;
  /** Short name of what was checked ("KROMETRAIL_CHROME", "headless launch", "data dir"). */
  name: string;
  status: CheckStatus;
  /** One line: what was found. */
  detail: string;
  /** Whether the server cannot work without this; a needed check that fails makes doctor exit 1. */
  needed: boolean;
  /** What to do about it: the fix for a failure, a hint for a warning. */
  fix?: string;
  /** Measured numbers worth a program's while (ms, bytes, versions). */
  data?: Record<string, string | number | boolean>;
}

export interface DoctorReport {
  krometrail: string;
  platform: string;
  /** Everything needed is there. */
  ready: boolean;
  exit_code: 0 | 1;
  /** The first fix to make, when not ready. */
  fix?: string;
  checks: CheckResult[];
  mcp: McpSnippet;
  elapsed_ms: number;
}

export const SECTION_TITLES: Record<CheckSection, string> = {
  browser: "Browser",
  launch: "Headless launch",
  video: "Video (ffmpeg)",
  data: "Data dir",
  profiles: "Managed profiles",
};

const SECTION_ORDER: readonly CheckSection[] = ["browser", "launch", "video", "data", "profiles"];

/** The verdict: ready unless a needed check failed; the fix is the first such check's (in section order). */
export function summarize(
  checks: CheckResult[],
  mcp: McpSnippet,
  meta: { krometrail: string; platform: string; elapsed_ms: number },
): DoctorReport {
  const ordered = orderChecks(checks);
  const blocking = ordered.find((c) => c.status === "fail" && c.needed);
  const fix = blocking ? blocking.fix ?? `${blocking.name}: ${blocking.detail}` : undefined;
  return {
    krometrail: meta.krometrail,
    platform: meta.platform,
    ready: blocking === undefined,
    exit_code: blocking ? 1 : 0,
    ...(fix ? { fix } : {}),
    checks: ordered,
    mcp,
    elapsed_ms: Math.round(meta.elapsed_ms),
  };
}

/** Stable by section, keeping each section's own order. */
function orderChecks(checks: CheckResult[]): CheckResult[] {
  return SECTION_ORDER.flatMap((s) => checks.filter((c) => c.section === s));
}

const STATUS_LABEL: Record<CheckStatus, string> = { ok: "ok", warn: "WARN", fail: "FAIL" };

/** The report a person reads: a section per area, a status column, then the MCP snippet and the verdict. */
export function renderText(report: DoctorReport): string {
  const lines: string[] = [`krometrail doctor — krometrail ${report.krometrail} on ${report.platform}`];
  const width = Math.min(24, Math.max(...report.checks.map((c) => c.name.length), 8));
  for (const section of SECTION_ORDER) {
    const rows = report.checks.filter((c) => c.section === section);
    if (rows.length === 0) continue;
    lines.push("", SECTION_TITLES[section]);
    for (const c of rows) {
      lines.push(`  ${STATUS_LABEL[c.status].padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`);
      // A failure's fix goes in the verdict line; a warning's hint and a non-blocking failure's stay here.
      if (c.fix && !(c.status === "fail" && c.needed)) lines.push(`        ${" ".repeat(width)}  → ${c.fix}`);
    }
  }
  lines.push("", `MCP configuration for this installation (${report.mcp.description})`);
  lines.push("  Claude Code (.mcp.json) / Cursor (~/.cursor/mcp.json):");
  for (const l of report.mcp.mcp_servers_json.split("\n")) lines.push(`    ${l}`);
  lines.push(`  Claude Code CLI:  ${report.mcp.claude_add}`);
  lines.push(`  Codex CLI:        ${report.mcp.codex_add}`);
  if (report.mcp.alternative) {
    const alt = report.mcp.alternative;
    lines.push(`  or, ${alt.description}: ${JSON.stringify(alt.launch)}`);
  }
  lines.push("");
  if (report.ready) {
    const warnings = report.checks.filter((c) => c.status !== "ok").length;
    lines.push(
      `ready: everything krometrail needs is here${
        warnings ? ` (${warnings} warning${warnings === 1 ? "" : "s"} above)` : ""
      } · ${report.elapsed_ms} ms`,
    );
  } else {
    lines.push(`not ready · ${report.elapsed_ms} ms`);
    lines.push(`fix: ${report.fix}`);
  }
  return lines.join("\n");
}

export function renderJson(report: DoctorReport): string {
  return JSON.stringify(report, null, 2);
}
