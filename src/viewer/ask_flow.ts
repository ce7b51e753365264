/**
 * How ask_human reaches the person, by what the agent's MCP client declared and its protocol era:
 * URL-mode elicitation (the client shows the viewer link), form-mode elicitation (the client shows the
 * choices itself), or neither (the agent is handed the link to show). A 2025 connection is asked
 * push-style inside the call (`elicitInput`); a 2026-07-28 client gets an input_required round and
 * retries the call with its answer. Every wait ends at the gate with the question still pending.
 */
import {
  type ElicitResult,
  type InputRequest,
  inputRequired,
  inputResponse,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { ToolError } from "../errors.ts";
import { logger } from "../log.ts";
import type { ToolCall } from "../mcp/define_tool.ts";
import type { HumanQuestion, HumanQuestions } from "./questions.ts";

const log = logger("viewer");

/** The key of our one embedded input request in an input_required round. */
export const INPUT_KEY = "person";

export type Channel = "url" | "form" | "viewer";

export type Reached =
  | { kind: "settled"; question: HumanQuestion }
  | { kind: "pending"; question: HumanQuestion }
  /** A 2026-07-28 round: the client is to fulfil `request` and retry with `state`. */
  | { kind: "input"; question: HumanQuestion; request: InputRequest; state: string };

export interface AskContext {
  humans: HumanQuestions;
  call?: ToolCall;
  /** How long this call may wait on the person. */
  gateMs: number;
  /** The call's cancellation (client cancel or deadline). */
  signal: AbortSignal;
  /** The viewer deep link for a question. */
  link: (q: HumanQuestion) => Promise<string>;
}

/** The best channel the client declared: URL mode, else form mode (a bare `elicitation: {}` is form), else none. */
export function channelOf(call: ToolCall | undefined): Channel {
  const e = call?.clientCapabilities?.elicitation;
  if (!e) return "viewer";
  if (e.url !== undefined) return "url";
  if (e.form !== undefined || Object.keys(e).length === 0) return "form";
  return "viewer";
}

export function messageOf(q: HumanQuestion): string {
  return `${q.question}\nAnswer with one of: ${q.choices.join(" | ")}`;
}

/** The form a form-mode client shows: one required choice among the question's. */
export function formSchema(q: HumanQuestion): {
  type: "object";
  properties: { choice: { type: "string"; title: string; enum: string[] } };
  required: string[];
} {
  return {
    type: "object",
    properties: { choice: { type: "string", title: "Answer", enum: [...q.choices] } },
    required: ["choice"],
  };
}

const stateSchema = z.strictObject({ ticket: z.string().regex(/^q-[0-9a-f]{12}$/) });

function stateOf(q: HumanQuestion): string {
  return JSON.stringify({ ticket: q.ticket });
}

/** The ticket a retried 2026-07-28 call echoes back; undefined on any other call. */
export function reenteredTicket(call: ToolCall | undefined): string | undefined {
  if (!call || call.era !== "modern") return undefined;
  const raw = call.ctx.mcpReq.requestState<unknown>();
  if (typeof raw !== "string") return undefined;
  try {
    const parsed = stateSchema.safeParse(JSON.parse(raw));
    if (parsed.success) return parsed.data.ticket;
  } catch { /* not ours */ }
  throw new ToolError({
    code: "unknown_ticket",
    message: "The retried call's requestState names no question of this server.",
    retry: "never",
    recovery: "Call ask_human again with the question and choices (no ticket).",
  });
}

function now(q: HumanQuestion): Reached {
  return q.state === "pending" ? { kind: "pending", question: q } : { kind: "settled", question: q };
}

export function invalidChoice(q: HumanQuestion, choice: unknown): ToolError {
  const shown = typeof choice === "string" ? JSON.stringify(choice.slice(0, 40)) : "no choice";
  return new ToolError({
    code: "invalid_choice",
    message: `The form answer was ${shown}, which is not one of the question's choices (${
      q.choices.join(" | ")
    }).`,
    retry: "safe",
    recovery: `Retry ask_human with ticket ${q.ticket}: the question is still open.`,
    affected: { session_id: q.session_id },
  });
}

/** A form answer (choices only, no mark) is stored like a viewer answer; the first answer still wins. */
async function takeFormAnswer(ctx: AskContext, q: HumanQuestion, content: unknown): Promise<Reached> {
  const choice = (content as { choice?: unknown } | undefined)?.choice;
  if (typeof choice !== "string") throw invalidChoice(q, choice);
  const outcome = await ctx.humans.answer(q.ticket, { choice });
  if (!outcome.accepted && outcome.reason === "invalid_choice") throw invalidChoice(q, choice);
  return now(ctx.humans.get(q.ticket) ?? q);
}

/**
 * The person declined in their client. An answer the viewer is storing at that moment still stands
 * (first answer wins), so then the call waits for it (`answering`) instead of reporting a dismissal.
 */
async function decline(
  ctx: AskContext,
  q: HumanQuestion,
  answering: () => Promise<Reached>,
): Promise<Reached> {
  const d = ctx.humans.dismiss(q.ticket);
  if (d.outcome === "already_answered") return await answering();
  return now(d.outcome === "unknown_ticket" ? q : d.question);
}

async function waitViewer(ctx: AskContext, q: HumanQuestion): Promise<Reached> {
  return now(await ctx.humans.wait(q.ticket, ctx.gateMs, ctx.signal) ?? q);
}

/**
 * A 2025 connection: the elicitation request goes out inside this call, racing the viewer (the person
 * may answer there first) and the gate; whichever ends first ends the other.
 */
async function elicitPush(
  ctx: AskContext,
  call: ToolCall,
  q: HumanQuestion,
  how: "url" | "form",
): Promise<Reached> {
  const stop = new AbortController();
  const signal = AbortSignal.any([ctx.signal, stop.signal]);
  const waiting = ctx.humans.wait(q.ticket, ctx.gateMs, signal);
  const params = how === "url"
    ? { mode: "url" as const, message: messageOf(q), url: await ctx.link(q), elicitationId: q.ticket }
    : { mode: "form" as const, message: messageOf(q), requestedSchema: formSchema(q) };
  ctx.humans.noteElicited(q.ticket, how);
  const elicited: Promise<{ result: ElicitResult } | { error: unknown }> = call.ctx.mcpReq.elicitInput(
    params,
    {
      signal,
      timeout: Math.max(1, ctx.gateMs),
    },
  ).then((result) => ({ result }), (error) => ({ error }));
  const first = await Promise.race([waiting.then((settled) => ({ settled })), elicited]);
  if ("settled" in first) {
    stop.abort();
    return now(first.settled ?? q);
  }
  if ("error" in first) {
    // Not reached through the client (it failed, or the gate cut the request): the viewer may still answer.
    if (!signal.aborted) {
      log.info("ask_human {ticket}: {how} elicitation failed: {message}", {
        ticket: q.ticket,
        how,
        message: String(first.error instanceof Error ? first.error.message : first.error).slice(0, 200),
      });
    }
    return now(await waiting ?? q);
  }
  const result = first.result;
  if (result.action !== "accept") {
    try {
      return await decline(ctx, q, async () => now(await waiting ?? q));
    } finally {
      stop.abort();
    }
  }
  if (how === "form") {
    stop.abort();
    return await takeFormAnswer(ctx, q, result.content);
  }
  // The person agreed to open the link; the answer comes from the viewer.
  return now(await waiting ?? q);
}

/** Puts the question before the person (`first`: it was just asked) and waits as far as the channel allows. */
export async function reachPerson(ctx: AskContext, q: HumanQuestion, first: boolean): Promise<Reached> {
  if (q.state !== "pending") return now(q);
  const call = ctx.call;
  const channel = channelOf(call);
  if (call && channel === "form") {
    if (call.era === "legacy") return await elicitPush(ctx, call, q, "form");
    ctx.humans.noteElicited(q.ticket, "form");
    const request = inputRequired.elicit({
      mode: "form",
      message: messageOf(q),
      requestedSchema: formSchema(q),
    });
    return { kind: "input", question: q, request, state: stateOf(q) };
  }
  if (call && channel === "url" && first) {
    if (call.era === "legacy") return await elicitPush(ctx, call, q, "url");
    const url = await ctx.link(q);
    ctx.humans.noteElicited(q.ticket, "url");
    return {
      kind: "input",
      question: q,
      request: inputRequired.elicitUrl({ message: messageOf(q), url }),
      state: stateOf(q),
    };
  }
  // Without elicitation the person cannot see the question until the agent shows the link.
  if (channel === "viewer" && first) return now(q);
  return await waitViewer(ctx, q);
}

/** A 2026-07-28 retry: the client's answer to our input request for question `q`. */
export async function reenter(ctx: AskContext, q: HumanQuestion): Promise<Reached> {
  if (q.state !== "pending") return now(q);
  const view = inputResponse(ctx.call?.ctx.mcpReq.inputResponses, INPUT_KEY);
  if (view.kind !== "elicit") return await reachPerson(ctx, q, false);
  if (view.action !== "accept") return await decline(ctx, q, () => waitViewer(ctx, q));
  if (q.elicited === "form") return await takeFormAnswer(ctx, q, view.content);
  return await waitViewer(ctx, q);
}

const completed = new WeakSet<HumanQuestion>();

/** notifications/elicitation/complete once for an answered 2025-11-25 URL elicitation. */
export async function completeElicitation(call: ToolCall | undefined, q: HumanQuestion): Promise<void> {
  if (!call?.completeElicitation || q.elicited !== "url" || q.state !== "answered" || completed.has(q)) {
    return;
  }
  completed.add(q);
  await call.completeElicitation(q.ticket).catch((err) =>
    log.info("ask_human {ticket}: elicitation/complete not sent: {message}", {
      ticket: q.ticket,
      message: String(err instanceof Error ? err.message : err).slice(0, 200),
    })
  );
}
