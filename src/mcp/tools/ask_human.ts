/**
 * ask_human (Traces' ask_human_visual): the agent asks the person a multiple-choice question about
 * what was recorded, optionally pointing at an instant; the person answers in the evidence viewer
 * (a choice, and optionally a moment marked on the timeline, which becomes a human marker) or in
 * their MCP client's form. A call waits at most its gate (wait_ms) and then returns a ticket; the
 * ticket reattaches to the same question. How the person is reached: src/viewer/ask_flow.ts.
 */
import { inputRequired } from "@modelcontextprotocol/server";
import { z } from "zod";
import { currentCallSignal } from "../../browser/call_signal.ts";
import { ToolError } from "../../errors.ts";
import {
  type AskContext,
  completeElicitation,
  INPUT_KEY,
  type Reached,
  reachPerson,
  reenter,
  reenteredTicket,
} from "../../viewer/ask_flow.ts";
import { type HumanQuestion, PENDING_LIMIT } from "../../viewer/questions.ts";
import type { AppContext } from "../context.ts";
import { defineTool, type Tool, type ToolCall } from "../define_tool.ts";
import { PEOPLE_OUTPUT_SCHEMAS } from "../output_schemas_people.ts";
import { output, type ToolOutput } from "../response.ts";
import { instantFields, instantOf } from "./page_state_args.ts";
import { assertSessionPage, resolveSession } from "./sessions.ts";
import { viewerUnavailable } from "./viewer.ts";

export const QUESTION_LIMIT = 300;
export const CHOICE_LIMIT = 40;
export const CHOICES_MIN = 2;
export const CHOICES_MAX = 4;
/** The gate: how long one call waits on the person before it returns the ticket (deadlines.ts mirrors it). */
export const WAIT_DEFAULT_MS = 30_000;
/**
 * Bounded so a call always returns; many MCP clients give up on a request after 60 s, so waits past
 * that only suit clients with a longer timeout (the default stays well below it).
 */
export const WAIT_MAX_MS = 120_000;
const TICKET_LIMIT = 64;

function lengthOf(v: unknown): number {
  return typeof v === "string" ? v.length : Array.isArray(v) ? v.length : 0;
}

const choice = z.string().trim()
  .min(1, { error: "a choice is empty" })
  .max(CHOICE_LIMIT, {
    error: (iss) => `a choice is ${lengthOf(iss.input)} characters; the limit is ${CHOICE_LIMIT}`,
  });

const input = z.strictObject({
  question: z.string().trim()
    .min(1, { error: "question is empty" })
    .max(QUESTION_LIMIT, {
      error: (iss) => `question is ${lengthOf(iss.input)} characters; the limit is ${QUESTION_LIMIT}`,
    })
    .optional(),
  choices: z.array(choice)
    .min(CHOICES_MIN, {
      error: (iss) => `choices has ${lengthOf(iss.input)}; at least ${CHOICES_MIN} are needed`,
    })
    .max(CHOICES_MAX, { error: (iss) => `choices has ${lengthOf(iss.input)}; the limit is ${CHOICES_MAX}` })
    .refine((list) => new Set(list.map((c) => c.toLowerCase())).size === list.length, {
      error: (iss) => `choices must be distinct: ${JSON.stringify(iss.input).slice(0, 200)} repeats one`,
    })
    .optional(),
  ticket: z.string().max(TICKET_LIMIT, {
    error: (iss) => `ticket is ${lengthOf(iss.input)} characters; the limit is ${TICKET_LIMIT}`,
  }).optional(),
  wait_ms: z.number().int().min(0).max(WAIT_MAX_MS, {
    error: (iss) => `wait_ms is ${String(iss.input)}; the limit is ${WAIT_MAX_MS}`,
  }).optional(),
  ...instantFields,
});

type Args = z.output<typeof input>;

function missing(argument: "question" | "choices"): ToolError {
  return new ToolError({
    code: "invalid_arguments",
    message:
      `Invalid arguments for ask_human: ${argument}: required unless ticket names an earlier question.`,
    retry: "never",
    recovery: "Give question and 2-4 choices, or ticket from an earlier ask_human to collect its answer.",
    affected: { argument },
    details: { issues: [{ path: argument, problem: "required without ticket" }], omitted_issues: 0 },
  });
}

function unknownTicket(ticket: string): ToolError {
  return new ToolError({
    code: "unknown_ticket",
    message: `No question ${JSON.stringify(ticket.slice(0, TICKET_LIMIT))} in this server process.`,
    retry: "never",
    recovery:
      "Ask again with question and choices (no ticket): tickets live as long as this server process, and only the last 200 settled questions are kept.",
    affected: { argument: "ticket" },
  });
}

export function dismissedError(q: HumanQuestion): ToolError {
  return new ToolError({
    code: "question_dismissed",
    message: `The person dismissed question ${q.ticket} ("${q.question.slice(0, 80)}") without answering.`,
    retry: "never",
    recovery:
      "Do not ask this again: carry on without the person's answer, or tell the user they declined it.",
    affected: { session_id: q.session_id, ...(q.page_id ? { page_id: q.page_id } : {}) },
    details: { ticket: q.ticket, dismissed_at: q.dismissed_at },
  });
}

function tooManyPending(count: number): ToolError {
  return new ToolError({
    code: "too_many_pending_questions",
    message: `${count} questions are already waiting for the person; the limit is ${PENDING_LIMIT}.`,
    retry: "after_recovery",
    recovery:
      "Collect the open questions' answers first (ask_human with their tickets), or wait for them to be dismissed.",
    details: { pending: count, limit: PENDING_LIMIT },
  });
}

