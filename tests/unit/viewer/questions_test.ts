import { assert, assertEquals } from "../../assert.ts";
import { HumanQuestions, type MarkerMaker, SETTLED_LIMIT } from "../../../src/viewer/questions.ts";

const ASK = { question: "Did the menu look broken?", choices: ["broken", "fine"], session_id: "s1" };

Deno.test("ask keeps the question, its place and a fresh pending ticket", () => {
  const humans = new HumanQuestions();
  const q = humans.ask({ ...ASK, page_id: "p1", at_ms: 1234.5 });
  assert(/^q-[0-9a-f]{12}$/.test(q.ticket), q.ticket);
  assertEquals([q.state, q.page_id, q.at_ms, q.choices], ["pending", "p1", 1234.5, ["broken", "fine"]]);
  assertEquals(humans.get(q.ticket), q);
  assertEquals(humans.pendingCount(), 1);
  const other = humans.ask(ASK);
  assert(other.ticket !== q.ticket, "every ask gets its own ticket");
  assertEquals(humans.pending().map((x) => x.ticket), [other.ticket, q.ticket], "newest first");
});

Deno.test("the first answer wins: a second one is already_answered and changes nothing", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  const marks: number[] = [];
  const maker: MarkerMaker = (_q, at) => {
    marks.push(at);
    return Promise.resolve("m-1");
  };
  const first = await humans.answer(q.ticket, { choice: "fine", marked_time_ms: 800 }, maker);
  assert(first.accepted);
  assertEquals(
    [q.state, q.answer?.choice, q.answer?.marked_time_ms, q.answer?.marker_id],
    ["answered", "fine", 800, "m-1"],
  );
  const second = await humans.answer(q.ticket, { choice: "broken", marked_time_ms: 5 }, maker);
  assertEquals(second.accepted ? "accepted" : second.reason, "already_answered");
  assertEquals([q.answer?.choice, marks], ["fine", [800]]);
  const refused = humans.dismiss(q.ticket);
  assertEquals(refused.outcome, "already_answered", "an answered question cannot be dismissed");
  assertEquals(q.state, "answered");
});

Deno.test("an answer racing one whose marker is still being written is already_answered", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  let release = () => {};
  const slow: MarkerMaker = () => new Promise((resolve) => (release = () => resolve("m-slow")));
  const first = humans.answer(q.ticket, { choice: "broken", marked_time_ms: 10 }, slow);
  const racing = await humans.answer(q.ticket, { choice: "fine" });
  assertEquals(racing.accepted ? "accepted" : racing.reason, "already_answered");
  release();
  assert((await first).accepted);
  assertEquals([q.state, q.answer?.choice, q.answer?.marker_id], ["answered", "broken", "m-slow"]);
});

Deno.test("a dismissal racing an answer whose marker is still being written is already_answered", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  let release = () => {};
  const slow: MarkerMaker = () => new Promise((resolve) => (release = () => resolve("m-slow")));
  let changes = 0;
  humans.subscribe(() => changes++);
  const settled = humans.wait(q.ticket, 10_000);
  const first = humans.answer(q.ticket, { choice: "broken", marked_time_ms: 10 }, slow);
  const racing = humans.dismiss(q.ticket);
  assertEquals(racing.outcome, "already_answered", "the answer being stored stands");
  assertEquals([q.state, q.dismissed_at, changes], ["pending", undefined, 0], "nothing was dismissed");
  release();
  assert((await first).accepted);
  const done = await settled;
  assertEquals([done?.state, done?.answer?.choice], ["answered", "broken"], "a waiter gets the answer");
  assertEquals(humans.dismiss(q.ticket).outcome, "already_answered");
});

