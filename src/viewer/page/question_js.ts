/**
 * Browser module question.js: the question an agent asked (ask_human), shown prominently while pending;
 * the person answers with a choice and, optionally, a moment marked on the timeline.
 * No template literals or backslashes in here: this text lives inside a TypeScript template string.
 */
export const QUESTION_JS = `
import { $, el, fmtMs, getJSON, postJSON } from "./util.js";

const POLL_MS = 1000;

export function createQuestions(ctx) {
  const box = $("#question");
  const wanted = new URLSearchParams(location.search).get("ticket");
  let current = null;
  let mark = null;
  let busy = false;

  function active() {
    return current !== null && current.state === "pending" && !busy;
  }

  function setStatus(text) {
    $("#question-status").textContent = text;
  }

  function setMark(ms) {
    mark = ms;
    $("#mark-time").textContent = ms === null ? "none" : fmtMs(ms);
    ctx.drawMark(ms);
  }

  function show(q) {
    current = q;
    box.hidden = false;
    box.dataset.ticket = q.ticket;
    $("#question-text").textContent = q.question;
    $("#question-at").textContent = q.at_ms !== null ? "about " + fmtMs(q.at_ms) : "";
    const buttons = q.choices.map((c) => {
      const b = el("button", { className: "choice", type: "button", text: c, data: { choice: c } });
      b.addEventListener("click", () => answer(c));
      return b;
    });
    $("#question-choices").replaceChildren(...buttons);
    setMark(null);
    settle(q.state === "pending" ? "" : q.state);
    if (q.session_id) ctx.jumpTo(q.session_id, q.page_id, q.at_ms);
  }

  function settle(status) {
    const done = status !== "";
    for (const b of box.querySelectorAll("button.choice, #dismiss")) b.disabled = done;
    setStatus(status);
  }

  async function answer(choice) {
    if (!active()) return;
    busy = true;
    for (const b of box.querySelectorAll("button.choice, #dismiss")) b.disabled = true;
    setStatus("sending…");
    try {
      const body = { choice };
      if (mark !== null) body.marked_time_ms = Number(mark.toFixed(3));
      const res = await postJSON("questions/" + encodeURIComponent(current.ticket) + "/answer", body);
      current = { ...current, state: "answered", answer: res };
      settle("answered");
      box.dataset.markerId = res.marker_id || "";
      ctx.answered();
    } catch (err) {
      if (err.code === "already_answered" || err.code === "question_dismissed") current = { ...current, state: "settled" };
      else for (const b of box.querySelectorAll("button.choice, #dismiss")) b.disabled = false;
      setStatus(err.code || "error");
    } finally {
      busy = false;
    }
  }

  async function dismiss() {
    if (!active()) return;
    busy = true;
    try {
      await postJSON("questions/" + encodeURIComponent(current.ticket) + "/dismiss", {});
      current = { ...current, state: "dismissed" };
      settle("dismissed");
    } catch (err) {
      setStatus(err.code || "error");
    } finally {
      busy = false;
    }
  }

  async function refresh() {
    let list;
    try {
      list = (await getJSON("questions")).questions || [];
    } catch {
      return;
    }
    const pending = list.filter((q) => q.state === "pending");
    const byTicket = wanted ? list.find((q) => q.ticket === wanted) : undefined;
    if (current === null) {
      const first = (byTicket && byTicket.state === "pending" ? byTicket : undefined) || pending[0] || byTicket;
      if (first) show(first);
      return;
    }
    const still = list.find((q) => q.ticket === current.ticket);
    if (current.state === "pending" && still && still.state !== "pending" && !busy) {
      // Answered or dismissed elsewhere (the MCP client's own form, another tab).
      current = still;
      settle(still.state);
      return;
    }
    if (current.state !== "pending") {
      const next = pending.find((q) => q.ticket !== current.ticket);
      if (next) show(next);
    }
  }

  $("#dismiss").addEventListener("click", dismiss);
  refresh();
  setInterval(refresh, POLL_MS);
  try {
    const source = new EventSource(new URL("api/questions/stream", location.href).pathname);
    source.onmessage = () => refresh();
  } catch {
    // Polling alone still shows every question.
  }
  return {
    /** A click on the timeline while a question waits is the person's mark. */
    timelineClicked(ms) {
      if (active()) setMark(ms);
    },
    get marking() {
      return active();
    },
  };
}
`;
