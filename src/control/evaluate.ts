/**
 * evaluate_page's run of an expression: each way it can end gets its own truthful outcome. A value
 * JSON cannot carry is refused with what it was (not flattened to `{}`, and not an internal error);
 * work still running at timeout_ms is terminated so the page is usable again; a promise that merely
 * has not settled is reported as that, with the page shown to be responsive.
 */
import type { Protocol } from "devtools-protocol";
import type { PageTarget } from "../browser/targets.ts";
import { asToolError, limitExceeded, ToolError } from "../errors.ts";

export const EVALUATE_RESULT_LIMIT = 64 * 1024;
/**
 * After timeout_ms, how long the page gets to answer a trivial check before its running script is
 * terminated. A responsive page answers in milliseconds; this leaves room for a loaded machine.
 */
const PROBE_MS = 500;
/** After terminating, how long the page gets to answer again. */
const RECOVER_MS = 1_000;
/** Turning an object result into JSON runs page getters and toJSON; they are bounded too. */
const SERIALIZE_MS = 1_500;
/** How long a reply that comes after we gave up is still awaited, to release what it holds. */
const LATE_REPLY_MS = 60_000;
const PREVIEW_CHARS = 200;
const DROPPED_PATHS = 5;

export interface Evaluated {
  type: string;
  value: unknown;
  /** Functions and symbols inside the result, which JSON leaves out (or writes as null in arrays). */
  dropped?: { count: number; paths: string[] };
}

type Reply = { r: Protocol.Runtime.EvaluateResponse } | { err: unknown };

interface Problem {
  kind: string;
  path: string;
  preview: string;
}

type Serialized =
  | { problem: Problem }
  | { length: number }
  | { json?: string; count: number; dropped: string[] };

let groups = 0;

const later = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(() => r(value), ms));

export async function evaluateExpression(
  page: PageTarget,
  expression: string,
  timeoutMs: number,
): Promise<Evaluated> {
  // Objects stay in the page (by reference) until we know they can be turned into JSON.
  const group = `krometrail-evaluate-${++groups}`;
  const release = () => void page.send("Runtime.releaseObjectGroup", { objectGroup: group }).catch(() => {});
  const started = performance.now();
  // Sent just ahead of the expression (the page handles them in order): its reply shows the page
  // got as far as the expression, so whatever is running at the timeout is ours to terminate. A
  // page already stuck in its own script never answers it, and its script is left alone.
  const reached = { yes: false };
  void page.send("Runtime.evaluate", { expression: "0", returnByValue: true }, timeoutMs + LATE_REPLY_MS)
    .then(() => (reached.yes = true), () => {});
  const reply: Promise<Reply> = page.send("Runtime.evaluate", {
    expression,
    awaitPromise: true,
    returnByValue: false,
    objectGroup: group,
    userGesture: true,
    // No Chrome `timeout`: it also ends a loop in the expression's microtasks while leaving the
    // promise pending with no reply, indistinguishable from a promise that merely has not settled.
  }, timeoutMs + LATE_REPLY_MS).then((r) => ({ r }), (err) => ({ err }));
  const first = await Promise.race([reply, later(timeoutMs, undefined)]);
  let settled: Reply;
  try {
    settled = first ?? await overrun(page, reply, timeoutMs, started, () => reached.yes);
  } catch (err) {
    // The reply may still come (a promise settling late); its objects are released then.
    void reply.then(release);
    throw err;
  }
  try {
    return await valueOf(page, settled, timeoutMs, started);
  } finally {
    release();
  }
}

const isTermination = (r: Protocol.Runtime.EvaluateResponse) =>
  /execution was terminated/i.test(
    r.exceptionDetails?.exception?.description ?? r.exceptionDetails?.text ?? "",
  );

/**
 * timeout_ms has passed. A page that answers a trivial check is responsive: the expression's promise
 * just has not settled. One that does not is running script: the expression's, or script it waits
 * on, which is terminated; or, when the page never got to the expression, its own, which is not.
 */
