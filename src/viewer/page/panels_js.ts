/**
 * Browser module panels.js: the inspector's evidence of a range (storyboard, difference map, video,
 * events) and the DOM at the playhead, each made by the server through the agent's own tools.
 * No template literals or backslashes in here: this text lives inside a TypeScript template string.
 */
export const PANELS_JS = `
import { $, el, fmtMs, getJSON, postJSON, debounce } from "./util.js";

const AROUND_MS = 1000;

export function createPanels(ctx) {
  let eventsSeq = 0;
  let domSeq = 0;
  let artifactsSeq = 0;

  function range() {
    const s = ctx.state;
    if (!s.tl) return null;
    if (s.range) return s.range;
    return {
      start: Math.max(s.tl.start_ms, s.playheadMs - AROUND_MS),
      end: Math.min(s.tl.end_ms, s.playheadMs + AROUND_MS),
    };
  }

  function showRange() {
    const r = range();
    $("#range-text").textContent = r ? fmtMs(r.start) + " to " + fmtMs(r.end) + (ctx.state.range ? " (selected)" : " (playhead ± 1 s)") : "";
    $("#make-artifacts").disabled = !r;
    $("#clear-range").hidden = !ctx.state.range;
  }

  async function loadEvents() {
    const s = ctx.state;
    const r = range();
    const list = $("#events");
    if (!r) return list.replaceChildren();
    const seq = ++eventsSeq;
    try {
      const res = await getJSON("sessions/" + encodeURIComponent(s.sessionId) + "/events", {
        page: s.pageId, start_ms: r.start.toFixed(3), end_ms: r.end.toFixed(3),
      });
      if (seq !== eventsSeq) return;
      const items = (res.events || []).map((e) => {
        const cls = e.kind === "navigation" ? "navigation"
          : e.kind === "request_failed" || (e.kind === "request" && e.level === "error") ? "request-failed"
          : e.level === "error" || e.kind === "exception" ? "error" : "";
        const li = el("li", { className: cls, title: e.kind + (e.level ? "/" + e.level : "") },
          el("span", { className: "t time", text: fmtMs(e.session_time_ms) }),
          el("span", { text: e.kind + (e.level ? "/" + e.level : "") + " " + (e.text || "") }));
        li.addEventListener("click", () => ctx.seekTime(e.session_time_ms));
        return li;
      });
      const omitted = res.omitted_event_count || 0;
      if (omitted > 0) items.push(el("li", { className: "note", text: omitted + " more events in this range (the list is capped)" }));
      if (items.length === 0) items.push(el("li", { className: "note", text: "No events in this range." }));
      list.replaceChildren(...items);
      $("#events-count").textContent = String(res.total_event_count ?? items.length);
    } catch (err) {
      if (seq === eventsSeq) list.replaceChildren(el("li", { className: "note", text: "events: " + err.message }));
    }
  }

  async function loadDom() {
    const s = ctx.state;
    const panel = $("#dom-panel");
    panel.hidden = !(s.tl && s.tl.page_state);
    if (panel.hidden) return;
    const seq = ++domSeq;
    const at = s.playheadMs;
    try {
      const res = await getJSON("sessions/" + encodeURIComponent(s.sessionId) + "/dom", { page: s.pageId, at_ms: at.toFixed(3) });
      if (seq !== domSeq) return;
      $("#dom").textContent = res.text;
      $("#dom").dataset.atMs = String(at);
      $("#dom-at").textContent = fmtMs(at);
    } catch (err) {
      if (seq === domSeq) $("#dom").textContent = "DOM at " + fmtMs(at) + ": " + err.message;
    }
  }

  async function makeArtifacts() {
    const s = ctx.state;
    const r = range();
    if (!r) return;
    const seq = ++artifactsSeq;
    const button = $("#make-artifacts");
    const status = $("#artifacts-status");
    const video = $("#with-video").checked;
    button.disabled = true;
    status.textContent = "Making the storyboard" + (video ? ", difference map and video" : " and difference map") + " of " +
      fmtMs(r.start) + " to " + fmtMs(r.end) + "…";
    try {
      const res = await postJSON("sessions/" + encodeURIComponent(s.sessionId) + "/artifacts", {
        page_id: s.pageId, start_ms: Number(r.start.toFixed(3)), end_ms: Number(r.end.toFixed(3)), video,
      });
      if (seq !== artifactsSeq) return;
      show($("#storyboard"), $("#storyboard-link"), res.storyboard);
      show($("#difference-map"), $("#difference-map-link"), res.difference_map);
      const v = $("#video");
      v.closest("figure").hidden = !res.video;
      if (res.video) v.src = res.video;
      else v.removeAttribute("src");
      status.textContent = fmtMs(r.start) + " to " + fmtMs(r.end) + (res.video_error ? " · video: " + res.video_error : "");
    } catch (err) {
      if (seq === artifactsSeq) status.textContent = "Could not make artifacts: " + err.code + ": " + err.message;
    } finally {
      if (seq === artifactsSeq) button.disabled = false;
    }
  }

  function show(img, link, url) {
    img.closest("figure").hidden = !url;
    if (url) {
      img.src = url;
      link.href = url;
    } else img.removeAttribute("src");
  }

  function reset() {
    for (const id of ["#storyboard", "#difference-map"]) {
      const img = $(id);
      img.removeAttribute("src");
      img.closest("figure").hidden = true;
    }
    const v = $("#video");
    v.removeAttribute("src");
    v.closest("figure").hidden = true;
    $("#artifacts-status").textContent = "Make the storyboard, difference map and video of the range around the playhead, or drag on the timeline to choose a range.";
    $("#events").replaceChildren();
    $("#dom").textContent = "";
  }

  const refreshEvents = debounce(loadEvents, 250);
  const refreshDom = debounce(loadDom, 350);
  $("#make-artifacts").addEventListener("click", makeArtifacts);
  $("#clear-range").addEventListener("click", () => ctx.setRange(null));
  return {
    reset,
    changed() {
      showRange();
      refreshEvents();
      refreshDom();
    },
  };
}
`;
