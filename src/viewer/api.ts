/**
 * The viewer's JSON API (under /<token>/api/, after security.ts let the request in): a router over
 * api_timeline.ts (index reads), api_artifacts.ts (tool-made evidence) and api_questions.ts.
 */
import { logger } from "../log.ts";
import type { AppContext } from "../mcp/context.ts";
import { ApiError, artifacts, dom, events, evidence, type RangeQuery } from "./api_artifacts.ts";
import { answerQuestion, dismissQuestion, listQuestions } from "./api_questions.ts";
import { knownSession } from "../capture/frames.ts";
import { defaultPage, frameAt, listSessions, timeline } from "./api_timeline.ts";

export const BODY_LIMIT = 16_384;
/** The latest session instant the API takes (ms). */
const MS_MAX = 1e9;

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

export function errorResponse(status: number, code: string, message: string): Response {
  return json(status, { error: { code, message } });
}

/** The JSON body, read no further than the limit (a person's answer is a few bytes). */
async function readBody(req: Request): Promise<unknown> {
  const tooLarge = (seen: string) =>
    new ApiError(
      413,
      "body_too_large",
      `The request body is ${seen}; the limit is ${BODY_LIMIT.toLocaleString("en-US")} bytes.`,
    );
  const declared = Number(req.headers.get("content-length") ?? 0);
  if (declared > BODY_LIMIT) throw tooLarge(`${declared.toLocaleString("en-US")} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    for await (const chunk of req.body) {
      size += chunk.length;
      if (size > BODY_LIMIT) throw tooLarge(`at least ${size.toLocaleString("en-US")} bytes`);
      chunks.push(chunk);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "The request body is not JSON.");
  }
}

function num(v: unknown, name: string): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > MS_MAX) {
    const shown = v === undefined || v === null ? "missing" : JSON.stringify(String(v).slice(0, 40));
    throw new ApiError(
      400,
      "invalid_argument",
      `${name} is ${shown}; it must be session ms from 0 to 1e9 (${MS_MAX}).`,
    );
  }
  return n;
}

function sessionOf(app: AppContext, sid: string): string {
  if (!knownSession(app.recorder.reader(), sid)) {
    throw new ApiError(404, "session_not_found", "No such session in this process.");
  }
  return sid;
}

function pageOf(app: AppContext, session: string, page: unknown): string {
  if (typeof page === "string" && page !== "") return page.slice(0, 16);
  const p = defaultPage(app.recorder.reader(), session);
  if (!p) throw new ApiError(404, "page_not_found", "This session recorded no page.");
  return p;
}

async function rangeQuery(
  app: AppContext,
  session: string,
  req: Request,
  url: URL,
): Promise<RangeQuery & { video: boolean }> {
  const src = req.method === "POST"
    ? await readBody(req) as Record<string, unknown>
    : Object.fromEntries(url.searchParams) as Record<string, unknown>;
  const start = num(src.start_ms, "start_ms");
  const end = num(src.end_ms, "end_ms");
  if (end < start) throw new ApiError(400, "invalid_argument", "end_ms must not be before start_ms.");
  return {
    session_id: session,
    page_id: pageOf(app, session, src.page_id ?? src.page),
    start_ms: start,
    end_ms: end,
    video: src.video === true || src.video === "1" || src.video === "true",
  };
}

/** Serves one API request; `path` is what follows /<token>/api/. */
export async function handleApi(
  app: AppContext,
  token: string,
  req: Request,
  path: string,
  url: URL,
): Promise<Response> {
  try {
    return await route(app, token, req, path, url);
  } catch (err) {
    if (err instanceof ApiError) return errorResponse(err.status, err.code, err.message);
    logger("viewer").warn("viewer API {path} failed: {error}", { path, error: String(err) });
    return errorResponse(500, "viewer_failed", "The viewer could not answer this request.");
  }
}

async function route(
  app: AppContext,
  token: string,
  req: Request,
  path: string,
  url: URL,
): Promise<Response> {
  const post = req.method === "POST";
  if (path === "sessions" && !post) return json(200, await listSessions(app));
  if (path === "questions" && !post) return json(200, listQuestions(app));
  let m = /^questions\/([A-Za-z0-9_-]{1,64})\/(answer|dismiss)$/.exec(path);
  if (m && post) {
    if (m[2] === "answer") return json(200, await answerQuestion(app, m[1], await readBody(req)));
    return json(200, dismissQuestion(app, m[1]));
  }
  m = /^frames\/([A-Za-z0-9_-]{1,64})\/(\d{1,9})\.jpg$/.exec(path);
  if (m && !post) {
    const session = sessionOf(app, m[1]);
    const page = url.searchParams.get("page") ?? undefined;
    const frame = await frameAt(app, session, page?.slice(0, 16), Number(m[2]));
    if (!frame) throw new ApiError(404, "frame_not_found", "No frame with this ordinal on this page.");
    return new Response(frame.bytes as Uint8Array<ArrayBuffer>, {
      headers: {
        "content-type": "image/jpeg",
        "x-krometrail-frame-id": String(frame.frame_id),
        "x-krometrail-at-ms": String(frame.at_ms),
      },
    });
  }
  m = /^evidence\/(.{1,200})$/.exec(path);
  if (m && !post) {
    const file = await evidence(app, m[1]);
    return new Response(file.bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": file.mimeType },
    });
  }
  m = /^sessions\/([A-Za-z0-9_-]{1,64})\/(timeline|artifacts|events|dom)$/.exec(path);
  if (m) {
    await app.recorder.flush();
    const session = sessionOf(app, m[1]);
    const what = m[2];
    if (what === "timeline" && !post) {
      const t = await timeline(app, session, url.searchParams.get("page")?.slice(0, 16) || undefined);
      if (!t) throw new ApiError(404, "page_not_found", "This session recorded no page.");
      return json(200, t);
    }
    if (what === "artifacts") {
      if (!post) {
        // Making artifacts writes evidence: a GET (a prefetch, a link preview) must not.
        const refused = errorResponse(405, "method_not_allowed", "Artifacts are made by POST, not GET.");
        refused.headers.set("allow", "POST");
        return refused;
      }
      const q = await rangeQuery(app, session, req, url);
      return json(200, await artifacts(app, token, q, q.video));
    }
    if (what === "events" && !post) {
      return json(200, await events(app, await rangeQuery(app, session, req, url)));
    }
    if (what === "dom" && !post) {
      const page = pageOf(app, session, url.searchParams.get("page"));
      return json(200, await dom(app, session, page, num(url.searchParams.get("at_ms"), "at_ms")));
    }
  }
  return errorResponse(404, "not_found", "No such viewer resource.");
}
