/**
 * Browser module main.js: the session list, the selected page's timeline and the frame at the playhead.
 * No template literals or backslashes in here: this text lives inside a TypeScript template string.
 */
export const MAIN_JS = `
import { $, el, fmtMs, clamp, getJSON, debounce } from "./util.js";
import { renderTimeline, renderAxis, renderFilmstrip, timeAtX, frameIndexAt, frameIndexOfOrdinal, isFailed } from "./timeline.js";
import { createPanels } from "./panels.js";
import { createQuestions } from "./question.js";

const SESSIONS_POLL_MS = 3000;
const LIVE_POLL_MS = 2000;
const DRAG_PX = 5;

const params = new URLSearchParams(location.search);
const state = {
  sessions: [],
  sessionId: null,
  pageId: null,
  tl: null,
  ordinal: 0,
  playheadMs: 0,
  range: null,
  mark: null,
  overlay: null,
  markThumb: () => {},
};
let frameSeq = 0;
let loadSeq = 0;

const panels = createPanels({
  state,
  seekTime: (ms) => setTime(ms),
  setRange: (r) => setRange(r),
});
const questions = createQuestions({
  jumpTo: (session, page, at) => selectPage(session, page || null, at === null || at === undefined ? null : at),
  drawMark: (ms) => {
    state.mark = ms;
    if (state.overlay) state.overlay.setMark(ms);
  },
  answered: () => refreshTimeline(),
});

function renderSessions() {
  const root = $("#sessions");
  if (state.sessions.length === 0) {
    root.replaceChildren(el("p", { className: "muted", text: "Nothing recorded yet in this process. Start a browser (start_browser) and the session appears here." }));
    return;
  }
  root.replaceChildren(...state.sessions.map((s) => {
    const when = new Date(s.started_at);
    const frames = s.pages.reduce((a, p) => a + p.frames, 0);
    const entry = el("div", { className: "session" + (s.session_id === state.sessionId ? " selected" : ""), data: { sessionId: s.session_id } },
      el("div", { className: "when" },
        el("b", { text: when.toLocaleTimeString() }),
        el("span", { text: " · " + when.toLocaleDateString() + " · " + s.pages.length + " page(s) · " + frames + " frames" }),
        s.live ? el("span", { className: "badge live", text: "live" }) : null),
      el("div", { className: "sid", text: s.session_id, title: "session id" }));
    entry.setAttribute("role", "listitem");
    entry.addEventListener("click", () => selectPage(s.session_id, null, null));
    for (const p of s.pages) {
      const b = el("button", {
        className: "page" + (s.session_id === state.sessionId && p.page_id === state.pageId ? " selected" : ""),
        type: "button",
        text: p.page_id + " · " + (p.title || p.url || "no document") + " · " + p.frames + " frames",
        title: (p.url || "") + (p.title ? " (" + p.title + ")" : ""),
        data: { pageId: p.page_id },
      });
      b.addEventListener("click", (ev) => {
        ev.stopPropagation();
        selectPage(s.session_id, p.page_id, null);
      });
      entry.append(b);
    }
    return entry;
  }));
}

async function loadSessions() {
  try {
    state.sessions = (await getJSON("sessions")).sessions || [];
  } catch (err) {
    $("#sessions").replaceChildren(el("p", { className: "muted", text: "sessions: " + err.message }));
    return;
  }
  renderSessions();
}

function renderActions() {
  const list = $("#actions");
  const tl = state.tl;
  const items = tl ? tl.interactions : [];
  $("#action-count").textContent = items.length ? String(items.length) : "";
  list.replaceChildren(...items.map((i) => {
    const li = el("li", { className: isFailed(i) ? "failed" : "", title: i.interaction_id + " · " + i.outcome, data: { interactionId: i.interaction_id } },
      el("span", { className: "op", text: i.tool }), el("span", { className: "t time", text: fmtMs(i.at_ms) }));
    li.addEventListener("click", () => scrubToInteraction(i));
    return li;
  }));
}

function draw() {
  const tl = state.tl;
  const root = $("#timeline");
  state.overlay = renderTimeline(root, tl, (i, ev) => {
    ev.stopPropagation();
    // While a question waits, every click on the strip is the person's mark, ticks included.
    if (questions.marking) {
      const t = timeAtX(root, ev.clientX);
      questions.timelineClicked(t);
      return setTime(t);
    }
    scrubToInteraction(i);
  });
  renderAxis($("#axis"), tl);
  state.markThumb = renderFilmstrip($("#filmstrip"), tl, frameUrl, (f) => setOrdinal(f.ordinal));
  state.overlay.setMark(state.mark);
  state.overlay.setRange(state.range);
  const scrubber = $("#scrubber");
  scrubber.max = String(Math.max(0, tl.frame_count - 1));
  scrubber.disabled = tl.frame_count === 0;
  $("#live-badge").hidden = !tl.live;
  $("#session-title").textContent = "session " + tl.session_id.slice(0, 8) + " · page " + tl.page_id + " · " + tl.frame_count + " frames" +
    (tl.frames_sampled ? " (" + tl.frames.length + " drawn)" : "") + " · " + tl.interaction_count + " interactions" +
    (tl.interactions.length < tl.interaction_count ? " (first " + tl.interactions.length + " drawn)" : "") + " · " +
    tl.event_count + " flagged events" + (tl.events.length < tl.event_count ? " (first " + tl.events.length + " drawn)" : "");
  renderActions();
}

async function selectPage(session, page, atMs) {
  const seq = ++loadSeq;
  let tl;
  try {
    tl = await getJSON("sessions/" + encodeURIComponent(session) + "/timeline", page ? { page } : undefined);
  } catch (err) {
    $("#stage-empty").textContent = "Could not load the timeline: " + err.message;
    return;
  }
  if (seq !== loadSeq) return;
  const samePage = state.sessionId === tl.session_id && state.pageId === tl.page_id;
  state.sessionId = tl.session_id;
  state.pageId = tl.page_id;
  state.tl = tl;
  if (!samePage) {
    state.range = null;
    panels.reset();
  }
  const qs = new URLSearchParams(location.search);
  qs.set("session", tl.session_id);
  qs.set("page", tl.page_id);
  history.replaceState(null, "", "?" + qs.toString());
  draw();
  renderSessions();
  if (atMs !== null && atMs !== undefined) setTime(Number(atMs));
  else if (!samePage) setOrdinal(Math.max(0, tl.frame_count - 1));
  else setOrdinal(state.ordinal);
}

async function refreshTimeline() {
  if (!state.sessionId) return;
  const tl = state.tl;
  const atEnd = tl && state.ordinal >= tl.frame_count - 1;
  let next;
  try {
    next = await getJSON("sessions/" + encodeURIComponent(state.sessionId) + "/timeline", { page: state.pageId });
  } catch {
    return;
  }
  if (next.session_id !== state.sessionId || next.page_id !== state.pageId) return;
  state.tl = next;
  draw();
  if (atEnd && next.live) setOrdinal(next.frame_count - 1);
  else setPlayheadUi();
}

function frameUrl(ordinal) {
  return "api/frames/" + encodeURIComponent(state.sessionId) + "/" + ordinal + ".jpg?page=" + encodeURIComponent(state.pageId);
}

function showFrame(ordinal, atMs, frameId) {
  const img = $("#frame");
  const url = frameUrl(ordinal);
  const seq = ++frameSeq;
  const done = () => {
    if (seq !== frameSeq) return;
    img.dataset.ordinal = String(ordinal);
    img.dataset.atMs = String(atMs);
    img.dataset.frameId = String(frameId);
  };
  img.hidden = false;
  $("#stage-empty").hidden = true;
  if (img.getAttribute("src") === url && img.complete) return done();
  img.onload = done;
  img.onerror = () => {
    if (seq === frameSeq) $("#frame-info").textContent = "frame " + ordinal + " could not be loaded";
  };
  img.src = url;
}

function setPlayheadUi() {
  const tl = state.tl;
  if (!tl) return;
  $("#playhead-time").textContent = fmtMs(state.playheadMs);
  $("#scrubber").value = String(state.ordinal);
  if (state.overlay) state.overlay.setPlayhead(state.playheadMs);
  state.markThumb(state.ordinal);
  const f = tl.frames[frameIndexOfOrdinal(tl.frames, state.ordinal)];
  $("#frame-info").textContent = f
    ? "frame " + (state.ordinal + 1) + " of " + tl.frame_count + " · #" + f.frame_id + " · " + f.width + "×" + f.height + " · painted " + fmtMs(f.at_ms)
    : "no frames recorded on this page";
  for (const li of document.querySelectorAll("#actions li, .tick-interaction")) li.classList.remove("current");
  panels.changed();
}

function setOrdinal(k) {
  const tl = state.tl;
  if (!tl) return;
  if (tl.frame_count === 0 || tl.frames.length === 0) {
    state.ordinal = 0;
    state.playheadMs = tl.start_ms;
    $("#frame").hidden = true;
    $("#stage-empty").hidden = false;
    $("#stage-empty").textContent = "No frames recorded on this page yet.";
    return setPlayheadUi();
  }
  const ordinal = clamp(Math.round(k), 0, tl.frame_count - 1);
  const f = tl.frames[frameIndexOfOrdinal(tl.frames, ordinal)];
  state.ordinal = ordinal;
  state.playheadMs = f.at_ms;
  showFrame(ordinal, f.at_ms, f.ordinal === ordinal ? f.frame_id : "");
  setPlayheadUi();
}

function setTime(ms) {
  const tl = state.tl;
  if (!tl) return;
  const t = clamp(ms, tl.start_ms, tl.end_ms);
  if (tl.frames.length === 0) {
    state.playheadMs = t;
    return setPlayheadUi();
  }
  const f = tl.frames[frameIndexAt(tl.frames, t)];
  state.ordinal = f.ordinal;
  state.playheadMs = t;
  showFrame(f.ordinal, f.at_ms, f.frame_id);
  setPlayheadUi();
}

function scrubToInteraction(i) {
  if (i.frame_ordinal === null) setTime(i.at_ms);
  else setOrdinal(i.frame_ordinal);
  for (const e of document.querySelectorAll('[data-interaction-id="' + CSS.escape(i.interaction_id) + '"]')) e.classList.add("current");
}

function setRange(r) {
  state.range = r && r.end - r.start > 0 ? r : null;
  if (state.overlay) state.overlay.setRange(state.range);
  panels.changed();
}

function wireTimeline() {
  const root = $("#timeline");
  let downX = null;
  let dragged = false;
  root.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 || !state.tl) return;
    downX = ev.clientX;
    dragged = false;
  });
  // No pointer capture: it would retarget the click away from the tick under the pointer.
  root.addEventListener("pointermove", (ev) => {
    if (state.overlay) state.overlay.setHover(timeAtX(root, ev.clientX));
  });
  root.addEventListener("pointerleave", () => state.overlay && state.overlay.setHover(null));
  document.addEventListener("pointermove", (ev) => {
    if (downX === null || !state.overlay) return;
    if (Math.abs(ev.clientX - downX) < DRAG_PX && !dragged) return;
    dragged = true;
    const a = timeAtX(root, downX);
    const b = timeAtX(root, ev.clientX);
    state.overlay.setRange({ start: Math.min(a, b), end: Math.max(a, b) });
  });
  document.addEventListener("pointerup", (ev) => {
    if (downX === null) return;
    if (dragged) {
      const a = timeAtX(root, downX);
      const b = timeAtX(root, ev.clientX);
      setRange({ start: Math.min(a, b), end: Math.max(a, b) });
    }
    downX = null;
  });
  root.addEventListener("click", (ev) => {
    if (dragged) {
      dragged = false;
      return;
    }
    if (!state.tl) return;
    const t = timeAtX(root, ev.clientX);
    questions.timelineClicked(t);
    setTime(t);
  });
}

function wireKeys() {
  document.addEventListener("keydown", (ev) => {
    const tag = ev.target && ev.target.tagName;
    if ((tag === "INPUT" && ev.target.type !== "range") || tag === "TEXTAREA" || !state.tl) return;
    const step = ev.shiftKey ? 10 : 1;
    if (ev.key === "ArrowLeft") setOrdinal(state.ordinal - step);
    else if (ev.key === "ArrowRight") setOrdinal(state.ordinal + step);
    else if (ev.key === "Home") setOrdinal(0);
    else if (ev.key === "End") setOrdinal(state.tl.frame_count - 1);
    else return;
    ev.preventDefault();
  });
  $("#scrubber").addEventListener("input", (ev) => setOrdinal(Number(ev.target.value)));
  $("#prev").addEventListener("click", () => setOrdinal(state.ordinal - 1));
  $("#next").addEventListener("click", () => setOrdinal(state.ordinal + 1));
}

async function start() {
  globalThis.addEventListener("resize", debounce(() => {
    if (!state.tl) return;
    draw();
    setPlayheadUi();
  }, 200));
  wireTimeline();
  wireKeys();
  await loadSessions();
  const wantedSession = params.get("session");
  const known = state.sessions.find((s) => s.session_id === wantedSession);
  const first = known || state.sessions.find((s) => s.live) || state.sessions[0];
  // A question shown meanwhile may already have chosen its session (loadSeq > 0): it wins.
  if (first && !state.sessionId && loadSeq === 0) {
    const at = params.get("at");
    await selectPage(first.session_id, known ? params.get("page") : null, at !== null && known ? Number(at) : null);
  }
  setInterval(async () => {
    await loadSessions();
    if (!state.sessionId && loadSeq === 0 && state.sessions[0]) selectPage(state.sessions[0].session_id, null, null);
  }, SESSIONS_POLL_MS);
  setInterval(() => {
    if (state.tl && state.tl.live) refreshTimeline();
  }, LIVE_POLL_MS);
}

start();
`;
