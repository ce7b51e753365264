import type { z } from "zod";
import { markPhase, phase } from "../phase_timing.ts";
import type { ClientCapabilities, InputRequiredResult, ServerContext } from "@modelcontextprotocol/server";
import { asToolError, ToolError } from "../errors.ts";
import type { BrowserSession } from "../browser/session.ts";
import type { AppContext } from "./context.ts";
import { errorOutput, type ToolOutput } from "./response.ts";
import type { CapabilityName } from "./registry.ts";
import { logger } from "../log.ts";
import { interactionsSince, withDeadline } from "./deadlines.ts";
import { ownProtoPath } from "./own_proto.ts";
import { connectionInterrupted, shuttingDown } from "./admission.ts";

const log = logger("mcp");

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * What an MCP client's call brings beyond its arguments (absent when CLI or viewer code runs a tool).
 * Only tools that talk back to the client (ask_human's elicitation) read it.
 */
export interface ToolCall {
  /** "legacy": a 2025 connection (push-style elicitInput); "modern": 2026-07-28 (input_required rounds). */
  era: "legacy" | "modern";
  /** The SDK's context of this request: elicitInput, inputResponses, requestState, notify. */
  ctx: ServerContext;
  /**
   * Aborted when the client cancels the request. run() answers at once with call_cancelled and aborts
   * the call's own signal (browser/call_signal.ts), which is what the work's safe points listen to.
   */
  signal: AbortSignal;
  /** What the client declared it can do: at initialize (legacy) or on this request's envelope (modern). */
  clientCapabilities?: ClientCapabilities;
  /** notifications/elicitation/complete for a URL elicitation (2025-11-25 only; absent otherwise). */
  completeElicitation?: (elicitationId: string) => Promise<void>;
  /**
   * Answers this round with an input_required result (modern era) instead of the tool's output; the
   * returned placeholder is what `run` passes back, the client receives `result`.
   */
  requireInput(result: InputRequiredResult, placeholder: ToolOutput): ToolOutput;
}

export interface ToolDefinition<S extends z.ZodObject = z.ZodObject> {
  name: string;
  capability: CapabilityName;
  description: string;
  input: S;
  /** What structuredContent holds (output_schemas.ts); advertised as outputSchema. */
  output: z.ZodObject;
  annotations?: ToolAnnotations;
  /**
   * The structured error for arguments the schema refuses, when the tool words it its own way (the
   * scenario's rules and paths); default: invalid_arguments.
   */
  invalidInput?: (rawArgs: unknown, error: z.ZodError) => ToolError;
  handler: (args: z.output<S>, app: AppContext, call?: ToolCall) => Promise<ToolOutput>;
}

/** A tool with its types erased, as the registry and server hold it. */
export interface Tool {
  name: string;
  capability: CapabilityName;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  annotations?: ToolAnnotations;
  /**
   * Validates strictly (unknown arguments fail before anything runs), then calls the handler under
   * the tool's overall deadline (deadlines.ts). `call` is the MCP request's context, when there is one.
   */
  run(rawArgs: unknown, app: AppContext, call?: ToolCall): Promise<ToolOutput>;
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

/** An own `__proto__` key, refused as the strict schema refuses any unknown key (see own_proto.ts). */
export function ownProtoArgument(tool: string, path: string): ToolError {
  const problem = 'Unrecognized key: "__proto__"';
  return new ToolError({
    code: "invalid_arguments",
    message: `Invalid arguments for ${tool}: ${path}: ${problem}.`,
    retry: "never",
    recovery: `Fix the arguments to match the ${tool} input schema from tools/list; nothing was run.`,
    affected: { argument: path },
    details: { issues: [{ path, problem }], omitted_issues: 0 },
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

/**
 * The operation during which reclaim dropped artifact grace carries the causal warning (spec:
 * ArtifactGraceOverridden); status keeps the sticky boundary.
 */
function withGraceWarning(out: ToolOutput, app: AppContext): ToolOutput {
  const through = app.recorder.lastGraceOverride;
  const message =
    "Reclaim dropped artifact grace to keep capture going: evidence behind a recently returned artifact was deleted" +
    (through?.newest_retained_at ? ` (newest retained point then: ${through.newest_retained_at})` : "") +
    "; pin_resolved_range what must stay.";
  return {
    ...out,
    text: `${out.text}\nwarning artifact_grace_overridden: ${message}`,
    structured: {
      ...out.structured,
      retention_warning: { code: "artifact_grace_overridden", message, ...(through ? { through } : {}) },
    },
  };
}

interface OutageSubject {
  tool: string;
  readOnly: boolean;
  /** The session current when the call began. */
  session?: BrowserSession;
  /** The interaction the call began, if any (deadlines.ts interactionsSince). */
  began: () => string | undefined;
  /** When the outage under way as the call began started (the connection was already down). */
  outageSince?: Date;
}

/**
 * A call whose commands were cut off because the connection dropped under it: an attached session that is
 * reconnecting (or already has) says so instead of "start a new session" or "page closed, retry never".
 * Only an attached session reconnects, so a live one that saw its socket close, or whose page object was
 * orphaned while the page stays listed (re-adopted under its id, or still waiting to be), met an outage.
 */
function duringOutage(error: ToolError, app: AppContext, s: OutageSubject): ToolError {
  const session = s.session;
  if (!session || session.ended || session.mode !== "attached" || app.browsers?.current !== session) {
    return error;
  }
  const pageId = error.affected?.page_id;
  const listed = pageId !== undefined ? session.pages.get(pageId) : undefined;
  const cut = error.code === "browser_disconnected" ||
    (error.code === "page_closed" && listed !== undefined && (session.reconnecting || !listed.closed));
  if (!cut) return error;
  const c = session.connection;
  return connectionInterrupted({
    unreached: c.state === "reconnecting" && s.outageSince !== undefined && c.since === s.outageSince,
    tool: s.tool,
    readOnly: s.readOnly,
    began: s.began(),
    session_id: session.id,
    ...(pageId !== undefined ? { page_id: pageId } : {}),
    connection: c,
  });
}

export function defineTool<S extends z.ZodObject>(def: ToolDefinition<S>): Tool {
  // A tool that takes page_id acts on one page, which a passed deadline probes (deadlines.ts).
  const pageScoped = "page_id" in def.input.shape;
  return {
    name: def.name,
    capability: def.capability,
    description: def.description,
    input: def.input,
    output: def.output,
    annotations: def.annotations,
    async run(rawArgs, app, call) {
      // Shutdown admits nothing new (its drain cancels what runs); the viewer and CLI go through here too.
      if (app.calls?.closing) return errorOutput(shuttingDown(def.name));
      const proto = ownProtoPath(rawArgs);
      if (proto !== undefined) return errorOutput(ownProtoArgument(def.name, proto));
      const parsed = def.input.safeParse(rawArgs ?? {});
      if (!parsed.success) {
        return errorOutput(
          def.invalidInput?.(rawArgs, parsed.error) ?? invalidArguments(def.name, parsed.error),
        );
      }
      const args = parsed.data as Record<string, unknown>;
      const overridesBefore = app.recorder?.graceOverrides ?? 0;
      const readOnly = def.annotations?.readOnlyHint === true;
      const session = app.browsers?.current;
      const c = session?.connection;
      const outage: OutageSubject = {
        tool: def.name,
        readOnly,
        session,
        began: interactionsSince(session),
        ...(c?.state === "reconnecting" ? { outageSince: c.since } : {}),
      };
      const out = await phase("handler", () =>
        withDeadline(def.name, args, app, pageScoped, async () => {
          try {
            return await def.handler(parsed.data, app, call);
          } catch (err) {
            return errorOutput(duringOutage(asToolError(err), app, outage));
          }
        }, { cancel: call?.signal, readOnly }));
      if (out instanceof ToolError) return errorOutput(out);
      if (!out.isError) {
        const t = performance.now();
        checkOutput(def.name, def.output, out.structured);
        markPhase("check_output", t);
      }
      return (app.recorder?.graceOverrides ?? 0) > overridesBefore ? withGraceWarning(out, app) : out;
    },
  };
}