async function overrun(
  page: PageTarget,
  reply: Promise<Reply>,
  timeoutMs: number,
  started: number,
  reached: () => boolean,
) {
  if (page.dialog) throw dialogBlocked(page, timeoutMs);
  const probe = page.send("Runtime.evaluate", { expression: "0", returnByValue: true }, PROBE_MS + RECOVER_MS)
    .then(() => "answered" as const, (err) => ({ probeError: err }));
  const seen = await Promise.race([reply, probe, later(PROBE_MS, "busy" as const)]);
  if (typeof seen === "object" && "probeError" in seen) throw asToolError(seen.probeError);
  // Settled just after the deadline: a value is a value.
  if (typeof seen === "object") return seen;
  if (page.dialog) throw dialogBlocked(page, timeoutMs);
  if (seen === "answered") throw promisePending(page, timeoutMs, started);
  if (!reached()) throw pageBusy(page, timeoutMs, started);
  void page.send("Runtime.terminateExecution", undefined, RECOVER_MS).catch(() => {});
  // Any reply to the queued check, even an error, means the main thread is handling messages again.
  const after = await Promise.race([probe, later(RECOVER_MS, "busy" as const)]);
  throw terminated(page, timeoutMs, started, after !== "busy");
}

async function valueOf(
  page: PageTarget,
  reply: Reply,
  timeoutMs: number,
  started: number,
): Promise<Evaluated> {
  if ("err" in reply) throw reply.err;
  const { result, exceptionDetails } = reply.r;
  if (exceptionDetails) {
    if (isTermination(reply.r)) throw terminated(page, timeoutMs, started, true);
    const text = exceptionDetails.exception?.description ?? exceptionDetails.text;
    throw new ToolError({
      code: "evaluation_exception",
      message: `The expression threw: ${text.split("\n")[0].slice(0, 300)}`,
      retry: "never",
      recovery: "Fix the expression; it runs in the page's main world.",
      affected: { page_id: page.id },
    });
  }
  if (result.type === "undefined") return { type: result.type, value: null };
  if (result.type === "symbol" || result.type === "function") {
    throw notSerializable(page, result, {
      kind: result.type === "symbol" ? "Symbol" : "function",
      path: "result",
      preview: clip(result.description ?? result.type),
    });
  }
  if (!result.objectId) {
    // Primitives; NaN, Infinity, -0 and BigInt keep their description (e.g. "NaN", "12n").
    const value = result.value ?? result.unserializableValue ?? result.description ?? null;
    const length = JSON.stringify(value)?.length ?? 4;
    if (length > EVALUATE_RESULT_LIMIT) throw tooLarge(length);
    return { type: result.type, value };
  }
  const s = await page.send("Runtime.callFunctionOn", {
    objectId: result.objectId,
    functionDeclaration: SERIALIZE,
    arguments: [{ value: EVALUATE_RESULT_LIMIT }],
    returnByValue: true,
  }, SERIALIZE_MS).catch((err) => {
    if (!(err instanceof ToolError && err.code === "cdp_timeout")) throw err;
    void page.send("Runtime.terminateExecution", undefined, RECOVER_MS).catch(() => {});
    throw new ToolError({
      code: "evaluation_timeout",
      message:
        `Turning the result into JSON ran past ${SERIALIZE_MS} ms (a getter or toJSON that does not finish) and was terminated.`,
      retry: "after_recovery",
      recovery: "Return plain data built in the expression, e.g. ({title: document.title}).",
      affected: { page_id: page.id },
      details: { timeout_ms: SERIALIZE_MS, outcome: "terminated" },
    });
  });
  const out = s.result.value as Serialized | undefined;
  if (!out || s.exceptionDetails) {
    throw notSerializable(page, result, {
      kind: "unreadable",
      path: "result",
      preview: clip(result.description ?? ""),
    });
  }
  if ("problem" in out) throw notSerializable(page, result, out.problem);
  if ("length" in out) throw tooLarge(out.length);
  return {
    type: result.type,
    value: out.json === undefined ? null : JSON.parse(out.json),
    ...(out.count > 0 ? { dropped: { count: out.count, paths: out.dropped } } : {}),
  };
}

