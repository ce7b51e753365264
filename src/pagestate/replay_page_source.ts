/**
 * The page-side half of the replay target (replay.ts): installed once into the private replay page after
 * REPLAYER_BUNDLE, it keeps one rrweb Replayer per key and answers seeks and layout questions about the
 * replayed document. It is a string because it runs in Chromium, not Deno; every agent-supplied value
 * (selectors, instants) reaches it only as a JSON argument of Runtime.callFunctionOn.
 */

/** Installs `globalThis.__krometrailReplay`; idempotent. */
export const REPLAY_PAGE_SOURCE = String.raw`(() => {
  if (globalThis.__krometrailReplay) return;
  const Replayer = globalThis.__krometrailRrweb.Replayer;
  const style = document.createElement("style");
  // Every replay iframe sits at the page's origin, borderless, so its viewport is the recorded one.
  style.textContent = "html,body{margin:0;padding:0;overflow:hidden}" +
    ".krometrail-replay{position:absolute;left:0;top:0}" +
    ".krometrail-replay .replayer-wrapper{position:relative}" +
    ".krometrail-replay iframe{position:absolute;left:0;top:0;border:0}" +
    ".krometrail-replay .replayer-mouse{display:none}";
  document.head.appendChild(style);
  const staging = new Map();
  const players = new Map();
  let topZ = 1;
  const quiet = { log() {}, warn() {} };

  const eventsOf = (player) => player.replayer.service.state.context.events;
  // Index of the first event strictly after t (events are sorted by the Replayer).
  const firstAfter = (events, t) => {
    let lo = 0, hi = events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (events[mid].timestamp <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
  const frameOf = (player) => player.replayer.iframe;

  const seekPlayer = (player, t) => {
    const events = eventsOf(player);
    // Before the first full snapshot there is no document to show (rrweb would leave whatever the
    // iframe held, possibly a later state), so such an instant is outside the recording.
    const firstFull = events.find((e) => e.type === 2);
    if (!firstFull || t < firstFull.timestamp) {
      return { ok: false, reason: "before_recording", first_at: firstFull ? firstFull.timestamp : null };
    }
    const after = firstAfter(events, t);
    // rrweb applies events with timestamp < baseline synchronously and picks the last Meta <= baseline
    // as its start, so a baseline strictly between t and the next event applies every event <= t and
    // none after, even when a checkpoint sits exactly at the next event.
    const next = after < events.length ? events[after].timestamp : null;
    // Already there (same applied prefix, nothing appended since): a second seek would only restyle.
    if (player.after !== after || player.count !== events.length) {
      const baseline = next === null ? t + 1 : t + (next - t) / 2;
      // What Replayer.pause(offset) does, without removing and re-adding the html "rrweb-paused" class
      // (each toggle restyles the whole replayed document, ~100 ms on a heavy page).
      const service = player.replayer.service;
      if (!service.state.matches("paused")) service.send({ type: "PAUSE" });
      service.send({ type: "PLAY", payload: { timeOffset: baseline - events[0].timestamp } });
      service.send({ type: "PAUSE" });
      player.after = after;
      player.count = events.length;
    }
    const frame = frameOf(player);
    // The class pauses CSS animations at the instant; a rebuilt document starts without it.
    const html = frame.contentDocument && frame.contentDocument.documentElement;
    if (html && !html.classList.contains("rrweb-paused")) html.classList.add("rrweb-paused");
    player.root.style.zIndex = String(++topZ);
    return {
      ok: true,
      applied: after,
      applied_through: after > 0 ? events[after - 1].timestamp : null,
      next_at: next,
      width: Number(frame.getAttribute("width")) || 0,
      height: Number(frame.getAttribute("height")) || 0,
    };
  };

  const invalidSelectors = (selectors) => {
    const probe = document.createDocumentFragment();
    const bad = [];
    for (const selector of selectors) {
      try {
        probe.querySelector(selector);
      } catch (err) {
        bad.push({ selector, reason: String(err && err.message || err).slice(0, 200) });
      }
    }
    return bad;
  };

  const hintOf = (el) => {
    let hint = el.tagName.toLowerCase();
    if (el.id) hint += "#" + el.id;
    const classes = [...el.classList].filter((c) => !c.startsWith(":") && !c.startsWith("rr")).slice(0, 2);
    for (const c of classes) hint += "." + c;
    return hint.slice(0, 120);
  };
  const round = (n) => Math.round(n * 100) / 100;
  const boxOf = (r) => ({ x: round(r.left), y: round(r.top), width: round(r.width), height: round(r.height) });
  const intersect = (a, b) => {
    const x = Math.max(a.x, b.x), y = Math.max(a.y, b.y);
    const right = Math.min(a.x + a.width, b.x + b.width), bottom = Math.min(a.y + a.height, b.y + b.height);
    return right > x && bottom > y ? { x, y, width: right - x, height: bottom - y } : null;
  };
  const within = (outer, node) => node === outer || outer.contains(node);

  const visibleOf = (el, win, rect) => {
    if (!(rect.width > 0 && rect.height > 0)) return false;
    if (typeof el.checkVisibility === "function") {
      return el.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true });
    }
    for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
      const cs = win.getComputedStyle(n);
      if (cs.display === "none" || Number(cs.opacity) === 0) return false;
    }
    return win.getComputedStyle(el).visibility === "visible";
  };

  // The topmost element at a 3x3 grid of points inside the element's on-screen box: anything there that
  // is neither the element, inside it, nor one of its ancestors covers it at that point.
  const coverOf = (el, doc, box, viewport) => {
    const area = intersect(box, viewport);
    if (!area) return undefined;
    const tally = new Map();
    let sampled = 0;
    for (const fy of [1 / 6, 1 / 2, 5 / 6]) {
      for (const fx of [1 / 6, 1 / 2, 5 / 6]) {
        const hit = doc.elementFromPoint(area.x + area.width * fx, area.y + area.height * fy);
        if (!hit) continue;
        sampled++;
        if (within(el, hit) || hit.contains(el)) continue;
        tally.set(hit, (tally.get(hit) ?? 0) + 1);
      }
    }
    let top, most = 0;
    for (const [hit, n] of tally) if (n > most) { top = hit; most = n; }
    if (!top || sampled === 0) return undefined;
    return { selector_hint: hintOf(top), tag: top.tagName.toLowerCase(), coverage: round(most / sampled) };
  };

  const measureIn = (player, selectors) => {
    const frame = frameOf(player);
    const doc = frame.contentDocument;
    const win = frame.contentWindow;
    if (!doc || !win || !doc.documentElement) return { ok: false, reason: "no_document" };
    const viewport = { x: 0, y: 0, width: win.innerWidth, height: win.innerHeight };
    const elements = [];
    const results = selectors.map((selector) => {
      const list = doc.querySelectorAll(selector);
      const el = list[0];
      if (!el) {
        return { selector, found: false, count: 0, box: null, visible: false, display: null, visibility: null,
          opacity: null, z_index: null, position: null, in_viewport: false };
      }
      const cs = win.getComputedStyle(el);
      const rect = el.getBoundingClientRect();
      const box = boxOf(rect);
      const visible = visibleOf(el, win, rect);
      const inViewport = intersect(box, viewport) !== null;
      const out = { selector, found: true, count: list.length, box, visible, display: cs.display,
        visibility: cs.visibility, opacity: Number(cs.opacity), z_index: cs.zIndex, position: cs.position,
        in_viewport: inViewport };
      if (visible && inViewport) {
        const cover = coverOf(el, doc, box, viewport);
        if (cover) out.covered_by = cover;
      }
      if (visible) elements.push({ selector, el, box });
      return out;
    });
    const overlaps = [];
    for (let i = 0; i < elements.length; i++) {
      for (let j = i + 1; j < elements.length; j++) {
        const a = elements[i], b = elements[j];
        if (a.el === b.el) continue;
        const common = intersect(a.box, b.box);
        if (!common) continue;
        const nested = a.el.contains(b.el) || b.el.contains(a.el);
        let onTop = null, topHint = null;
        const seen = intersect(common, viewport);
        if (seen) {
          const hit = doc.elementFromPoint(seen.x + seen.width / 2, seen.y + seen.height / 2);
          // With nesting the inner element is the one a hit inside it lands on.
          const inA = hit && within(a.el, hit), inB = hit && within(b.el, hit);
          if (inA && inB) onTop = a.el.contains(b.el) ? b.selector : a.selector;
          else if (inA) onTop = a.selector;
          else if (inB) onTop = b.selector;
          else if (hit) topHint = hintOf(hit);
        }
        const o = { a: a.selector, b: b.selector, area: round(common.width * common.height), box: boxOf({
          left: common.x, top: common.y, width: common.width, height: common.height }), nested, on_top: onTop };
        if (topHint) o.on_top_other = topHint;
        overlaps.push(o);
      }
    }
    return { ok: true, viewport: { width: viewport.width, height: viewport.height }, results, overlaps };
  };

  const drop = (key) => {
    const player = players.get(key);
    if (!player) return;
    players.delete(key);
    try { player.replayer.destroy(); } catch { /* already torn down */ }
    player.root.remove();
  };

  globalThis.__krometrailReplay = {
    // One chunk of events: base64 of gzipped JSON (see packChunk in replay_layout.ts).
    async stage(key, packed) {
      const binary = atob(packed);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      const events = JSON.parse(await new Response(stream).text());
      let list = staging.get(key);
      if (!list) staging.set(key, list = []);
      for (const e of events) list.push(e);
      return { ok: true, count: list.length };
    },
    async load(key) {
      drop(key);
      const events = staging.get(key) ?? [];
      staging.delete(key);
      if (events.length < 2) return { ok: false, reason: "too_few_events", count: events.length };
      const root = document.createElement("div");
      root.className = "krometrail-replay";
      document.body.appendChild(root);
      let replayer;
      try {
        replayer = new Replayer(events, { root, mouseTail: false, showWarning: false, showDebug: false,
          triggerFocus: false, UNSAFE_replayCanvas: false, pauseAnimation: true, speed: 1, logger: quiet });
      } catch (err) {
        root.remove();
        return { ok: false, reason: "replayer_failed", message: String(err && err.message || err).slice(0, 300) };
      }
      players.set(key, { replayer, root, after: -1, count: -1 });
      // The constructor defers a resize to the first Meta and a build of the first full snapshot to
      // timers; let them run now so they never land after (and undo) a seek.
      await new Promise((resolve) => setTimeout(resolve, 5));
      // The first seek of a Replayer costs several times a later one; pay it here, not in a question.
      const loaded = eventsOf(players.get(key));
      seekPlayer(players.get(key), loaded[loaded.length - 1].timestamp);
      return { ok: true, count: loaded.length };
    },
    async append(key) {
      const player = players.get(key);
      const events = staging.get(key) ?? [];
      staging.delete(key);
      if (!player) return { ok: false, reason: "not_loaded" };
      for (const e of events) player.replayer.addEvent(e);
      // addEvent queues each event on a microtask; wait for them so the next seek sees them all.
      await Promise.resolve();
      await new Promise((resolve) => setTimeout(resolve, 0));
      return { ok: true, count: eventsOf(player).length };
    },
    drop(key) {
      staging.delete(key);
      drop(key);
      return { ok: true };
    },
    // What the replay iframe is: its sandbox and size (diagnostics and tests).
    frame(key) {
      const player = players.get(key);
      if (!player) return { ok: false, reason: "not_loaded" };
      const frame = frameOf(player);
      return { ok: true, sandbox: frame.getAttribute("sandbox"), width: Number(frame.getAttribute("width")) || 0,
        height: Number(frame.getAttribute("height")) || 0, scripts_allowed: frame.sandbox.contains("allow-scripts") };
    },
    seek(key, t) {
      const player = players.get(key);
      if (!player) return { ok: false, reason: "not_loaded" };
      return seekPlayer(player, t);
    },
    measure(key, t, selectors) {
      const player = players.get(key);
      if (!player) return { ok: false, reason: "not_loaded" };
      const bad = invalidSelectors(selectors);
      if (bad.length > 0) return { ok: false, reason: "invalid_selector", invalid: bad };
      const seek = seekPlayer(player, t);
      if (!seek.ok) return seek;
      const measured = measureIn(player, selectors);
      return measured.ok ? { ...measured, seek } : measured;
    },
  };
})()`;
