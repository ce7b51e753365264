import type { ClientCapabilities, ElicitResult, ServerContext } from "@modelcontextprotocol/server";
import { assert, assertEquals, assertRejects } from "../../assert.ts";
import type { ToolCall } from "../../../src/mcp/define_tool.ts";
import type { ToolOutput } from "../../../src/mcp/response.ts";
import {
  type AskContext,
  channelOf,
  completeElicitation,
  INPUT_KEY,
  reachPerson,
  reenter,
  reenteredTicket,
} from "../../../src/viewer/ask_flow.ts";
import { type DismissOutcome, HumanQuestions, type MarkerMaker } from "../../../src/viewer/questions.ts";
import { ToolError } from "../../../src/errors.ts";

const ASK = { question: "Broken or empty?", choices: ["broken", "empty"], session_id: "s1" };
const URL_LINK = "http://127.0.0.1:1/tok/?ticket=x";

interface FakeCall {
  call: ToolCall;
  elicited: Array<Record<string, unknown>>;
  completed: string[];
  /** Resolves once the first elicitation request has gone out. */
  firstElicit: Promise<void>;
}

/** A call whose SDK context answers elicitInput with `reply` (the client's side). */
function fakeCall(
  era: "legacy" | "modern",
  caps: ClientCapabilities | undefined,
  opts: {
    reply?: (params: Record<string, unknown>, signal: AbortSignal) => Promise<ElicitResult>;
    state?: string;
    responses?: Record<string, unknown>;
  } = {},
): FakeCall {
  const elicited: Array<Record<string, unknown>> = [];
  const completed: string[] = [];
  let heard = () => {};
  const firstElicit = new Promise<void>((resolve) => (heard = resolve));
  const mcpReq = {
    requestState: () => opts.state,
    inputResponses: opts.responses,
    elicitInput: (params: Record<string, unknown>, options?: { signal?: AbortSignal }) => {
      elicited.push(params);
      heard();
      return (opts.reply ?? (() => Promise.resolve({ action: "accept" as const })))(
        params,
        options?.signal ?? new AbortController().signal,
      );
    },
  };
  const call: ToolCall = {
    era,
    ctx: { mcpReq } as unknown as ServerContext,
    signal: new AbortController().signal,
    clientCapabilities: caps,
    ...(era === "legacy"
      ? { completeElicitation: (id: string) => Promise.resolve(void completed.push(id)) }
      : {}),
    requireInput: (_r, placeholder: ToolOutput) => placeholder,
  };
  return { call, elicited, completed, firstElicit };
}

/** Counts waits (a path that must not wait on the person waits zero times) and reports dismissals. */
class CountingQuestions extends HumanQuestions {
  waits = 0;
  dismissals: string[] = [];
  afterDismiss = () => {};
  override wait(ticket: string, ms: number, signal?: AbortSignal) {
    this.waits++;
    return super.wait(ticket, ms, signal);
  }
  override dismiss(ticket: string, now?: Date): DismissOutcome {
    const outcome = super.dismiss(ticket, now);
    this.dismissals.push(outcome.outcome);
    this.afterDismiss();
    return outcome;
  }
}

/** A marker write that finishes only when `release` is called: the answer stays claimed until then. */
function slowMarker(): { maker: MarkerMaker; release: () => void } {
  let release = () => {};
  const maker: MarkerMaker = () => new Promise((resolve) => (release = () => resolve("m-slow")));
  return { maker, release: () => release() };
}

function context(humans: HumanQuestions, call: ToolCall | undefined, gateMs = 2_000): AskContext {
  return {
    humans,
    call,
    gateMs,
    signal: new AbortController().signal,
    link: () => Promise.resolve(URL_LINK),
  };
}

/** Resolves when `abort` fires, as a real request does when cancelled. */
function untilAborted(signal: AbortSignal): Promise<ElicitResult> {
  return new Promise((_resolve, reject) =>
    signal.addEventListener("abort", () => reject(new Error("cancelled")))
  );
}

Deno.test("the channel follows what the client declared: URL first, then form (a bare {} is form), else the viewer", () => {
  const of = (caps: ClientCapabilities | undefined) => channelOf(fakeCall("modern", caps).call);
  assertEquals(of({ elicitation: { url: {}, form: {} } }), "url");
  assertEquals(of({ elicitation: { form: {} } }), "form");
  assertEquals(of({ elicitation: {} }), "form");
  assertEquals(of({}), "viewer");
  assertEquals(of(undefined), "viewer");
  assertEquals(channelOf(undefined), "viewer");
});

