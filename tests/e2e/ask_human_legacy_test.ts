/**
 * ask_human end to end (issue 16) on the 2025-11-25 protocol, with the official MCP client: URL
 * elicitation pushed inside the call, answered in a real headless Chromium and completed with
 * notifications/elicitation/complete; the gate returning the pending ticket; a dismissal by the
 * viewer's button and by POST; the limits' messages; a form-only client answering with the choice
 * alone, and its cancel dismissing. The 2026-07-28 era: ask_human_test.ts.
 */
import { chromium } from "playwright-core";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, fixtures, structured, textOf } from "./harness.ts";
import {
  answerInViewer,
  assertAnswered,
  CHROMIUM,
  post,
  record,
  startAsker,
  textIs,
} from "./ask_human_util.ts";

Deno.test({
  name:
    "ask_human on 2025-11-25: push URL elicitation with elicitation/complete, a viewer dismissal, the gate",
  ...e2e,
  fn: async (t) => {
    const site = fixtures();
    const asker = await startAsker("2025-11-25", { elicitation: { url: {} } });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      await record(asker, site.origin);

      await t.step(
        "the URL elicitation carries the ticket; the viewer answer returns and completes it",
        async () => {
          const elicitation = asker.next();
          const asking = asker.call({ question: "Did it flicker?", choices: ["yes", "no"], wait_ms: 30_000 });
          const e = await elicitation;
          assertEquals(e.mode, "url");
          assertMatch(String(e.elicitationId), /^q-[0-9a-f]{12}$/);
          const person = await answerInViewer(browser, String(e.url), "yes");
          await person.page.close();
          const s = assertAnswered(await asking, "yes");
          assertEquals(s.ticket, e.elicitationId);
          assert(typeof s.marked_time_ms === "number" && typeof s.marker_id === "string", JSON.stringify(s));
          // The server sends the notification before the result on the same stream, and the client
          // dispatches messages in order, so it has arrived by now.
          assertEquals(
            asker.completed,
            [String(s.ticket)],
            "notifications/elicitation/complete for the ticket",
          );
        },
      );

      await t.step(
        "the gate returns pending with the ticket; #dismiss in the viewer is question_dismissed",
        async () => {
          const elicitation = asker.next();
          const pending = await asker.call({
            question: "Was the text legible?",
            choices: ["yes", "no"],
            wait_ms: 300,
          });
          const p = structured(pending);
          assertEquals(p.status, "pending", textOf(pending));
          const e = await elicitation;
          const page = await browser.newPage();
          await page.goto(String(e.url));
          await page.locator(`#question[data-ticket="${p.ticket}"]`).waitFor({ state: "visible" });
          await page.click("#dismiss");
          await textIs(page, "#question-status", "dismissed");
          await page.close();
          const retry = await asker.call({ ticket: p.ticket });
          assertEquals(errorCode(retry), "question_dismissed");
          const late = await post(String(p.viewer_url), `questions/${p.ticket}/answer`, { choice: "yes" });
          assertEquals([late.status, (late.json.error as { code: string }).code], [
            409,
            "question_dismissed",
          ]);
        },
      );

      await t.step("a POST dismissal while the call waits ends it as question_dismissed", async () => {
        const elicitation = asker.next();
        const asking = asker.call({
          question: "Was the button visible?",
          choices: ["yes", "no"],
          wait_ms: 20_000,
        });
        const e = await elicitation;
        const ticket = String(e.elicitationId);
        const dismissed = await post(String(e.url), `questions/${ticket}/dismiss`, {});
        assertEquals(dismissed.status, 200);
        assertEquals(errorCode(await asking), "question_dismissed");
      });

      await t.step("limits name the value and the limit", async () => {
        const long = await asker.call({ question: "x".repeat(301), choices: ["a", "b"] });
        assertEquals(errorCode(long), "invalid_arguments");
        assertMatch(textOf(long), /question is 301 characters; the limit is 300/);
        const few = await asker.call({ question: "q", choices: ["a"] });
        assertMatch(textOf(few), /choices has 1; at least 2/);
        const same = await asker.call({ question: "q", choices: ["a", "A"] });
        assertMatch(textOf(same), /choices must be distinct/);
        const wide = await asker.call({ question: "q", choices: ["a", "b".repeat(41)] });
        assertMatch(textOf(wide), /a choice is 41 characters; the limit is 40/);
        const slow = await asker.call({ question: "q", choices: ["a", "b"], wait_ms: 120_001 });
        assertMatch(textOf(slow), /wait_ms is 120001; the limit is 120000/);
        assertEquals(errorCode(await asker.call({ choices: ["a", "b"] })), "invalid_arguments");
        const ticket = await asker.call({ ticket: "q".repeat(65) });
        assertMatch(textOf(ticket), /ticket is 65 characters; the limit is 64/);
        const far = await asker.tool("open_viewer", { at_ms: 2e9 });
        assertEquals(errorCode(far), "invalid_arguments");
        assertMatch(textOf(far), /at_ms is 2000000000; it must be session ms from 0 to 1e9/);
      });
    } finally {
      await browser.close();
      await asker.close();
      await site.close();
    }
  },
});

Deno.test({
  name:
    "ask_human on 2025-11-25 with form-only elicitation: the form's choice is the answer; a cancel dismisses",
  ...e2e,
  fn: async () => {
    const site = fixtures();
    const asker = await startAsker("2025-11-25", { elicitation: { form: {} } });
    try {
      await record(asker, site.origin);
      asker.reply = (p) => ({
        action: "accept",
        content: { choice: p.requestedSchema?.properties?.choice?.enum?.[1] ?? "" },
      });
      const s = assertAnswered(
        await asker.call({ question: "Dark or bright?", choices: ["dark", "bright"] }),
        "bright",
      );
      assertEquals([s.marked_time_ms, s.marker_id], [null, null]);
      assertEquals(asker.elicited.at(-1)?.mode ?? "form", "form");
      assertEquals(asker.completed, [], "a form elicitation has nothing to complete");
      asker.reply = () => ({ action: "cancel" });
      const cancelled = await asker.call({ question: "Was it fast?", choices: ["yes", "no"] });
      assertEquals(errorCode(cancelled), "question_dismissed");
    } finally {
      await asker.close();
      await site.close();
    }
  },
});
