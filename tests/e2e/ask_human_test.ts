/**
 * ask_human end to end (issue 16) on the 2026-07-28 protocol, with the official MCP client: a client
 * that declares URL elicitation gets an input round with the viewer link and the person answers in a
 * real headless Chromium (a click on the timeline marks the moment, a click on a choice answers); a
 * second answer is refused and the first stays; a decline is the structured error question_dismissed;
 * form-mode elicitation answers with the choice alone; a call declaring no elicitation gets the
 * pending ticket and the viewer URL, and a retry with the ticket reattaches. The 2025-11-25 era:
 * ask_human_legacy_test.ts.
 */
import { chromium } from "playwright-core";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { e2e, errorCode, fixtures, structured, textOf } from "./harness.ts";
import {
  answerInViewer,
  assertAnswered,
  CHOICES,
  CHROMIUM,
  post,
  record,
  startAsker,
} from "./ask_human_util.ts";

Deno.test({
  name:
    "ask_human on 2026-07-28: URL elicitation answered in the viewer, form answers, the ticket path, dismissals",
  ...e2e,
  fn: async (t) => {
    const site = fixtures();
    const asker = await startAsker("2026-07-28", { elicitation: { url: {}, form: {} } });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
    try {
      const at = await record(asker, site.origin);
      let first: { url: string; answer: Record<string, unknown> } | undefined;

      await t.step(
        "a URL-elicitation client gets the link; the person marks a moment and picks a choice",
        async () => {
          const elicitation = asker.next();
          const asking = asker.call({
            question: "Did the box look broken after the flip?",
            choices: CHOICES,
            interaction_id: at.interaction_id,
            wait_ms: 45_000,
          });
          const e = await elicitation;
          assertEquals(e.mode, "url");
          assert(e.message?.includes("Did the box look broken"), e.message);
          assertMatch(
            String(e.url),
            /^http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{43}\/\?.*ticket=q-[0-9a-f]{12}/,
          );
          const person = await answerInViewer(browser, String(e.url), "looked normal");
          const s = assertAnswered(await asking, "looked normal");
          const marked = Number(s.marked_time_ms);
          const [lo, hi] = person.expected;
          assert(
            marked >= lo - person.frameMs && marked <= hi + person.frameMs,
            `marked ${marked} ms, the click was at ${lo}–${hi} ms (a frame: ${person.frameMs} ms)`,
          );
          assertMatch(String(s.marker_id), /^m-[0-9a-f]{12}$/);
          const markers = structured(await asker.tool("read_markers", { author: "human" }));
          const marker = (markers.markers as Array<Record<string, unknown>>).find((m) =>
            m.marker_id === s.marker_id
          );
          assert(marker, JSON.stringify(markers));
          assertEquals(marker.author, "human");
          assert(Math.abs(Number(marker.at_ms) - marked) <= 1, `marker at ${marker.at_ms}, mark ${marked}`);
          await person.page.close();
          first = { url: String(e.url), answer: s };
        },
      );

      await t.step("a second answer is refused and the first one stays", async () => {
        assert(first, "the first step answered");
        const { url, answer: s } = first;
        const again = await post(url, `questions/${s.ticket}/answer`, {
          choice: "looked broken",
        });
        assertEquals([again.status, (again.json.error as { code: string }).code], [
          409,
          "already_answered",
        ]);
        const retry = assertAnswered(await asker.call({ ticket: s.ticket }), "looked normal");
        assertEquals([retry.marked_time_ms, retry.marker_id], [s.marked_time_ms, s.marker_id]);
      });

      await t.step("an elicitation decline is question_dismissed, and stays so on retry", async () => {
        asker.reply = () => ({ action: "decline" });
        const declined = await asker.call({
          question: "Is the flip too slow?",
          choices: ["yes", "no"],
          wait_ms: 5_000,
        });
        asker.reply = () => ({ action: "accept" });
        assert(declined.isError, textOf(declined));
        assertEquals(errorCode(declined), "question_dismissed");
        const err = declined.structuredContent?.error as {
          retry: string;
          recovery: string;
          details: { ticket: string };
        };
        assertEquals(err.retry, "never");
        assertMatch(err.recovery, /Do not ask this again/);
        assertEquals(errorCode(await asker.call({ ticket: err.details.ticket })), "question_dismissed");
      });

      await t.step("form-mode elicitation answers with the choice alone", async () => {
        asker.reply = (p) => ({
          action: "accept",
          content: { choice: p.requestedSchema?.properties?.choice?.enum?.[0] ?? "" },
        });
        const form = await asker.call(
          { question: "Which state did you see?", choices: ["dark", "bright", "blank"], page_id: at.page_id },
          { elicitation: { form: {} } },
        );
        asker.reply = () => ({ action: "accept" });
        const s = assertAnswered(form, "dark");
        assertEquals([s.marked_time_ms, s.marker_id], [null, null]);
        const e = asker.elicited.at(-1);
        assertEquals([e?.mode ?? "form", e?.requestedSchema?.properties?.choice?.enum], ["form", [
          "dark",
          "bright",
          "blank",
        ]]);
      });

      await t.step(
        "without elicitation: pending at once with the viewer URL; a retry with the ticket reattaches",
        async () => {
          // That this path never waits on the person is proven in tests/unit/viewer/ask_flow_test.ts.
          const seen = asker.elicited.length;
          const pending = await asker.call({
            question: "Broken or fine?",
            choices: ["broken", "fine"],
            at_ms: 10,
          }, {});
          const p = structured(pending);
          assertEquals(p.status, "pending");
          assertMatch(String(p.viewer_url), new RegExp(`ticket=${p.ticket}`));
          assertEquals(asker.elicited.length, seen, "nothing was elicited");
          const again = structured(
            await asker.call({
              question: "Broken or fine?",
              choices: ["broken", "fine"],
              at_ms: 10,
              wait_ms: 0,
            }, {}),
          );
          assertEquals(
            [again.status, again.ticket],
            ["pending", p.ticket],
            "the same open question reattaches",
          );
          const waiting = asker.call({ ticket: p.ticket, wait_ms: 20_000 }, {});
          const answered = await post(String(p.viewer_url), `questions/${p.ticket}/answer`, {
            choice: "fine",
          });
          assertEquals([answered.status, answered.json.choice], [200, "fine"]);
          const s = assertAnswered(await waiting, "fine");
          assertEquals([s.ticket, s.marked_time_ms], [p.ticket, null]);
          const short = await asker.call({ ticket: "q-000000000000" }, {});
          assertEquals(errorCode(short), "unknown_ticket");
        },
      );
    } finally {
      await browser.close();
      await asker.close();
      await site.close();
    }
  },
});
