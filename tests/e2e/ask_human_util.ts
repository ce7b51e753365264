/**
 * What the ask_human e2e files share (ask_human_test.ts: the 2026-07-28 era; ask_human_legacy_test.ts:
 * 2025-11-25): a real server over stdio behind the official MCP client declaring elicitation, a
 * recorded session to ask about, the viewer's API, and a "person" who answers in headless Chromium.
 */
import type { Browser, Page } from "playwright-core";
import { Client, CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { SERVER_PERMISSIONS } from "../../build.ts";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { type Protocol, REPO_ROOT, structured, textOf, type ToolResult } from "./harness.ts";

export const CHROMIUM = Deno.env.get("KROMETRAIL_CHROME") ?? "/usr/bin/chromium";
export const CHOICES = ["looked broken", "looked normal"];

/** The SDK probes discovery on the session's own connection for subclasses (no sibling process). */
class SessionStdioTransport extends StdioClientTransport {}

export interface Elicited {
  mode?: string;
  message?: string;
  url?: string;
  elicitationId?: string;
  requestedSchema?: { properties?: { choice?: { enum?: string[] } } };
}

export type Reply = (
  params: Elicited,
) => { action: "accept" | "decline" | "cancel"; content?: Record<string, string> };

/** A client declaring elicitation (and how this test's "person" answers it) against the real server. */
export interface Asker {
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

export async function startAsker(protocol: Protocol, capabilities: Record<string, unknown>): Promise<Asker> {
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
export async function record(asker: Asker, origin: string) {
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

export function viewerApi(viewerUrl: string, path: string): { url: string; origin: string } {
  const u = new URL(viewerUrl);
  const token = u.pathname.split("/")[1];
  return { url: `${u.origin}/${token}/api/${path}`, origin: u.origin };
}

export async function post(
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
export async function textIs(page: Page, selector: string, text: string): Promise<void> {
  await page.locator(selector).filter({ hasText: new RegExp(`^${text}$`) }).waitFor();
}

/** The person: opens the link, marks a moment a quarter along the timeline, picks a choice. */
export async function answerInViewer(
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

export function assertAnswered(result: ToolResult, choice: string): Record<string, unknown> {
  assert(!result.isError, textOf(result));
  const s = structured(result);
  assertEquals([s.status, s.choice], ["answered", choice], JSON.stringify(s));
  assertMatch(String(s.ticket), /^q-[0-9a-f]{12}$/);
  return s;
}