Deno.test("without elicitation a new question is pending at once; a retry waits on the viewer", async () => {
  const humans = new CountingQuestions();
  const q = humans.ask(ASK);
  const ctx = context(humans, fakeCall("legacy", {}).call, 5_000);
  assertEquals((await reachPerson(ctx, q, true)).kind, "pending");
  assertEquals(humans.waits, 0, "no wait before the agent has shown the link");
  const retry = reachPerson(ctx, q, false);
  assertEquals(humans.waits, 1, "the retry waits on the viewer");
  await humans.answer(q.ticket, { choice: "empty" });
  const reached = await retry;
  assertEquals([reached.kind, reached.question.answer?.choice], ["settled", "empty"]);
});

Deno.test("a 2026-07-28 URL client gets an input round with the link, then waits on the viewer after accepting", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  const first = await reachPerson(
    context(humans, fakeCall("modern", { elicitation: { url: {} } }).call),
    q,
    true,
  );
  assert(first.kind === "input");
  assertEquals(first.request.method, "elicitation/create");
  const params = first.request.params as { mode?: string; url?: string; message?: string };
  assertEquals([params.mode, params.url], ["url", URL_LINK]);
  assert(params.message?.includes("broken | empty"), params.message);
  assertEquals(q.elicited, "url");

  const retried = fakeCall("modern", { elicitation: { url: {} } }, {
    state: first.state,
    responses: { [INPUT_KEY]: { action: "accept" } },
  });
  assertEquals(reenteredTicket(retried.call), q.ticket);
  const waiting = reenter(context(humans, retried.call), q);
  await humans.answer(q.ticket, { choice: "broken", marked_time_ms: 12 }, () => Promise.resolve("m-9"));
  const done = await waiting;
  assertEquals([done.kind, done.question.answer?.marker_id], ["settled", "m-9"]);
});

Deno.test("a 2026-07-28 decline dismisses; a form accept is the answer; a forged state is refused", async () => {
  const humans = new HumanQuestions();
  const declined = humans.ask(ASK);
  humans.noteElicited(declined.ticket, "url");
  const no = fakeCall("modern", { elicitation: { url: {} } }, {
    state: JSON.stringify({ ticket: declined.ticket }),
    responses: { [INPUT_KEY]: { action: "decline" } },
  });
  assertEquals((await reenter(context(humans, no.call), declined)).question.state, "dismissed");

  const form = humans.ask(ASK);
  const round = await reachPerson(
    context(humans, fakeCall("modern", { elicitation: { form: {} } }).call),
    form,
    true,
  );
  assert(round.kind === "input");
  const schema = (round.request.params as { requestedSchema?: unknown }).requestedSchema;
  assertEquals(
    JSON.stringify(schema),
    JSON.stringify({
      type: "object",
      properties: { choice: { type: "string", title: "Answer", enum: ["broken", "empty"] } },
      required: ["choice"],
    }),
  );
  const yes = fakeCall("modern", { elicitation: { form: {} } }, {
    state: round.state,
    responses: { [INPUT_KEY]: { action: "accept", content: { choice: "empty" } } },
  });
  const answered = await reenter(context(humans, yes.call), form);
  assertEquals([answered.kind, form.answer?.choice, form.answer?.marked_time_ms], [
    "settled",
    "empty",
    undefined,
  ]);

  const forged = fakeCall("modern", {}, { state: '{"ticket":"../../etc"}' });
  await assertRejects(
    () => Promise.resolve().then(() => reenteredTicket(forged.call)),
    ToolError,
    "names no question",
  );
  assertEquals(
    reenteredTicket(fakeCall("legacy", {}, { state: "x" }).call),
    undefined,
    "legacy has no requestState",
  );
});

Deno.test("a form answer outside the choices is refused and the question stays open", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  humans.noteElicited(q.ticket, "form");
  const odd = fakeCall("modern", { elicitation: { form: {} } }, {
    state: JSON.stringify({ ticket: q.ticket }),
    responses: { [INPUT_KEY]: { action: "accept", content: { choice: "neither" } } },
  });
  await assertRejects(
    () => reenter(context(humans, odd.call), q),
    ToolError,
    "not one of the question's choices",
  );
  assertEquals(q.state, "pending");
});

