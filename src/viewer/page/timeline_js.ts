/**
 * Browser module timeline.js: draws one page's timeline (ticks positioned linearly in session ms
 * between data-start-ms and data-end-ms, no padding, so x ↔ time is the same for clicks and ticks).
 * No template literals or backslashes in here: this text lives inside a TypeScript template string.
 */
export const TIMELINE_JS = `
import { el, fmtMs, clamp } from "./util.js";

/** Individual frame ticks up to this many; beyond it a density strip (data-frame-count stays exact). */
const FRAME_TICKS = 3000;
const DENSITY_BUCKETS = 400;

function pct(tl, ms) {
  const span = tl.end_ms - tl.start_ms;
  return span > 0 ? clamp((ms - tl.start_ms) / span, 0, 1) * 100 : 0;
}

function place(e, tl, startMs, endMs) {
  e.style.left = pct(tl, startMs) + "%";
  if (endMs !== undefined) e.style.width = Math.max(0, pct(tl, endMs) - pct(tl, startMs)) + "%";
  return e;
}

export function timeAtX(root, clientX) {
  const r = root.getBoundingClientRect();
  const start = Number(root.dataset.startMs);
  const end = Number(root.dataset.endMs);
  const f = r.width > 0 ? clamp((clientX - r.left) / r.width, 0, 1) : 0;
  return start + f * (end - start);
}

function eventClass(e) {
  if (e.kind === "navigation") return "tick-navigation";
  if (e.kind === "request_failed" || e.kind === "request") return "tick-request-failed";
  if (e.kind === "dialog") return "tick-dialog";
  return "tick-error";
}

function eventLabel(e) {
  if (e.kind === "navigation") return "navigation";
  if (e.kind === "request_failed") return "failed request";
  if (e.kind === "request") return "request error";
  if (e.kind === "exception") return "exception";
  if (e.kind === "dialog") return "dialog";
  if (e.kind === "crash") return "renderer crash";
  if (e.kind === "unresponsive") return "page unresponsive";
  if (e.kind === "connection") {
    return e.level === "info" ? "reconnected" : e.level === "error" ? "reconnect failed" : "connection lost";
  }
  return "console " + (e.level || "error");
}

export function isFailed(i) {
  return /fail|error|timeout|intercept/i.test(i.outcome || "");
}

/** Draws the whole timeline of a page; overlay elements (playhead, mark, range) are kept as handles. */
export function renderTimeline(root, tl, onInteraction) {
  root.replaceChildren();
  root.dataset.pageId = tl.page_id;
  root.dataset.frameCount = String(tl.frame_count);
  root.dataset.startMs = String(tl.start_ms);
  root.dataset.endMs = String(tl.end_ms);
  const frames = tl.frames;
  if (frames.length <= FRAME_TICKS && !tl.frames_sampled) {
    for (const f of frames) {
      root.append(place(el("div", { className: "tick-frame", data: { ordinal: f.ordinal } }), tl, f.at_ms));
    }
  } else {
    const buckets = new Array(DENSITY_BUCKETS).fill(0);
    const span = Math.max(1e-9, tl.end_ms - tl.start_ms);
    for (const f of frames) buckets[clamp(Math.floor(((f.at_ms - tl.start_ms) / span) * DENSITY_BUCKETS), 0, DENSITY_BUCKETS - 1)]++;
    const max = Math.max(1, ...buckets);
    buckets.forEach((n, i) => {
      if (n === 0) return;
      const a = tl.start_ms + (i / DENSITY_BUCKETS) * span;
      const b = tl.start_ms + ((i + 1) / DENSITY_BUCKETS) * span;
      const tick = place(el("div", { className: "tick-frame density" }), tl, a, b);
      tick.style.opacity = String(0.25 + 0.75 * (n / max));
      root.append(tick);
    });
  }
  for (const g of tl.gaps) {
    root.append(place(el("div", {
      className: "tick-gap",
      title: "gap (" + g.reason + "): " + fmtMs(g.start_ms) + " to " + fmtMs(g.end_ms),
    }), tl, g.start_ms, g.end_ms));
  }
  for (const i of tl.interactions) {
    const end = i.end_ms === null ? i.at_ms : i.end_ms;
    const tick = place(el("div", {
      className: "tick-interaction" + (isFailed(i) ? " failed" : ""),
      title: i.tool + " · " + i.outcome + " · " + fmtMs(i.at_ms) + (i.end_ms !== null ? " to " + fmtMs(i.end_ms) : "") +
        " · " + i.interaction_id,
      data: { interactionId: i.interaction_id },
    }), tl, i.at_ms, end);
    tick.addEventListener("click", (ev) => onInteraction(i, ev));
    root.append(tick);
  }
  for (const e of tl.events) {
    root.append(place(el("div", {
      className: eventClass(e),
      title: eventLabel(e) + " · " + fmtMs(e.at_ms) + (e.text ? " · " + e.text : ""),
    }), tl, e.at_ms));
  }
  for (const m of tl.markers) {
    root.append(place(el("div", {
      className: "tick-marker" + (m.author === "human" ? " human" : ""),
      title: "marker (" + m.author + ", " + m.severity + ") · " + fmtMs(m.at_ms) + " · " + m.label,
      data: { markerId: m.marker_id },
    }), tl, m.at_ms));
  }
  const range = el("div", { className: "range-selection" });
  range.hidden = true;
  // The mark exists only once the person has marked a moment (tests and people look for .tick-mark).
  const mark = el("div", { className: "tick-mark" });
  const playhead = el("div");
  playhead.id = "playhead-line";
  const hover = el("div", { className: "hover-line" }, el("span"));
  hover.hidden = true;
  root.append(range, hover, playhead);
  return {
    setPlayhead(ms) {
      place(playhead, tl, ms);
    },
    setMark(ms) {
      if (ms === null) return mark.remove();
      place(mark, tl, ms);
      mark.title = "your mark · " + fmtMs(ms);
      if (!mark.isConnected) root.insertBefore(mark, playhead);
    },
    setHover(ms) {
      hover.hidden = ms === null;
      if (ms === null) return;
      place(hover, tl, ms);
      hover.firstChild.textContent = fmtMs(ms);
      hover.classList.toggle("flip", pct(tl, ms) > 85);
    },
    setRange(r) {
      range.hidden = !r;
      if (r) place(range, tl, r.start, r.end);
    },
  };
}

export function renderAxis(axis, tl) {
  axis.replaceChildren();
  const span = tl.end_ms - tl.start_ms;
  if (!(span > 0)) return;
  const n = 8;
  for (let i = 0; i <= n; i++) {
    const ms = tl.start_ms + (i / n) * span;
    const label = el("span", { text: span >= 10000 ? (ms / 1000).toFixed(1) + " s" : Math.round(ms) + " ms" });
    label.style.left = (i / n) * 100 + "%";
    if (i === 0) label.style.transform = "none";
    if (i === n) label.style.transform = "translateX(-100%)";
    axis.append(label);
  }
}

/** Thumbnails of the frames on screen at evenly spaced times, above the timeline; a click seeks. */
export function renderFilmstrip(root, tl, urlOf, onPick) {
  root.replaceChildren();
  const frames = tl.frames;
  if (frames.length === 0) return () => {};
  const slots = Math.max(1, Math.min(frames.length, Math.floor(root.clientWidth / 84) || 8));
  // From the first frame to the last, so the strip ends on the page's last state.
  const first = frames[0].at_ms;
  const span = frames[frames.length - 1].at_ms - first;
  const picked = [];
  for (let i = 0; i < slots; i++) {
    const at = slots === 1 ? first + span : first + (i / (slots - 1)) * span;
    const f = frames[frameIndexAt(frames, at)];
    if (picked.length === 0 || picked[picked.length - 1].ordinal !== f.ordinal) picked.push(f);
  }
  const thumbs = picked.map((f) => {
    const img = el("img", { className: "thumb", title: "frame " + (f.ordinal + 1) + " · " + fmtMs(f.at_ms), data: { ordinal: f.ordinal } });
    img.alt = "";
    img.loading = "lazy";
    img.src = urlOf(f.ordinal);
    img.addEventListener("click", () => onPick(f));
    root.append(img);
    return { img, f };
  });
  return (ordinal) => {
    let best = null;
    for (const t of thumbs) if (t.f.ordinal <= ordinal) best = t;
    for (const t of thumbs) t.img.classList.toggle("current", t === best);
  };
}

/** The listed frame on screen at ms: the last at or before it, else the first. Returns its index. */
export function frameIndexAt(frames, ms) {
  let lo = 0;
  let hi = frames.length - 1;
  let best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid].at_ms <= ms) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}

/** The listed frame with the largest ordinal at or below k (lists are sampled past 20,000 frames). */
export function frameIndexOfOrdinal(frames, k) {
  let lo = 0;
  let hi = frames.length - 1;
  let best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid].ordinal <= k) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return best;
}
`;
