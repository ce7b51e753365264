/**
 * Questions the agent asked (ask_human) as the viewer shows and answers them: the list, pending first,
 * an answer (first wins; the mark becomes a human-authored marker) and a dismissal.
 */
import { asToolError } from "../errors.ts";
import type { AppContext } from "../mcp/context.ts";
import { humanMarkerMaker } from "./human_marker.ts";
import type { HumanQuestion } from "./questions.ts";
import { ApiError } from "./api_artifacts.ts";

/** Why the viewer refuses an answer or a dismissal: HTTP status, code, message. */
const REFUSALS = {
  unknown_ticket: [404, "unknown_ticket", "No question with this ticket in this process."],
  already_answered: [409, "already_answered", "This question was already answered; the first answer stands."],
  dismissed: [409, "question_dismissed", "This question was dismissed."],
  invalid_choice: [400, "invalid_choice", "The choice is not one of the question's choices."],
} as const;

function refusal(reason: keyof typeof REFUSALS): ApiError {
  const [status, code, message] = REFUSALS[reason];
  return new ApiError(status, code, message);
}

function view(q: HumanQuestion) {
  return {
    ticket: q.ticket,
    question: q.question,
    choices: q.choices,
    session_id: q.session_id,
    page_id: q.page_id ?? null,
    at_ms: q.at_ms ?? null,
    state: q.state,
    ...(q.answer
      ? {
        answer: {
          choice: q.answer.choice,
          marked_time_ms: q.answer.marked_time_ms ?? null,
          marker_id: q.answer.marker_id ?? null,
        },
      }
      : {}),
  };
}

export function listQuestions(app: AppContext) {
  const all = app.humans.list();
  const pending = all.filter((q) => q.state === "pending");
  const settled = all.filter((q) => q.state !== "pending").slice(0, 20);
  return { questions: [...pending, ...settled].map(view) };
}

export async function answerQuestion(app: AppContext, ticket: string, body: unknown) {
  const input = body as { choice?: unknown; marked_time_ms?: unknown } | null;
  if (!input || typeof input !== "object" || typeof input.choice !== "string" || input.choice.length > 200) {
    throw new ApiError(400, "invalid_choice", "The answer needs choice: one of the question's choices.");
  }
  const mark = input.marked_time_ms;
  if (
    mark !== undefined && mark !== null && (typeof mark !== "number" || !Number.isFinite(mark) || mark < 0)
  ) {
    throw new ApiError(400, "invalid_mark", "marked_time_ms must be a session time in ms (≥ 0).");
  }
  let outcome;
  try {
    outcome = await app.humans.answer(
      ticket,
      { choice: input.choice, ...(typeof mark === "number" ? { marked_time_ms: mark } : {}) },
      humanMarkerMaker(app),
    );
  } catch (err) {
    const e = asToolError(err);
    throw new ApiError(400, e.code, e.message);
  }
  if (!outcome.accepted) throw refusal(outcome.reason);
  const a = outcome.question.answer;
  return {
    status: "answered" as const,
    choice: a?.choice ?? input.choice,
    marked_time_ms: a?.marked_time_ms ?? null,
    marker_id: a?.marker_id ?? null,
  };
}

/** Dismissing twice is still dismissed; an answered question (or one whose answer is being stored) is not. */
export function dismissQuestion(app: AppContext, ticket: string) {
  const r = app.humans.dismiss(ticket);
  switch (r.outcome) {
    case "unknown_ticket":
    case "already_answered":
      throw refusal(r.outcome);
    case "dismissed":
    case "already_dismissed":
      return { status: "dismissed" as const };
  }
}