Deno.test("a 2025 URL client is asked push-style with the ticket as elicitationId, then told it completed", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  const fake = fakeCall("legacy", { elicitation: { url: {} } });
  const reaching = reachPerson(context(humans, fake.call), q, true);
  await fake.firstElicit;
  assertEquals([fake.elicited[0]?.mode, fake.elicited[0]?.url, fake.elicited[0]?.elicitationId], [
    "url",
    URL_LINK,
    q.ticket,
  ]);
  await humans.answer(q.ticket, { choice: "empty" });
  const reached = await reaching;
  assertEquals(reached.question.state, "answered");
  await completeElicitation(fake.call, reached.question);
  await completeElicitation(fake.call, reached.question);
  assertEquals(fake.completed, [q.ticket], "complete is sent once");
});

Deno.test("a 2025 push elicitation: decline dismisses, a form accept answers, the gate and the viewer cut it short", async () => {
  const humans = new HumanQuestions();
  const declined = humans.ask(ASK);
  const no = fakeCall("legacy", { elicitation: { url: {} } }, {
    reply: () => Promise.resolve({ action: "cancel" }),
  });
  assertEquals((await reachPerson(context(humans, no.call), declined, true)).question.state, "dismissed");

  const form = humans.ask(ASK);
  const yes = fakeCall("legacy", { elicitation: {} }, {
    reply: () => Promise.resolve({ action: "accept", content: { choice: "broken" } }),
  });
  assertEquals((await reachPerson(context(humans, yes.call), form, true)).question.answer?.choice, "broken");
  assertEquals(yes.elicited[0]?.mode, "form");

  const slow = humans.ask(ASK);
  let cancelled = false;
  const hang = fakeCall("legacy", { elicitation: { form: {} } }, {
    reply: (_p, signal) => untilAborted(signal).finally(() => (cancelled = true)),
  });
  assertEquals((await reachPerson(context(humans, hang.call, 50), slow, true)).kind, "pending");
  await new Promise((r) => setTimeout(r, 0));
  assert(cancelled, "the form request is cancelled when the gate passes");

  const viewerFirst = humans.ask(ASK);
  const pendingForm = fakeCall("legacy", { elicitation: { form: {} } }, {
    reply: (_p, signal) => untilAborted(signal),
  });
  const reaching = reachPerson(context(humans, pendingForm.call), viewerFirst, true);
  await humans.answer(viewerFirst.ticket, { choice: "empty" });
  assertEquals(
    (await reaching).question.answer?.choice,
    "empty",
    "the viewer's answer ends the form request",
  );
});

Deno.test("a client's decline while the viewer's answer is being stored: the answer stands, in both eras", async () => {
  // 2025-11-25: the push elicitation is declined while the marker of the viewer's answer is written.
  const humans = new CountingQuestions();
  const pushed = humans.ask(ASK);
  const pushMarker = slowMarker();
  humans.afterDismiss = pushMarker.release;
  const storing = humans.answer(pushed.ticket, { choice: "broken", marked_time_ms: 5 }, pushMarker.maker);
  const no = fakeCall("legacy", { elicitation: { form: {} } }, {
    reply: () => Promise.resolve({ action: "decline" }),
  });
  const pushReached = await reachPerson(context(humans, no.call), pushed, true);
  assert((await storing).accepted);
  assertEquals(humans.dismissals, ["already_answered"]);
  assertEquals(
    [pushReached.kind, pushReached.question.state, pushReached.question.answer?.marker_id],
    ["settled", "answered", "m-slow"],
  );

  // 2026-07-28: the retried call carries a decline while the viewer's answer is being stored.
  const round = humans.ask(ASK);
  humans.noteElicited(round.ticket, "url");
  const roundMarker = slowMarker();
  humans.afterDismiss = roundMarker.release;
  const stored = humans.answer(round.ticket, { choice: "empty", marked_time_ms: 7 }, roundMarker.maker);
  const retried = fakeCall("modern", { elicitation: { url: {} } }, {
    state: JSON.stringify({ ticket: round.ticket }),
    responses: { [INPUT_KEY]: { action: "decline" } },
  });
  const reentered = await reenter(context(humans, retried.call), round);
  assert((await stored).accepted);
  assertEquals(humans.dismissals, ["already_answered", "already_answered"]);
  assertEquals([reentered.kind, reentered.question.answer?.choice], ["settled", "empty"]);
});
