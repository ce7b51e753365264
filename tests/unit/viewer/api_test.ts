import { assert, assertEquals, assertMatch } from "../../assert.ts";
import type { AppContext } from "../../../src/mcp/context.ts";
import { indexWithSession } from "./index_fixture.ts";
import { toolRunner, toolsOf, ToolUnavailable } from "../../../src/mcp/tool_runner.ts";
import { BODY_LIMIT, handleApi } from "../../../src/viewer/api.ts";
import { HumanQuestions, type MarkerMaker } from "../../../src/viewer/questions.ts";

const TOKEN = "tok";
const ASK = { question: "Broken?", choices: ["yes", "no"], session_id: "s1" };

/** An app with one recorded session (no page) and the question registry; nothing to flush. */
async function fixture(humans = new HumanQuestions()) {
  const index = await indexWithSession(null);
  const db = index.db;
  const app = {
    humans,
    recorder: { flush: () => Promise.resolve(), reader: () => db, captures: new Map() },
    browsers: { current: undefined },
    temporal: { video: { available: false, reason: "not in unit tests" } },
  } as unknown as AppContext;
  const call = async (method: string, path: string, body?: BodyInit, headers: HeadersInit = {}) => {
    const url = new URL(`http://127.0.0.1:1/${TOKEN}/api/${path}`);
    const req = new Request(url, {
      method,
      body,
      headers: { "content-type": "application/json", ...headers },
    });
    const res = await handleApi(app, TOKEN, req, url.pathname.slice(`/${TOKEN}/api/`.length), url);
    const json = await res.json() as { status?: string; error?: { code: string; message: string } };
    return { status: res.status, json, allow: res.headers.get("allow") };
  };
  return {
    app,
    call,
    close: index.close,
  };
}

Deno.test("a dismissal while an answer is being stored is 409 already_answered, and the answer stands", async () => {
  const humans = new HumanQuestions();
  const f = await fixture(humans);
  try {
    const q = humans.ask(ASK);
    let release = () => {};
    const slow: MarkerMaker = () => new Promise((resolve) => (release = () => resolve("m-1")));
    const storing = humans.answer(q.ticket, { choice: "yes", marked_time_ms: 3 }, slow);
    const racing = await f.call("POST", `questions/${q.ticket}/dismiss`, "{}");
    assertEquals([racing.status, racing.json.error?.code], [409, "already_answered"]);
    release();
    assert((await storing).accepted);
    assertEquals([q.state, q.answer?.choice], ["answered", "yes"]);
    const after = await f.call("POST", `questions/${q.ticket}/dismiss`, "{}");
    assertEquals([after.status, after.json.error?.code], [409, "already_answered"]);

    const open = humans.ask(ASK);
    const first = await f.call("POST", `questions/${open.ticket}/dismiss`, "{}");
    assertEquals([first.status, first.json.status, open.state], [200, "dismissed", "dismissed"]);
    const again = await f.call("POST", `questions/${open.ticket}/dismiss`, "{}");
    assertEquals(
      [again.status, again.json.status],
      [200, "dismissed"],
      "dismissing twice is still dismissed",
    );
    const unknown = await f.call("POST", "questions/q-000000000000/dismiss", "{}");
    assertEquals([unknown.status, unknown.json.error?.code], [404, "unknown_ticket"]);
  } finally {
    await f.close();
  }
});

Deno.test("artifacts are made by POST only: a GET is 405 and makes nothing", async () => {
  const f = await fixture();
  try {
    const got = await f.call("GET", "sessions/s1/artifacts?start_ms=0&end_ms=10");
    assertEquals([got.status, got.json.error?.code, got.allow], [405, "method_not_allowed", "POST"]);
  } finally {
    await f.close();
  }
});

Deno.test("API errors name the value and the limit", async () => {
  const f = await fixture();
  try {
    const bad = await f.call("GET", "sessions/s1/events?start_ms=abc&end_ms=10");
    assertEquals(bad.status, 400);
    assertMatch(String(bad.json.error?.message), /^start_ms is "abc"; it must be session ms from 0 to 1e9/);
    const far = await f.call("GET", "sessions/s1/events?start_ms=0&end_ms=2000000000");
    assertMatch(String(far.json.error?.message), /^end_ms is "2000000000";.* 0 to 1e9/);
    const missing = await f.call("GET", "sessions/s1/events?start_ms=0");
    assertMatch(String(missing.json.error?.message), /^end_ms is missing;/);

    const q = f.app.humans.ask(ASK);
    const big = JSON.stringify({ choice: "yes", pad: "x".repeat(BODY_LIMIT) });
    const declared = await f.call("POST", `questions/${q.ticket}/answer`, big, {
      "content-length": String(big.length),
    });
    assertEquals([declared.status, declared.json.error?.code], [413, "body_too_large"]);
    assertEquals(
      declared.json.error?.message,
      `The request body is ${big.length.toLocaleString("en-US")} bytes; the limit is 16,384 bytes.`,
    );
    const streamed = await f.call(
      "POST",
      `questions/${q.ticket}/answer`,
      new Blob([big]).stream(),
    );
    assertEquals([streamed.status, streamed.json.error?.code], [413, "body_too_large"]);
    assertMatch(
      String(streamed.json.error?.message),
      /^The request body is at least [\d,]+ bytes; the limit is 16,384 bytes\.$/,
    );
    assertEquals(q.state, "pending", "a refused body answers nothing");
  } finally {
    await f.close();
  }
});

Deno.test("the tool map is the app's own: each app's conditions decide its tools", () => {
  const withVideo = { temporal: { video: { available: true } } } as unknown as AppContext;
  const without = { temporal: { video: { available: false, reason: "no ffmpeg" } } } as unknown as AppContext;
  assertEquals(toolsOf(without).has("generate_temporal_video"), false);
  assertEquals(toolsOf(withVideo).has("generate_temporal_video"), true, "not the first app's map");
  assert(toolsOf(withVideo) === toolsOf(withVideo), "built once per app");
  assert(toolsOf(withVideo).has("ask_human"));
});

Deno.test("toolRunner runs a tool as a client would and refuses an unknown one", async () => {
  const app = { temporal: { video: { available: false, reason: "no ffmpeg" } } } as unknown as AppContext;
  const run = toolRunner(app);
  const out = await run("open_viewer", { at_ms: -1 });
  assert(out.isError, "a tool's own failure is its output");
  assertMatch(out.text, /at_ms is -1; it must be session ms from 0 to 1e9/);
  let refused: unknown;
  await run("generate_temporal_video", {}).catch((err) => (refused = err));
  assert(refused instanceof ToolUnavailable, String(refused));
});
