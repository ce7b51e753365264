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
  return output(obs.text, leanObservation(obs.structured), obs.image ? [obs.image] : undefined);
}

/**
 * The observation without what it says twice: the snapshot's page_id, url and title when they are the
 * observed page's (`page`), and navigation.url, which is page.url. A field that differs stays.
 */
export function leanObservation(structured: Record<string, unknown>): Record<string, unknown> {
  const page = record(structured.page);
  const out = { ...structured };
  const snapshot = record(structured.snapshot);
  if (page && snapshot) out.snapshot = dropEqual(snapshot, page, ["page_id", "url", "title"]);
  const navigation = record(structured.navigation);
  if (page && navigation) out.navigation = dropEqual(navigation, page, ["url"]);
  return out;
}

/** Rows without the fields they share with their envelope (e.g. every frame's session_id). */
export function withoutShared<T extends object>(rows: T[], shared: Partial<T>): Partial<T>[] {
  return rows.map((row) =>
    dropEqual(
      row as Record<string, unknown>,
      shared as Record<string, unknown>,
      Object.keys(shared),
    ) as Partial<T>
  );
}

function dropEqual(
  obj: Record<string, unknown>,
  ref: Record<string, unknown>,
  keys: string[],
): Record<string, unknown> {
  const out = { ...obj };
  for (const k of keys) if (k in out && out[k] === ref[k]) delete out[k];
  return out;
}

function record(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : undefined;
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
