/**
 * Runs a tool by name from CLI and viewer code through the same layer an MCP client calls (strict
 * argument validation, the capability conditions, structured errors), so a person and a command see
 * exactly what an agent gets. One tool map per app: the conditions (ffmpeg qualified or not) are the
 * app's own, fixed when it was made.
 */
import type { AppContext } from "./context.ts";
import type { Tool } from "./define_tool.ts";
import { buildCatalogue } from "./registry.ts";
import type { ToolOutput } from "./response.ts";
import { conditionsOf } from "./server.ts";

export type RunTool = (name: string, args: Record<string, unknown>) => Promise<ToolOutput>;

const catalogues = new WeakMap<AppContext, Map<string, Tool>>();

/** The tools `app` offers, by name. */
export function toolsOf(app: AppContext): Map<string, Tool> {
  let tools = catalogues.get(app);
  if (!tools) {
    tools = new Map(buildCatalogue(conditionsOf(app)).tools.map((t) => [t.name, t]));
    catalogues.set(app, tools);
  }
  return tools;
}

/** Thrown for a tool this process does not offer (its capability is off, or no such tool). */
export class ToolUnavailable extends Error {
  constructor(readonly tool: string) {
    super(`tool ${tool} is not available in this process`);
  }
}

/**
 * A runner for `app`'s tools. A tool's own failure comes back as its ToolOutput with `isError`, as an
 * MCP client would see it; only an unknown tool throws (ToolUnavailable).
 */
export function toolRunner(app: AppContext): RunTool {
  const tools = toolsOf(app);
  return async (name, args) => {
    const tool = tools.get(name);
    if (!tool) throw new ToolUnavailable(name);
    return await tool.run(args, app);
  };
}
