import type { ToolError } from "../errors.ts";
import type { Observation } from "../control/observation.ts";

export interface ImagePart {
  data: string;
  mimeType: string;
}

/** What a handler returns; the only place it becomes an MCP CallToolResult is toCallToolResult. */
export interface ToolOutput {
  text: string;
  structured: Record<string, unknown>;
  images?: ImagePart[];
  isError?: boolean;
}

export interface CallToolResult {
  [key: string]: unknown;
  content: Array<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export function output(text: string, structured: Record<string, unknown>, images?: ImagePart[]): ToolOutput {
  return { text, structured, ...(images && images.length > 0 ? { images } : {}) };
}

export function observationOutput(obs: Observation): ToolOutput {
  return output(obs.text, obs.structured, obs.image ? [obs.image] : undefined);
}

export function errorOutput(err: ToolError): ToolOutput {
  const lines = [`Error ${err.code}: ${err.message}`];
  if (err.recovery) lines.push(`Recovery: ${err.recovery}`);
  lines.push(`Retry: ${err.retry}`);
  return { text: lines.join("\n"), structured: { error: err.toJSON() }, isError: true };
}

export function toCallToolResult(out: ToolOutput): CallToolResult {
  return {
    content: [
      { type: "text", text: out.text },
      ...(out.images ?? []).map((img) => ({
        type: "image" as const,
        data: img.data,
        mimeType: img.mimeType,
      })),
    ],
    structuredContent: out.structured,
    ...(out.isError ? { isError: true } : {}),
  };
}