function tooLarge(length: number): ToolError {
  return limitExceeded(
    "evaluate result (JSON characters)",
    length,
    EVALUATE_RESULT_LIMIT,
    "Return a smaller value, e.g. slice or summarize in the expression.",
  );
}

const clip = (s: string) => (s.length > PREVIEW_CHARS ? `${s.slice(0, PREVIEW_CHARS - 1)}…` : s);

const RECOVERY: Record<string, string> = {
  BigInt: "Return a JSON-able projection: String(value), or Number(value) when it fits.",
  function: "Return a JSON-able projection: call it and return its result, or String(fn) for its source.",
  Map: "Return a JSON-able projection: Object.fromEntries(map) or [...map].",
  Set: "Return a JSON-able projection: [...set].",
};
const PROJECTION =
  "Return a JSON-able projection instead, e.g. ({title: document.title, url: location.href}) or [...document.querySelectorAll('a')].map((a) => a.href).";

function notSerializable(page: PageTarget, root: Protocol.Runtime.RemoteObject, p: Problem): ToolError {
  const what = p.kind === "cycle"
    ? `it refers back to itself (${p.preview})`
    : p.kind === "threw"
    ? `reading it threw (${p.preview})`
    : `${p.path} is ${/^[AEIOU]/.test(p.kind) ? "an" : "a"} ${p.kind} (${p.preview})`;
  return new ToolError({
    code: "result_not_serializable",
    message: `The expression's result cannot be returned as JSON: ${what}.`,
    retry: "never",
    recovery: RECOVERY[p.kind] ?? PROJECTION,
    affected: { page_id: page.id },
    details: {
      ...p,
      type: root.type,
      ...(root.subtype ? { subtype: root.subtype } : {}),
      ...(root.className ? { class_name: root.className } : {}),
    },
  });
}

function terminated(page: PageTarget, timeoutMs: number, started: number, answers: boolean): ToolError {
  const elapsed = Math.round(performance.now() - started);
  return new ToolError({
    code: "evaluation_timeout",
    message:
      `Script was still running at the expression's ${timeoutMs} ms timeout (the expression, or script it started or waits on) and was terminated after ${elapsed} ms; ${
        answers ? "the page answers again" : "the page still does not answer"
      }.`,
    retry: "after_recovery",
    recovery: answers
      ? "Bound the work (no unbounded loops), or raise timeout_ms if it is legitimately long."
      : "Reload the page (reload_page) or close it (close_page); its script is still not answering.",
    affected: { page_id: page.id },
    details: { timeout_ms: timeoutMs, elapsed_ms: elapsed, outcome: "terminated", page_answers: answers },
  });
}

function pageBusy(page: PageTarget, timeoutMs: number, started: number): ToolError {
  const elapsed = Math.round(performance.now() - started);
  return new ToolError({
    code: "page_unresponsive",
    message:
      `Page ${page.id} did not get to the expression within ${timeoutMs} ms: its main thread was already busy with the page's own script (a check sent just before the expression got no reply in ${elapsed} ms), so nothing was terminated.`,
    retry: "after_recovery",
    recovery:
      `close_page ${page.id}, or navigate_page ${page.id} to about:blank or another site (a fresh renderer); reload_page and same-site URLs reuse the stuck renderer.`,
    affected: { page_id: page.id },
    details: { timeout_ms: timeoutMs, elapsed_ms: elapsed, outcome: "page_busy" },
  });
}

function promisePending(page: PageTarget, timeoutMs: number, started: number): ToolError {
  const elapsed = Math.round(performance.now() - started);
  return new ToolError({
    code: "evaluation_timeout",
    message:
      `The expression's promise did not settle within ${timeoutMs} ms. The page is responsive (it answered a check after ${elapsed} ms), so nothing was stopped; the promise may still settle in the page.`,
    retry: "after_recovery",
    recovery: "Make the promise settle (e.g. Promise.race against a timer), or raise timeout_ms.",
    affected: { page_id: page.id },
    details: { timeout_ms: timeoutMs, elapsed_ms: elapsed, outcome: "promise_pending" },
  });
}