async function linkOf(app: AppContext, q: HumanQuestion): Promise<string> {
  try {
    const viewer = await app.viewer.ensure();
    return viewer.link({
      ticket: q.ticket,
      session_id: q.session_id,
      ...(q.page_id !== undefined ? { page_id: q.page_id } : {}),
      ...(q.at_ms !== undefined ? { at_ms: q.at_ms } : {}),
    });
  } catch (err) {
    throw err instanceof ToolError ? err : viewerUnavailable(err);
  }
}

/** Where the question points: the instant when one is given, else the session (and its selected page). */
async function placeOf(
  app: AppContext,
  args: Args,
): Promise<{ session_id: string; page_id?: string; at_ms?: number }> {
  const instant = args.at_ms !== undefined || args.interaction_id !== undefined ||
    args.marker_id !== undefined ||
    args.frame_id !== undefined;
  if (instant) {
    const at = await instantOf(app, args, "instant");
    return { session_id: at.session_id, page_id: at.page_id, at_ms: Math.round(at.at_ns / 1e3) / 1e3 };
  }
  const session = await resolveSession(app, args.session_id);
  if (args.page_id !== undefined) assertSessionPage(app, session, args.page_id, "page_id");
  const live = app.browsers.current;
  const page = args.page_id ?? (live && live.id === session && !live.ended ? live.selectedPageId : undefined);
  return { session_id: session, ...(page ? { page_id: page } : {}) };
}

function answeredOutput(q: HumanQuestion): ToolOutput {
  const a = q.answer;
  const marked = a?.marked_time_ms ?? null;
  const marker = a?.marker_id ?? null;
  return output(
    `Answered ${q.ticket}: ${JSON.stringify(a?.choice ?? "")}${
      marked === null
        ? "; no moment marked"
        : `; marked ${marked.toFixed(1)} ms${marker ? ` (human marker ${marker})` : ""}`
    }.`,
    {
      status: "answered",
      ticket: q.ticket,
      choice: a?.choice ?? "",
      marked_time_ms: marked,
      marker_id: marker,
    },
  );
}

function pendingOutput(q: HumanQuestion, url: string, gateMs: number): ToolOutput {
  return output(
    [
      `Pending ${q.ticket}: the person has not answered yet. Show them this link to answer in the evidence viewer: ${url}`,
      `Then call ask_human with ticket "${q.ticket}" to collect the answer (each call waits up to ${gateMs} ms).`,
    ].join("\n"),
    { status: "pending", ticket: q.ticket, viewer_url: url },
  );
}

async function present(
  app: AppContext,
  reached: Reached,
  call: ToolCall | undefined,
  gateMs: number,
): Promise<ToolOutput> {
  const q = reached.question;
  if (reached.kind === "settled") {
    if (q.state === "dismissed") throw dismissedError(q);
    await completeElicitation(call, q);
    return answeredOutput(q);
  }
  const pending = pendingOutput(q, await linkOf(app, q), gateMs);
  if (reached.kind === "pending" || !call) return pending;
  return call.requireInput(
    inputRequired({ inputRequests: { [INPUT_KEY]: reached.request }, requestState: reached.state }),
    pending,
  );
}

export const askHumanTools: Tool[] = [
  defineTool({
    name: "ask_human",
    capability: "viewer",
    output: PEOPLE_OUTPUT_SCHEMAS.ask_human,
    description:
      `Ask the person what only a human can judge by looking (did it look broken?), with 2-${CHOICES_MAX} distinct choices, ` +
      "optionally at an instant; they answer in the evidence viewer (maybe marking a moment: a human marker) or your " +
      "client's elicitation form. Returns answered (choice, marked_time_ms, marker_id), or pending (ticket, viewer_url to " +
      `show them) at once if your client cannot elicit, else after wait_ms (default ${WAIT_DEFAULT_MS}); collect with ` +
      "ticket alone. question_dismissed: do not ask again.",
    input,
    handler: async (args, app, call) => {
      const gateMs = args.wait_ms ?? WAIT_DEFAULT_MS;
      const signals = [call?.signal, currentCallSignal()].filter((s): s is AbortSignal => s !== undefined);
      const ctx: AskContext = {
        humans: app.humans,
        call,
        gateMs,
        signal: AbortSignal.any(signals),
        link: (q) => linkOf(app, q),
      };
      // A 2026-07-28 client retrying this call with the answer to our input request.
      const retried = reenteredTicket(call);
      if (retried !== undefined) {
        const q = app.humans.get(retried);
        if (!q) throw unknownTicket(retried);
        return await present(app, await reenter(ctx, q), call, gateMs);
      }
      if (args.ticket !== undefined) {
        const q = app.humans.get(args.ticket);
        if (!q) throw unknownTicket(args.ticket);
        return await present(app, await reachPerson(ctx, q, false), call, gateMs);
      }
      if (args.question === undefined) throw missing("question");
      if (args.choices === undefined) throw missing("choices");
      const place = await placeOf(app, args);
      // The same open question asked again (a retry that lost its ticket) reattaches instead of piling up.
      const same = app.humans.pending().find((q) =>
        q.question === args.question && q.choices.join("\n") === args.choices?.join("\n") &&
        q.session_id === place.session_id && q.page_id === place.page_id && q.at_ms === place.at_ms
      );
      if (same) return await present(app, await reachPerson(ctx, same, false), call, gateMs);
      const open = app.humans.pendingCount();
      if (open >= PENDING_LIMIT) throw tooManyPending(open);
      // The viewer is where the question lives: start it before asking, so a failed start asks nothing.
      await app.viewer.ensure().catch((err) => {
        throw viewerUnavailable(err);
      });
      const q = app.humans.ask({ question: args.question, choices: args.choices, ...place });
      return await present(app, await reachPerson(ctx, q, true), call, gateMs);
    },
  }),
];
