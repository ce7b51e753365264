import { buildCatalogue, CAPABILITIES, describeTool } from "./registry.ts";
import { CONVENTIONS } from "./schemas.ts";

/** Renders docs/tools.md from the registry; a test fails when the committed file differs. */
export function renderToolsDoc(): string {
  // Document conditional tools as they appear when their startup condition holds.
  const catalogue = buildCatalogue({ "temporal-video": { available: true } });
  const lines: string[] = [
    "# krometrail tools",
    "",
    "Generated from the capability registry by `deno task build --docs-only`; do not edit by hand.",
    "",
    "## Capabilities",
    "",
    "| capability | default | depends on | status | responsibility |",
    "|---|---|---|---|---|",
  ];
  for (const cap of CAPABILITIES) {
    const a = catalogue.availability.get(cap.name);
    lines.push(
      `| ${cap.name} | ${cap.default} | ${cap.depends.join(", ") || "—"} | ${
        cap.default === "conditional" && a?.available
          ? "available when ffmpeg and an H.264 encoder qualify at startup"
          : a?.available
          ? "available"
          : `unavailable: ${a?.reason ?? "unknown"}`
      } | ${cap.responsibility} |`,
    );
  }
  lines.push(
    "",
    "## Conventions",
    "",
    "The server instructions carry these once, so the schemas in tools/list leave them out; so are",
    "resource limits (string lengths, coordinate bounds), which the tables below list and the server",
    "enforces with an invalid_arguments error that names the argument.",
    "",
    CONVENTIONS,
    "",
    "## Tools",
    "",
  );
  for (const tool of catalogue.tools) {
    const d = describeTool(tool, "full");
    lines.push(`### ${tool.name}`, "", `Capability: \`${tool.capability}\`. ${tool.description}`, "");
    const props = (d.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
    const required = new Set((d.inputSchema.required ?? []) as string[]);
    const names = Object.keys(props);
    if (names.length === 0) {
      lines.push("No arguments (an empty object; unknown arguments are rejected).", "");
    } else {
      lines.push("| argument | type | required | notes |", "|---|---|---|---|");
      for (const name of names) {
        const p = props[name];
        lines.push(`| \`${name}\` | ${typeOf(p)} | ${required.has(name) ? "yes" : "no"} | ${notes(p)} |`);
      }
      lines.push("");
    }
    lines.push(returns(d.outputSchema), "");
  }
  return lines.join("\n");
}

/** The structuredContent fields a result names (the outputSchema); results may carry more. */
function returns(schema: Record<string, unknown>): string {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required ?? []) as string[]);
  const fields = Object.entries(props).map(([name, p]) => {
    const nested = p.type === "array" ? (p.items ?? {}) as Record<string, unknown> : p;
    const names = Object.keys((nested.properties ?? {}) as object);
    const keys = names.length > 0 ? ` {${names.join(", ")}}` : "";
    const note = typeof p.description === "string" ? `: ${p.description}` : "";
    return `\`${name}\` ${typeOf(p)}${keys}${required.has(name) ? "" : " (optional)"}${note}`;
  });
  return `Returns (structuredContent; more fields may appear): ${fields.join("; ")}.`;
}

function typeOf(p: Record<string, unknown>): string {
  if (Array.isArray(p.enum)) return p.enum.map((v) => `\`${v}\``).join(" \\| ");
  if (Array.isArray(p.anyOf)) return (p.anyOf as Array<Record<string, unknown>>).map(typeOf).join(" or ");
  if (p.type === "array") return `array of ${typeOf((p.items ?? {}) as Record<string, unknown>)}`;
  return String(p.type ?? "value");
}

function notes(p: Record<string, unknown>): string {
  const parts: string[] = [];
  if (typeof p.description === "string") parts.push(p.description);
  for (
    const [k, label] of [["minimum", "min"], ["maximum", "max"], ["minLength", "min length"], [
      "maxLength",
      "max length",
    ]]
  ) {
    if (typeof p[k] === "number") parts.push(`${label} ${p[k]}`);
  }
  if (p.type === "object" && p.properties) {
    parts.push(`fields: ${Object.keys(p.properties as object).join(", ")}`);
  }
  return parts.join("; ").replace(/\|/g, "\\|");
}