/** A dialog opened while the expression ran: it blocks the page until handled. */
function dialogBlocked(page: PageTarget, timeoutMs: number): ToolError {
  return new ToolError({
    code: "evaluation_timeout",
    message:
      `The expression did not finish within ${timeoutMs} ms: a ${page.dialog?.type} dialog opened and blocks the page.`,
    retry: "after_recovery",
    recovery: "Handle the dialog (handle_dialog accept or dismiss), then evaluate again.",
    affected: { page_id: page.id },
    details: { timeout_ms: timeoutMs, dialog: page.dialog?.type, outcome: "dialog_open" },
  });
}

/**
 * Runs in the page with `this` = the result: JSON.stringify with a replacer that stops at what JSON
 * would silently flatten or drop (windows and DOM nodes become `{}`, Maps and Sets lose their
 * entries) and names where it is, and counts the functions and symbols JSON leaves out.
 */
const SERIALIZE = `function (limit) {
  const CHARS = ${PREVIEW_CHARS};
  const clip = (s) => (s.length > CHARS ? s.slice(0, CHARS - 1) + "\u2026" : s);
  const isWindow = (v) => { try { return v === v.window; } catch { return false; } };
  const isNode = (v) => {
    try {
      return (typeof Node === "function" && v instanceof Node) ||
        (typeof v.nodeType === "number" && typeof v.nodeName === "string" && typeof v.cloneNode === "function");
    } catch { return false; }
  };
  const nodeText = (n) => {
    let s = String(n.nodeName).toLowerCase();
    if (n.id) s += "#" + n.id;
    if (typeof n.className === "string" && n.className.trim()) s += "." + n.className.trim().split(/\\s+/).join(".");
    return s;
  };
  const paths = new WeakMap();
  const dropped = [];
  let count = 0;
  let problem = null;
  const at = (base, holder, key) => Array.isArray(holder) ? base + "[" + key + "]"
    : /^[A-Za-z_$][\\w$]*$/.test(key) ? base + "." + key : base + "[" + JSON.stringify(key) + "]";
  function replacer(key, value) {
    if (problem) return undefined;
    const base = paths.get(this);
    const path = base === undefined ? "result" : at(base, this, key);
    const t = typeof value;
    if (t === "bigint") { problem = { kind: "BigInt", path, preview: clip(String(value) + "n") }; return undefined; }
    if (t === "function" || t === "symbol") {
      count++;
      if (dropped.length < ${DROPPED_PATHS}) dropped.push(path);
      return value;
    }
    if (value === null || t !== "object") return value;
    if (isWindow(value)) { problem = { kind: "Window", path, preview: "Window" }; return undefined; }
    if (isNode(value)) { problem = { kind: "DOM node", path, preview: clip(nodeText(value)) }; return undefined; }
    for (const [kind, type] of [["Map", Map], ["Set", Set], ["WeakMap", WeakMap], ["WeakSet", WeakSet]]) {
      if (value instanceof type) {
        problem = { kind, path, preview: clip(kind + (value.size === undefined ? "" : "(" + value.size + ")")) };
        return undefined;
      }
    }
    if (value instanceof Error) value = { name: value.name, message: value.message };
    paths.set(value, path);
    return value;
  }
  try {
    const json = JSON.stringify(this, replacer);
    if (problem) return { problem };
    if (json !== undefined && json.length > limit) return { length: json.length };
    return { json, count, dropped };
  } catch (e) {
    if (problem) return { problem };
    const message = String((e && e.message) || e);
    return /circular/i.test(message)
      ? { problem: { kind: "cycle", path: "result", preview: clip(message.replace(/\\s+/g, " ")) } }
      : { problem: { kind: "threw", path: "result", preview: clip(message) } };
  }
}`;
