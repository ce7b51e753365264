/**
 * ask_human end to end (issue 16) with the official MCP client, in both protocol eras: a client that
 * declares URL elicitation gets the viewer link and the person answers in a real headless Chromium
 * (a click on the timeline marks the moment, a click on a choice answers); form-mode elicitation
 * answers with the choice alone; a client without elicitation gets the pending ticket and the viewer
 * URL, and a retry with the ticket reattaches; a second answer is refused and the first stays; a
 * dismissal (viewer button, POST, elicitation decline) is the structured error question_dismissed.
 */
import { type Browser, chromium, type Page } from "playwright-core";
import { Client, CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import {
  e2e,
  errorCode,
  fixtures,
  type Protocol,
  REPO_ROOT,
  structured,
  textOf,
  type ToolResult,
} from "./harness.ts";

const CHROMIUM = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";
const CHOICES = ["looked broken", "looked normal"];

/** The SDK probes discovery on the session's own connection for subclasses (no sibling process). */
class SessionStdioTransport extends StdioClientTransport {}

interface Elicited {
  mode?: string;
  message?: string;
  url?: string;
  elicitationId?: string;
  requestedSchema?: { properties?: { choice?: { enum?: string[] } } };
}

type Reply = (
  params: Elicited,
) => { action: "accept" | "decline" | "cancel"; content?: Record<string, string> };

/** A client declaring elicitation (and how this test's "person" answers it) against the real server. */
interface Asker {
  call(args: Record<string, unknown>, capabilities?: Record<string, unknown>): Promise<ToolResult>;
  /** Any other tool, through the same client. */
  tool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  elicited: Elicited[];
  completed: string[];
  reply: Reply;
  /** Resolves with the next elicitation the client receives. */
  next(): Promise<Elicited>;
  close(): Promise<void>;
}

async function startAsker(protocol: Protocol, capabilities: Record<string, unknown>): Promise<Asker> {
  const dataDir = await Deno.makeTempDir({ prefix: "krometrail-test-data-" });
  const transport = new SessionStdioTransport({
    command: Deno.execPath(),
    args: ["run", "--quiet", "--frozen", ...SERVER_PERMISSIONS, "main.ts", "mcp"],
    cwd: REPO_ROOT,
    env: { ...Deno.env.toObject(), KROMETRAIL_DATA_DIR: dataDir, KROMETRAIL_HEADLESS: "1", NO_COLOR: "1" },
    stderr: "inherit",
  });
  const client = protocol === "2026-07-28"
    ? new Client({ name: "krometrail-tests", version: "1.0.0" }, {
      capabilities,
      versionNegotiation: { mode: { pin: protocol } },
    })
    : new Client({ name: "krometrail-tests", version: "1.0.0" }, {
      capabilities,
      supportedProtocolVersions: [protocol],
    });
  const waiting: Array<(e: Elicited) => void> = [];
  const asker: Asker = {
    elicited: [],
    completed: [],
    reply: () => ({ action: "accept" }),
    next: () => new Promise((resolve) => waiting.push(resolve)),
    async call(args, caps) {
      // On 2026-07-28 capabilities travel on every request: a call may declare less than the client.
      const _meta = caps ? { [CLIENT_CAPABILITIES_META_KEY]: caps } : undefined;
      return await client.callTool({
        name: "ask_human",
        arguments: args,
        ...(_meta ? { _meta } : {}),
      }) as ToolResult;
    },
    async tool(name, args) {
      return await client.callTool({ name, arguments: args }) as ToolResult;
    },
    async close() {
      await client.close().catch(() => {});
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
  client.setRequestHandler("elicitation/create", (request) => {
    const params = request.params as Elicited;
    asker.elicited.push(params);
    for (const w of waiting.splice(0)) w(params);
    return Promise.resolve(asker.reply(params));
  });
  if (protocol !== "2026-07-28") {
    client.setNotificationHandler("notifications/elicitation/complete", (n) => {
      asker.completed.push((n.params as { elicitationId: string }).elicitationId);
      return Promise.resolve();
    });
  }
  await client.connect(transport);
  return asker;
}

/** A recorded session with an interaction: the timeline the person marks. */
async function record(asker: Asker, origin: string) {
  const call = (name: string, args: Record<string, unknown>) => asker.tool(name, args);
  const started = await call("start_browser", { temporary: true });
  assert(!started.isError, textOf(started));
  const nav = await call("navigate_page", { url: `${origin}/ask_human/index.html` });
  assert(!nav.isError, textOf(nav));
  const flip = await call("click", { selector: "#flip" });
  assert(!flip.isError, textOf(flip));
  await call("click", { selector: "#flip" });
  const s = structured(flip);
  return {
    interaction_id: String(s.interaction_id),
    page_id: String((s.page as { page_id: string }).page_id),
  };
}

function viewerApi(viewerUrl: string, path: string): { url: string; origin: string } {
  const u = new URL(viewerUrl);
  const token = u.pathname.split("/")[1];
  return { url: `${u.origin}/${token}/api/${path}`, origin: u.origin };
}

async function post(
  viewerUrl: string,
  path: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const api = viewerApi(viewerUrl, path);
  const res = await fetch(api.url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Origin: api.origin },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Waits until `selector`'s text is exactly `text`. */
async function textIs(page: Page, selector: string, text: string): Promise<void> {
  await page.locator(selector).filter({ hasText: new RegExp(`^${text}$`) }).waitFor();
}

/** The person: opens the link, marks a moment a quarter along the timeline, picks a choice. */
async function answerInViewer(
  browser: Browser,
  url: string,
  choice: string,
): Promise<{ expected: [number, number]; frameMs: number; page: Page }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(url);
  const ticket = new URL(url).searchParams.get("ticket");
  await page.locator(`#question[data-ticket="${ticket}"]`).waitFor({ state: "visible" });
  await page.locator(`#question button.choice[data-choice="${choice}"]`).waitFor();
  await page.locator('#timeline[data-frame-count]:not([data-frame-count="0"]):not([data-frame-count="1"])')
    .waitFor();
  const timeline = page.locator("#timeline");
  const under = async () => {
    const box = await timeline.boundingBox();
    const start = Number(await timeline.getAttribute("data-start-ms"));
    const end = Number(await timeline.getAttribute("data-end-ms"));
    assert(box, "the timeline is laid out");
    const x = Math.round(box.x + box.width * 0.25);
    return { x, y: Math.round(box.y + box.height / 2), t: start + ((x - box.x) / box.width) * (end - start) };
  };
  const before = await under();
  await page.mouse.click(before.x, before.y);
  const after = await under(); // a live timeline grows while the page polls it
  await page.locator("#mark-time").filter({ hasNotText: /^none$/ }).waitFor();
  await page.click(`#question button.choice[data-choice="${choice}"]`);
  await textIs(page, "#question-status", "answered");
  const shown = new URL(page.url());
  const api = viewerApi(url, `sessions/${shown.searchParams.get("session")}/timeline`);
  const pageId = await timeline.getAttribute("data-page-id") ?? "";
  const frames =
    ((await (await fetch(`${api.url}?page=${encodeURIComponent(pageId)}`)).json()).frames as Array<
      { at_ms: number }
    >).map((f) => f.at_ms);
  // A frame's worth: the longest stretch between two recorded frames around the click.
  let frameMs = 50;
  for (let i = 1; i < frames.length; i++) {
    if (frames[i - 1] <= after.t && frames[i] >= before.t) {
      frameMs = Math.max(frameMs, frames[i] - frames[i - 1]);
    }
  }
  return { expected: [Math.min(before.t, after.t), Math.max(before.t, after.t)], frameMs, page };
}

function assertAnswered(result: ToolResult, choice: string): Record<string, unknown> {
  assert(!result.isError, textOf(result));
  const s = structured(result);
  assertEquals([s.status, s.choice], ["answered", choice], JSON.stringify(s));
  assertMatch(String(s.ticket), /^q-[0-9a-f]{12}$/);
  return s;
}

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
          const seen = asker.elicited.length;
          const startedAt = performance.now();
          const pending = await asker.call({
            question: "Broken or fine?",
            choices: ["broken", "fine"],
            at_ms: 10,
          }, {});
          assert(
            performance.now() - startedAt < 10_000,
            "no wait for a person who cannot see the question yet",
          );
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
          for (let i = 0; i < 50 && !asker.completed.includes(String(s.ticket)); i++) {
            await new Promise((r) => setTimeout(r, 20));
          }
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