Deno.test("an answer outside the choices, to a dismissed or unknown question, is refused by reason", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  const wrong = await humans.answer(q.ticket, { choice: "maybe" });
  assertEquals(wrong.accepted ? "accepted" : wrong.reason, "invalid_choice");
  assertEquals(q.state, "pending");
  assertEquals(humans.dismiss(q.ticket).outcome, "dismissed");
  assertEquals(q.state, "dismissed");
  assert(q.dismissed_at !== undefined);
  assertEquals(humans.dismiss(q.ticket).outcome, "already_dismissed");
  assertEquals(humans.dismiss("q-000000000000").outcome, "unknown_ticket");
  const late = await humans.answer(q.ticket, { choice: "fine" });
  assertEquals(late.accepted ? "accepted" : late.reason, "dismissed");
  const unknown = await humans.answer("q-000000000000", { choice: "fine" });
  assertEquals(unknown.accepted ? "accepted" : unknown.reason, "unknown_ticket");
});

Deno.test("a failed marker leaves the question open for another answer", async () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  const failing: MarkerMaker = () => Promise.reject(new Error("outside the session"));
  let threw = false;
  await humans.answer(q.ticket, { choice: "fine", marked_time_ms: 1e9 }, failing).catch(() => (threw = true));
  assert(threw, "the marker's failure reaches the answerer");
  assertEquals(q.state, "pending");
  assert((await humans.answer(q.ticket, { choice: "fine" })).accepted);
});

Deno.test("wait resolves on the answer, on dismissal, at its bound and on abort", async () => {
  const humans = new HumanQuestions();
  const a = humans.ask(ASK);
  const waiting = humans.wait(a.ticket, 10_000);
  await humans.answer(a.ticket, { choice: "broken" });
  assertEquals((await waiting)?.state, "answered");
  assertEquals(
    (await humans.wait(a.ticket, 10_000))?.state,
    "answered",
    "a settled question returns at once",
  );

  const d = humans.ask(ASK);
  const dismissed = humans.wait(d.ticket, 10_000);
  humans.dismiss(d.ticket);
  assertEquals((await dismissed)?.state, "dismissed");

  // The bound ends only its own wait, with the question still pending; a longer wait goes on.
  const t = humans.ask(ASK);
  const controller = new AbortController();
  let longEnded = false;
  const long = humans.wait(t.ticket, 10_000, controller.signal).then((r) => {
    longEnded = true;
    return r;
  });
  assertEquals((await humans.wait(t.ticket, 30))?.state, "pending");
  assertEquals([longEnded, t.state], [false, "pending"], "the longer wait outlives the short bound");
  controller.abort();
  assertEquals((await long)?.state, "pending", "an abort ends the wait unsettled");
  assertEquals(
    await humans.wait(t.ticket, 10_000, controller.signal),
    t,
    "an already aborted signal returns the question as it is",
  );
  assertEquals(await humans.wait("q-000000000000", 10), undefined);
});

Deno.test("subscribers hear every change; a failing one does not stop the others", async () => {
  const humans = new HumanQuestions();
  let heard = 0;
  humans.subscribe(() => {
    throw new Error("broken listener");
  });
  const off = humans.subscribe(() => heard++);
  const q = humans.ask(ASK);
  await humans.answer(q.ticket, { choice: "fine" });
  assertEquals(heard, 2);
  off();
  humans.ask(ASK);
  assertEquals(heard, 2);
});

Deno.test("only settled questions beyond the limit are dropped, oldest first; pending ones stay", async () => {
  const humans = new HumanQuestions();
  const open = humans.ask(ASK);
  const settled: string[] = [];
  for (let i = 0; i < SETTLED_LIMIT + 5; i++) {
    const q = humans.ask(ASK);
    await humans.answer(q.ticket, { choice: "fine" });
    settled.push(q.ticket);
  }
  humans.ask(ASK); // trimming happens on ask
  assertEquals(humans.get(open.ticket)?.state, "pending");
  assertEquals(humans.get(settled[0]), undefined, "the oldest settled question is gone");
  assertEquals(humans.get(settled[settled.length - 1])?.state, "answered");
  assertEquals(humans.list().filter((q) => q.state !== "pending").length, SETTLED_LIMIT);
});

Deno.test("noteElicited records how the client was asked", () => {
  const humans = new HumanQuestions();
  const q = humans.ask(ASK);
  humans.noteElicited(q.ticket, "form");
  assertEquals(q.elicited, "form");
  humans.noteElicited("q-000000000000", "url");
});
