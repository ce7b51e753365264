import type { z } from "zod";
import { asToolError, ToolError } from "../errors.ts";
import type { AppContext } from "./context.ts";
import { errorOutput, type ToolOutput } from "./response.ts";
import type { CapabilityName } from "./registry.ts";
import { logger } from "../log.ts";

const log = logger("mcp");

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  capability: CapabilityName;
  description: string;
  input: S;
  /** What structuredContent holds (output_schemas.ts); advertised as outputSchema. */
  output: z.ZodObject;
  annotations?: ToolAnnotations;
  handler: (args: z.output<S>, app: AppContext) => Promise<ToolOutput>;
}

/** A tool with its types erased, as the registry and server hold it. */
export interface Tool {
  name: string;
  capability: CapabilityName;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations?: ToolAnnotations;
  /** Validates strictly (unknown arguments fail before anything runs), then calls the handler. */
  run(rawArgs: unknown, app: AppContext): Promise<ToolOutput>;
}

const ISSUE_LIMIT = 5;

export function invalidArguments(tool: string, error: z.ZodError): ToolError {
  const issues = error.issues.slice(0, ISSUE_LIMIT).map((issue) => ({
    path: issue.path.map(String).join(".") || "(arguments)",
    problem: issue.message.slice(0, 200),
  }));
  const first = issues[0];
  return new ToolError({
    code: "invalid_arguments",
    message: `Invalid arguments for ${tool}: ${first ? `${first.path}: ${first.problem}` : "unreadable"}.`,
    retry: "never",
    recovery: `Fix the arguments to match the ${tool} input schema from tools/list; nothing was run.`,
    affected: first ? { argument: first.path } : undefined,
    details: { issues, omitted_issues: Math.max(0, error.issues.length - ISSUE_LIMIT) },
  });
}

/**
 * The client rejects a whole result whose structuredContent breaks the advertised outputSchema, so a
 * drift between a handler and its schema is logged here, where it can be traced to the tool.
 */
function checkOutput(tool: string, schema: z.ZodObject, structured: Record<string, unknown>): void {
  const checked = schema.safeParse(structured);
  if (checked.success) return;
  const issue = checked.error.issues[0];
  log.error("{tool}: structuredContent does not match its output schema at {path}: {problem}", {
    tool,
    path: issue?.path.map(String).join(".") ?? "",
    problem: issue?.message.slice(0, 200) ?? "",
  });
}

export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): Tool {
  return {
    name: def.name,
    capability: def.capability,
    description: def.description,
    input: def.input,
    output: def.output,
    annotations: def.annotations,
    async run(rawArgs, app) {
      const parsed = def.input.safeParse(rawArgs ?? {});
      if (!parsed.success) return errorOutput(invalidArguments(def.name, parsed.error));
      try {
        const out = await def.handler(parsed.data, app);
        if (!out.isError) checkOutput(def.name, def.output, out.structured);
        return out;
      } catch (err) {
        return errorOutput(asToolError(err));
      }
    },
  };
}
